;;; gptel-scope-explain-test.el --- Tests of explain and init  -*- lexical-binding: t; -*-

;;; Commentary:

;; `gptel-scope-explain' and `gptel-scope-init', as a user calls them.

;;; Code:

(require 'test-helper)
(require 'gptel-scope)

(ert-deftest gptel-scope-test-require-loads-every-feature ()
  (dolist (f '(gptel-scope-exec gptel-scope-tools gptel-scope-expand gptel-scope-explain))
    (should (featurep f)))
  (should (commandp 'gptel-scope-explain))
  (should (commandp 'gptel-scope-init))
  (should (commandp 'gptel-scope-resume-expansion))
  (should (commandp 'gptel-scope-build-module))
  (should (eq (gptel-scope-load-module) t))
  (should (equal (gptel-scope-module-version) gptel-scope-version)))

(ert-deftest gptel-scope-test-every-option-in-the-group ()
  (let ((options (mapcar #'car (seq-filter (lambda (m) (eq (cadr m) 'custom-variable))
                                           (get 'gptel-scope 'custom-group)))))
    (dolist (o '(gptel-scope-profile-directory gptel-scope-prompt-on-denial gptel-scope-capture-factor
                 gptel-scope-kill-grace gptel-scope-max-timeout gptel-scope-build-module
                 gptel-scope-cargo-program))
      (should (memq o options))))
  (should (file-exists-p (expand-file-name "coding.yml" gptel-scope-profile-directory))))

(ert-deftest gptel-scope-test-error-symbols-and-hierarchy ()
  (dolist (e '(gptel-scope-invalid-config gptel-scope-no-scope-config gptel-scope-io-error
               gptel-scope-invalid-argument gptel-scope-edit-error gptel-scope-module-error))
    (should (memq 'gptel-scope-error (get e 'error-conditions)))
    (should (stringp (get e 'error-message))))
  (should (memq 'error (get 'gptel-scope-error 'error-conditions))))

(ert-deftest gptel-scope-test-explain-shows-the-evidence ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, grep]\n"
    (gptel-scope-test-in-chat dir
      (setq gptel-scope--allow-once '(("run_bash_command" . "rm z")))
      (let ((d (gptel-scope-explain "ls | grep x; rm y")))
        (should (equal (plist-get d :reason) "command_not_allowed")))
      (with-current-buffer "*gptel-scope-explain*"
        (let ((text (buffer-string)))
          (should (string-match-p "decision:   DENIED (command_not_allowed)" text))
          (should (string-match-p "grep x +read_only +allowed" text))
          (should (string-match-p "resource:   rm" text))
          (should (string-match-p "scope sources: .*scope.yml" text))
          (should (string-match-p "allow-once grants of this buffer:\n  run_bash_command on rm z" text))))
      (kill-buffer "*gptel-scope-explain*")
      ;; Nothing ran.
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm z")))))))

(ert-deftest gptel-scope-test-b48-explain-without-scope ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (should (equal (plist-get (gptel-scope-explain "ls") :reason) "no_scope_config"))
      (with-current-buffer "*gptel-scope-explain*"
        (should (string-match-p "scope sources: none" (buffer-string))))
      (kill-buffer "*gptel-scope-explain*"))))

(ert-deftest gptel-scope-test-init-writes-scope-from-profile ()
  (gptel-scope-test-with-project dir nil
    (let ((target (expand-file-name "new/place" dir)))
      (should (equal (gptel-scope-init target "coding") (expand-file-name "scope.yml" target)))
      (let ((text (gptel-scope-test-file-string (expand-file-name "scope.yml" target))))
        (should (string-prefix-p "# Scope of this project, from the gptel-scope profile `coding'.\n# Profile `coding'" text)))
      (should-error (gptel-scope-init target "coding") :type 'user-error)
      (should-error (gptel-scope-init dir "no-such-profile") :type 'user-error)
      (gptel-scope-test-in-chat target
        (should (eq (plist-get (gptel-scope-explain "cargo test") :allowed) t))
        (kill-buffer "*gptel-scope-explain*")))))

(provide 'gptel-scope-explain-test)
;;; gptel-scope-explain-test.el ends here
