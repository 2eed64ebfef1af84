;;; gptel-scope-call.el --- The one path of every tool call  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; What every tool of gptel-scope does with a call, whichever it is (the
;; command tools of gptel-scope-tools, the file tools of gptel-scope-fs,
;; the terminal sessions of gptel-scope-pty):
;;
;;   1. its arguments are read (`gptel-scope--arg'), a remote chat
;;      directory or path refused (`gptel-scope--check-local');
;;   2. the module judges it under the buffer's scope
;;      (`gptel-scope-check-bash-command', `gptel-scope--check-argv',
;;      `gptel-scope--file-tool');
;;   3. a refusal is remembered and answered (`gptel-scope--refuse'):
;;      an unapproved scope document is offered for approval, the user
;;      is asked (`gptel-scope--ask-on-denial', with
;;      `gptel-scope-prompt-on-denial'), the call runs again when the
;;      refusal is lifted;
;;   4. an allowed command runs (`gptel-scope--run'), its events are
;;      logged, its grants used up;
;;   5. the result goes to the model once, as valid text, with the
;;      scope's secret values hidden (`gptel-scope--once', redacted by
;;      gptel-scope-env).
;;
;; Each call runs under `gptel-scope--guard': an error anywhere is its
;; one answer.  The :confirm functions of the tools are made total here
;; (`gptel-scope--confirm-function').

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-trust)
(require 'gptel-scope-session)
(require 'gptel-scope-events)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-env)
(require 'gptel-scope-exec)
(require 'gptel-scope-expand)

(declare-function gptel-scope-module-truename "gptel-scope-module" (path))

;;;; Results for the model

(defun gptel-scope--result-text (result)
  "Return RESULT, a tool's answer, as text gptel can send to the model.
A string is made valid text (a unibyte one decoded as UTF-8); anything
else, which no tool should answer, becomes an error result."
  (cond ((and (stringp result) (multibyte-string-p result)) result)
        ((stringp result) (gptel-scope--json-string result))
        (t (gptel-scope--json :success nil :reason "error"
                              :message (format "The tool's result could not be read: %s"
                                               (truncate-string-to-width (format "%S" result) 200))))))

(defun gptel-scope--error-json (err &optional tool)
  "Return the JSON result of TOOL for the error ERR.
An invalid or remote argument is named by `argument', with what was
`expected' of it."
  (let ((details (and (memq (car err) '(gptel-scope-invalid-argument gptel-scope-remote-directory))
                      (consp (cdr err)) (cddr err))))
    (apply #'gptel-scope--json
           :success nil
           :reason (gptel-scope--error-reason err)
           :tool (or tool :null)
           :message (gptel-scope--error-message err)
           (append (and (plist-get details :argument) (list :argument (plist-get details :argument)))
                   (and (plist-get details :expected) (list :expected (plist-get details :expected)))))))

(defvar gptel-scope--redact-function #'gptel-scope-env-redact-result
  "Function (BUFFER TEXT) returning TEXT, a tool's result, with secrets hidden.
BUFFER is the chat buffer of the call.  By default the scope's secret
values are hidden (`gptel-scope-env-redact-result'); nil shows results
as they are (the benchmarks measure the cost of redaction so).")

(defun gptel-scope--redact (buffer text)
  "Return TEXT, a result for the model, with BUFFER's secret values hidden.
When they cannot be looked for, the result is an error that shows
nothing of TEXT."
  (if gptel-scope--redact-function
      (condition-case err
          (funcall gptel-scope--redact-function buffer text)
        (error (gptel-scope--json
                :success nil :reason "error"
                :message (format "The result was not shown: it could not be checked for secret values (%s)"
                                 (car err)))))
    text))

(defun gptel-scope--once (callback)
  "Return a function calling CALLBACK with its argument at most once.
The argument, the tool's result, goes as text (`gptel-scope--result-text'),
with the secret values of the current buffer's scope hidden
\(`gptel-scope--redact')."
  (let ((called nil) (buffer (current-buffer)))
    (lambda (result)
      (unless called
        (setq called t)
        (funcall callback (gptel-scope--redact buffer (gptel-scope--result-text result)))))))

(defmacro gptel-scope--guard (callback tool &rest body)
  "Run BODY; on any error call CALLBACK with the error, as TOOL's JSON result.
Every async tool runs its body, and each continuation it leaves to a
timer or a process sentinel, under this guard, with CALLBACK made by
`gptel-scope--once': an error anywhere becomes the call's one answer
\(a later error, after the answer, is dropped), so a request never
waits for an answer that will not come."
  (declare (indent 2) (debug t))
  (let ((err (make-symbol "err")))
    `(condition-case ,err
         (progn ,@body)
       (error (funcall ,callback (gptel-scope--error-json ,err ,tool))))))

;;;; Arguments from the model

;; gptel hands a tool its arguments as the backend's JSON reader made
;; them: null as nil or :null, false as nil, :false or :json-false,
;; numbers as integers or floats (Gemini and Ollama send 5.0), objects
;; as plists or alists, arrays as vectors; a missing argument is nil;
;; and a model may send a string where an array was declared.  Every
;; tool reads each argument through `gptel-scope--arg', which returns
;; it in one form or signals `gptel-scope-invalid-argument' naming the
;; argument and what was expected: the call is then refused with
;; reason invalid_argument, and nothing runs.

(defun gptel-scope--absent-p (value)
  "Return non-nil when VALUE is an argument the model left out.
That is nil, or JSON null or false as gptel or `json-parse-string' read them."
  (memq value '(nil :null :false :json-false)))

(defconst gptel-scope--arg-expected
  '((string . "a non-empty string")
    (text . "a string")
    (integer . "a whole number")
    (natnum . "a whole number, 0 or more")
    (boolean . "true or false")
    (strings . "an array of strings, like [\"-n\", \"5\"]")
    (string-or-strings . "a string or an array of strings"))
  "What each type of `gptel-scope--arg' is, as the model is told.")

(defun gptel-scope--describe-value (value)
  "Return a short description of VALUE, an argument as gptel passed it."
  (cond ((null value) "missing (or null)")
        ((eq value :null) "null")
        ((memq value '(:false :json-false)) "false")
        ((eq value t) "true")
        ((numberp value) (format "the number %s" value))
        ((and (stringp value) (string-empty-p value)) "an empty string")
        ((stringp value) (format "the string %S" (truncate-string-to-width value 40 nil nil "...")))
        ((and (vectorp value) (= (length value) 0)) "an empty array")
        ((or (hash-table-p value)
             (and (consp value) (or (keywordp (car value)) (consp (car value)))))
         "an object")
        ((or (vectorp value) (consp value)) "an array")
        (t (truncate-string-to-width (format "%S" value) 40 nil nil "..."))))

(defun gptel-scope--invalid-arg (name type value)
  "Signal that VALUE is not a valid argument NAME of TYPE.
The error's data is (MESSAGE :argument NAME :expected WHAT)."
  (let ((expected (cdr (assq type gptel-scope--arg-expected))))
    (signal 'gptel-scope-invalid-argument
            (list (format "The argument `%s' must be %s; it was %s. Nothing ran: call the tool again with a valid `%s'."
                          name expected (gptel-scope--describe-value value) name)
                  :argument name :expected expected))))

(defun gptel-scope--unusable-char (value)
  "Return the position of the first NUL in the string VALUE, or nil.
A NUL ends a C string: Emacs refuses it in a file name and a program
never sees what follows it in an argument or its environment."
  (and (stringp value) (string-search "\0" value)))

(defun gptel-scope--check-usable (name value)
  "Return VALUE, the argument NAME, unless a NUL is in one of its strings.
VALUE is a string or a list of strings.  Else signal
`gptel-scope-invalid-argument' naming NAME and where the NUL is."
  (let ((at nil) (entry nil))
    (if (stringp value)
        (setq at (gptel-scope--unusable-char value))
      (cl-loop for s in value for i from 0
               for p = (gptel-scope--unusable-char s)
               when p do (setq at p entry i) and return nil))
    (when at
      (signal 'gptel-scope-invalid-argument
              (list (format "The argument `%s' must not contain a NUL character (one is at %scharacter %d): no file name, argument or text of a command can hold it. Nothing ran: call the tool again without it."
                            name (if entry (format "entry %d, " entry) "") at)
                    :argument name :expected "text without NUL characters")))
    value))

(defun gptel-scope--integral (value)
  "Return VALUE as an integer when it is a whole number, else nil.
An integral float (5.0) and a string of digits (\"5\") count."
  (cond ((integerp value) value)
        ((and (floatp value) (< (abs value) 1e15) (= value (ffloor value))) (truncate value))
        ((and (stringp value)
              (string-match "\\`[ \t]*\\(-?[0-9]\\{1,15\\}\\)\\(?:\\.0*\\)?[ \t]*\\'" value))
         (string-to-number (match-string 1 value)))))

(defun gptel-scope--string-list (value)
  "Return VALUE, an array of strings, as a list; `invalid' when it is not one.
A vector or a proper list of strings, or a string holding a JSON
array of strings (some models send nested JSON as a string)."
  (let ((l (cond ((vectorp value) (append value nil))
                 ((proper-list-p value) value)
                 ((and (stringp value) (string-match-p "\\`[ \t\n\r]*\\[" value))
                  (condition-case nil
                      (json-parse-string value :array-type 'list :object-type 'hash-table)
                    (error 'invalid)))
                 (t 'invalid))))
    (if (and (listp l) (seq-every-p #'stringp l)) l 'invalid)))

(defun gptel-scope--arg (name value type &optional required)
  "Return VALUE, the argument NAME as gptel passed it, read as TYPE.
TYPE is one of
  `string'             a string with more than white space
  `text'               any string, the empty one too
  `integer', `natnum'  a whole number (`natnum': 0 or more); an
                       integral float (5.0) or a string of digits
                       (\"5\") is taken
  `boolean'            true or false: t, nil, :null, :false,
                       :json-false, \"true\", \"false\"
  `strings'            an array of strings (a vector or a list), or a
                       string holding a JSON array of strings; a list
  `string-or-strings'  a string, or an array of strings as a list.
A missing argument (nil, JSON null or false) is nil, unless REQUIRED.
An optional blank string (and an empty array) counts as missing.
A string holding a NUL, alone or in an array, is refused
\(`gptel-scope--check-usable'), before anything uses it.
Anything else signals `gptel-scope-invalid-argument', naming NAME and
what TYPE is (`gptel-scope--invalid-arg')."
  ;; Called for every argument of every call: it makes no Lisp data
  ;; unless it converts the value or refuses it.
  (cond
   ((eq type 'boolean)
    (cond ((or (gptel-scope--absent-p value) (equal value "false")) nil)
          ((or (eq value t) (equal value "true")) t)
          (t (gptel-scope--invalid-arg name type value))))
   ((gptel-scope--absent-p value)
    (if required (gptel-scope--invalid-arg name type value) nil))
   ((and (not required) (not (eq type 'text)) (stringp value) (string-blank-p value)) nil)
   ((eq type 'string)
    (if (and (stringp value) (not (string-blank-p value)))
        (gptel-scope--check-usable name value)
      (gptel-scope--invalid-arg name type value)))
   ((eq type 'text)
    (if (stringp value) (gptel-scope--check-usable name value) (gptel-scope--invalid-arg name type value)))
   ((memq type '(integer natnum))
    (let ((n (gptel-scope--integral value)))
      (if (and n (or (eq type 'integer) (>= n 0))) n (gptel-scope--invalid-arg name type value))))
   ((and (eq type 'string-or-strings) (stringp value)) (gptel-scope--check-usable name value))
   ((memq type '(strings string-or-strings))
    (let ((l (gptel-scope--string-list value)))
      (if (or (eq l 'invalid) (and (null l) required))
          (gptel-scope--invalid-arg name type value)
        (gptel-scope--check-usable name l))))
   (t (error "Unknown argument type %S of %s" type name))))

(defun gptel-scope--string-arg (name value &optional allow-empty)
  "Return VALUE, the required argument NAME, if it is a string; else signal.
A blank string is refused unless ALLOW-EMPTY."
  (gptel-scope--arg name value (if allow-empty 'text 'string) t))

(defun gptel-scope--directory-arg (directory &optional name)
  "Return DIRECTORY, the required argument NAME, expanded (B13, B26).
NAME defaults to \"directory\".  A relative DIRECTORY is expanded
against the buffer's `default-directory'; a remote one is refused
\(`gptel-scope--check-local') before it is expanded."
  (let* ((name (or name "directory"))
         (dir (gptel-scope--arg name directory 'string t)))
    (gptel-scope--check-local name dir)
    (directory-file-name (expand-file-name dir))))

(defun gptel-scope--timeout-arg (timeout decision)
  "Return the timeout of a call: TIMEOUT if given (capped), else DECISION's.
TIMEOUT is the argument as the model gave it (`gptel-scope--arg'): a
whole number of seconds; 0 means the scope's."
  (let ((asked (gptel-scope--arg "timeout" timeout 'natnum)))
    (if (and asked (> asked 0))
        (min asked gptel-scope-max-timeout)
      (or (plist-get decision :timeout) 30))))

(defvar gptel-scope-failure-note-function #'gptel-scope-sandbox-failure-note
  "Function (OUTPUT EXIT-CODE DIRECTORY) saying why a sandboxed command failed.
Called when a command the sandbox wrapped failed; it returns a
sentence naming what the sandbox did and what to do instead, or nil
when the failure is the command's own.  By default the sandbox's
`gptel-scope-sandbox-failure-note'.")

(defun gptel-scope--result-json (decision result timeout)
  "Return the JSON for the model of RESULT, the run of DECISION with TIMEOUT."
  (let ((timed-out (plist-get result :timed-out))
        (code (plist-get result :exit-code)))
    (apply #'gptel-scope--json
           :success (plist-get result :success)
           :exit_code (or code :null)
           :output (plist-get result :output)
           :truncated (plist-get result :truncated)
           :warnings (vconcat (plist-get decision :warnings))
           :duration_ms (plist-get result :duration-ms)
           (cond
            ((plist-get result :error)
             (list :reason "error"
                   :message (format "The command ran but its result could not be read: %s"
                                    (plist-get result :error))))
            (timed-out
             (list :reason "timeout" :timed_out t
                   :message (format "The command timed out after %s seconds and was killed with everything it started; the output it printed until then is shown. Make it faster or narrower, or pass a longer timeout."
                                    timeout)))
            ((plist-get result :signal)
             (list :signal (plist-get result :signal)
                   :message (format "The command was killed by signal %s; its output is shown."
                                    (plist-get result :signal))))
            ((not (plist-get result :success))
             (list :message
                   (concat (format "The command failed with exit code %s; its output is shown." code)
                           (let ((note (and (plist-get result :sandboxed) gptel-scope-failure-note-function
                                            (funcall gptel-scope-failure-note-function
                                                     (plist-get result :output) code
                                                     (plist-get decision :directory)))))
                             (if note (concat " " note) "")))))))))

;;;; Running

(defun gptel-scope--askable-p (decision)
  "Return non-nil when the refusal DECISION is one the user may lift.
The module says so of its reason (:askable); it needs a :resource too."
  (and (plist-get decision :resource)
       (plist-get decision :askable)))

(defun gptel-scope--denial-json (decision)
  "Return the JSON for the model of the refusal DECISION: its :response."
  (or (plist-get decision :response)
      (gptel-scope--json :success nil :allowed nil
                         :reason (or (plist-get decision :reason) gptel-scope--reason-denied)
                         :tool (or (plist-get decision :tool) :null)
                         :message (or (plist-get decision :message) "The call was refused."))))

(defvar gptel-scope--trust-retrying nil
  "Non-nil while a call runs again after its scope document was approved.
It is not offered for approval a second time.")

(defun gptel-scope--refuse (buffer callback decision &optional retry)
  "Answer the refusal DECISION: remember it in BUFFER, then ask or tell.
Every tool answers its refusals here.  A scope document the user has
not approved is offered for approval (`gptel-scope-trust-offer'), and
approved, the call runs again.  With RETRY, a function running the
call again, and `gptel-scope-prompt-on-denial', the user is asked
about a refusal they may lift (`gptel-scope--ask-on-denial'), and RETRY
runs with `gptel-scope-prompt-on-denial' nil when they lift it; else
CALLBACK receives the refusal's JSON."
  (gptel-scope--remember-denial buffer decision)
  (cond
   ;; A scope document the user has not approved: ask at once (interactive sessions);
   ;; approved now, the call runs again.
   ((and retry (not gptel-scope--trust-retrying) (gptel-scope--untrusted-file decision)
         (gptel-scope-trust-offer (gptel-scope--untrusted-file decision)))
    (let ((gptel-scope--trust-retrying t))
      (funcall retry)))
   ;; Lifted by the user, the call runs again without asking a second time.
   ((and retry gptel-scope-prompt-on-denial (gptel-scope--askable-p decision))
    (gptel-scope--ask-on-denial buffer decision
                                (lambda ()
                                  (let ((gptel-scope-prompt-on-denial nil))
                                    (funcall retry)))
                                callback))
   (t (funcall callback (gptel-scope--denial-json decision)))))

(defun gptel-scope--untrusted-file (decision)
  "Return the unapproved scope document that refused DECISION, or nil."
  (and (equal (plist-get decision :reason) gptel-scope--reason-untrusted-scope)
       (or (plist-get (plist-get decision :untrusted) :file)
           (plist-get decision :path))))

(defun gptel-scope--emit-result (tool args id result)
  "Emit the `truncated' and `end' events of TOOL's call ID with ARGS.
RESULT is the plist of `gptel-scope-exec-start'; its :error makes
an `error' event instead of `end'."
  (let ((bytes (plist-get result :total-bytes))
        (lines (plist-get result :lines))
        (ms (plist-get result :duration-ms)))
    (when (plist-get result :truncated)
      (gptel-scope--emit 'truncated tool args
                         :message (format "The command printed %s bytes; the model was shown part of them"
                                          bytes)
                         :id id :bytes bytes :lines lines :duration-ms ms))
    (if (plist-get result :error)
        (gptel-scope--emit 'error tool args
                           :reason "error" :message (plist-get result :error)
                           :id id :bytes bytes :lines lines :duration-ms ms)
      (gptel-scope--emit 'end tool args
                         :exit-code (plist-get result :exit-code)
                         :reason (cond ((plist-get result :timed-out) "timeout")
                                       ((plist-get result :signal) "signal"))
                         :id id :bytes bytes :lines lines :duration-ms ms))))

(defun gptel-scope--truename (dir)
  "Return where the directory DIR leads through symbolic links.
DIR itself when it does not exist.  The module resolves it, as it did
when it judged DIR."
  (or (gptel-scope-module-truename dir) dir))

(defun gptel-scope--run (buffer callback decision argv timeout &optional retry args)
  "Run ARGV if the module's DECISION let it through; call CALLBACK with JSON.
BUFFER holds the grants the decision used.  TIMEOUT is the call's own
timeout or nil.  RETRY, a function, runs the call again after the user
lifted a refusal (`gptel-scope-prompt-on-denial').  ARGS, the call's
arguments, go into its events."
  (if (not (plist-get decision :allowed))
      (progn
        (gptel-scope--emit 'denied (plist-get decision :tool) args
                           :reason (or (plist-get decision :reason) gptel-scope--reason-denied)
                           :message (plist-get decision :message))
        (gptel-scope--refuse buffer callback decision retry))
    (let ((timeout (gptel-scope--timeout-arg timeout decision))
          (tool (plist-get decision :tool))
          (dir (plist-get decision :directory))
          (id (gptel-scope--event-id)))
      ;; The module judged the directory where it led then; it must lead there still.
      ;; (One that is gone is refused by `gptel-scope-exec-start'.)
      (let ((now (gptel-scope--truename dir)))
        (unless (equal now dir)
          (signal 'gptel-scope-invalid-argument
                  (list (format "The directory %s now leads to %s (it changed after the command was judged); nothing ran"
                                dir now)))))
      (gptel-scope--emit 'start tool args :id id)
      (let ((gptel-scope-exec-call (plist-get decision :sandbox)))
        (gptel-scope-exec-start
         argv (plist-get decision :directory)
         ;; Run by the process sentinel: an error here must still answer.
         (lambda (r)
           (gptel-scope--guard callback tool
             (gptel-scope--emit-result tool args id r)
             (funcall callback (gptel-scope--result-json decision r timeout))))
         :timeout timeout
         :max-chars (or (plist-get decision :max-output-chars) 20000)))
      ;; The grant is used up by the call it let through (E18).
      (gptel-scope--use-grants buffer (plist-get decision :grants-used)))))

(defun gptel-scope-check-bash-command (command directory &optional buffer brief)
  "Return the module's decision on COMMAND run in DIRECTORY under BUFFER's scope.
With BRIEF, the decision comes without its evidence, which spares
Emacs most of its cost: an allowed command with what running it takes
\(directory, timeout, output limit, warnings, grants used), a refusal
with what answering the model and offering the expansion takes
\(tool, reason, message, the resource and each violation's resource,
kind, access and reason, and :response, its answer to the model), and
the :command and :directory judged.  `gptel-scope-explain' shows the evidence."
  (let ((buffer (or buffer (current-buffer))))
    (with-current-buffer buffer
      ;; A remote chat directory is refused before anything touches it.
      (gptel-scope--check-local)
      (gptel-scope-load-module)
      (let* ((command (gptel-scope--string-arg "command" command))
             (dir (gptel-scope--directory-arg directory))
             (d (apply #'gptel-scope--judge buffer gptel-scope--tool-run-bash-command
                       :command command :directory dir :masked (gptel-scope--masked)
                       (unless brief (list :evidence t)))))
        (if (or (plist-get d :allowed) (plist-member d :command))
            d
          (nconc d (list :command command :directory dir)))))))

(defun gptel-scope--check-argv (buffer command args directory tool &optional masked)
  "Return the module's decision on COMMAND with ARGS in DIRECTORY for TOOL.
The arguments are read already; BUFFER's scope applies.  With MASKED
\(see `gptel-scope--masked') the decision knows whether denied entries
are masked."
  (apply #'gptel-scope--judge buffer gptel-scope--tool-run-command
         :for_tool tool :command command :args (vconcat args) :directory directory
         (and masked (list :masked masked))))

(defun gptel-scope--allowed-commands (buffer)
  "Return the module's list, as JSON text, of the commands of BUFFER's scope."
  (plist-get (gptel-scope--judge buffer gptel-scope--tool-list-allowed-commands) :response))

(defun gptel-scope--file-tool (op buffer tool keys)
  "Return the outcome plist of the module's file tool OP under BUFFER's scope.
TOOL is the tool the result and the grants are for, KEYS its arguments."
  (apply #'gptel-scope--judge buffer op :for_tool tool keys))

;;;; Refusals remembered

(defun gptel-scope--fill-denial (tool resource details)
  "Complete DETAILS, the brief record of the refusal of TOOL on RESOURCE.
The command and directory it records are judged again in full, and
the violation on RESOURCE gives its message and command.  Return
DETAILS."
  (let ((judged (plist-get details :judged)))
    (when (and judged (equal tool gptel-scope--tool-run-bash-command))
      (plist-put details :judged nil)
      (let* ((d (ignore-errors (gptel-scope-check-bash-command (car judged) (cadr judged))))
             (v (or (seq-find (lambda (v) (equal (plist-get v :resource) resource))
                              (plist-get d :violations))
                    (and (equal (plist-get d :resource) resource) d))))
        (when v
          (plist-put details :message (plist-get v :message))
          (when (plist-get v :command)
            (plist-put details :command (plist-get v :command)))))))
  details)

(defun gptel-scope-denial (tool resource &optional buffer)
  "Return what BUFFER recorded of the refusal of TOOL on RESOURCE, or nil.
A plist: :validation-type, :access, :reason, :message, :command."
  (with-current-buffer (or buffer (current-buffer))
    (let ((details (cdr (assoc (cons tool resource) gptel-scope--denials))))
      (if (plist-get details :judged)
          (gptel-scope--fill-denial tool resource details)
        details))))

;;;; Asking at the refusal

(defun gptel-scope--answer-allows-p (json)
  "Return non-nil when the expansion answer JSON lifted the refusal."
  (eq t (plist-get (json-parse-string json :object-type 'plist :false-object nil :null-object nil)
                   :success)))

(defun gptel-scope--refused-by-user-json (decision)
  "Return the refusal DECISION as JSON for the model, marked as the user's."
  (let ((r (json-parse-string (gptel-scope--denial-json decision) :object-type 'plist)))
    (setq r (plist-put r :user_denied t))
    (setq r (plist-put r :message (concat "The user was asked and did not allow it. "
                                          (or (plist-get r :message) ""))))
    (gptel-scope--json-encode r)))

(defun gptel-scope--ask-on-denial (buffer decision retry callback)
  "Ask the user about the refusal DECISION of a call from BUFFER.
Lifted: call RETRY.  Denied: give CALLBACK the refusal."
  (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
    (gptel-scope--enqueue
     (gptel-scope--make-request
      ;; Called with the user's answer: an error here must still answer.
      (lambda (answer)
        (gptel-scope--guard callback (plist-get decision :tool)
          (if (gptel-scope--answer-allows-p answer)
              (funcall retry)
            (funcall callback (gptel-scope--refused-by-user-json decision)))))
      (plist-get decision :tool) (plist-get decision :resource)
      (format "the call `%s' was refused" (gptel-scope--shown (plist-get decision :command)))
      (gptel-scope-denial (plist-get decision :tool) (plist-get decision :resource))))))

;;;; The tools' :confirm functions

(defvar gptel-version)

(defun gptel-scope--confirm-functions-p ()
  "Return non-nil when gptel accepts a function as a tool's :confirm.
gptel does from 0.9.9.3 on; before, any non-nil value confirms every call."
  (and (boundp 'gptel-version) (stringp gptel-version)
       (ignore-errors (version<= "0.9.9.3" gptel-version))))

(defun gptel-scope--tool-args (&rest args)
  "Return ARGS, the argument specs of a tool, as a fresh copy for gptel.
`gptel-make-tool' turns their :type symbols into strings in place, which
must not happen to the constants of this code."
  (copy-tree args t))

(defun gptel-scope--confirm-function (function)
  "Return a tool's :confirm function for gptel: FUNCTION, made total.
gptel calls it with the call's arguments, as the tool gets them, in
the process sentinel of its request, where an error would leave the
request waiting forever.  So it answers t or nil and never signals:
FUNCTION's answer as a boolean; nil for a remote chat directory (the
call is refused at once, and nothing is touched to read the policy),
an invalid argument or another gptel-scope error, since the call then
is refused with that error and runs nothing; t for any other error,
so that the user is asked rather than a call run unconfirmed.  A
NUL in any string argument, or in a string of an array argument, is
nil too: the tool refuses it (`gptel-scope--check-usable') whatever
FUNCTION reads of the arguments."
  (lambda (&rest args)
    (condition-case nil
        (progn (gptel-scope--check-local)
               (dolist (a args)
                 (gptel-scope--check-usable
                  "argument" (cond ((stringp a) a)
                                   ((or (vectorp a) (proper-list-p a)) (seq-filter #'stringp a)))))
               (and (apply function args) t))
      (gptel-scope-error nil)
      (error t))))

(defun gptel-scope--confirm-arg (function)
  "Return :confirm and FUNCTION made total when gptel supports it, else nil.
See `gptel-scope--confirm-function'."
  (and (gptel-scope--confirm-functions-p)
       (list :confirm (gptel-scope--confirm-function function))))

(provide 'gptel-scope-call)
;;; gptel-scope-call.el ends here
