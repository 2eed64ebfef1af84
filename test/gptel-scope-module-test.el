;;; gptel-scope-module-test.el --- Tests of the module through Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; The engine as elisp meets it: plists with keyword keys, error symbols with
;; data, the command-line check, truncation.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-cli)

(defconst gptel-scope-test--scope
  "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, grep, cat]\n    safe_write: [touch]\n    dangerous: [rm]\n  deny: [curl]\n"
  "A scope for the tests.")

(ert-deftest gptel-scope-test-version ()
  (should (equal (gptel-scope-module-version) "0.1.0")))

(ert-deftest gptel-scope-test-b15-plist-decision ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((d (gptel-scope-test-check dir "ls | grep foo")))
      (should (eq (plist-get d :allowed) t))
      (should (equal (plist-get d :base-command) "ls"))
      (should (equal (plist-get d :category) "read_only"))
      (should (equal (mapcar (lambda (c) (plist-get c :name)) (plist-get d :commands)) '("ls" "grep")))
      (should (null (plist-get d :response))))))

(ert-deftest gptel-scope-test-b38-denial-response-is-json ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let* ((d (gptel-scope-test-check dir "ls; frob"))
           (r (json-parse-string (plist-get d :response) :object-type 'plist)))
      (should (null (plist-get d :allowed)))
      (should (equal (plist-get d :reason) "command_not_allowed"))
      (should (eq (plist-get r :success) :false))
      (should (equal (plist-get r :reason) "command_not_allowed"))
      (should (string-match-p "request_scope_expansion" (plist-get r :message))))))

(ert-deftest gptel-scope-test-b44-grant-reported-as-used ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((out (expand-file-name "out" dir))
          (grant (list :tool "run_bash_command" :resource "rm x")))
      (make-directory out)
      (should (equal (plist-get (gptel-scope-test-check out "rm x") :reason) "dangerous_command"))
      (let ((d (gptel-scope-test-check out "rm x" (vector grant))))
        (should (eq (plist-get d :allowed) t))
        (should (equal (plist-get d :grants-used) '((:resource "rm x" :tool "run_bash_command"))))))))

(ert-deftest gptel-scope-test-b48-no-scope-config ()
  (let ((d (gptel-scope-module-check-command
            (json-serialize (list :command "ls" :directory "/tmp" :sources [])))))
    (should (equal (plist-get d :reason) "no_scope_config")))
  (should (equal (car (should-error (gptel-scope-module-load-scope "{\"sources\":[]}")
                                    :type 'gptel-scope-no-scope-config))
                 'gptel-scope-no-scope-config)))

(ert-deftest gptel-scope-test-invalid-config-signal-data ()
  (gptel-scope-test-with-project dir "bash_tools:\n  categories:\n    read_onyl: [ls]\n"
    (let ((err (should-error
                (gptel-scope-module-load-scope
                 (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
                :type 'gptel-scope-invalid-config)))
      (should (equal (plist-get (cddr err) :line) 3))
      (should (equal (plist-get (cddr err) :key) "bash_tools.categories.read_onyl"))
      (should (equal (plist-get (cddr err) :file) (expand-file-name "scope.yml" dir))))
    (let ((d (gptel-scope-test-check dir "ls")))
      (should (equal (plist-get d :reason) "invalid_config")))))

(ert-deftest gptel-scope-test-error-hierarchy ()
  (should (memq 'gptel-scope-error (get 'gptel-scope-invalid-config 'error-conditions)))
  (should-error (gptel-scope-module-check-command "not json") :type 'gptel-scope-invalid-argument))

(ert-deftest gptel-scope-test-b33-truncate ()
  (let ((r (gptel-scope-module-truncate (make-string 50 ?x) 10)))
    (should (eq (plist-get r :truncated) t))
    (should (equal (plist-get r :shown-chars) 10))
    (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output))))
  (should (null (plist-get (gptel-scope-module-truncate "short" 10) :truncated)))
  (should-error (gptel-scope-module-truncate "x" -1) :type 'gptel-scope-invalid-argument))

(ert-deftest gptel-scope-test-f07-truncate-stream ()
  (let ((r (gptel-scope-module-truncate-stream (apply #'concat (make-list 300 "line\n")) 8192 200)))
    (should (equal (plist-get r :shown-lines) 200))
    (should (string-suffix-p "[truncated] showing 1000 of 1500 bytes, 200 of 300 lines" (plist-get r :output)))))

(ert-deftest gptel-scope-test-c11-list-commands ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((text (gptel-scope-module-list-commands
                 (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
      (should (string-prefix-p "Platform: posix\n\nAvailable commands:\n" text))
      (should (string-match-p "read_only (needs read scope): ls, grep, cat" text)))))

(ert-deftest gptel-scope-test-c12-check-argv ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((ok (gptel-scope-module-check-argv
               (json-serialize (list :command "grep" :args ["-n" "x" "scope.yml"] :directory (directory-file-name dir)
                                     :sources (vector (list :file (expand-file-name "scope.yml" dir)))))))
          (bad (gptel-scope-module-check-argv
                (json-serialize (list :command "git" :args ["push"] :directory (directory-file-name dir)
                                      :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
      (should (eq (plist-get ok :allowed) t))
      (should (equal (plist-get bad :reason) "subcommand_denied")))))

(ert-deftest gptel-scope-test-check-path ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((src (list :file (expand-file-name "scope.yml" dir))))
      (should (eq t (plist-get (gptel-scope-module-check-path
                                (json-serialize (list :path "scope.yml" :directory (directory-file-name dir)
                                                      :sources (vector src))))
                               :allowed)))
      (should (equal "path_not_in_scope"
                     (plist-get (gptel-scope-module-check-path
                                 (json-serialize (list :path "x" :access "write" :directory (directory-file-name dir)
                                                       :sources (vector src))))
                                :reason))))))

(ert-deftest gptel-scope-test-cli-json-lines ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let* ((lines (list "{\"command\": \"ls\"}" "{\"command\": \"curl x\"}" "oops"))
           (out (with-output-to-string
                  (cl-letf (((symbol-function 'gptel-scope-cli--read-line) (lambda () (pop lines))))
                    (let ((command-line-args-left (list (expand-file-name "scope.yml" dir) dir "")))
                      (gptel-scope-cli-check)))))
           (objs (mapcar (lambda (l) (json-parse-string l :object-type 'plist :false-object nil))
                         (split-string out "\n" t))))
      (should (equal (mapcar (lambda (o) (plist-get o :allowed)) objs) '(t nil nil)))
      (should (equal (mapcar (lambda (o) (plist-get o :reason)) objs) '(:null "denied" "invalid_input"))))))

(ert-deftest gptel-scope-test-brief-decision-for-the-tools ()
  "An allowed command comes back in brief, a refusal in full."
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls]}, timeout: 7}\n"
    (let ((d (gptel-scope-module-decide
              (json-serialize (list :command "ls" :directory (directory-file-name dir)
                                    :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
      (should (equal d (list :allowed t :tool "run_bash_command" :directory (directory-file-name dir)
                             :timeout 7 :max-output-chars 20000 :warnings nil :grants-used nil
                             :required-scope "read" :category "read_only"))))
    (let* ((req (json-serialize (list :command "ls; rm x" :directory (directory-file-name dir)
                                      :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
           (d (gptel-scope-module-decide req)))
      (should (equal d (gptel-scope-module-check-command req)))
      (should (equal (plist-get d :reason) "command_not_allowed"))
      (should (stringp (plist-get d :response))))))

(provide 'gptel-scope-module-test)
;;; gptel-scope-module-test.el ends here
