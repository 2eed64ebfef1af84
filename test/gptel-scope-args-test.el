;;; gptel-scope-args-test.el --- What users run: any JSON value, text results, remote directories  -*- lexical-binding: t; -*-

;;; Commentary:

;; Every function gptel calls with what the model sent, taken from the
;; real registration (`gptel-scope-register-tools' with `gptel-make-tool'
;; captured): each tool function and each :confirm function, with every
;; kind of JSON value a backend hands over in every argument position.
;; A tool answers exactly once, with text; a malformed argument is an
;; invalid_argument refusal naming it; a :confirm function answers t or
;; nil and never signals.
;;
;; Results are text gptel can put into its next request on every Emacs:
;; Emacs 30's `json-serialize' returns unibyte UTF-8 and refuses a
;; unibyte string that is not ASCII; `gptel-scope-test--emacs-30-json'
;; makes Emacs 28 and 29 behave so, and the tests run under it too.
;;
;; A remote (TRAMP) chat directory or directory argument is refused with
;; reason remote_directory before any connection is attempted.

;;; Code:

(require 'test-helper)
(require 'gptel-scope)

(defconst gptel-scope-test--args-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [echo, cat, ls, printf, head, sleep]
    safe_write: [touch]
  timeout: 5
  max_output_chars: 100
approval_policy: mutating
"
  "The scope of these tests: gptel is asked to confirm writing calls.")

(defmacro gptel-scope-test--with-args-project (var &rest body)
  "Run BODY in a chat buffer on a fresh project bound to VAR.
It holds scope.yml, a.txt and café.txt.  No terminal session or
expansion request is left behind."
  (declare (indent 1))
  `(gptel-scope-test-with-project ,var gptel-scope-test--args-scope
     (with-temp-file (expand-file-name "a.txt" ,var) (insert "hi\n"))
     (with-temp-file (expand-file-name "café.txt" ,var) (insert "naïve ✓\n"))
     (with-temp-file (expand-file-name "a" ,var) (insert "a\n"))
     (let ((gptel-scope-pty--sessions (make-hash-table))
           ;; No session id is a small number: 5 names none.
           (gptel-scope-pty--last-id (max 100 gptel-scope-pty--last-id))
           (gptel-scope-prompt-on-denial nil)
           (gptel-scope--expansion-queue nil)
           (gptel-scope--expansion-current nil)
           (gptel-scope--expansion-pending nil)
           ;; The user denies every expansion request at once.
           (gptel-scope-expansion-show-function
            (lambda (request)
              (gptel-scope--expansion-answer
               request (gptel-scope--denied-json request "Denied by the test.")))))
       (unwind-protect
           (gptel-scope-test-in-chat ,var ,@body)
         (gptel-scope-pty-close-all)))))

;;;; The functions gptel calls, from the real registration

