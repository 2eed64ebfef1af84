;;; gptel-scope-order-test.el --- gptel-scope loads in any order with gptel  -*- lexical-binding: t; -*-

;;; Commentary:

;; Each test starts a fresh Emacs with this one's load path and loads
;; gptel and gptel-scope in one order: gptel first (what
;; `(use-package gptel-scope :after gptel)' does), gptel-scope first,
;; gptel-scope alone and gptel later, gptel-scope twice.  Every order
;; must give the same eleven tools in the category "scope", the
;; end-of-turn hook, and neither transient nor project loaded.  The
;; tests that need gptel skip when it is not on the load path, unless
;; GPTEL_SCOPE_REQUIRE_GPTEL is set, where they fail.

;;; Code:

(require 'test-helper)

(defconst gptel-scope-test--all-tools
  '("apply_patch" "exec_command" "get_system_info" "grep_files" "list_allowed_commands"
    "list_dir" "read_file" "request_scope_expansion" "run_bash_command" "run_command"
    "write_stdin")
  "Every tool gptel-scope registers, sorted.")

(defconst gptel-scope-test--order-probe
  '(list :tools (and (featurep 'gptel)
                     (sort (mapcar #'gptel-tool-name (gptel-get-tool "scope")) #'string<))
         :hook (and (boundp 'gptel-post-response-functions)
                    (memq 'gptel-scope-end-of-turn gptel-post-response-functions)
                    t)
         :transient (featurep 'transient)
         :project (featurep 'project)
         :module (featurep 'gptel-scope-module))
  "A form the child Emacs prints, read back by `gptel-scope-test--in-order'.")

(defun gptel-scope-test--need-gptel ()
  "Skip the test when gptel is not on the load path, or fail when it must be."
  (unless (locate-library "gptel")
    (if (getenv "GPTEL_SCOPE_REQUIRE_GPTEL")
        (ert-fail "gptel is not on the load path, and GPTEL_SCOPE_REQUIRE_GPTEL is set")
      (ert-skip "gptel is not on the load path (make test-elisp-gptel puts the vendored gptel there)"))))

(defun gptel-scope-test--in-order (&rest forms)
  "Run FORMS in a fresh Emacs with this load path; return its probe plist.
A FORMS entry that signals makes the child exit with the error message,
which fails the test with that message."
  (let ((emacs (expand-file-name invocation-name invocation-directory)))
    (with-temp-buffer
      (let ((status (call-process
                     emacs nil t nil "-Q" "--batch"
                     "--eval" (format "(setq load-path '%S)" load-path)
                     "--eval" (format "(progn %s (prin1 %S))"
                                      (mapconcat #'prin1-to-string forms " ")
                                      gptel-scope-test--order-probe))))
        (unless (eql status 0)
          (ert-fail (list "The child Emacs failed" status (buffer-string))))
        (goto-char (point-max))
        (backward-sexp)
        (read (current-buffer))))))

(defun gptel-scope-test--check-registered (probe)
  "Check that PROBE shows every tool registered and nothing loaded eagerly."
  (should (equal (plist-get probe :tools) gptel-scope-test--all-tools))
  (should (eq (plist-get probe :hook) t))
  (should (eq (plist-get probe :module) t))
  (should-not (plist-get probe :transient))
  (should-not (plist-get probe :project)))

(ert-deftest gptel-scope-test-order-gptel-first ()
  "Loading gptel first, as `use-package ... :after gptel' does, registers every tool."
  (gptel-scope-test--need-gptel)
  (gptel-scope-test--check-registered
   (gptel-scope-test--in-order '(require 'gptel) '(require 'gptel-scope))))

(ert-deftest gptel-scope-test-order-gptel-scope-first ()
  "Loading gptel-scope first registers every tool when gptel loads."
  (gptel-scope-test--need-gptel)
  (gptel-scope-test--check-registered
   (gptel-scope-test--in-order '(require 'gptel-scope) '(require 'gptel))))

(ert-deftest gptel-scope-test-order-gptel-much-later ()
  "gptel loaded long after gptel-scope, with a tool call in between, still gets the tools."
  (gptel-scope-test--need-gptel)
  (gptel-scope-test--check-registered
   (gptel-scope-test--in-order '(require 'gptel-scope)
                               '(unless (featurep 'gptel-scope-module) (error "No module"))
                               '(when (featurep 'gptel) (error "gptel was loaded by gptel-scope"))
                               '(require 'gptel))))

(ert-deftest gptel-scope-test-order-loaded-twice ()
  "Loading and registering again leaves one tool of each name."
  (gptel-scope-test--need-gptel)
  (gptel-scope-test--check-registered
   (gptel-scope-test--in-order '(require 'gptel) '(require 'gptel-scope)
                               '(load "gptel-scope" nil t) '(gptel-scope-register-tools))))

(ert-deftest gptel-scope-test-order-without-gptel ()
  "Without gptel, gptel-scope loads its module and nothing else: no transient, no project."
  (let ((probe (gptel-scope-test--in-order '(require 'gptel-scope))))
    (should (eq (plist-get probe :module) t))
    (should-not (plist-get probe :tools))
    (should-not (plist-get probe :transient))
    (should-not (plist-get probe :project))))

(ert-deftest gptel-scope-test-order-menu-loads-transient ()
  "The expansion menu loads transient when it is first shown, and only then."
  (let ((probe (gptel-scope-test--in-order
                '(require 'gptel-scope)
                '(when (featurep 'transient) (error "transient loaded eagerly"))
                '(require 'gptel-scope-menu)
                '(unless (and (featurep 'transient) (commandp 'gptel-scope-expansion-menu))
                   (error "The menu did not load")))))
    (should (eq (plist-get probe :transient) t))))

(provide 'gptel-scope-order-test)
;;; gptel-scope-order-test.el ends here
