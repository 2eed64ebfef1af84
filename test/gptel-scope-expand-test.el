;;; gptel-scope-expand-test.el --- Tests of the expansion menu  -*- lexical-binding: t; -*-

;;; Commentary:

;; request_scope_expansion with the real transient menu and its real suffix
;; commands; the queue; allow-once grants.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-expand)

(defmacro gptel-scope-test-with-expansion (&rest body)
  "Run BODY with an empty expansion state, closing any menu afterwards."
  (declare (indent 0))
  `(let ((gptel-scope--expansion-queue nil)
         (gptel-scope--expansion-current nil)
         (gptel-scope--expansion-pending nil))
     (unwind-protect (progn ,@body)
       (ignore-errors (transient-quit-all)))))

(defun gptel-scope-test--expand (tool resource reason)
  "Request an expansion; return a function returning the parsed answers."
  (let ((answers nil))
    (gptel-scope-request-scope-expansion (lambda (r) (push r answers)) tool resource reason)
    (lambda () (mapcar (lambda (a) (json-parse-string a :object-type 'plist :false-object nil)) answers))))

(defun gptel-scope-test--settle ()
  "Let timers run."
  (dotimes (_ 3) (accept-process-output nil 0.01)))

(ert-deftest gptel-scope-test-e02-e05-e26-menu-shows-the-request ()
  (gptel-scope-test-with-expansion
    (gptel-scope-test--expand "run_bash_command" "rm -rf build" "clean the build")
    (should (plist-get gptel-scope--expansion-current :resource))
    (let ((req (gptel-scope--expansion-request)))
      (should (equal (plist-get req :tool) "run_bash_command"))
      (should (equal (plist-get req :validation-type) "command")))
    (let ((desc (gptel-scope--expansion-description)))
      (should (string-match-p "tool: +run_bash_command" desc))
      (should (string-match-p "resource: rm -rf build" desc))
      (should (string-match-p "reason: +clean the build" desc)))))

(ert-deftest gptel-scope-test-e06-e22-e40-deny-choice ()
  (gptel-scope-test-with-expansion
    (let ((answers (gptel-scope-test--expand "run_bash_command" "rm x" "why")))
      (call-interactively #'gptel-scope-expansion-deny)
      (let ((a (car (funcall answers))))
        (should (equal (length (funcall answers)) 1))
        (should (null (plist-get a :success)))
        (should (eq (plist-get a :user_denied) t))
        (should (string-match-p "denied" (plist-get a :message))))
      (should (null gptel-scope--expansion-current)))))

(ert-deftest gptel-scope-test-e08-e17-e24-e42-allow-once-choice ()
  (gptel-scope-test-with-expansion
    (with-temp-buffer
      (let ((answers (gptel-scope-test--expand "run_bash_command" "rm x" "why")))
        (call-interactively #'gptel-scope-expansion-allow-once)
        (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm x"))))
        (let ((a (car (funcall answers))))
          (should (eq (plist-get a :success) t))
          (should (eq (plist-get a :allowed_once) t))
          (should (stringp (plist-get a :message))))))))

(ert-deftest gptel-scope-test-e10-cancel-counts-as-denied ()
  (gptel-scope-test-with-expansion
    (let ((answers (gptel-scope-test--expand "read_file" "/etc/hosts" "why")))
      (call-interactively #'gptel-scope-expansion-cancel)
      (should (eq (plist-get (car (funcall answers)) :user_denied) t)))))

(ert-deftest gptel-scope-test-e20-requests-queue-one-menu-at-a-time ()
  (gptel-scope-test-with-expansion
    (with-temp-buffer
      (let ((a1 (gptel-scope-test--expand "run_bash_command" "rm a" "1"))
            (a2 (gptel-scope-test--expand "run_bash_command" "rm b" "2")))
        (should (equal (plist-get gptel-scope--expansion-current :resource) "rm a"))
        (should (= (length gptel-scope--expansion-queue) 1))
        (call-interactively #'gptel-scope-expansion-allow-once)
        (gptel-scope-test--settle)
        (should (equal (plist-get gptel-scope--expansion-current :resource) "rm b"))
        (call-interactively #'gptel-scope-expansion-allow-once)
        (should (equal (length (funcall a1)) 1))
        (should (equal (length (funcall a2)) 1))
        (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm b") ("run_bash_command" . "rm a"))))))))

(ert-deftest gptel-scope-test-e19-allow-once-cleared-after-response ()
  (gptel-scope-test-with-expansion
    (with-temp-buffer
      (setq gptel-scope--allow-once '(("run_bash_command" . "rm a")))
      (gptel-scope-end-of-turn 1 2)
      (should (null gptel-scope--allow-once)))))

(ert-deftest gptel-scope-test-e37-e38-e39-edit-leaves-request-pending ()
  (gptel-scope-test-with-project dir "bash_tools: {}\n"
    (gptel-scope-test-with-expansion
      (with-temp-buffer
        (setq default-directory dir)
        (let ((answers (gptel-scope-test--expand "run_bash_command" "rm x" "why")))
          (call-interactively #'gptel-scope-expansion-edit)
          (should (null (funcall answers)))
          (should (equal (buffer-file-name (window-buffer)) (expand-file-name "scope.yml" dir)))
          (kill-buffer (window-buffer))
          (should (= (length gptel-scope--expansion-pending) 1))
          (gptel-scope-resume-expansion)
          (call-interactively #'gptel-scope-expansion-deny)
          (should (equal (length (funcall answers)) 1)))))))

(ert-deftest gptel-scope-test-e38-pending-request-answered-at-end-of-turn ()
  (gptel-scope-test-with-project dir "bash_tools: {}\n"
    (gptel-scope-test-with-expansion
      (with-temp-buffer
        (setq default-directory dir)
        (let ((answers (gptel-scope-test--expand "run_bash_command" "rm x" "why"))
              (chat (current-buffer)))
          (call-interactively #'gptel-scope-expansion-edit)
          (kill-buffer (window-buffer))
          (with-current-buffer chat (gptel-scope-end-of-turn))
          (should (eq (plist-get (car (funcall answers)) :user_denied) t))
          (should (null gptel-scope--expansion-pending)))))))

(ert-deftest gptel-scope-test-e34-add-without-document-is-a-user-error ()
  (let ((dir (file-name-as-directory (make-temp-file "gptel-scope-nodoc-" t))))
    (unwind-protect
        (gptel-scope-test-with-expansion
          (with-temp-buffer
            (setq default-directory dir)
            (gptel-scope-test--expand "run_bash_command" "rm x" "why")
            (should-error (call-interactively #'gptel-scope-expansion-add) :type 'user-error)))
      (delete-directory dir t))))

(ert-deftest gptel-scope-test-e03-e04-validation-types ()
  (should (equal (gptel-scope--validation-type "run_bash_command" "git status") "command"))
  (should (equal (gptel-scope--validation-type "run_bash_command" "/tmp/x/**") "path"))
  (should (equal (gptel-scope--validation-type "read_file" "notes.org") "path"))
  (should (equal (gptel-scope--validation-type "read_file" "subdirectory:gptel/**") "pattern")))

(provide 'gptel-scope-expand-test)
;;; gptel-scope-expand-test.el ends here

(ert-deftest gptel-scope-test-e02-prompt-on-denial-opens-the-menu-and-retries ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    dangerous: [rm]\n"
    (gptel-scope-test-with-expansion
      (with-temp-buffer
        (setq default-directory dir)
        (with-temp-file (expand-file-name "x" dir) (insert "x"))
        (let* ((gptel-scope-prompt-on-denial t)
               (answer #'gptel-scope-expansion-allow-once)
               (gptel-scope-expansion-show-function (lambda (_req) (funcall answer)))
               (result nil))
          (gptel-scope-run-bash-command (lambda (r) (setq result r)) "rm x" dir)
          (with-timeout (10 (error "No result")) (while (not result) (accept-process-output nil 0.05)))
          (should (eq (plist-get (json-parse-string result :object-type 'plist :false-object nil) :success) t))
          (should-not (file-exists-p (expand-file-name "x" dir)))
          (with-temp-file (expand-file-name "x" dir) (insert "x"))
          (setq result nil answer #'gptel-scope-expansion-deny)
          (gptel-scope-run-bash-command (lambda (r) (setq result r)) "rm x" dir)
          (with-timeout (10 (error "No result")) (while (not result) (accept-process-output nil 0.05)))
          (should (equal (plist-get (json-parse-string result :object-type 'plist :false-object nil) :reason)
                         "dangerous_command"))
          (should (file-exists-p (expand-file-name "x" dir))))))))

(ert-deftest gptel-scope-test-e29-suffix-reads-the-transient-scope ()
  (gptel-scope-test-with-expansion
    (gptel-scope-test--expand "run_bash_command" "rm z" "why")
    (let ((shown gptel-scope--expansion-current))
      (should (eq (gptel-scope--transient-scope) shown))
      (setq gptel-scope--expansion-current nil)
      (should (eq (gptel-scope--expansion-request) shown)))))

(ert-deftest gptel-scope-test-b42-e01-e04-request-after-denial-flow ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    dangerous: [rm]\n"
    (gptel-scope-test-with-expansion
      (with-temp-buffer
        (setq default-directory dir)
        (with-temp-file (expand-file-name "y" dir) (insert "y"))
        (let* ((denial (json-parse-string (gptel-scope-test--tool-result #'gptel-scope-run-bash-command "rm y" dir)
                                          :object-type 'plist :false-object nil))
               (answers (gptel-scope-test--expand (plist-get denial :tool) (plist-get denial :resource) "tidy up")))
          (should (equal (plist-get denial :resource) "rm y"))
          (should (string-match-p "request_scope_expansion" (plist-get denial :message)))
          (call-interactively #'gptel-scope-expansion-allow-once)
          (should (eq (plist-get (car (funcall answers)) :allowed_once) t))
          (should (string-match-p "\"success\":true"
                                  (gptel-scope-test--tool-result #'gptel-scope-run-bash-command "rm y" dir)))
          (should-not (file-exists-p (expand-file-name "y" dir))))))))

(defun gptel-scope-test--tool-result (fn &rest args)
  "Call async tool FN with ARGS and return its JSON string."
  (let (r)
    (apply fn (lambda (x) (setq r x)) args)
    (with-timeout (10 (error "No result")) (while (not r) (accept-process-output nil 0.05)))
    r))

(ert-deftest gptel-scope-test-e09-e25-menu-offers-edit-and-closes-on-choice ()
  (gptel-scope-test-with-expansion
    (let ((keys (mapcar (lambda (s) (plist-get (nth 2 s) :key))
                        (apply #'append (mapcar (lambda (g) (aref g 3)) (get 'gptel-scope-expansion-menu 'transient--layout))))))
      (should (equal keys '("d" "a" "o" "e" "q"))))
    (gptel-scope-test--expand "run_bash_command" "rm q" "why")
    (call-interactively #'gptel-scope-expansion-deny)
    (should (null gptel-scope--expansion-current))))

(ert-deftest gptel-scope-test-e21-grant-survives-until-its-call ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls]\n    dangerous: [rm]\n"
    (with-temp-buffer
      (setq default-directory dir)
      (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm nothing")))
      (gptel-scope-test--tool-result #'gptel-scope-run-bash-command "ls" dir)
      (gptel-scope-test--tool-result #'gptel-scope-run-bash-command "rm other" dir)
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm nothing")))))))

(ert-deftest gptel-scope-test-e27-e28-callback-and-context-in-scope ()
  (gptel-scope-test-with-project dir "bash_tools: {}\n"
    (gptel-scope-test-with-expansion
      (with-temp-buffer
        (setq default-directory dir)
        (gptel-scope-test--expand "run_bash_command" "rm q" "why")
        (let ((req (gptel-scope--transient-scope)))
          (should (functionp (plist-get req :callback)))
          (should (equal (plist-get req :directory) dir))
          (should (equal (plist-get req :document) (expand-file-name "scope.yml" dir))))))))

(ert-deftest gptel-scope-test-e43-every-answer-explains-itself ()
  (gptel-scope-test-with-expansion
    (dolist (choice (list #'gptel-scope-expansion-deny #'gptel-scope-expansion-allow-once #'gptel-scope-expansion-cancel))
      (with-temp-buffer
        (let ((answers (gptel-scope-test--expand "run_bash_command" "rm q" "why")))
          (call-interactively choice)
          (should (> (length (plist-get (car (funcall answers)) :message)) 20)))))))
