;;; gptel-scope-gptel-test.el --- Tests with the real gptel  -*- lexical-binding: t; -*-

;;; Commentary:

;; These run only when gptel is on the load path (test-helper requires it
;; when it can): `make test-elisp-gptel' puts the pinned gptel and
;; transient of ../shared/vendor there, and fails when one of them skips.
;;
;; gptel's own request machinery calls the tools: its state machine runs
;; the tool calls of a response, with the callback first, in the chat
;; buffer; presets set the scope; the post-response hook ends the turn.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-expand)

(declare-function gptel-get-tool "ext:gptel-request")
(declare-function gptel-make-fsm "ext:gptel-request")
(declare-function gptel--handle-tool-use "ext:gptel-request")
(declare-function gptel--apply-preset "ext:gptel")
(declare-function gptel-make-preset "ext:gptel")
(defvar gptel-backend)
(defvar gptel-post-response-functions)
(defvar gptel-confirm-tool-calls)

(defun gptel-scope-test--gptel-run-tools (calls)
  "Let gptel's state machine run CALLS, a list of (NAME . ARGS-PLIST).
Return the tool calls with their :result once all have answered."
  (let* ((done nil)
         (tool-use (mapcar (lambda (c) (list :name (car c) :args (cdr c) :id (car c))) calls))
         (fsm (gptel-make-fsm
               :state 'TYPE
               :table '((TYPE . ((t . TOOL))) (TOOL . ((t . DONE))))
               :handlers `((TOOL ,#'gptel--handle-tool-use)
                           (DONE ,(lambda (_) (setq done t))))
               :info (list :buffer (current-buffer)
                           :backend (or gptel-backend 'test-backend)
                           :tools (mapcar (lambda (c) (gptel-get-tool (car c))) calls)
                           :tool-use tool-use
                           :callback (lambda (&rest _) (error "No confirmation expected"))))))
    (let ((gptel-confirm-tool-calls 'auto))
      (gptel--fsm-transition fsm 'TOOL))
    (with-timeout (20 (error "gptel's tool calls did not finish"))
      (while (not done) (accept-process-output nil 0.05)))
    tool-use))

(ert-deftest gptel-scope-test-gptel-runs-the-tools-in-the-chat-buffer ()
  (skip-unless (featurep 'gptel))
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [echo, ls]\n"
    (gptel-scope-test-in-chat dir
      (let ((calls (gptel-scope-test--gptel-run-tools
                    '(("run_bash_command" :command "echo hi" :directory ".")
                      ("run_command" :command "ls" :args ["scope.yml"] :directory ".")
                      ("run_bash_command" :command "rm -rf /" :directory ".")
                      ("list_allowed_commands")))))
        (let ((r (mapcar (lambda (c) (plist-get c :result)) calls)))
          (should (eq (plist-get (gptel-scope-test-parse (nth 0 r)) :success) t))
          (should (equal (plist-get (gptel-scope-test-parse (nth 0 r)) :output) "hi\n"))
          (should (equal (plist-get (gptel-scope-test-parse (nth 1 r)) :output) "scope.yml\n"))
          (should (equal (plist-get (gptel-scope-test-parse (nth 2 r)) :reason) "command_not_allowed"))
          (should (string-match-p "echo, ls" (nth 3 r))))))))

(ert-deftest gptel-scope-test-gptel-e02-expansion-through-gptel ()
  (skip-unless (featurep 'gptel))
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    dangerous: [rm]\n"
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (with-temp-file (expand-file-name "x" dir) (insert "x"))
        ;; The model asks from gptel's tool handler; the menu opens; the user presses o.
        (let (result)
          (let ((gptel-scope-expansion-show-function
                 (lambda (req)
                   (run-at-time 0 nil (lambda ()
                                        (gptel-scope-test-press
                                         "o" (lambda () (gptel-scope--expansion-show-menu req))))))))
            (setq result (gptel-scope-test--gptel-run-tools
                          '(("request_scope_expansion" :tool_name "run_bash_command" :resource "rm x"
                             :reason "tidy")))))
          (should (eq (plist-get (gptel-scope-test-parse (plist-get (car result) :result)) :allowed_once) t)))
        (let ((r (gptel-scope-test--gptel-run-tools '(("run_bash_command" :command "rm x" :directory ".")))))
          (should (eq (plist-get (gptel-scope-test-parse (plist-get (car r) :result)) :success) t))
          (should-not (file-exists-p (expand-file-name "x" dir))))))))

(ert-deftest gptel-scope-test-gptel-preset-scope-key ()
  (skip-unless (featurep 'gptel))
  (gptel-make-preset 'gptel-scope-test-coding :tools '("scope") :scope "coding")
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (gptel--apply-preset 'gptel-scope-test-coding
                           (lambda (sym val) (set (make-local-variable sym) val)))
      (should (equal gptel-scope "coding"))
      (should (string-suffix-p "coding.yml" (plist-get (aref (gptel-scope-sources) 0) :profile)))
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :success) t)))))

(ert-deftest gptel-scope-test-gptel-e19-post-response-hook-ends-the-turn ()
  (skip-unless (featurep 'gptel))
  (should (memq #'gptel-scope-end-of-turn (default-value 'gptel-post-response-functions)))
  (with-temp-buffer
    (setq gptel-scope--allow-once '(("run_bash_command" . "rm a")))
    (run-hook-with-args 'gptel-post-response-functions (point-min) (point-max))
    (should (null gptel-scope--allow-once))))

(provide 'gptel-scope-gptel-test)
;;; gptel-scope-gptel-test.el ends here