(defun gptel-scope-test--registered-tools ()
  "Return the tool specs `gptel-scope-register-tools' gives `gptel-make-tool'.
As gptel 0.9.9.3 or later gets them, with :confirm functions."
  (let ((specs nil))
    (cl-letf (((symbol-function 'gptel-make-tool) (lambda (&rest spec) (push spec specs)))
              ((symbol-function 'gptel-scope--confirm-functions-p) (lambda () t)))
      (gptel-scope-register-tools))
    (nreverse specs)))

(defun gptel-scope-test--tool (name)
  "Return the registered spec of the tool NAME."
  (or (seq-find (lambda (s) (equal (plist-get s :name) name)) (gptel-scope-test--registered-tools))
      (error "No tool %s" name)))

(defun gptel-scope-test--invoke (spec args &optional wait)
  "Call SPEC's function as gptel does with ARGS; return the list of results.
An async tool gets a callback first; its results are collected for WAIT
seconds after the first (0.02 by default), so a second answer shows.  A
sync tool's return value is its one result."
  (if (plist-get spec :async)
      (let ((results nil))
        (apply (plist-get spec :function) (lambda (r) (push r results)) args)
        (with-timeout (20 (error "No answer from %s with %S" (plist-get spec :name) args))
          (while (not results) (accept-process-output nil 0.01)))
        (let ((end (+ (float-time) (or wait 0.02))))
          (while (< (float-time) end) (accept-process-output nil 0.01)))
        (nreverse results))
    (list (apply (plist-get spec :function) args))))

(defun gptel-scope-test--text-p (s)
  "Return non-nil when S is text gptel can send: multibyte, or pure ASCII."
  (and (stringp s)
       (or (multibyte-string-p s) (cl-every (lambda (c) (< c 128)) s))))

(defun gptel-scope-test--should-be-text (result)
  "Check that RESULT survives gptel's next request: serialized and read back."
  (should (gptel-scope-test--text-p result))
  (let ((back (plist-get (json-parse-string (json-serialize (list :content result))
                                            :object-type 'plist)
                         :content)))
    (should (equal back result))))

(defun gptel-scope-test--one-answer (spec args)
  "Call SPEC with ARGS; check it answered once, with text; return it parsed.
A result that is not JSON (list_allowed_commands answers text) is
returned as (:text RESULT)."
  (let ((results (gptel-scope-test--invoke spec args)))
    (should (= (length results) 1))
    (gptel-scope-test--should-be-text (car results))
    (condition-case nil
        (gptel-scope-test-parse (car results))
      (json-parse-error (list :text (car results))))))

;;;; The JSON values

(defconst gptel-scope-test--json-values
  '((nil . nil) (null . :null) (false . :json-false) (true . t)
    (int . 5) (integral-float . 5.0) (float . 5.5)
    (empty-string . "") (string . "x")
    (empty-array . []) (array . ["a"])
    (plist . (:a 1)) (alist . ((a . 1)))
    (missing . missing))
  "Each kind of JSON value a backend passes, named.
`missing' stands for an argument left out: the call has fewer arguments.")

(defun gptel-scope-test--valid-p (type optional name value)
  "Return non-nil when VALUE is valid for the argument NAME of TYPE.
OPTIONAL non-nil when the argument may be left out."
  (let ((absent (memq value '(nil :null :json-false missing)))
        ;; Registering with the real gptel makes the types strings.
        (type (if (stringp type) (intern type) type)))
    (pcase type
      ('boolean (or absent (eq value t)))
      ('array (or absent (member value '("" [] ["a"]))))
      (_ (cond
          (absent (or optional (equal name "reason")))
          ((equal value "") (or optional (equal name "reason")))
          ((and (equal name "include") (member value '([] ["a"]))) t)
          ((eq type 'integer) (member value '(5 5.0)))
          ((eq type 'string) (equal value "x")))))))

(defun gptel-scope-test--base-args (name dir)
  "Return valid arguments for the tool NAME in the project DIR.
For write_stdin a session is started first."
  (pcase name
    ("run_bash_command" (list "echo hi" "." nil))
    ("run_command" (list "cat" ["a.txt"] "." nil))
    ("exec_command" (list "echo hi" "." 0 nil))
    ("write_stdin"
     (let ((r (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir 0)))
       (list (or (plist-get r :session_id) (error "No session: %S" r)) "" 0 nil nil)))
    ("read_file" (list "a.txt" nil nil nil))
    ("list_dir" (list nil nil nil nil))
    ("grep_files" (list "hi" nil nil nil))
    ("apply_patch" (list "*** Begin Patch\n*** Add File: new.txt\n+new\n*** End Patch\n"))
    ("request_scope_expansion" (list "run_bash_command" "rm" "cleaning up"))
    (_ nil)))

(defun gptel-scope-test--args-with (base position value)
  "Return BASE with VALUE at POSITION; `missing' cuts the list there."
  (if (eq value 'missing)
      (seq-take base position)
    (let ((args (copy-sequence base)))
      (setf (nth position args) value)
      args)))

(defun gptel-scope-test--cell (spec dir position value)
  "Call SPEC with VALUE at POSITION, the other arguments valid, in DIR.
Return the parsed answer."
  (unwind-protect
      (gptel-scope-test--one-answer
       spec (gptel-scope-test--args-with
             (gptel-scope-test--base-args (plist-get spec :name) dir) position value))
    (gptel-scope-pty-close-all)
    (ignore-errors (delete-file (expand-file-name "new.txt" dir)))))


(defconst gptel-scope-test--valid-outcomes
  '((("run_bash_command" "command" string) . "command_not_allowed")
    (("run_bash_command" "directory" string) . "invalid_argument")
    (("run_command" "command" string) . "command_not_allowed")
    (("run_command" "directory" string) . "invalid_argument")
    (("exec_command" "cmd" string) . "command_not_allowed")
    (("exec_command" "workdir" string) . "invalid_argument")
    (("write_stdin" "session_id" int) . "invalid_argument")
    (("write_stdin" "session_id" integral-float) . "invalid_argument")
    (("read_file" "path" string) . "not_found")
    (("read_file" "mode" string) . "invalid_argument")
    (("list_dir" "path" string) . "not_found")
    (("grep_files" "path" string) . "not_found")
    (("apply_patch" "patch" string) . "patch_parse_error"))
  "What a call with a valid value answers when it is not success.
Keyed by (TOOL ARGUMENT VALUE-NAME): the reason of the refusal that
comes after the arguments were taken (a directory \"x\" that does not
exist, session 5 that is not open).  A valid request_scope_expansion
is denied by the user (`gptel-scope-test--with-args-project').")

(defun gptel-scope-test--expected-invalid (args position value)
  "Return the name of the argument the call should be refused for, or nil.
ARGS are the registered argument specs; VALUE is at POSITION.  A
`missing' value leaves out every argument from POSITION on."
  (cl-loop for a in (nthcdr position args)
           for v = value then 'missing
           unless (gptel-scope-test--valid-p (plist-get a :type) (plist-get a :optional)
                                             (plist-get a :name) v)
           return (plist-get a :name)
           ;; A value in place stops the look at later arguments.
           unless (eq value 'missing) return nil))

(ert-deftest gptel-scope-test-args-every-tool-takes-every-json-value ()
  "Each tool x each argument x each JSON value: one text answer, exact reasons."
  (gptel-scope-test--with-args-project dir
    (let ((wrong nil) (cells 0))
      (dolist (spec (gptel-scope-test--registered-tools))
        (let ((tool (plist-get spec :name))
              (args (plist-get spec :args)))
          (cl-loop
           for a in args for i from 0 do
           (dolist (v gptel-scope-test--json-values)
             (cl-incf cells)
             (let* ((r (gptel-scope-test--cell spec dir i (cdr v)))
                    (bad (gptel-scope-test--expected-invalid args i (cdr v)))
                    (expected
                     (cond (bad (list :reason "invalid_argument" :argument bad))
                           ((equal tool "request_scope_expansion") (list :user_denied t))
                           (t (let ((reason (cdr (assoc (list tool (plist-get a :name) (car v))
                                                        gptel-scope-test--valid-outcomes))))
                                (if reason (list :reason reason) (list :success t))))))
                    (ok (and (not (plist-get r :success)) (not (plist-get expected :success))
                             (equal (plist-get r :reason) (plist-get expected :reason))
                             (equal (plist-get r :argument) (plist-get expected :argument))
                             (eq (plist-get r :user_denied) (plist-get expected :user_denied)))))
               (when (plist-get expected :success) (setq ok (eq (plist-get r :success) t)))
               (when (and ok bad)
                 ;; The message names the argument and says what it must be.
                 (setq ok (and (string-match-p (format "`%s' must be" (regexp-quote bad))
                                               (plist-get r :message))
                               (stringp (plist-get r :expected)))))
               (unless ok
                 (push (list tool (plist-get a :name) (car v) :expected expected
                             :got (list :success (plist-get r :success) :reason (plist-get r :reason)
                                        :argument (plist-get r :argument) :message (plist-get r :message)))
                       wrong)))))))
      (should (> cells 400))
      (should (equal (reverse wrong) nil)))))

(ert-deftest gptel-scope-test-args-tools-without-arguments ()
  "The tools without arguments, list_allowed_commands and get_system_info, answer text."
  (gptel-scope-test--with-args-project dir
    (dolist (name '("list_allowed_commands" "get_system_info"))
      (let ((spec (gptel-scope-test--tool name)))
        (should-not (plist-get spec :args))
        (let ((r (gptel-scope-test--one-answer spec nil)))
          (if (equal name "get_system_info")
              (should (eq (plist-get r :success) t))
            (should (string-match-p "echo" (plist-get r :text)))))))))

(ert-deftest gptel-scope-test-args-every-confirm-takes-every-json-value ()
  "Each :confirm x each argument x each JSON value: t or nil, never a signal."
  (gptel-scope-test--with-args-project dir
    (let ((specs (seq-filter (lambda (s) (plist-get s :confirm)) (gptel-scope-test--registered-tools)))
          (answers nil))
      (should (equal (sort (mapcar (lambda (s) (plist-get s :name)) specs) #'string<)
                     '("apply_patch" "exec_command" "get_system_info" "grep_files" "list_dir"
                       "read_file" "run_bash_command" "run_command" "write_stdin")))
      (dolist (spec specs)
        (let ((base (gptel-scope-test--base-args (plist-get spec :name) dir)))
          (unwind-protect
              (progn
                (push (list (plist-get spec :name) 'base (apply (plist-get spec :confirm) base)) answers)
                (cl-loop for a in (plist-get spec :args) for i from 0 do
                         (dolist (v gptel-scope-test--json-values)
                           (push (list (plist-get spec :name) (plist-get a :name) (car v)
                                       (apply (plist-get spec :confirm)
                                              (gptel-scope-test--args-with base i (cdr v))))
                                 answers))))
            (gptel-scope-pty-close-all))))
      ;; Every answer is a boolean.
      (should (equal (seq-remove (lambda (a) (memq (car (last a)) '(t nil))) answers) nil))
      (cl-flet ((answer (&rest key) (car (last (seq-find (lambda (a) (equal (butlast a) key)) answers)))))
        ;; approval_policy mutating: reads pass, writes and session input are confirmed.
        (should (eq (answer "run_bash_command" 'base) nil))
        (should (eq (answer "apply_patch" 'base) t))
        (should (eq (answer "write_stdin" 'base) t))
        (should (eq (answer "read_file" 'base) nil))
        ;; A malformed argument: no confirmation (the call is refused, nothing runs).
        (should (eq (answer "run_command" "args" 'true) nil))
        (should (eq (answer "run_command" "args" 'plist) nil))
        (should (eq (answer "run_bash_command" "command" 'null) nil))
        ;; A missing args is no arguments; 5.0 is 5.
        (should (eq (answer "run_command" "args" 'null) nil))
        (should (eq (answer "exec_command" "yield_time_ms" 'integral-float) nil)))
      ;; A command that writes is confirmed, through every form of its arguments.
      (let ((confirm (plist-get (gptel-scope-test--tool "run_bash_command") :confirm))
            (confirm-argv (plist-get (gptel-scope-test--tool "run_command") :confirm)))
        (should (eq (funcall confirm "touch new.txt" "." 5.0) t))
        (should (eq (funcall confirm "touch new.txt" ".") t))
        (should (eq (funcall confirm-argv "cat" :null ".") nil))))))

(ert-deftest gptel-scope-test-args-confirm-answers-t-on-an-unexpected-error ()
  "An error that is not gptel-scope's own asks the user rather than run unconfirmed."
  (gptel-scope-test--with-args-project dir
    (let ((confirm (plist-get (gptel-scope-test--tool "run_bash_command") :confirm)))
      (cl-letf (((symbol-function 'gptel-scope-module-judge)
                 (lambda (&rest _) (error "Something unexpected"))))
        (should (eq (funcall confirm "echo hi" ".") t)))
      (cl-letf (((symbol-function 'gptel-scope-module-judge)
                 (lambda (&rest _) (signal 'gptel-scope-no-scope-config '("none")))))
        (should (eq (funcall confirm "echo hi" ".") nil))))))

(ert-deftest gptel-scope-test-args-integral-floats-are-integers ()
  "Gemini and Ollama send 5.0: every integer argument takes it and the tool proceeds."
  (gptel-scope-test--with-args-project dir
    (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" "." 5.0)))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :output) "hi\n")))
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file "café.txt" 0.0 1.0 :null)))
      (should (equal (plist-get r :content) "naïve ✓")))
    (let ((r (gptel-scope-test-call #'gptel-scope-list-dir "." 1.0 "0" 2.0)))
      (should (eq (plist-get r :success) t)))
    (let* ((r (gptel-scope-test-call #'gptel-scope-exec-command "cat" "." 0.0 100.0))
           (sid (plist-get r :session_id)))
      (should (integerp sid))
      (gptel-scope-test-await-session sid)
      (let ((w (gptel-scope-test-call #'gptel-scope-write-stdin (float sid) "ok\n" 500.0 100.0)))
        (should (string-match-p "ok" (plist-get w :output))))
      (let ((w (gptel-scope-test-call #'gptel-scope-write-stdin (number-to-string sid) "" 0 nil t)))
        (should (eq (plist-get w :closed) t))))
    ;; A string holding a JSON array of strings is taken as the array.
    (let ((r (gptel-scope-test-call #'gptel-scope-run-command "cat" "[\"a.txt\"]" ".")))
      (should (equal (plist-get r :output) "hi\n")))))

(ert-deftest gptel-scope-test-args-an-error-after-the-start-still-answers-once ()
  "An error in a tool's continuation (a sentinel, a timer, the menu) is its one answer."
  (gptel-scope-test--with-args-project dir
    ;; In the process sentinel, after the command ran.
    (cl-letf (((symbol-function 'gptel-scope--result-json)
               (lambda (&rest _) (error "Broken result"))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" ".")))
        (should (equal (plist-get r :reason) "error"))
        (should (string-match-p "Broken result" (plist-get r :message)))))
    ;; In the timer that answers write_stdin.
    (let* ((sid (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir 0) :session_id)))
      (cl-letf (((symbol-function 'gptel-scope-pty--kill) (lambda (&rest _) (error "Broken kill"))))
        (let ((r (gptel-scope-test-call #'gptel-scope-write-stdin sid "" 10 nil t)))
          (should (equal (plist-get r :reason) "error"))
          (should (string-match-p "Broken kill" (plist-get r :message))))))
    ;; In the answer to the user's choice at a refusal.
    (let ((gptel-scope-prompt-on-denial t))
      (cl-letf (((symbol-function 'gptel-scope--refused-by-user-json)
                 (lambda (&rest _) (error "Broken answer"))))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "rm a" ".")))
          (should (equal (plist-get r :reason) "error"))
          (should (string-match-p "Broken answer" (plist-get r :message))))))))

(defvar gptel-confirm-tool-calls)
(declare-function gptel-make-fsm "ext:gptel-request")
(declare-function gptel--handle-tool-use "ext:gptel-request")
(declare-function gptel--fsm-transition "ext:gptel-request")
(declare-function gptel-get-tool "ext:gptel")

(ert-deftest gptel-scope-test-args-gptel-confirms-null-arguments-without-hanging ()
  "Through gptel's own tool handling, with :confirm functions: a null args answers."
  (skip-unless (featurep 'gptel))
  (skip-unless (gptel-scope--confirm-functions-p))
  (gptel-scope-test--with-args-project dir
    (gptel-scope-register-tools)
    (let* ((done nil) (asked nil)
           (calls '(("run_command" :command "cat" :args :null :directory ".")
                    ("run_command" :command "cat" :args (:a 1) :directory ".")
                    ("run_bash_command" :command :null :directory :json-false :timeout 5.5)
                    ("read_file" :path "café.txt" :offset 0.0 :limit :null)))
           (tool-use (mapcar (lambda (c) (list :name (car c) :args (cdr c) :id (car c))) calls))
           (fsm (gptel-make-fsm
                 :state 'TYPE
                 :table '((TYPE . ((t . TOOL))) (TOOL . ((t . DONE))))
                 :handlers `((TOOL ,#'gptel--handle-tool-use)
                             (DONE ,(lambda (_) (setq done t))))
                 :info (list :buffer (current-buffer) :backend 'test-backend
                             :tools (mapcar (lambda (c) (gptel-get-tool (car c))) calls)
                             :tool-use tool-use
                             :callback (lambda (&rest _) (setq asked t))))))
      (let ((gptel-confirm-tool-calls 'auto))
        (gptel--fsm-transition fsm 'TOOL))
      (with-timeout (20 (error "The tool calls did not finish in gptel"))
        (while (not done) (accept-process-output nil 0.02)))
      (should-not asked)
      (let ((r (mapcar (lambda (c) (gptel-scope-test-parse (plist-get c :result))) tool-use)))
        (should (eq (plist-get (nth 0 r) :success) t))
        (should (equal (mapcar (lambda (x) (list (plist-get x :reason) (plist-get x :argument)))
                               (seq-subseq r 1 3))
                       '(("invalid_argument" "args") ("invalid_argument" "command"))))
        (should (equal (plist-get (nth 3 r) :content) "naïve ✓"))))))

;;;; Results are text on every Emacs

(defun gptel-scope-test--unibyte-non-ascii-p (object)
  "Return non-nil when OBJECT has a unibyte string in it that is not ASCII."
  (cond ((stringp object)
         (and (not (multibyte-string-p object)) (cl-some (lambda (c) (> c 127)) object)))
        ((vectorp object) (cl-some #'gptel-scope-test--unibyte-non-ascii-p object))
        ((consp object) (or (gptel-scope-test--unibyte-non-ascii-p (car object))
                            (gptel-scope-test--unibyte-non-ascii-p (cdr object))))
        ((hash-table-p object)
         (let (found)
           (maphash (lambda (k v) (when (or (gptel-scope-test--unibyte-non-ascii-p k)
                                            (gptel-scope-test--unibyte-non-ascii-p v))
                                    (setq found t)))
                    object)
           found))))

(defun gptel-scope-test--json-serialize-as-30 (serialize object &rest args)
  "Call SERIALIZE (`json-serialize') on OBJECT and ARGS as Emacs 30 does.
A unibyte string that is not ASCII is refused; the result is unibyte UTF-8."
  (when (gptel-scope-test--unibyte-non-ascii-p object)
    (signal 'wrong-type-argument (list 'json-value-p object)))
  (let ((s (apply serialize object args)))
    (if (multibyte-string-p s) (encode-coding-string s 'utf-8-unix t) s)))

(defmacro gptel-scope-test--with-json-of (version &rest body)
  "Run BODY with `json-serialize' as on Emacs VERSION, 28 or 30.
On Emacs 30 itself both are the native one."
  (declare (indent 1))
  `(if (and (eql ,version 30) (< emacs-major-version 30))
       (progn
         (advice-add 'json-serialize :around #'gptel-scope-test--json-serialize-as-30)
         (unwind-protect (progn ,@body)
           (advice-remove 'json-serialize #'gptel-scope-test--json-serialize-as-30)))
     ,@body))

(ert-deftest gptel-scope-test-args-emacs-30-json-is-simulated ()
  "The simulation refuses what Emacs 30 refuses, so the tests below mean something."
  (gptel-scope-test--with-json-of 30
    (let ((json (json-serialize '(:a "é"))))
      (should-not (multibyte-string-p json))
      (should-error (json-serialize (list :content json)) :type 'wrong-type-argument)
      (should (multibyte-string-p (gptel-scope--json-encode '(:a "é"))))
      (should (equal (gptel-scope--json :a "é") "{\"a\":\"é\"}")))))

(defun gptel-scope-test--text-results (dir)
  "Call the tools with non-ASCII text in DIR; return (NAME RESULT CHECK) triples.
CHECK is a function of the parsed result that must return non-nil."
  (let ((out nil))
    (cl-flet ((call (name check fn &rest args)
                (push (list name (apply #'gptel-scope-test-call-raw fn args) check) out)))
      (call "echo" (lambda (r) (equal (plist-get r :output) "héllo ✓\n"))
            #'gptel-scope-run-bash-command "echo 'héllo ✓'" ".")
      (call "run_command" (lambda (r) (equal (plist-get r :output) "naïve ✓\n"))
            #'gptel-scope-run-command "cat" ["café.txt"] ".")
      (call "exec_command" (lambda (r) (string-match-p "héllo ✓" (plist-get r :output)))
            #'gptel-scope-exec-command "echo 'héllo ✓'" "." 5000)
      (call "list_dir" (lambda (r) (string-match-p "café\\.txt" (plist-get r :content)))
            #'gptel-scope-list-dir ".")
      (call "read_file" (lambda (r) (equal (plist-get r :content) "naïve ✓"))
            #'gptel-scope-read-file "café.txt")
      (call "grep_files" (lambda (r) (string-match-p "café\\.txt:1:naïve ✓" (plist-get r :content)))
            #'gptel-scope-grep-files "naïve")
      (call "refusal, path" (lambda (r) (and (equal (plist-get r :reason) "path_not_in_scope")
                                             (string-match-p "/tmp/ünï/x" (plist-get r :message))))
            #'gptel-scope-run-bash-command "cat /tmp/ünï/x" ".")
      (call "refusal, file tool" (lambda (r) (string-match-p "ünï" (plist-get r :message)))
            #'gptel-scope-read-file "/tmp/ünï/x")
      (call "refusal, argument" (lambda (r) (and (equal (plist-get r :argument) "timeout")
                                                 (string-match-p "\"cinq ✓\"" (plist-get r :message))))
            #'gptel-scope-run-bash-command "echo hi" "." "cinq ✓")
      (call "refusal, directory" (lambda (r) (string-match-p "dïr" (plist-get r :message)))
            #'gptel-scope-run-bash-command "echo hi" "dïr")
      ;; 150 × ✓ (3 bytes each) cut to its first and last 50 characters,
      ;; and a terminal answer of 4 bytes: 1 ✓ and a third of one.
      (call "truncated" (lambda (r) (and (eq (plist-get r :truncated) t)
                                         (string-prefix-p (make-string 50 ?✓) (plist-get r :output))
                                         (string-suffix-p (make-string 50 ?✓) (plist-get r :output))))
            #'gptel-scope-run-bash-command "cat checks.txt" ".")
      (call "truncated pty" (lambda (r) (and (eq (plist-get r :truncated) t)
                                             (string-prefix-p "✓" (plist-get r :output))))
            #'gptel-scope-exec-command "cat checks.txt" "." 5000 1)
      (call "get_system_info" (lambda (r) (string-match-p "sübdir" (plist-get r :default_directory)))
            (lambda (callback)
              (let ((default-directory (expand-file-name "sübdir/" dir)))
                (funcall callback (gptel-scope-system-info)))))
      (call "list_allowed_commands" #'identity
            (lambda (callback) (funcall callback (gptel-scope-list-allowed-commands)))))
    (nreverse out)))

(ert-deftest gptel-scope-test-args-results-are-text-on-every-emacs ()
  "Non-ASCII output, file names, refusals and cut output: text gptel can send."
  (dolist (version '(28 30))
    (gptel-scope-test--with-args-project dir
      (with-temp-file (expand-file-name "checks.txt" dir) (insert (make-string 150 ?✓)))
      (make-directory (expand-file-name "sübdir" dir))
      (gptel-scope-test--with-json-of version
        (dolist (case (gptel-scope-test--text-results dir))
          (let ((result (nth 1 case)))
            (ert-info ((format "Emacs %s JSON, %s: %S" version (car case) result))
              (gptel-scope-test--should-be-text result)
              (should (funcall (nth 2 case)
                               (condition-case nil (gptel-scope-test-parse result)
                                 (json-parse-error result)))))))))))

(ert-deftest gptel-scope-test-args-invalid-utf-8-output-is-the-same-on-every-emacs ()
  "Bytes that are not UTF-8 come back as U+FFFD in the same text on 28 and 30."
  (let ((texts nil))
    (dolist (version '(28 30))
      (gptel-scope-test--with-args-project dir
        (gptel-scope-test--with-json-of version
          (let ((json (gptel-scope-test-call-raw #'gptel-scope-run-bash-command
                                                 "printf 'a\\xff\\xfeb\\xc3\\n'" ".")))
            (gptel-scope-test--should-be-text json)
            (should (equal (plist-get (gptel-scope-test-parse json) :output) "a\uFFFD\uFFFDb\uFFFD\n"))
            (should (string-match-p "\"output\":\"a\uFFFD\uFFFDb\uFFFD\\\\n\"" json))
            (push (replace-regexp-in-string "\"duration_ms\":[0-9]+" "" json) texts)))))
    (should (equal (nth 0 texts) (nth 1 texts)))))

(ert-deftest gptel-scope-test-args-module-strings-are-text ()
  "The module's JSON is text: multibyte when it is not ASCII."
  (gptel-scope-test--with-args-project dir
    (let* ((d (gptel-scope-check-bash-command "cat /tmp/ünï/x" "." nil t))
           (json (gptel-scope--denial-json d)))
      (should (string-match-p "ünï" json))
      (should (multibyte-string-p json))
      (gptel-scope-test--should-be-text json))
    ;; An inline scope with a non-ASCII path, nested JSON in the request.
    (gptel-scope-test--with-json-of 30
      (setq-local gptel-scope-inline '(:paths (:deny ("/tmp/ünï/**"))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat /tmp/ünï/x" ".")))
        ;; Denied by the inline scope, not merely out of scope.
        (should (equal (plist-get r :reason) "path_denied"))
        (gptel-scope-test--should-be-text (gptel-scope-test-call-raw #'gptel-scope-run-bash-command
                                                                     "cat /tmp/ünï/x" "."))))))

;;;; Remote directories

(defconst gptel-scope-test--remote-directories
  '("/ssh:nonexistent.invalid:/p/" "/sudo:root@nonexistent.invalid:/tmp/p/")
  "TRAMP directories that cannot be reached: a connection would fail or hang.")

(defvar gptel-scope-test--tramp-calls nil
  "What reached TRAMP or started a process while recording: (WHAT . ARG) pairs.")

(defun gptel-scope-test--record-tramp (what)
  "Return advice recording a call of WHAT in `gptel-scope-test--tramp-calls'."
  (lambda (&rest args)
    (push (cons what (car args)) gptel-scope-test--tramp-calls)))

(defconst gptel-scope-test--watched
  '(tramp-file-name-handler tramp-maybe-open-connection tramp-send-command
    tramp-sh-handle-expand-file-name tramp-handle-file-exists-p
    make-process make-network-process call-process process-file start-file-process)
  "What a refusal of a remote directory must not call (but `file-remote-p').")

(defmacro gptel-scope-test--recording-tramp (&rest body)
  "Record and return what reaches TRAMP in BODY.
A call of `tramp-file-name-handler' for `file-remote-p' is not
recorded: it reads the name and connects to nothing."
  (declare (indent 0))
  `(let ((gptel-scope-test--tramp-calls nil)
         (advices (mapcar (lambda (f) (cons f (gptel-scope-test--record-tramp f)))
                          gptel-scope-test--watched)))
     ;; TRAMP loads its own files on its first use (file names expanded
     ;; against the remote `default-directory' then): warm it up first.
     (require 'tramp)
     (let ((default-directory temporary-file-directory))
       (mapc #'file-remote-p gptel-scope-test--remote-directories))
     (dolist (a advices) (advice-add (car a) :before (cdr a)))
     (unwind-protect (progn ,@body)
       (dolist (a advices) (advice-remove (car a) (cdr a))))
     (seq-remove (lambda (c) (and (eq (car c) 'tramp-file-name-handler)
                                  (eq (cdr c) 'file-remote-p)))
                 gptel-scope-test--tramp-calls)))

(defun gptel-scope-test--remote-args (name)
  "Return arguments for the tool NAME, with relative directories."
  (pcase name
    ("write_stdin" (list 1 "" 0 nil nil))
    (_ (gptel-scope-test--base-args name nil))))

(ert-deftest gptel-scope-test-args-remote-chat-directory-is-refused-first ()
  "A TRAMP default-directory: every tool and :confirm refuses, connecting to nothing."
  (gptel-scope-test--with-args-project dir
    (dolist (remote gptel-scope-test--remote-directories)
      (let ((specs (gptel-scope-test--registered-tools))
            (results nil))
        (with-temp-buffer
          (let ((start (float-time)))
            (should
             (equal
              (gptel-scope-test--recording-tramp
                (setq default-directory remote)
                (dolist (spec specs)
                  (let ((args (gptel-scope-test--remote-args (plist-get spec :name))))
                    (push (list (plist-get spec :name)
                                (car (gptel-scope-test--invoke spec args 0))
                                (and (plist-get spec :confirm) (apply (plist-get spec :confirm) args))
                                (and (plist-get spec :confirm) t))
                          results)))
                ;; The guard of other tools, and what explain asks.
                (let ((gptel-scope-guarded-tools '(("mcp_read" (:path . read)))))
                  (push (list "mcp_read" (plist-get (gptel-scope-guard-tool-call
                                                     '(:name "mcp_read" :args (:path "a.txt")))
                                                    :block)
                              nil nil)
                        results))
                (should-error (gptel-scope-check-bash-command "ls" ".") :type 'gptel-scope-remote-directory)
                (setq default-directory temporary-file-directory))
              nil))
            (should (< (- (float-time) start) 5))))
        (should (= (length results) 12))
        (dolist (r results)
          (ert-info ((format "%s in %s: %S" (car r) remote (nth 1 r)))
            (gptel-scope-test--should-be-text (nth 1 r))
            (if (equal (car r) "list_allowed_commands")
                (should (string-match-p "(remote_directory)\\'" (nth 1 r)))
              (let ((p (gptel-scope-test-parse (nth 1 r))))
                (should (equal (plist-get p :reason) "remote_directory"))
                (should (string-match-p (regexp-quote remote) (plist-get p :message)))
                (should (string-match-p "open the chat from a buffer of a local copy" (plist-get p :message)))
                (should (string-match-p "run Emacs with gptel-scope on that host" (plist-get p :message)))))
            ;; No confirmation is asked for a call that is refused at once.
            (when (nth 3 r) (should (eq (nth 2 r) nil)))))))))

(ert-deftest gptel-scope-test-args-remote-directory-argument-is-refused-first ()
  "A TRAMP directory or path argument is refused, naming it, connecting to nothing."
  (gptel-scope-test--with-args-project dir
    (let ((remote "/ssh:nonexistent.invalid:/p")
          (results nil))
      (should
       (equal
        (gptel-scope-test--recording-tramp
          (dolist (case '(("run_bash_command" 1 "directory") ("run_command" 2 "directory")
                          ("exec_command" 1 "workdir") ("read_file" 0 "path")
                          ("list_dir" 0 "path") ("grep_files" 1 "path")
                          ("request_scope_expansion" 1 "resource")))
            (let* ((spec (gptel-scope-test--tool (car case)))
                   (args (gptel-scope-test--args-with (gptel-scope-test--base-args (car case) dir)
                                                      (nth 1 case) (concat remote "/x"))))
              (push (list case (gptel-scope-test--one-answer spec args)
                          (and (plist-get spec :confirm) (apply (plist-get spec :confirm) args)))
                    results)))
          (let ((gptel-scope-guarded-tools '(("mcp_read" (:path . read)))))
            (push (list '("mcp_read" 0 "path")
                        (gptel-scope-test-parse
                         (plist-get (gptel-scope-guard-tool-call
                                     `(:name "mcp_read" :args (:path ,(concat remote "/etc/x"))))
                                    :block))
                        nil)
                  results)))
        nil))
      (should (= (length results) 8))
      (dolist (r results)
        (ert-info ((format "%S" r))
          (should (equal (plist-get (nth 1 r) :reason) "remote_directory"))
          (should (equal (plist-get (nth 1 r) :argument) (nth 2 (car r))))
          (should (string-match-p (regexp-quote remote) (plist-get (nth 1 r) :message)))
          (should (eq (nth 2 r) nil)))))))

(ert-deftest gptel-scope-test-args-process-kills-stay-local ()
  "Killing a command from a timer in a remote buffer asks this machine, not TRAMP."
  (with-temp-buffer
    (should (equal (gptel-scope-test--recording-tramp
                     (setq default-directory (car gptel-scope-test--remote-directories))
                     (gptel-scope-exec--descendants (emacs-pid))
                     (setq default-directory temporary-file-directory))
                   nil))))

;;;; A NUL in any string

(ert-deftest gptel-scope-test-args-a-nul-in-any-string-is-refused ()
  "Each tool x each string or array argument with a NUL: refused, named.
It is answered invalid_argument before anything touches it: no Emacs
error leaks out (a NUL in a directory once answered \"Wrong type
argument: filenamep\"), and the :confirm function answers nil."
  (gptel-scope-test--with-args-project dir
    (let ((wrong nil) (cells 0))
      (dolist (spec (gptel-scope-test--registered-tools))
        (let ((tool (plist-get spec :name)))
          (cl-loop
           for a in (plist-get spec :args) for i from 0
           for type = (format "%s" (plist-get a :type))
           for value = (pcase type ("string" "a\0b") ("array" ["ok" "a\0b"]))
           when value do
           (cl-incf cells)
           (let* ((args (gptel-scope-test--args-with
                         (gptel-scope-test--base-args tool dir) i value))
                  (r (unwind-protect (gptel-scope-test--one-answer spec args)
                       (gptel-scope-pty-close-all)))
                  (confirm (and (plist-get spec :confirm)
                                (unwind-protect (apply (plist-get spec :confirm)
                                                       (gptel-scope-test--args-with
                                                        (gptel-scope-test--base-args tool dir) i value))
                                  (gptel-scope-pty-close-all))))
                  (got (list (plist-get r :reason) (plist-get r :argument)
                             (plist-get r :message) confirm))
                  (expected
                   (list "invalid_argument" (plist-get a :name)
                         (format "The argument `%s' must not contain a NUL character (one is at %scharacter 1): no file name, argument or text of a command can hold it. Nothing ran: call the tool again without it."
                                 (plist-get a :name) (if (equal type "array") "entry 1, " ""))
                         nil)))
             (unless (equal got expected)
               (push (list tool (plist-get a :name) :got got) wrong))))))
      ;; Every string and array argument of the tools that take arguments.
      (should (= cells 18))
      (should (equal (reverse wrong) nil)))))

(ert-deftest gptel-scope-test-args-a-nul-in-the-directory-names-it ()
  "The user's report: a NUL in run_bash_command's directory, answered in full."
  (gptel-scope-test--with-args-project dir
    (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" (concat dir "/a\0b"))))
      (should (equal (list (plist-get r :success) (plist-get r :reason) (plist-get r :argument)
                           (plist-get r :expected))
                     '(nil "invalid_argument" "directory" "text without NUL characters"))))))

(ert-deftest gptel-scope-test-args-a-huge-resource-is-answered-cut ()
  "A 100,000-character resource of request_scope_expansion: a small answer.
Denied, its answer shows the resource cut (once in :resource, once in the
message); allowed once, the grant holds the resource whole."
  (gptel-scope-test--with-args-project dir
    (let* ((resource (concat "rm " (make-string 100000 ?a)))
           (cut (concat "rm " (make-string 197 ?a) "… (99803 more characters)"))
           (r (gptel-scope-test-call #'gptel-scope-request-scope-expansion
                                     "run_bash_command" resource "cleaning up")))
      (should (equal (list (plist-get r :user_denied) (plist-get r :resource)) (list t cut)))
      (should (< (length (gptel-scope--json-encode r)) 1000))
      (let ((gptel-scope-expansion-show-function
             (lambda (_request) (gptel-scope-expansion-allow-once))))
        (let ((r (gptel-scope-test-call #'gptel-scope-request-scope-expansion
                                        "run_bash_command" resource "cleaning up")))
          (should (equal (list (plist-get r :allowed_once) (plist-get r :resource)) (list t cut)))
          (should (string-search (concat "on " cut " once") (plist-get r :message)))
          (should (equal gptel-scope--allow-once (list (cons "run_bash_command" resource)))))))))

(provide 'gptel-scope-args-test)
;;; gptel-scope-args-test.el ends here
