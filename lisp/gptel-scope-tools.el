;;; gptel-scope-tools.el --- The gptel tools of gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The tool functions, usable without gptel, and their registration with
;; `gptel-make-tool' in the category "scope" once gptel is loaded:
;;
;;   run_bash_command(command, directory[, timeout])
;;   run_command(command, args, directory[, timeout])   argv form, no shell
;;   list_allowed_commands()
;;
;; (request_scope_expansion is in gptel-scope-expand.el.)
;;
;; The scope of a buffer comes from, in this order (later sources override
;; earlier ones key by key, in the module):
;;
;;   1. the variable `gptel-scope', set by a gptel preset's :scope key:
;;      a profile name or a plist;
;;   2. the buffer-local `gptel-scope-inline': a profile name or a plist;
;;   3. the document: `gptel-scope-file' if set; else scope.yml or
;;      preset.md in `gptel-scope-directory'; else the nearest scope.yml
;;      upward from `default-directory'; else a preset.md beside the
;;      buffer's file.
;;
;; No source at all: every tool answers no_scope_config.  Async tools
;; catch every error and call their callback exactly once.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-exec)
(require 'gptel-scope-events)

(declare-function gptel-scope-module-check-command "gptel-scope-module" (request))
(declare-function gptel-scope-module-decide "gptel-scope-module" (request))
(declare-function gptel-scope-module-decide-command "gptel-scope-module" (command directory scope))
(declare-function gptel-scope-module-refusal-json "gptel-scope-module" (refusal))
(declare-function gptel-scope-module-refusal-details "gptel-scope-module" (refusal))
(declare-function gptel-scope-module-check-argv "gptel-scope-module" (request))
(declare-function gptel-scope-module-list-commands "gptel-scope-module" (request))
(declare-function gptel-scope-module-load-scope "gptel-scope-module" (request))
(declare-function gptel-scope-module-truename "gptel-scope-module" (path))
(declare-function gptel-make-tool "ext:gptel-request")
(declare-function project-root "project" (project))
(declare-function gptel-scope-exec-command "gptel-scope-pty")
(declare-function gptel-scope-write-stdin "gptel-scope-pty")
(declare-function gptel-scope-pty-confirm-p "gptel-scope-pty")
(defvar gptel-scope-exec-command-description)
(defvar gptel-scope-write-stdin-description)

;;;; Where the scope comes from

(defvar-local gptel-scope-file nil
  "The scope document of this buffer: a scope.yml or a preset.md, or nil.
Set by the user or a session manager; it wins over
`gptel-scope-directory' and over the search for scope.yml.")

(defvar-local gptel-scope-directory nil
  "The session directory of this buffer, holding scope.yml or preset.md.
When nil the nearest scope.yml upward from `default-directory' applies.")

(defvar-local gptel-scope-inline nil
  "Inline scope of this buffer, merged under its scope document.
A plist of scope keys in kebab-case, like
  (:paths (:read (\"~/src/**\"))
   :bash-tools (:categories (:read-only (ls cat))))
a profile name (a string or symbol naming a file of
`gptel-scope-profile-directory'), or YAML text.")

(defvar gptel-scope nil
  "Scope set by a gptel preset's `:scope' key: a profile name or a plist.
gptel sets this variable when it applies a preset with a `:scope' key,
like (gptel-make-preset \\='coding :tools \\='(\"scope\") :scope \"coding\").
The forms are those of `gptel-scope-inline', which is merged over it.")

(defvar-local gptel-scope--allow-once nil
  "Allow-once grants of this buffer: a list of (TOOL . RESOURCE).
Each is used up by the call it lets through, and all are cleared
when the response ends.")

(defvar-local gptel-scope--denials nil
  "Recent refusals in this buffer: an alist ((TOOL . RESOURCE) . PLIST).
A request_scope_expansion for one of them knows from it what was
refused and how: :validation-type, :access, :reason, :message.")

(defconst gptel-scope--verbatim-keys '("commands" "subcommands" "allowed")
  "Keys of an inline scope whose own keys are command names, kept as written.")

(defun gptel-scope--to-json (value &optional verbatim)
  "Convert VALUE, an inline scope in Lisp form, for `json-serialize'.
Plist keys go from kebab-case to snake_case, except command names
\(keys of a map under one of `gptel-scope--verbatim-keys', or with
VERBATIM non-nil); lists become arrays, nil an empty one, symbols
strings, t true."
  (cond ((eq value t) t)
        ((memq value '(:false :null)) value)
        ((null value) [])
        ((and (consp value) (keywordp (car value)))
         (let (out)
           (while value
             (let* ((name (substring (symbol-name (car value)) 1))
                    (key (if verbatim name (replace-regexp-in-string "-" "_" name))))
               (push (intern (concat ":" key)) out)
               (push (gptel-scope--to-json (cadr value) (member key gptel-scope--verbatim-keys)) out))
             (setq value (cddr value)))
           (nreverse out)))
        ((or (consp value) (vectorp value)) (vconcat (mapcar #'gptel-scope--to-json value)))
        ((symbolp value) (symbol-name value))
        (t value)))

(defun gptel-scope--profile-file (name)
  "Return the file of the scope profile NAME."
  (let ((name (if (symbolp name) (symbol-name name) name)))
    (if (or (file-name-absolute-p name) (string-suffix-p ".yml" name))
        (expand-file-name name gptel-scope-profile-directory)
      (expand-file-name (concat name ".yml") gptel-scope-profile-directory))))

(defun gptel-scope--inline-source (value name)
  "Return the module source for the inline scope VALUE, called NAME, or nil."
  (cond ((null value) nil)
        ((and (stringp value) (string-match-p "[\n:{]" value))
         (list :inline value :name name))
        ((or (stringp value) (symbolp value))
         (list :profile (gptel-scope--profile-file value)))
        ((consp value)
         (list :inline (json-serialize (gptel-scope--to-json value)) :name name))
        (t (signal 'gptel-scope-invalid-argument
                   (list (format "%s must be a plist, a profile name or YAML text, not %S" name value))))))

(defun gptel-scope-document (&optional buffer)
  "Return the scope document in effect for BUFFER, or nil.
That is `gptel-scope-file'; else scope.yml or preset.md in
`gptel-scope-directory'; else the nearest scope.yml upward from
`default-directory'; else a preset.md beside the buffer's file."
  (with-current-buffer (or buffer (current-buffer))
    (cond
     (gptel-scope-file (expand-file-name gptel-scope-file))
     (gptel-scope-directory
      (seq-find #'file-exists-p
                (mapcar (lambda (f) (expand-file-name f gptel-scope-directory))
                        '("scope.yml" "preset.md"))))
     ((let ((dir (locate-dominating-file default-directory "scope.yml")))
        (and dir (expand-file-name "scope.yml" dir))))
     ((and buffer-file-name
           (let ((preset (expand-file-name "preset.md" (file-name-directory buffer-file-name))))
             (and (file-exists-p preset) preset)))))))

(defun gptel-scope-sources (&optional buffer)
  "Return the scope sources of BUFFER, a vector for the module."
  (with-current-buffer (or buffer (current-buffer))
    (let ((doc (gptel-scope-document)))
      (vconcat (delq nil (list (gptel-scope--inline-source gptel-scope "preset :scope")
                               (gptel-scope--inline-source gptel-scope-inline "gptel-scope-inline")
                               (and doc (list :file doc))))))))

(defun gptel-scope--project-root ()
  "Return the project root for a scope with no document: the project or directory."
  (directory-file-name
   (expand-file-name (let ((p (progn (require 'project) (project-current nil))))
                       (if p (project-root p) default-directory)))))

(defun gptel-scope--grants (&optional buffer)
  "Return the allow-once grants of BUFFER, a vector for the module."
  (with-current-buffer (or buffer (current-buffer))
    (if gptel-scope--allow-once
        (vconcat (mapcar (lambda (g) (list :tool (car g) :resource (cdr g))) gptel-scope--allow-once))
      [])))

(defun gptel-scope--request (buffer &rest keys)
  "Return the JSON request with KEYS under BUFFER's scope and grants."
  (with-current-buffer buffer
    (let ((sources (gptel-scope-sources)))
      (json-serialize
       (nconc keys
              (list :sources sources
                    :grants (gptel-scope--grants)
                    :home (expand-file-name "~"))
              (unless (cl-loop for s across sources thereis (plist-get s :file))
                (list :project_root (gptel-scope--project-root))))))))

(defvar-local gptel-scope--scope-json nil
  "The scope part of this buffer's last brief request, and what it was made of.
A vector [PRESET INLINE DOCUMENT GRANTS HOME-ENTRY HOME ROOT JSON]
\(copies of `gptel-scope', `gptel-scope-inline' and the allow-once
grants; the HOME entry of `process-environment' HOME was made from).")

(defun gptel-scope--home-entry ()
  "Return the entry of HOME in `process-environment', or nil."
  (let ((env process-environment) (entry nil))
    (while (and env (not entry))
      (when (string-prefix-p "HOME=" (car env)) (setq entry (car env)))
      (setq env (cdr env)))
    entry))

(defun gptel-scope--scope-json (buffer)
  "Return the JSON of BUFFER's scope for the module, without a command.
That is its sources, grants, home and, without a scope document, the
project root, as `gptel-scope--request' sends them.  It is made again
only when one of them changed: every call looks for the document and
compares the rest."
  (with-current-buffer buffer
    (let* ((doc (gptel-scope-document))
           (c gptel-scope--scope-json)
           ;; `expand-file-name' of ~ is asked again only when HOME changed.
           (entry (gptel-scope--home-entry))
           (home (if (and c (eq (aref c 4) entry)) (aref c 5) (expand-file-name "~")))
           (root (unless doc (gptel-scope--project-root))))
      (if (and c
               (equal (aref c 2) doc) (eq (aref c 5) home) (equal (aref c 6) root)
               (equal (aref c 0) gptel-scope) (equal (aref c 1) gptel-scope-inline)
               (equal (aref c 3) gptel-scope--allow-once))
          (aref c 7)
        (let* ((sources (gptel-scope-sources))
               (json (json-serialize
                      (nconc (list :sources sources :grants (gptel-scope--grants) :home home)
                             (unless (cl-loop for s across sources thereis (plist-get s :file))
                               (list :project_root (or root (gptel-scope--project-root))))))))
          (setq gptel-scope--scope-json
                (vector (copy-tree gptel-scope t) (copy-tree gptel-scope-inline t) doc
                        (copy-tree gptel-scope--allow-once) entry home root json))
          json)))))

;;;; Grants and refusals

(defun gptel-scope--use-grants (buffer used)
  "Remove from BUFFER's allow-once list the grants in USED, plists."
  (when (and used (buffer-live-p buffer))
    (with-current-buffer buffer
      (dolist (g used)
        (setq gptel-scope--allow-once
              (cl-remove (cons (plist-get g :tool) (plist-get g :resource))
                         gptel-scope--allow-once :test #'equal :count 1))))))

(defun gptel-scope--remember-denial (buffer decision)
  "Record in BUFFER what the refusal DECISION refused, by tool and resource.
A violation of a brief decision (`gptel-scope-module-decide') has no
message: its record keeps the command and directory that were judged
instead, and `gptel-scope-denial' asks the module for the rest when
it is wanted."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (let ((tool (plist-get decision :tool))
            (command (plist-get decision :command))
            (directory (plist-get decision :directory)))
        (dolist (v (cons decision (reverse (plist-get decision :violations))))
          (let ((resource (plist-get v :resource))
                (top (eq v decision)))
            (when resource
              (gptel-scope--record-denial
               (cons tool resource)
               (list :validation-type (plist-get v :validation-type)
                     :access (plist-get v (if top :required-scope :access))
                     :reason (plist-get v :reason)
                     :message (plist-get v :message)
                     :command (or (and (not top) (plist-get v :command)) command)
                     :judged (and (not (plist-member v :message)) command directory
                                  (list command directory)))))))))))

(defun gptel-scope--record-denial (key details)
  "Record DETAILS of the refusal KEY, (TOOL . RESOURCE), first; keep 32 at most."
  (let* ((rest (assoc-delete-all key gptel-scope--denials))
         (last (nthcdr 30 rest)))
    (when last (setcdr last nil))
    (setq gptel-scope--denials (cons (cons key details) rest))))

(defun gptel-scope--fill-denial (tool resource details)
  "Complete DETAILS, the brief record of the refusal of TOOL on RESOURCE.
The command and directory it records are judged again in full, and
the violation on RESOURCE gives its message and command.  Return
DETAILS."
  (let ((judged (plist-get details :judged)))
    (when (and judged (equal tool "run_bash_command"))
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

;;;; Results for the model

(defun gptel-scope--json (&rest plist)
  "Serialize PLIST for the model; nil values become false."
  ;; PLIST is this call's own list: its nil values are replaced in place.
  (let ((tail plist))
    (while tail
      (unless (cadr tail) (setcar (cdr tail) :false))
      (setq tail (cddr tail))))
  (json-serialize plist))

(defun gptel-scope--error-reason (err)
  "Return the reason code of the error ERR."
  (cond ((eq (car err) 'gptel-scope-module-error) "module_unavailable")
        ((eq (car err) 'gptel-scope-sandbox-error) "sandbox_unavailable")
        ((memq (car err) '(gptel-scope-invalid-argument wrong-type-argument file-missing))
         "invalid_argument")
        ((eq (car err) 'gptel-scope-invalid-config) "invalid_config")
        ((eq (car err) 'gptel-scope-no-scope-config) "no_scope_config")
        (t "error")))

(defun gptel-scope--error-json (err &optional tool)
  "Return the JSON result of TOOL for the error ERR."
  (gptel-scope--json :success nil
                     :reason (gptel-scope--error-reason err)
                     :tool (or tool :null)
                     :message (error-message-string err)))

(defun gptel-scope--once (callback)
  "Return a function calling CALLBACK with its argument at most once."
  (let ((called nil))
    (lambda (result)
      (unless called
        (setq called t)
        (funcall callback result)))))

(defmacro gptel-scope--guard (callback tool &rest body)
  "Run BODY; on any error call CALLBACK with the error, as TOOL's JSON result."
  (declare (indent 2) (debug t))
  (let ((err (make-symbol "err")))
    `(condition-case ,err
         (progn ,@body)
       (error (funcall ,callback (gptel-scope--error-json ,err ,tool))))))

(defun gptel-scope--absent-p (value)
  "Return non-nil when VALUE is an argument the model left out.
That is nil, or JSON null or false as gptel or `json-parse-string' read them."
  (memq value '(nil :null :false :json-false)))

(defun gptel-scope--string-arg (name value &optional allow-empty)
  "Return VALUE, the argument NAME, if it is a string; else signal.
An empty string is refused unless ALLOW-EMPTY."
  (unless (and (stringp value) (or allow-empty (string-match-p "[^ \t\n\r]" value)))
    (signal 'gptel-scope-invalid-argument
            (list (format "The argument `%s' is required and must be a non-empty string" name))))
  value)

(defun gptel-scope--directory-arg (directory)
  "Return DIRECTORY expanded against the buffer's `default-directory' (B13, B26)."
  (gptel-scope--string-arg "directory" directory)
  (directory-file-name (expand-file-name directory)))

(defun gptel-scope--timeout-arg (timeout decision)
  "Return the timeout of a call: TIMEOUT if given (capped), else DECISION's."
  (let ((asked (cond ((numberp timeout) timeout)
                     ((and (stringp timeout) (string-match-p "\\`[0-9.]+\\'" timeout))
                      (string-to-number timeout))
                     ((gptel-scope--absent-p timeout) nil)
                     (t (signal 'gptel-scope-invalid-argument
                                (list (format "timeout must be a number of seconds, not %S" timeout)))))))
    (if (and asked (> asked 0))
        (min asked gptel-scope-max-timeout)
      (or (plist-get decision :timeout) 30))))

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
             (list :message (format "The command failed with exit code %s; its output is shown." code)))))))

;;;; Running

(defvar gptel-scope--denial-handler nil
  "Function (BUFFER DECISION RETRY CALLBACK) asking the user at a refusal.
Set by gptel-scope-expand.  It calls RETRY when the user lifted the
refusal, else CALLBACK with the refusal.")

(defun gptel-scope--askable-p (decision)
  "Return non-nil when the refusal DECISION is one the user may lift."
  (and (plist-get decision :resource)
       (member (plist-get decision :reason)
               '("command_not_allowed" "dangerous_command" "directory_not_in_scope"
                 "path_not_in_scope" "subcommand_not_allowed" "flag_not_allowed"))))

(defun gptel-scope--denial-json (decision)
  "Return the JSON for the model of the refusal DECISION.
A brief refusal has its answer written now, from its :refusal."
  (or (plist-get decision :response)
      (let ((refusal (plist-get decision :refusal)))
        (and refusal (gptel-scope-module-refusal-json refusal)))
      (gptel-scope--json :success nil :allowed nil
                         :reason (or (plist-get decision :reason) "denied")
                         :tool (or (plist-get decision :tool) :null)
                         :message (or (plist-get decision :message) "The call was refused."))))

(defun gptel-scope--refuse (buffer callback decision &optional retry)
  "Answer the refusal DECISION: remember it in BUFFER, then ask or tell.
With RETRY, a function running the call again, and
`gptel-scope-prompt-on-denial', the user is asked and may lift it;
else CALLBACK receives the refusal's JSON."
  (gptel-scope--remember-denial buffer decision)
  (if (and retry gptel-scope-prompt-on-denial gptel-scope--denial-handler
           (gptel-scope--askable-p decision))
      (funcall gptel-scope--denial-handler buffer decision retry callback)
    (funcall callback (gptel-scope--denial-json decision))))

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
                           :reason (or (plist-get decision :reason) "denied")
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
      (gptel-scope-exec-start
       argv (plist-get decision :directory)
       (lambda (r)
         (gptel-scope--emit-result tool args id r)
         (funcall callback (gptel-scope--result-json decision r timeout)))
       :timeout timeout
       :max-chars (or (plist-get decision :max-output-chars) 20000))
      ;; The grant is used up by the call it let through (E18).
      (gptel-scope--use-grants buffer (plist-get decision :grants-used)))))

(defun gptel-scope-check-bash-command (command directory &optional buffer brief)
  "Return the module's decision on COMMAND run in DIRECTORY under BUFFER's scope.
With BRIEF, the decision comes without its evidence, which spares
Emacs most of its cost: an allowed command with what running it takes
\(directory, timeout, output limit, warnings, grants used), a refusal
with what answering the model and offering the expansion takes
\(tool, reason, message, the resource and each violation's resource,
kind, access and reason, and the :refusal its answer to the model is
written from, by `gptel-scope--denial-json'), and the :command and
:directory judged.  `gptel-scope-explain' shows the evidence.  An
allowed decision may be shared with others: do not modify it."
  (let ((buffer (or buffer (current-buffer))))
    (gptel-scope-load-module)
    (with-current-buffer buffer
      (let* ((command (gptel-scope--string-arg "command" command))
             (dir (gptel-scope--directory-arg directory))
             (d (if brief
                    (gptel-scope-module-decide-command command dir (gptel-scope--scope-json buffer))
                  (gptel-scope-module-check-command
                   (gptel-scope--request buffer :command command :directory dir
                                         :tool "run_bash_command")))))
        (cond
         ;; A brief refusal, the refusal itself: its plist is made now.
         ((user-ptrp d)
          (nconc (gptel-scope-module-refusal-details d) (list :command command :directory dir)))
         ((or (plist-get d :allowed) (plist-member d :command)) d)
         (t (nconc d (list :command command :directory dir))))))))

(defun gptel-scope-run-bash-command (callback command directory &optional timeout)
  "Judge the shell COMMAND in DIRECTORY and run it if allowed.
CALLBACK receives the JSON result, exactly once.  TIMEOUT, in
seconds, overrides the scope's for this call (capped by
`gptel-scope-max-timeout').  This is run_bash_command."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback))
        (args (list :command command :directory directory :timeout timeout)))
    (gptel-scope--guard once "run_bash_command"
      (gptel-scope--with-error-event "run_bash_command" args
        (let ((d (gptel-scope-check-bash-command command directory buffer t)))
          (gptel-scope--run buffer once d (gptel-scope-exec-shell-argv command) timeout
                            (lambda ()
                              (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
                                (let ((gptel-scope-prompt-on-denial nil))
                                  (gptel-scope-run-bash-command once command directory timeout))))
                            args))))))

(defun gptel-scope--args-list (args)
  "Return ARGS, a vector or list of strings, as a list; else signal."
  (let ((l (append (if (gptel-scope--absent-p args) nil args) nil)))
    (unless (seq-every-p #'stringp l)
      (signal 'gptel-scope-invalid-argument (list "args must be an array of strings")))
    l))

(defun gptel-scope-run-command (callback command args directory &optional timeout)
  "Judge COMMAND with ARGS (no shell) in DIRECTORY and run it if allowed.
CALLBACK receives the JSON result, exactly once.  TIMEOUT as in
`gptel-scope-run-bash-command'.  This is run_command: ARGS are never
re-interpreted by a shell (C12)."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback))
        (event-args (list :command command :args args :directory directory :timeout timeout)))
    (gptel-scope--guard once "run_command"
      (gptel-scope--with-error-event "run_command" event-args
        (gptel-scope-load-module)
        (let* ((args (gptel-scope--args-list args))
               (d (gptel-scope-module-check-argv
                   (gptel-scope--request buffer
                                         :command (gptel-scope--string-arg "command" command)
                                         :args (vconcat args)
                                         :directory (gptel-scope--directory-arg directory)
                                         :tool "run_command"))))
          (gptel-scope--run buffer once d (cons command args) timeout
                            (lambda ()
                              (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
                                (let ((gptel-scope-prompt-on-denial nil))
                                  (gptel-scope-run-command once command args directory timeout))))
                            event-args))))))

(defun gptel-scope-list-allowed-commands ()
  "Return the list of commands allowed by the current buffer's scope (C11)."
  (condition-case err
      (progn
        (gptel-scope-load-module)
        (gptel-scope-module-list-commands (gptel-scope--request (current-buffer))))
    (error (format "No commands are available: %s (%s)"
                   (error-message-string err) (gptel-scope--error-reason err)))))

(defun gptel-scope--confirm-p (tool command directory)
  "Return non-nil when the scope's approval_policy wants TOOL's call confirmed.
COMMAND runs in DIRECTORY.  `always' confirms every call, `mutating'
the calls that need write scope, `never' none."
  (ignore-errors
    (gptel-scope-load-module)
    (let ((policy (plist-get (gptel-scope-module-load-scope
                              (gptel-scope--request (current-buffer)))
                             :approval-policy)))
      (pcase policy
        ("always" t)
        ("mutating"
         (let ((d (if (equal tool "run_command")
                      (gptel-scope-module-check-argv
                       (gptel-scope--request (current-buffer) :command (car command)
                                             :args (vconcat (cdr command))
                                             :directory (gptel-scope--directory-arg directory)
                                             :tool tool))
                    (gptel-scope-check-bash-command command directory nil t))))
           (or (equal (plist-get d :required-scope) "write")
               (equal (plist-get d :category) "dangerous"))))))))

;;;; Registration with gptel

(defconst gptel-scope-run-bash-command-description
  "Run a bash command in a directory, inside the scope the user allows. The directory is required: an absolute path, or a path relative to the project the chat is about. Every command of a pipeline, list or substitution is checked before anything runs, and so are the files it reads or writes; a command outside the scope is refused with the reason and what to do instead. Do not use it to read, list or search files or to learn about the system: read_file, list_dir, grep_files and get_system_info do that without running anything. Use list_allowed_commands to see what may run. Use relative paths inside the project so the scope can check them. If a call is refused for scope and you need it, call request_scope_expansion with the tool name, the resource the refusal names and your reason; never work around a refusal. Long output is truncated: narrow it with head, grep or tail. The result is JSON: success, exit_code, output (stdout and stderr), truncated, warnings, duration_ms."
  "What the model is told about run_bash_command.")

(defconst gptel-scope-run-command-description
  "Run one program with an array of arguments, without a shell: arguments are passed as they are and never re-interpreted (no pipes, globs or variables). The directory is required, absolute or relative to the project. Only the programs, subcommands and flags of list_allowed_commands may run. If a call is refused for scope and you need it, call request_scope_expansion with tool_name \"run_command\", the resource the refusal names and your reason."
  "What the model is told about run_command.")

(defconst gptel-scope-list-allowed-commands-description
  "List the commands the user's scope allows, with their categories, subcommands and allowed flags. Call it before running commands you are unsure of."
  "What the model is told about list_allowed_commands.")

(defvar gptel-version)

(defun gptel-scope--confirm-functions-p ()
  "Return non-nil when gptel accepts a function as a tool's :confirm.
gptel does from 0.9.9.3 on; before, any non-nil value confirms every call."
  (and (boundp 'gptel-version) (stringp gptel-version)
       (ignore-errors (version<= "0.9.9.3" gptel-version))))

(defun gptel-scope--confirm-arg (function)
  "Return the :confirm keyword and FUNCTION when gptel supports it, else nil."
  (and (gptel-scope--confirm-functions-p) (list :confirm function)))

(defun gptel-scope-tools-register-tools ()
  "Register run_bash_command, run_command and list_allowed_commands with gptel.
They go in the category \"scope\", so a preset can use :tools \\='(\"scope\").
With gptel 0.9.9.3 or later the scope's approval_policy decides which
calls gptel asks you to confirm."
  (apply
   #'gptel-make-tool
   :name "run_bash_command" :category "scope" :async t
   :function #'gptel-scope-run-bash-command
   :description gptel-scope-run-bash-command-description
   :args (list '(:name "command" :type string
                       :description "The bash command to run")
               '(:name "directory" :type string
                       :description "The directory to run it in (required): absolute, or relative to the project")
               '(:name "timeout" :type integer :optional t
                       :description "Seconds before the command is killed; omit to use the scope's timeout"))
   (gptel-scope--confirm-arg
    (lambda (command directory &rest _)
      (gptel-scope--confirm-p "run_bash_command" command directory))))
  (apply
   #'gptel-make-tool
   :name "run_command" :category "scope" :async t
   :function #'gptel-scope-run-command
   :description gptel-scope-run-command-description
   :args (list '(:name "command" :type string :description "The program to run, e.g. git")
               '(:name "args" :type array :items (:type string)
                       :description "Its arguments, one string each, e.g. [\"log\", \"--oneline\", \"-n\", \"5\"]")
               '(:name "directory" :type string
                       :description "The directory to run it in (required): absolute, or relative to the project")
               '(:name "timeout" :type integer :optional t
                       :description "Seconds before the program is killed; omit to use the scope's timeout"))
   (gptel-scope--confirm-arg
    (lambda (command args directory &rest _)
      (gptel-scope--confirm-p "run_command" (cons command (append args nil)) directory))))
  (gptel-make-tool
   :name "list_allowed_commands" :category "scope"
   :function #'gptel-scope-list-allowed-commands
   :description gptel-scope-list-allowed-commands-description
   :args nil))


(provide 'gptel-scope-tools)
;;; gptel-scope-tools.el ends here
