;;; check.el --- After an install: one tool call through gptel  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by test/install/run.sh in batch Emacs once gptel-scope is
;; installed (straight.el, elpaca or package.el) in a fresh HOME.  As a
;; user's init would: (require 'gptel), then (require 'gptel-scope),
;; which builds the module with cargo the first time.  Then gptel's
;; run_bash_command tool runs `echo hi' in a project whose scope.yml
;; allows echo, and the answer must say so.  The development tools of
;; dev/ (gptel-scope-bench, -demo, -cli) must not have been installed.

;;; Code:

(require 'cl-lib)
(require 'gptel)
(require 'gptel-scope)

(defun gptel-scope-install-check ()
  "Check the installed gptel-scope with one tool call; signal on failure."
  (let* ((home (file-name-as-directory (file-truename (getenv "HOME"))))
         (lib (file-truename (locate-library "gptel-scope"))))
    ;; The package must be the one just installed, not a checkout on the load path.
    (unless (string-prefix-p home lib)
      (error "gptel-scope was loaded from %s, outside the fresh HOME %s" lib home))
    (unless (featurep 'gptel-scope-module)
      (error "The module is not loaded"))
    ;; The development tools of dev/ (make check, demo, bench) are not installed.
    (let* ((installed (file-name-directory (locate-library "gptel-scope")))
           (dev (directory-files installed nil "\\`gptel-scope-\\(bench\\|demo\\|cli\\)\\.elc?\\'")))
      (when dev
        (error "Development files were installed in %s: %S" installed dev))
      (dolist (feature '("gptel-scope-bench" "gptel-scope-demo" "gptel-scope-cli"))
        (when (locate-library feature)
          (error "%s is on the load path: %s" feature (locate-library feature))))
      (message "check: installed elisp in %s: %s" installed
               (mapconcat #'identity (directory-files installed nil "\\.el\\'") " ")))
    (message "check: gptel-scope from %s, module %s" lib (gptel-scope-module-version))
    (let* ((dir (file-name-as-directory (file-truename (make-temp-file "gptel-scope-install-" t))))
           (scope (expand-file-name "scope.yml" dir))
           (tool (or (gptel-get-tool "run_bash_command")
                     (error "gptel has no run_bash_command tool")))
           (fn (gptel-tool-function tool)))
      (unwind-protect
          (progn
            (with-temp-file scope
              (insert "paths:\n  read: [\"${project_root}/**\"]\n"
                      "bash_tools:\n  categories:\n    read_only: [echo]\n"))
            (with-temp-buffer
              (setq default-directory dir)
              (cl-flet ((call ()
                          (let (result)
                            ;; An async gptel tool: the callback comes first.
                            (funcall fn (lambda (r) (setq result r)) "echo hi" dir)
                            (with-timeout (60 (error "run_bash_command did not answer"))
                              (while (not result) (accept-process-output nil 0.05)))
                            (json-parse-string result :object-type 'plist
                                               :null-object nil :false-object nil))))
                (let ((r (call)))
                  (when (and (equal (plist-get r :reason) "untrusted_scope")
                             (fboundp 'gptel-scope-trust))
                    (funcall 'gptel-scope-trust scope)
                    (setq r (call)))
                  (unless (and (eq (plist-get r :success) t)
                               (equal (plist-get r :output) "hi\n"))
                    (error "run_bash_command \"echo hi\" answered %S" r))
                  (let ((print-escape-newlines t))
                    (message "check: run_bash_command \"echo hi\" -> %S" (plist-get r :output)))))))
        (delete-directory dir t)))))

(gptel-scope-install-check)

;;; check.el ends here
