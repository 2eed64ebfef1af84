;;; gptel-scope-lint-test.el --- Tests of the scope linter  -*- lexical-binding: t; -*-

;;; Commentary:

;; `gptel-scope-lint' as a user calls it, and its warnings in
;; `gptel-scope-explain', `gptel-scope-init' and `make check'.

;;; Code:

(require 'test-helper)
(require 'gptel-scope)
(require 'gptel-scope-cli)

(defconst gptel-scope-lint-test--scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [ls, python3]
    safe_write: [touch, ./run.sh]
"
  "A scope with two warnings.
An interpreter on line 6, a writable script on line 7.")

(defun gptel-scope-lint-test--lines (dir)
  "Return the two warning lines of `gptel-scope-lint-test--scope' in DIR."
  (let ((doc (expand-file-name "scope.yml" dir)))
    (list (format "%s:6: warning: bash_tools.categories.read_only lists `python3`, an interpreter: the model can run any code with it, which is full code execution whatever else the scope says.  Fix: Move \"python3\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."
                  doc)
          (format "%s:7: warning: bash_tools.categories.safe_write lists `./run.sh`, but %srun.sh is in the write scope (by \"%s**\"): the model can rewrite the script and then run it, which allows any command.  Fix: Move \"./run.sh\" to bash_tools.categories.dangerous, or move the script outside paths.write and list its new path."
                  doc dir dir))))

(ert-deftest gptel-scope-test-lint-is-a-command-of-the-package ()
  (should (featurep 'gptel-scope-lint))
  (should (commandp 'gptel-scope-lint))
  (should (fboundp 'gptel-scope-module-lint)))

(ert-deftest gptel-scope-test-lint-shows-each-warning-on-its-line ()
  "The command's buffer holds one compiler-style line per warning; `next-error' visits it."
  (gptel-scope-test-with-project dir gptel-scope-lint-test--scope
    (gptel-scope-test-in-chat dir
      (let ((warnings (gptel-scope-lint)))
        (should (equal (mapcar (lambda (w) (plist-get w :code)) warnings)
                       '("interpreter_listed" "script_in_write_scope")))
        (should (equal (mapcar (lambda (w) (plist-get w :line)) warnings) '(6 7)))))
    (with-current-buffer gptel-scope-lint-buffer
      (should (derived-mode-p 'compilation-mode))
      (should (equal (buffer-substring-no-properties (point-min) (point-max))
                     (concat (format "Scope warnings for %sscope.yml.\n\n" dir)
                             (mapconcat (lambda (l) (concat l "\n")) (gptel-scope-lint-test--lines dir) ""))))
      (goto-char (point-min))
      (setq next-error-last-buffer (current-buffer)))
    (save-window-excursion
      (next-error 2)
      (let ((visited (get-file-buffer (expand-file-name "scope.yml" dir))))
        (should visited)
        (with-current-buffer visited
          (should (equal (line-number-at-pos) 7)))
        (kill-buffer visited)))
    (kill-buffer gptel-scope-lint-buffer)))

(ert-deftest gptel-scope-test-lint-of-a-careful-scope-says-no-warnings ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/src/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, \"git log\"]\n"
    (let ((other (make-temp-file "gptel-scope-lint-" t)))
      (unwind-protect
          ;; A file given as argument: linted wherever the command is called.
          (gptel-scope-test-in-chat other
            (should (null (gptel-scope-lint (expand-file-name "scope.yml" dir))))
            (with-current-buffer gptel-scope-lint-buffer
              (should (equal (buffer-substring-no-properties (point-min) (point-max))
                             (format "Scope warnings for %sscope.yml.\n\nNo warnings: the scope does not defeat itself in any way the linter knows.\n" dir))))
            (kill-buffer gptel-scope-lint-buffer))
        (delete-directory other t)))))

(ert-deftest gptel-scope-test-lint-without-a-scope-signals ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (should-error (gptel-scope-lint) :type 'gptel-scope-no-scope-config))))

(ert-deftest gptel-scope-test-explain-shows-the-scope-warnings ()
  (gptel-scope-test-with-project dir gptel-scope-lint-test--scope
    (gptel-scope-test-in-chat dir
      (gptel-scope-explain "ls")
      (with-current-buffer "*gptel-scope-explain*"
        (should (string-search (concat "scope warnings:\n"
                                       (mapconcat (lambda (l) (concat "  " l "\n")) (gptel-scope-lint-test--lines dir) ""))
                               (buffer-string))))
      (kill-buffer "*gptel-scope-explain*"))))

(ert-deftest gptel-scope-test-init-shows-the-warnings-of-the-new-scope ()
  (gptel-scope-test-with-project dir nil
    (let ((gptel-scope-profile-directory (expand-file-name "profiles" dir))
          (target (expand-file-name "p" dir)))
      (make-directory gptel-scope-profile-directory)
      (with-temp-file (expand-file-name "loose.yml" gptel-scope-profile-directory)
        (insert gptel-scope-lint-test--scope))
      (gptel-scope-init target "loose")
      ;; The profile's lines are one further down: init writes a first comment line.
      (with-current-buffer gptel-scope-lint-buffer
        (should (string-match-p (regexp-quote (format "%s/scope.yml:7: warning: bash_tools.categories.read_only lists `python3`" target))
                                (buffer-string)))
        (should (string-match-p (regexp-quote (format "%s/scope.yml:8: warning: bash_tools.categories.safe_write lists `./run.sh`" target))
                                (buffer-string))))
      (kill-buffer gptel-scope-lint-buffer))))

(ert-deftest gptel-scope-test-check-prints-the-scope-warnings ()
  (gptel-scope-test-with-project dir gptel-scope-lint-test--scope
    (let ((out (with-output-to-string
                 (let ((command-line-args-left (list (expand-file-name "scope.yml" dir) dir "ls")))
                   (gptel-scope-cli-check)))))
      (should (string-search "decision:   ALLOWED" out))
      (should (string-suffix-p (concat "scope warnings:\n"
                                       (mapconcat (lambda (l) (concat "  " l "\n")) (gptel-scope-lint-test--lines dir) ""))
                               out)))))

(ert-deftest gptel-scope-test-check-json-lines-puts-the-warnings-on-standard-error ()
  (gptel-scope-test-with-project dir gptel-scope-lint-test--scope
    (let ((input (make-temp-file "gptel-scope-in" nil ".jsonl" "{\"command\": \"ls\"}\n")))
      (unwind-protect
          (pcase-let ((`(,code ,out ,err)
                       (gptel-scope-test--emacs
                        (expand-file-name "lisp" gptel-scope-test-root)
                        `((load ,gptel-scope-test-cli)
                          (setq command-line-args-left (list ,(expand-file-name "scope.yml" dir) ,dir ""))
                          (gptel-scope-cli-check))
                        input)))
            (should (eq code 0))
            (should (eq (plist-get (gptel-scope-test-parse (string-trim out)) :allowed) t))
            (dolist (l (gptel-scope-lint-test--lines dir))
              (should (member l (split-string err "\n")))))
        (delete-file input)))))

(provide 'gptel-scope-lint-test)
;;; gptel-scope-lint-test.el ends here
