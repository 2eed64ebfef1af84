;;; gptel-scope-expand-test.el --- Tests of the expansion menu  -*- lexical-binding: t; -*-

;;; Commentary:

;; request_scope_expansion with the real transient menu (the one built
;; into Emacs here): keys typed into its keymap run the real suffix
;; commands, which read the request from the transient scope.  The queue,
;; allow-once grants, Edit and the end of the turn.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-expand)

(defconst gptel-scope-test--expand-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
bash_tools:
  categories:
    read_only: [ls, cat, echo]
    safe_write: [touch]
    dangerous: [rm]
"
  "The scope of the expansion tests.")

(defmacro gptel-scope-test-with-chat (dir &rest body)
  "Run BODY in a chat buffer of a fresh project DIR, with a fresh expansion state."
  (declare (indent 1))
  `(gptel-scope-test-with-project ,dir gptel-scope-test--expand-scope
     (gptel-scope-test-with-expansion
       (gptel-scope-test-in-chat ,dir
         ,@body))))

(ert-deftest gptel-scope-test-e01-e04-b42-request-after-denial ()
  (gptel-scope-test-with-chat dir
    (make-directory (expand-file-name "out" dir))
    (with-temp-file (expand-file-name "out/y" dir) (insert "y"))
    (let* ((denial (gptel-scope-test-call #'gptel-scope-run-bash-command "rm y" "out"))
           (answers (gptel-scope-test-ask "o" (plist-get denial :tool) (plist-get denial :resource)
                                          "tidy up")))
      (should (equal (plist-get denial :reason) "dangerous_command"))
      (should (equal (plist-get denial :resource) "rm y"))
      (should (string-match-p "request_scope_expansion" (plist-get denial :message)))
      (should (eq (plist-get (car (funcall answers)) :allowed_once) t))
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "rm y" "out") :success) t))
      (should-not (file-exists-p (expand-file-name "out/y" dir))))))

(ert-deftest gptel-scope-test-menu-shows-a-huge-resource-cut ()
  "A 100,000-character resource is shown cut, with how much more there is."
  (gptel-scope-test-with-chat dir
    (let* ((resource (concat "rm " (make-string 99997 ?x)))
           (menu nil))
      (let ((gptel-scope-expansion-show-function
             (lambda (req)
               (gptel-scope--expansion-show-menu req)
               (setq menu (gptel-scope-test-menu-text)))))
        (gptel-scope-test-ask "d" "run_bash_command" resource "clean up"))
      (should (string-match-p (concat "resource: +rm " (make-string 197 ?x) "… (99800 more characters)$") menu))
      (should (< (length menu) 2000)))))

(ert-deftest gptel-scope-test-e02-e05-e26-menu-shows-the-request ()
  (gptel-scope-test-with-chat dir
    (gptel-scope-test-call #'gptel-scope-run-bash-command "rm -rf build" dir)
    (let (shown menu)
      (let ((gptel-scope-expansion-show-function
             (lambda (req)
               (gptel-scope--expansion-show-menu req)
               (setq shown (gptel-scope--transient-scope)
                     menu (gptel-scope-test-menu-text)))))
        (gptel-scope-test-ask "d" "run_bash_command" "rm -rf build" "clean the build"))
      ;; The violation details travel in the transient scope (E26).
      (should (equal (plist-get shown :tool) "run_bash_command"))
      (should (equal (plist-get shown :resource) "rm -rf build"))
      (should (equal (plist-get shown :reason) "clean the build"))
      (should (equal (plist-get shown :validation-type) "command"))
      (should (equal (plist-get shown :denial-reason) "dangerous_command"))
      ;; The menu shows them (E05), and the choices.
      (dolist (re '("tool: +run_bash_command" "resource: +rm -rf build" "reason: +clean the build"
                    "refused: +dangerous_command" "d Deny" "a Add to scope" "o Allow once"
                    "e Edit the scope document" "q Cancel"))
        (should (string-match-p re menu))))))

(ert-deftest gptel-scope-test-e26-brief-refusal-fills-the-menu-details ()
  "run_bash_command keeps a brief refusal; the menu still gets every detail (E26).
The record of each violation is completed from a full check when the
model asks for it."
  (gptel-scope-test-with-chat dir
    (let ((calls 0)
          (judge (symbol-function 'gptel-scope-module-judge)))
      ;; The full checks: the calls that ask for the evidence.
      (cl-letf (((symbol-function 'gptel-scope-module-judge)
                 (lambda (session call)
                   (when (string-match-p "\"evidence\":true" call) (cl-incf calls))
                   (funcall judge session call))))
        (gptel-scope-test-call #'gptel-scope-run-bash-command "ls; rm -rf build > /etc/passwd" dir)
        ;; Refused from the brief decision: no full check yet.
        (should (= calls 0))
        (let ((rm (gptel-scope-denial "run_bash_command" "rm -rf build"))
              (path (gptel-scope-denial "run_bash_command" "/etc/passwd")))
          (should (= calls 2))
          (should (equal (plist-get rm :reason) "dangerous_command"))
          (should (equal (plist-get rm :validation-type) "command"))
          (should (string-match-p "request_scope_expansion" (plist-get rm :message)))
          ;; The command of the violation, as a full refusal records it.
          (should (equal (plist-get rm :command) "rm -rf build"))
          (should (equal (plist-get path :command) "ls; rm -rf build > /etc/passwd"))
          (should (equal (plist-get path :validation-type) "path"))
          (should (equal (plist-get path :access) "write"))
          (should (stringp (plist-get path :message)))
          ;; Completed once: asking again needs no check.
          (gptel-scope-denial "run_bash_command" "rm -rf build")
          (should (= calls 2)))))))

(ert-deftest gptel-scope-test-e03-meta-tool-needs-no-scope ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (should (equal (gptel-scope--validation-type "request_scope_expansion" "x") "meta"))
        (should (equal (gptel-scope--validation-type "list_allowed_commands" "x") "meta"))
        (should (equal (gptel-scope-sources) []))
        ;; No scope at all, and no module call: the request still reaches the user.
        (cl-letf (((symbol-function 'gptel-scope-load-module) (lambda (&rest _) (error "Not needed"))))
          (let ((answers (gptel-scope-test-ask "o" "run_bash_command" "ls" "look")))
            (should (eq (plist-get (car (funcall answers)) :success) t))))
        (let ((r (gptel-scope-test-call #'gptel-scope-request-scope-expansion
                                        "request_scope_expansion" "anything" "why")))
          (should (eq (plist-get r :success) t)))))))

(ert-deftest gptel-scope-test-e06-e22-e40-deny-choice ()
  (gptel-scope-test-with-chat dir
    (let* ((answers (gptel-scope-test-ask "d" "run_bash_command" "rm x" "why"))
           (a (car (funcall answers))))
      (should (= (length (funcall answers)) 1))
      (should (eq (plist-get a :success) nil))
      (should (eq (plist-get a :user_denied) t))
      (should (string-match-p "denied" (plist-get a :message)))
      (should (null gptel-scope--allow-once))
      (should (null gptel-scope--expansion-current)))))

(ert-deftest gptel-scope-test-e08-e17-e24-e42-b44-allow-once-choice ()
  (gptel-scope-test-with-chat dir
    (let* ((answers (gptel-scope-test-ask "o" "run_bash_command" "rm x" "why"))
           (a (car (funcall answers))))
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm x"))))
      (should (eq (plist-get a :success) t))
      (should (eq (plist-get a :allowed_once) t))
      (should (string-match-p "once" (plist-get a :message))))))

(ert-deftest gptel-scope-test-e09-e25-menu-offers-edit-and-closes-on-choice ()
  (gptel-scope-test-with-chat dir
    (let (open-during menu)
      (let ((gptel-scope-expansion-show-function
             (lambda (req)
               (gptel-scope--expansion-show-menu req)
               (setq open-during (gptel-scope--expansion-menu-active-p)
                     menu (gptel-scope-test-menu-text)))))
        (gptel-scope-test-ask "d" "run_bash_command" "rm q" "why"))
      (should open-during)
      ;; Deny, Add, Allow once, and the secondary Edit and Cancel; Retry only after an edit.
      (should (string-match-p " d Deny.*\n a Add to scope.*\n o Allow once" menu))
      (should (string-match-p " e Edit the scope document.*\n q Cancel" menu))
      (should-not (string-match-p "Retry" menu))
      ;; The choice closed the menu.
      (should-not (gptel-scope--expansion-menu-active-p))
      (should-not (bound-and-true-p transient--prefix)))))

(ert-deftest gptel-scope-test-e10-cancel-and-quit-count-as-denied ()
  (gptel-scope-test-with-chat dir
    (let ((a (car (funcall (gptel-scope-test-ask "q" "run_bash_command" "rm x")))))
      (should (eq (plist-get a :user_denied) t))
      (should (string-match-p "cancelled" (plist-get a :message))))
    ;; C-g (transient-quit-one) closes the menu without a choice: denied too.
    (let* ((answers (condition-case nil
                        (gptel-scope-test-ask "C-g" "run_bash_command" "rm y")
                      (quit nil)))
           (a (car (funcall answers))))
      (should (eq (plist-get a :user_denied) t))
      (should (string-match-p "closed" (plist-get a :message)))
      (should (null gptel-scope--expansion-current)))))

(ert-deftest gptel-scope-test-e19-allow-once-cleared-after-response ()
  (gptel-scope-test-with-chat dir
    (gptel-scope-test-ask "o" "run_bash_command" "rm a")
    (gptel-scope-test-ask "o" "run_bash_command" "rm b")
    (should (= (length gptel-scope--allow-once) 2))
    ;; gptel runs its post-response hook in the chat buffer with (BEG END).
    (setq-local gptel-post-response-functions (list #'gptel-scope-end-of-turn))
    (run-hook-with-args 'gptel-post-response-functions 1 1)
    (should (null gptel-scope--allow-once))
    (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "rm a" dir) :reason)
                   "dangerous_command"))))

(ert-deftest gptel-scope-test-e20-requests-queue-one-menu-at-a-time ()
  (gptel-scope-test-with-chat dir
    (let ((a1 nil) (a2 nil) (a3 nil) (menu nil))
      ;; Three calls of one turn before the user answers: one menu, two waiting.
      (gptel-scope-test-press
       "" (lambda ()
            (gptel-scope-request-scope-expansion (lambda (a) (push a a1)) "run_bash_command" "rm a" "1")
            (gptel-scope-request-scope-expansion (lambda (a) (push a a2)) "run_bash_command" "rm b" "2")
            (gptel-scope-request-scope-expansion (lambda (a) (push a a3)) "run_bash_command" "rm c" "3")
            (setq menu (gptel-scope-test-menu-text))))
      (should (string-match-p "resource: +rm a" menu))
      (should (= (length gptel-scope--expansion-queue) 2))
      ;; Each answer brings the next request to the menu.
      (gptel-scope-test-press "o")
      (should (equal (plist-get gptel-scope--expansion-current :resource) "rm b"))
      (should (string-match-p "resource: +rm b" (gptel-scope-test-menu-text)))
      (should (string-match-p "(1 more waiting)" (gptel-scope-test-menu-text)))
      (gptel-scope-test-press "o")
      (should (string-match-p "resource: +rm c" (gptel-scope-test-menu-text)))
      (gptel-scope-test-press "d")
      (should (equal (mapcar #'length (list a1 a2 a3)) '(1 1 1)))
      (should (eq (plist-get (gptel-scope-test-parse (car a3)) :user_denied) t))
      ;; Several grants in one turn.
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm b") ("run_bash_command" . "rm a"))))
      (should (null gptel-scope--expansion-current))
      (should-not (gptel-scope--expansion-menu-active-p)))))

(ert-deftest gptel-scope-test-e20-queued-request-of-a-killed-chat-is-answered ()
  (gptel-scope-test-with-project dir gptel-scope-test--expand-scope
    (gptel-scope-test-with-expansion
      (let ((answers nil)
            (chat (generate-new-buffer "chat"))
            (gptel-scope-expansion-show-function #'ignore))
        (with-current-buffer chat
          (gptel-scope-request-scope-expansion (lambda (a) (push a answers)) "run_bash_command" "rm a" "1")
          (gptel-scope-request-scope-expansion (lambda (a) (push a answers)) "run_bash_command" "rm b" "2"))
        (kill-buffer chat)
        (gptel-scope--expansion-answer gptel-scope--expansion-current (gptel-scope--json :success nil :message "x"))
        (gptel-scope-test-settle)
        (should (= (length answers) 2))
        (should (string-match-p "closed" (plist-get (gptel-scope-test-parse (car answers)) :message)))))))

(ert-deftest gptel-scope-test-e27-e28-e29-suffix-reads-the-transient-scope ()
  (gptel-scope-test-with-chat dir
    (let* ((decoy (list :id -1 :callback #'ignore :tool "decoy" :resource "decoy" :state 'waiting))
           (seen nil)
           (gptel-scope-expansion-show-function
            (lambda (req)
              (gptel-scope--expansion-show-menu req)
              (setq seen (gptel-scope--transient-scope))
              ;; The suffix must answer the menu's request, not whatever is current.
              (setq gptel-scope--expansion-current decoy)))
           (answers (gptel-scope-test-ask "o" "run_bash_command" "rm z" "why")))
      (should (functionp (plist-get seen :callback)))
      (should (equal (plist-get seen :directory) dir))
      (should (equal (plist-get seen :document) (expand-file-name "scope.yml" dir)))
      (should (eq (plist-get seen :buffer) (current-buffer)))
      (should (eq (plist-get (car (funcall answers)) :allowed_once) t))
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm z"))))
      (should (eq (plist-get decoy :state) 'waiting))
      (setq gptel-scope--expansion-current nil))))

(ert-deftest gptel-scope-test-e34-add-without-document-is-a-user-error ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let (answers)
          (should-error (setq answers (gptel-scope-test-ask "a" "run_bash_command" "rm x"))
                        :type 'user-error)
          (gptel-scope-test-settle)
          ;; The request is still open and its menu came back: answer it.
          (should (eq (plist-get gptel-scope--expansion-current :state) 'shown))
          (should (gptel-scope--expansion-menu-active-p))
          (should (null answers))
          (let ((req gptel-scope--expansion-current) (got nil))
            (plist-put req :callback (lambda (a) (setq got a)))
            (gptel-scope-test-press "d")
            (should (eq (plist-get (gptel-scope-test-parse got) :user_denied) t))))))))

(ert-deftest gptel-scope-test-e36-unparsable-document-reported-and-left-untouched ()
  (gptel-scope-test-with-project dir "paths: [\nbroken\n"
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let ((err (should-error (gptel-scope-test-ask "a" "run_bash_command" "sort") :type 'user-error)))
          (should (string-match-p "Add to scope failed.*does not parse" (cadr err))))
        (gptel-scope-test-settle)
        (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir)) "paths: [\nbroken\n"))
        (should (gptel-scope--expansion-menu-active-p))))))

(ert-deftest gptel-scope-test-e37-e38-e39-edit-leaves-request-pending ()
  (gptel-scope-test-with-chat dir
    (let* ((file (expand-file-name "scope.yml" dir))
           (answers (gptel-scope-test-ask "e" "run_bash_command" "sort" "why")))
      ;; The document is open (E37), the callback was not called (E39)...
      (should (equal (buffer-file-name (window-buffer)) file))
      (should (null (funcall answers)))
      ;; ...and the request waits, with its context (E38).
      (should (= (length gptel-scope--expansion-pending) 1))
      (should (equal (plist-get (car gptel-scope--expansion-pending) :resource) "sort"))
      (should (null gptel-scope--expansion-current))
      ;; Saving the document brings the menu back, with Retry.
      (let (menu)
        (with-current-buffer (find-buffer-visiting file)
          (goto-char (point-min))
          (re-search-forward "read_only: \\[ls")
          (insert ", sort")
          (let ((gptel-scope-expansion-show-function
                 (lambda (req) (gptel-scope--expansion-show-menu req)
                   (setq menu (gptel-scope-test-menu-text)))))
            (save-buffer)
            (gptel-scope-test-settle)))
        (should (string-match-p "r Retry" menu))
        (should (plist-get gptel-scope--expansion-current :edited))
        (gptel-scope-test-press "r"))
      (let ((a (car (funcall answers))))
        (should (eq (plist-get a :success) t))
        (should (eq (plist-get a :scope_edited) t)))
      (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "sort scope.yml" dir) :success)))
      (kill-buffer (find-buffer-visiting file)))))

(ert-deftest gptel-scope-test-e38-pending-request-comes-back-when-document-closed ()
  (gptel-scope-test-with-chat dir
    (let ((answers (gptel-scope-test-ask "e" "run_bash_command" "rm x" "why")))
      (let ((gptel-scope-expansion-show-function #'ignore))
        (kill-buffer (find-buffer-visiting (expand-file-name "scope.yml" dir)))
        (gptel-scope-test-settle))
      (should (equal (plist-get gptel-scope--expansion-current :resource) "rm x"))
      (should-not (plist-get gptel-scope--expansion-current :edited))
      (gptel-scope-test-press "d" (lambda () (gptel-scope--expansion-show-menu gptel-scope--expansion-current)))
      (should (eq (plist-get (car (funcall answers)) :user_denied) t)))))

(ert-deftest gptel-scope-test-e38-resume-expansion-command ()
  (gptel-scope-test-with-chat dir
    (let ((answers (gptel-scope-test-ask "e" "run_bash_command" "rm x" "why")))
      (let ((doc (find-buffer-visiting (expand-file-name "scope.yml" dir))))
        (with-current-buffer doc (remove-hook 'kill-buffer-hook #'gptel-scope--expansion-document-done t))
        (kill-buffer doc))
      (gptel-scope-test-press "o" (lambda () (call-interactively #'gptel-scope-resume-expansion)))
      (should (eq (plist-get (car (funcall answers)) :allowed_once) t))
      (should-error (call-interactively #'gptel-scope-resume-expansion) :type 'user-error))))

(ert-deftest gptel-scope-test-e38-pending-request-answered-at-end-of-turn ()
  (gptel-scope-test-with-chat dir
    (let ((answers (gptel-scope-test-ask "e" "run_bash_command" "rm x" "why"))
          (queued nil))
      (let ((doc (find-buffer-visiting (expand-file-name "scope.yml" dir))))
        (with-current-buffer doc (remove-hook 'kill-buffer-hook #'gptel-scope--expansion-document-done t))
        (kill-buffer doc))
      (let ((gptel-scope-expansion-show-function #'ignore))
        (gptel-scope-request-scope-expansion (lambda (a) (push a queued)) "run_bash_command" "rm y" "2"))
      (gptel-scope-end-of-turn)
      (should (eq (plist-get (car (funcall answers)) :user_denied) t))
      (should (string-match-p "turn ended" (plist-get (car (funcall answers)) :message)))
      (should (= (length queued) 1))
      (should (null gptel-scope--expansion-pending))
      (should (null gptel-scope--expansion-current)))))

(ert-deftest gptel-scope-test-e43-every-answer-explains-itself ()
  (gptel-scope-test-with-chat dir
    (dolist (key '("d" "o" "q" "a"))
      (let ((a (car (funcall (gptel-scope-test-ask key "run_bash_command" "echo" "why")))))
        (should (stringp (plist-get a :message)))
        (should (> (length (plist-get a :message)) 20))))))

(ert-deftest gptel-scope-test-e02-prompt-on-denial-opens-the-menu-and-retries ()
  (gptel-scope-test-with-chat dir
    (make-directory (expand-file-name "out" dir))
    (with-temp-file (expand-file-name "out/x" dir) (insert "x"))
    (let ((gptel-scope-prompt-on-denial t) (result nil) (menu nil))
      (let ((gptel-scope-expansion-show-function
             (lambda (req) (gptel-scope--expansion-show-menu req) (setq menu (gptel-scope-test-menu-text)))))
        (gptel-scope-test-press "o" (lambda () (gptel-scope-run-bash-command (lambda (r) (setq result r)) "rm x" "out"))))
      (with-timeout (10 (error "No result")) (while (not result) (accept-process-output nil 0.05)))
      (should (string-match-p "refused: +dangerous_command" menu))
      (should (eq (plist-get (gptel-scope-test-parse result) :success) t))
      (should-not (file-exists-p (expand-file-name "out/x" dir)))
      (should (null gptel-scope--allow-once))
      ;; Denied at the refusal: the model gets the refusal, marked as the user's.
      (with-temp-file (expand-file-name "out/x" dir) (insert "x"))
      (setq result nil)
      (gptel-scope-test-press "d" (lambda () (gptel-scope-run-bash-command (lambda (r) (setq result r)) "rm x" "out")))
      (with-timeout (10 (error "No result")) (while (not result) (accept-process-output nil 0.05)))
      (let ((r (gptel-scope-test-parse result)))
        (should (equal (plist-get r :reason) "dangerous_command"))
        (should (eq (plist-get r :user_denied) t)))
      (should (file-exists-p (expand-file-name "out/x" dir))))))

(ert-deftest gptel-scope-test-e47-granted-resource-matches-what-validation-checks ()
  (gptel-scope-test-with-chat dir
    (make-directory (expand-file-name "sub" dir))
    ;; The resource a refusal names, granted once, lets exactly that call through.
    (let ((denial (gptel-scope-test-call #'gptel-scope-run-bash-command "touch made" "sub")))
      (should (equal (plist-get denial :reason) "directory_not_in_scope"))
      (should (equal (plist-get denial :resource) (expand-file-name "sub" dir)))
      (gptel-scope-test-ask "o" "run_bash_command" (plist-get denial :resource))
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch made" "sub") :success) t))
      (should (file-exists-p (expand-file-name "sub/made" dir)))
      (should (null gptel-scope--allow-once)))
    ;; The same resource added permanently lets it through every time.
    (let ((denial (gptel-scope-test-call #'gptel-scope-run-bash-command "touch again" "sub")))
      (gptel-scope-test-ask "a" "run_bash_command" (plist-get denial :resource))
      (dotimes (_ 2)
        (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch again" "sub") :success) t))))))

(ert-deftest gptel-scope-test-e03-validation-types-inferred ()
  (should (equal (gptel-scope--validation-type "run_bash_command" "git status") "command"))
  (should (equal (gptel-scope--validation-type "run_bash_command" "/tmp/x/**") "path"))
  (should (equal (gptel-scope--validation-type "run_command" "~/notes") "path"))
  (should (equal (gptel-scope--validation-type "read_file" "notes.org") "path"))
  (should (equal (gptel-scope--validation-type "read_file" "subdirectory:gptel/**") "pattern"))
  (should (equal (gptel-scope--validation-type "read_file" "tags:work") "pattern")))

(ert-deftest gptel-scope-test-expansion-tool-arguments-checked ()
  (gptel-scope-test-with-chat dir
    (let ((r (gptel-scope-test-call #'gptel-scope-request-scope-expansion nil "rm x" "why")))
      (should (equal (plist-get r :reason) "invalid_argument")))
    (let ((r (gptel-scope-test-call #'gptel-scope-request-scope-expansion "run_bash_command" "" "why")))
      (should (equal (plist-get r :reason) "invalid_argument")))
    (let ((answers (gptel-scope-test-ask "d" "run_bash_command" "rm x" "  ")))
      (should (= (length (funcall answers)) 1)))))

(provide 'gptel-scope-expand-test)
;;; gptel-scope-expand-test.el ends here
