;;; gptel-scope-tools-test.el --- Tests of the gptel tool functions  -*- lexical-binding: t; -*-

;;; Commentary:

;; The tool functions as gptel calls them (callback first), without gptel.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)

(defconst gptel-scope-test--tools-scope
  "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, echo]\n    dangerous: [rm]\n  timeout: 5\n"
  "The scope of the tool tests.")

(defun gptel-scope-test--call (fn &rest args)
  "Call the async tool FN with ARGS; wait for its one result, parsed."
  (let ((results nil))
    (apply fn (lambda (r) (push r results)) args)
    (with-timeout (20 (error "No result"))
      (while (not results) (accept-process-output nil 0.05)))
    (accept-process-output nil 0.1)
    (should (= (length results) 1))
    (json-parse-string (car results) :object-type 'plist :false-object nil :null-object nil)))

(ert-deftest gptel-scope-test-s01-run-bash-command-runs-allowed-command ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-buffer
      (setq default-directory dir)
      (with-temp-file (expand-file-name "a.txt" dir) (insert "hello\n"))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "cat a.txt | cat" dir)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :exit_code) 0))
        (should (equal (plist-get r :output) "hello\n"))))))

(ert-deftest gptel-scope-test-s04-denied-command-never-runs ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-buffer
      (setq default-directory dir)
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command
                                       (format "ls; touch %s" (expand-file-name "pwned" dir)) dir)))
        (should (null (plist-get r :success)))
        (should (equal (plist-get r :reason) "command_not_allowed"))
        (should-not (file-exists-p (expand-file-name "pwned" dir)))))))

(ert-deftest gptel-scope-test-b13-relative-directory-resolved-against-buffer ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (make-directory (expand-file-name "sub" dir))
    (with-temp-buffer
      (setq default-directory dir)
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "echo $PWD" "sub")))
        (should (equal (plist-get r :output) (concat (expand-file-name "sub" dir) "\n")))))))

(ert-deftest gptel-scope-test-e18-allow-once-grant-is-used-up ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (make-directory (expand-file-name "out" dir))
    (with-temp-file (expand-file-name "out/x" dir) (insert "x"))
    (with-temp-buffer
      (setq default-directory dir)
      (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm x")))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "rm x" "out")))
        (should (eq (plist-get r :success) t))
        (should-not (file-exists-p (expand-file-name "out/x" dir)))
        (should (null gptel-scope--allow-once)))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "rm x" "out")))
        (should (equal (plist-get r :reason) "dangerous_command"))))))

(ert-deftest gptel-scope-test-s06-failure-and-timeout-are-explicit ()
  (gptel-scope-test-with-project dir (replace-regexp-in-string "timeout: 5" "timeout: 1" gptel-scope-test--tools-scope)
    (with-temp-buffer
      (setq default-directory dir)
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "cat missing-file" dir)))
        (should (null (plist-get r :success)))
        (should (equal (plist-get r :exit_code) 1))
        (should (string-match-p "missing-file" (plist-get r :output))))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "cat /dev/zero | cat > /dev/null" dir)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (string-match-p "timed out after 1 seconds" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-b48-no-scope-anywhere ()
  (let ((dir (file-name-as-directory (make-temp-file "gptel-scope-none-" t))))
    (unwind-protect
        (with-temp-buffer
          (setq default-directory dir)
          (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "ls" dir)))
            (should (equal (plist-get r :reason) "no_scope_config"))))
      (delete-directory dir t))))

(ert-deftest gptel-scope-test-async-errors-reach-the-callback-once ()
  (with-temp-buffer
    (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "ls" nil)))
      (should (equal (plist-get r :reason) "error"))
      (should (string-match-p "directory argument is required" (plist-get r :message))))))

(ert-deftest gptel-scope-test-c12-run-command-without-shell ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-buffer
      (setq default-directory dir)
      (with-temp-file (expand-file-name "a;b" dir) (insert "semi\n"))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-command "cat" ["a;b"] dir)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :output) "semi\n")))
      (let ((r (gptel-scope-test--call #'gptel-scope-run-command "rm" ["a;b"] dir)))
        (should (equal (plist-get r :reason) "denied"))))))

(ert-deftest gptel-scope-test-inline-profile-and-document-sources ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-buffer
      (setq default-directory dir)
      (setq gptel-scope-inline '(:bash-tools (:categories (:safe-write (touch)))))
      (should (equal (gptel-scope-sources)
                     (vector (list :inline "{\"bash_tools\":{\"categories\":{\"safe_write\":[\"touch\"]}}}" :name "inline scope")
                             (list :file (expand-file-name "scope.yml" dir)))))
      (setq gptel-scope-inline "coding")
      (should (string-suffix-p "scope-profiles/coding.yml" (plist-get (aref (gptel-scope-sources) 0) :profile))))))

(ert-deftest gptel-scope-test-c11-list-allowed-commands-tool ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-buffer
      (setq default-directory dir)
      (should (string-match-p "read_only (needs read scope): ls, cat, echo" (gptel-scope-list-allowed-commands))))))

(ert-deftest gptel-scope-test-tools-register-with-gptel ()
  (skip-unless (require 'gptel nil t))
  (gptel-scope-register-tools)
  (should (fboundp 'gptel-get-tool)))

(provide 'gptel-scope-tools-test)
;;; gptel-scope-tools-test.el ends here

(ert-deftest gptel-scope-test-s08-timeout-comes-from-the-scope ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [sleep]\n  timeout: 1\n"
    (with-temp-buffer
      (setq default-directory dir)
      (let ((r (gptel-scope-test--call #'gptel-scope-run-bash-command "sleep 30" dir)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (< (plist-get r :duration_ms) 5000))))))

(ert-deftest gptel-scope-test-s07-description-teaches-the-rules ()
  (dolist (needle '("directory is required" "Prefer file tools" "relative paths" "request_scope_expansion"))
    (should (string-match-p (regexp-quote needle) gptel-scope-run-bash-command-description))))
