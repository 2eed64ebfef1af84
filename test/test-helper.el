;;; test-helper.el --- Shared setup of the gptel-scope ERT suite  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded first by `make test-elisp' (and by ert-runner): puts lisp/ on the
;; load path, loads gptel-scope and its module (batch Emacs builds it with
;; cargo when it is missing), and gives the tests their helpers: temporary
;; projects, tool calls that wait for their one answer, and keys typed
;; into the real transient menu.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'seq)

(defconst gptel-scope-test-root
  (file-name-directory (directory-file-name (file-name-directory (or load-file-name buffer-file-name))))
  "The repository root.")

(add-to-list 'load-path (expand-file-name "lisp" gptel-scope-test-root))
;; gptel is used when it is on the load path; its tests are skipped otherwise.
(require 'gptel nil t)
(require 'gptel-scope)
(require 'gptel-scope-demo)
(gptel-scope-load-module)

(defmacro gptel-scope-test-with-project (var scope &rest body)
  "Bind VAR to a fresh project directory holding scope.yml with SCOPE, run BODY.
With SCOPE nil the directory has no scope.yml."
  (declare (indent 2))
  `(let ((,var (file-name-as-directory (file-truename (make-temp-file "gptel-scope-test-" t)))))
     (unwind-protect
         (progn
           (when ,scope
             (with-temp-file (expand-file-name "scope.yml" ,var) (insert ,scope)))
           ,@body)
       (delete-directory ,var t))))

(defmacro gptel-scope-test-in-chat (dir &rest body)
  "Run BODY in a fresh chat buffer whose `default-directory' is DIR."
  (declare (indent 1))
  `(with-temp-buffer
     (setq default-directory (file-name-as-directory ,dir))
     ,@body))

(defun gptel-scope-test-check (dir command &optional grants)
  "Judge COMMAND in DIR under the nearest scope.yml with GRANTS; return the plist."
  (gptel-scope-module-check-command
   (json-serialize (list :command command :directory (directory-file-name dir)
                         :sources (vector (list :file (expand-file-name
                                                       "scope.yml" (locate-dominating-file dir "scope.yml"))))
                         :grants (or grants [])))))

(defun gptel-scope-test-parse (json)
  "Parse the tool result JSON into a plist, false and null as nil."
  (json-parse-string json :object-type 'plist :false-object nil :null-object nil))

(defun gptel-scope-test-settle ()
  "Let pending timers run."
  (dotimes (_ 4) (accept-process-output nil 0.01)))

(defun gptel-scope-test-call-raw (fn &rest args)
  "Call the async tool FN with ARGS; wait for its one result and return the JSON."
  (let ((results nil))
    (apply fn (lambda (r) (push r results)) args)
    (with-timeout (30 (error "No result from %s" fn))
      (while (not results) (accept-process-output nil 0.02)))
    (gptel-scope-test-settle)
    (should (= (length results) 1))
    (should (stringp (car results)))
    (car results)))

(defun gptel-scope-test-call (fn &rest args)
  "Call the async tool FN with ARGS; wait for its one result, parsed."
  (gptel-scope-test-parse (apply #'gptel-scope-test-call-raw fn args)))

(defun gptel-scope-test-press (keys &optional thunk)
  "Run THUNK as a command in the current buffer, then type KEYS into its menu."
  (gptel-scope-demo-press keys thunk)
  (gptel-scope-test-settle))

(defun gptel-scope-test-close-menus ()
  "Close any transient menu left open."
  (when (bound-and-true-p transient--prefix)
    (condition-case nil
        (execute-kbd-macro (kbd "C-g"))
      (quit nil)))
  (gptel-scope-test-settle))

(defmacro gptel-scope-test-with-expansion (&rest body)
  "Run BODY with an empty expansion state, closing any menu afterwards."
  (declare (indent 0))
  `(let ((gptel-scope--expansion-queue nil)
         (gptel-scope--expansion-current nil)
         (gptel-scope--expansion-pending nil))
     (unwind-protect (progn ,@body)
       (gptel-scope-test-close-menus))))

(defun gptel-scope-test-ask (keys tool resource &optional reason)
  "In the current buffer, let the model ask for TOOL on RESOURCE; type KEYS.
Return a function of no argument returning the parsed answers so far."
  (let ((answers nil))
    (gptel-scope-test-press
     keys (lambda ()
            (gptel-scope-request-scope-expansion (lambda (a) (push a answers))
                                                 tool resource (or reason "the task needs it"))))
    (lambda () (mapcar #'gptel-scope-test-parse (reverse answers)))))

(defun gptel-scope-test-file-string (file)
  "Return FILE's contents, byte for byte."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally file)
    (buffer-string)))

(defun gptel-scope-test-menu-text ()
  "Return the text of the transient menu as shown."
  (let ((b (get-buffer " *transient*")))
    (and b (with-current-buffer b (buffer-string)))))

(provide 'test-helper)
;;; test-helper.el ends here
