;;; gptel-scope-explain-test.el --- Tests of explain, init and loading  -*- lexical-binding: t; -*-

;;; Commentary:

;; `gptel-scope-explain', `gptel-scope-init' and the entry point.

;;; Code:

(require 'test-helper)
(require 'gptel-scope)

(ert-deftest gptel-scope-test-require-loads-every-feature ()
  (should (featurep 'gptel-scope-tools))
  (should (featurep 'gptel-scope-expand))
  (should (fboundp 'gptel-scope-run-bash-command))
  (gptel-scope-load-module)
  (should (equal (gptel-scope-module-version) gptel-scope-version)))

(ert-deftest gptel-scope-test-explain-shows-evidence ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, grep]\n"
    (with-temp-buffer
      (setq default-directory dir)
      (let ((d (gptel-scope-explain "ls | grep x; rm y")))
        (should (equal (plist-get d :reason) "command_not_allowed")))
      (with-current-buffer "*gptel-scope-explain*"
        (should (string-match-p "decision:   DENIED (command_not_allowed)" (buffer-string)))
        (should (string-match-p "grep x +read_only +allowed" (buffer-string)))
        (should (string-match-p "scope sources: .*scope.yml" (buffer-string))))
      (kill-buffer "*gptel-scope-explain*"))))

(ert-deftest gptel-scope-test-init-writes-scope-from-profile ()
  (let ((dir (file-name-as-directory (make-temp-file "gptel-scope-init-" t))))
    (unwind-protect
        (progn
          (gptel-scope-init dir "coding")
          (let ((text (with-temp-buffer (insert-file-contents (expand-file-name "scope.yml" dir)) (buffer-string))))
            (should (string-prefix-p "# Scope of this project, from the gptel-scope profile `coding'.\n# Profile `coding'" text)))
          (should-error (gptel-scope-init dir "coding") :type 'user-error)
          (should-error (gptel-scope-init dir "no-such-profile") :type 'user-error)
          (with-temp-buffer
            (setq default-directory dir)
            (should (equal (plist-get (gptel-scope-explain "cargo test") :allowed) t))))
      (delete-directory dir t))))

(provide 'gptel-scope-explain-test)
;;; gptel-scope-explain-test.el ends here
