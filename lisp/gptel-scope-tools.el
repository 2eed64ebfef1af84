;;; gptel-scope-tools.el --- The gptel tools of gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
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
(require 'gptel-scope-trust)

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
         ;; Nested in the request's JSON: text, as Emacs 30 wants it there.
         (list :inline (gptel-scope--json-encode (gptel-scope--to-json value)) :name name))
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

(defvar-local gptel-scope--document-in-use nil
  "The scope document this buffer's tool calls last ran under, or nil.")

(defun gptel-scope--document-checked (doc)
  "Return DOC, the scope document of the current buffer now.
When the document its calls ran under is gone (removed or moved) and
other rules would apply instead (another document, or inline scope
alone), signal `gptel-scope-untrusted-scope': a tool could have removed
it to fall back on wider rules.  `gptel-scope-trust' lifts this."
  (let ((used gptel-scope--document-in-use))
    (when (and used (not (equal used doc)) (not (file-exists-p used))
               (or doc gptel-scope gptel-scope-inline))
      (signal 'gptel-scope-untrusted-scope
              (list (format "untrusted_scope: the scope document %s this chat ran under is gone (removed or moved), and %s would apply instead. Nothing runs until the user reviews the rules that apply now and approves them (M-x gptel-scope-trust); tell the user"
                            used (if doc (format "the scope document %s" doc) "the preset's inline scope alone")))))
    (when doc (setq gptel-scope--document-in-use doc))
    doc))

(defun gptel-scope--forget-vanished-documents ()
  "Let the buffers whose scope document vanished take the rules that apply now.
Run by `gptel-scope-trust': the user has reviewed the rules."
  (dolist (b (buffer-list))
    (let ((used (buffer-local-value 'gptel-scope--document-in-use b)))
      (when (and used (not (file-exists-p used)))
        (with-current-buffer b (setq gptel-scope--document-in-use nil))))))

(add-hook 'gptel-scope-trust-functions #'gptel-scope--forget-vanished-documents)

(defun gptel-scope-sources (&optional buffer)
  "Return the scope sources of BUFFER, a vector for the module.
The document comes with the SHA-256 of the content the user approved
\(:null when none): the module applies it only with that content."
  (with-current-buffer (or buffer (current-buffer))
    (let ((doc (gptel-scope--document-checked (gptel-scope-document))))
      (vconcat (delq nil (list (gptel-scope--inline-source gptel-scope "preset :scope")
                               (gptel-scope--inline-source gptel-scope-inline "gptel-scope-inline")
                               (and doc (list :file doc
                                              :sha256 (or (gptel-scope-trust-approved doc) :null)))))))))

(defun gptel-scope-protected-paths (&optional buffer)
  "Return the paths that hold the rules of BUFFER's scope, a vector.
No tool may write them, whatever the scope says (the module also
protects every file named scope.yml and the documents it reads), and
the sandbox binds those inside a writable directory read-only: the
session's scope.yml and preset.md, `gptel-scope-file', every scope.yml
above `default-directory', the profile directory, the trust list and
the Emacs init files."
  (with-current-buffer (or buffer (current-buffer))
    (let ((paths (list (expand-file-name gptel-scope-trust-file)
                       (directory-file-name (expand-file-name gptel-scope-profile-directory)))))
      (when gptel-scope-file (push (expand-file-name gptel-scope-file) paths))
      (when gptel-scope-directory
        (dolist (f '("scope.yml" "preset.md"))
          (push (expand-file-name f gptel-scope-directory) paths)))
      (when buffer-file-name
        (push (expand-file-name "preset.md" (file-name-directory buffer-file-name)) paths))
      (let ((dir (file-name-as-directory (expand-file-name default-directory))) (prev nil))
        (while (and dir (not (equal dir prev)))
          (let ((f (expand-file-name "scope.yml" dir)))
            (when (file-exists-p f) (push f paths)))
          (setq prev dir
                dir (file-name-directory (directory-file-name dir)))))
      (dolist (f (list user-init-file custom-file early-init-file))
        (when (and (stringp f) (file-name-absolute-p f))
          (push (expand-file-name f) paths)))
      (vconcat (delete-dups (nreverse paths))))))

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

(defvar gptel-scope-masked-function nil
  "Function telling whether commands run where denied entries are masked.
Called with no argument when a command is judged; non-nil means the
command runs in a sandbox that masks every entry a deny pattern covers
under the scope's directories, so the module allows a command reading a
whole tree with a warning instead of refusing it.  The sandbox sets it.")

(defun gptel-scope--masked ()
  "Return t when commands run with denied entries masked, else :false (JSON)."
  (if (and gptel-scope-masked-function (funcall gptel-scope-masked-function)) t :false))

(defun gptel-scope--request (buffer &rest keys)
  "Return the JSON request with KEYS under BUFFER's scope and grants."
  (with-current-buffer buffer
    (let ((sources (gptel-scope-sources)))
      (json-serialize
       (nconc keys
              (list :sources sources
                    :grants (gptel-scope--grants)
                    :home (expand-file-name "~")
                    :check_trust t
                    :protect (gptel-scope-protected-paths))
              (unless (cl-loop for s across sources thereis (plist-get s :file))
                (list :project_root (gptel-scope--project-root))))))))

(defvar-local gptel-scope--scope-json nil
  "The scope part of this buffer's last brief request, and what it was made of.
A vector [PRESET INLINE DOCUMENT GRANTS HOME-ENTRY HOME ROOT JSON RULES MASKED]
\(copies of `gptel-scope', `gptel-scope-inline' and the allow-once
grants; the HOME entry of `process-environment' HOME was made from;
RULES what the approvals and the protected paths were made from; MASKED
whether commands ran with denied entries masked).")

(defun gptel-scope--rules-key ()
  "Return what this buffer's approvals and protected paths are made of.
The trust list's generation, the session's files and directories, and
the options naming the profiles and the trust list."
  (list (gptel-scope-trust-generation) gptel-scope-file gptel-scope-directory
        buffer-file-name default-directory gptel-scope-profile-directory gptel-scope-trust-file))

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
    (let* ((doc (gptel-scope--document-checked (gptel-scope-document)))
           (c gptel-scope--scope-json)
           ;; `expand-file-name' of ~ is asked again only when HOME changed.
           (entry (gptel-scope--home-entry))
           (home (if (and c (eq (aref c 4) entry)) (aref c 5) (expand-file-name "~")))
           (root (unless doc (gptel-scope--project-root)))
           (rules (gptel-scope--rules-key))
           (masked (gptel-scope--masked)))
      (if (and c
               (equal (aref c 2) doc) (eq (aref c 5) home) (equal (aref c 6) root)
               (equal (aref c 0) gptel-scope) (equal (aref c 1) gptel-scope-inline)
               (equal (aref c 3) gptel-scope--allow-once)
               (equal (aref c 8) rules)
               (eq (aref c 9) masked))
          (aref c 7)
        (let* ((sources (gptel-scope-sources))
               (json (json-serialize
                      (nconc (list :sources sources :grants (gptel-scope--grants) :home home
                                   :check_trust t :protect (gptel-scope-protected-paths)
                                   :masked masked)
                             (unless (cl-loop for s across sources thereis (plist-get s :file))
                               (list :project_root (or root (gptel-scope--project-root))))))))
          (setq gptel-scope--scope-json
                (vector (copy-tree gptel-scope t) (copy-tree gptel-scope-inline t) doc
                        (copy-tree gptel-scope--allow-once) entry home root json rules masked))
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

(defun gptel-scope--json-encode (object &rest args)
  "Return `json-serialize' of OBJECT with ARGS, as text.
Emacs 30's `json-serialize' returns unibyte UTF-8 bytes, Emacs 28 and
29 a multibyte string.  gptel puts a tool's result into its next
request with `json-serialize', which on Emacs 30 refuses a unibyte
string that is not ASCII; so every result for the model, and every
JSON text nested in other JSON, is made here: decoded as UTF-8 when
unibyte (an ASCII string is returned as it is)."
  (let ((s (apply #'json-serialize object args)))
    (if (multibyte-string-p s) s (decode-coding-string s 'utf-8-unix t))))

(defun gptel-scope--json (&rest plist)
  "Serialize PLIST for the model, as text; nil values become false.
A value `json-serialize' refuses (a string that is not valid text, say)
is converted by `gptel-scope--json-value', so this never signals."
  ;; PLIST is this call's own list: its nil values are replaced in place.
  (let ((tail plist))
    (while tail
      (unless (cadr tail) (setcar (cdr tail) :false))
      (setq tail (cddr tail))))
  (condition-case nil
      (gptel-scope--json-encode plist)
    (error (gptel-scope--json-encode (gptel-scope--json-value plist)))))

(defun gptel-scope--result-text (result)
  "Return RESULT, a tool's answer, as text gptel can send to the model.
A string is made valid text (a unibyte one decoded as UTF-8); anything
else, which no tool should answer, becomes an error result."
  (cond ((and (stringp result) (multibyte-string-p result)) result)
        ((stringp result) (gptel-scope--json-string result))
        (t (gptel-scope--json :success nil :reason "error"
                              :message (format "The tool's result could not be read: %s"
                                               (truncate-string-to-width (format "%S" result) 200))))))

(define-error 'gptel-scope-remote-directory "Remote directory" 'gptel-scope-error)

(defun gptel-scope--error-reason (err)
  "Return the reason code of the error ERR."
  (cond ((eq (car err) 'gptel-scope-remote-directory) gptel-scope--reason-remote-directory)
        ((eq (car err) 'gptel-scope-module-error) gptel-scope--reason-module-unavailable)
        ((eq (car err) 'gptel-scope-sandbox-error) gptel-scope--reason-sandbox-unavailable)
        ((memq (car err) '(gptel-scope-invalid-argument wrong-type-argument file-missing))
         gptel-scope--reason-invalid-argument)
        ((eq (car err) 'gptel-scope-invalid-config) gptel-scope--reason-invalid-config)
        ((eq (car err) 'gptel-scope-no-scope-config) gptel-scope--reason-no-scope-config)
        ((eq (car err) 'gptel-scope-untrusted-scope) gptel-scope--reason-untrusted-scope)
        (t "error")))

(defun gptel-scope--error-message (err)
  "Return the message of the error ERR for the model.
An invalid argument or a remote directory is its own sentence; other
errors are their `error-message-string'."
  (if (and (memq (car err) '(gptel-scope-invalid-argument gptel-scope-remote-directory
                             gptel-scope-untrusted-scope))
           (consp (cdr err)) (stringp (cadr err)))
      (cadr err)
    (error-message-string err)))

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

(defvar gptel-scope--redact-function nil
  "Function (BUFFER TEXT) returning TEXT, a tool's result, with secrets hidden.
BUFFER is the chat buffer of the call.  Set by gptel-scope-env.")

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

;;;; Remote directories

(defun gptel-scope--remote-p (name)
  "Return non-nil when the file name NAME is on another host (TRAMP).
This is `file-remote-p' without IDENTIFICATION or CONNECTED: it reads
the name and connects to nothing.  A name TRAMP cannot read counts as
remote."
  (and (stringp name)
       (condition-case nil (and (file-remote-p name) t) (error t))))

(defconst gptel-scope--remote-advice
  "gptel-scope works on this machine only: its scope, its checks of paths and commands and its sandbox are local, and it never connects to another host, so nothing was run. Remote (TRAMP) directories are not supported. Tell the user: to work on that project, open the chat from a buffer of a local copy of it, or run Emacs with gptel-scope on that host."
  "What a refusal of a remote directory says is and is not supported.")

(defun gptel-scope--check-local (&optional name file)
  "Refuse a call that would work in a remote directory, before any connection.
The buffer's `default-directory', `gptel-scope-directory' and
`gptel-scope-file' are checked, then FILE, the file name argument NAME
of the call (a FILE that is not a string is left to its own checks).
Signal `gptel-scope-remote-directory' (reason remote_directory) on
the first that is remote."
  (let ((where (cond ((gptel-scope--remote-p default-directory)
                      (format "The chat's directory %s is on another host." default-directory))
                     ((gptel-scope--remote-p gptel-scope-directory)
                      (format "The chat's scope directory %s is on another host." gptel-scope-directory))
                     ((gptel-scope--remote-p gptel-scope-file)
                      (format "The chat's scope document %s is on another host." gptel-scope-file))))
        (argument nil))
    (when (and (not where) (gptel-scope--remote-p file))
      (setq argument name
            where (format "The argument `%s' names %s, on another host." name file)))
    (when where
      (signal 'gptel-scope-remote-directory
              (append (list (concat where " " gptel-scope--remote-advice))
                      (and argument (list :argument argument)))))))

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

(defvar gptel-scope-failure-note-function nil
  "Function (OUTPUT EXIT-CODE DIRECTORY) saying why a sandboxed command failed.
Called when a command the sandbox wrapped failed; it returns a
sentence naming what the sandbox did and what to do instead, or nil
when the failure is the command's own.  The sandbox sets it.")

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

(defvar gptel-scope--denial-handler nil
  "Function (BUFFER DECISION RETRY CALLBACK) asking the user at a refusal.
Set by gptel-scope-expand.  It calls RETRY when the user lifted the
refusal, else CALLBACK with the refusal.")

(defun gptel-scope--askable-p (decision)
  "Return non-nil when the refusal DECISION is one the user may lift.
The module says so of its reason (:askable); it needs a :resource too."
  (and (plist-get decision :resource)
       (plist-get decision :askable)))

(defun gptel-scope--denial-json (decision)
  "Return the JSON for the model of the refusal DECISION.
A brief refusal has its answer written now, from its :refusal."
  (or (plist-get decision :response)
      (let ((refusal (plist-get decision :refusal)))
        (and refusal (gptel-scope-module-refusal-json refusal)))
      (gptel-scope--json :success nil :allowed nil
                         :reason (or (plist-get decision :reason) gptel-scope--reason-denied)
                         :tool (or (plist-get decision :tool) :null)
                         :message (or (plist-get decision :message) "The call was refused."))))

(defvar gptel-scope--trust-retrying nil
  "Non-nil while a call runs again after its scope document was approved.
It is not offered for approval a second time.")

(defun gptel-scope--refuse (buffer callback decision &optional retry)
  "Answer the refusal DECISION: remember it in BUFFER, then ask or tell.
With RETRY, a function running the call again, and
`gptel-scope-prompt-on-denial', the user is asked and may lift it;
else CALLBACK receives the refusal's JSON."
  (gptel-scope--remember-denial buffer decision)
  (cond
   ;; A scope document the user has not approved: ask at once (interactive sessions);
   ;; approved now, the call runs again.
   ((and retry (not gptel-scope--trust-retrying) (gptel-scope--untrusted-file decision)
         (gptel-scope-trust-offer (gptel-scope--untrusted-file decision)))
    (let ((gptel-scope--trust-retrying t))
      (funcall retry)))
   ((and retry gptel-scope-prompt-on-denial gptel-scope--denial-handler
         (gptel-scope--askable-p decision))
    (funcall gptel-scope--denial-handler buffer decision retry callback))
   (t (funcall callback (gptel-scope--denial-json decision)))))

(defun gptel-scope--event-scope (event)
  "Return the scope document of EVENT's call and whether it is approved.
A call that started ran under its document's approved content (the
module checked it); one refused with untrusted_scope did not."
  (let ((doc (ignore-errors (gptel-scope-document))))
    (and doc
         (list :scope-document doc
               :approved (if (equal (plist-get event :reason) gptel-scope--reason-untrusted-scope)
                             nil
                           (and (gptel-scope-trust-approved doc) t))))))

(setq gptel-scope--event-scope-function #'gptel-scope--event-scope)

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
kind, access and reason, and the :refusal its answer to the model is
written from, by `gptel-scope--denial-json'), and the :command and
:directory judged.  `gptel-scope-explain' shows the evidence."
  (let ((buffer (or buffer (current-buffer))))
    (with-current-buffer buffer
      ;; A remote chat directory is refused before anything touches it.
      (gptel-scope--check-local)
      (gptel-scope-load-module)
      (let* ((command (gptel-scope--string-arg "command" command))
             (dir (gptel-scope--directory-arg directory))
             (d (if brief
                    (gptel-scope-module-decide-command command dir (gptel-scope--scope-json buffer))
                  (gptel-scope-module-check-command
                   (gptel-scope--request buffer :command command :directory dir
                                         :tool "run_bash_command" :masked (gptel-scope--masked))))))
        (cond
         ;; A brief refusal, the refusal itself: its plist is made now.
         ((user-ptrp d)
          (nconc (gptel-scope-module-refusal-details d) (list :command command :directory dir)))
         ((or (plist-get d :allowed) (plist-member d :command)) d)
         (t (nconc d (list :command command :directory dir))))))))

(defun gptel-scope-run-bash-command (callback &optional command directory timeout)
  "Judge the shell COMMAND in DIRECTORY and run it if allowed.
CALLBACK receives the JSON result, exactly once.  TIMEOUT, in
seconds, overrides the scope's for this call (capped by
`gptel-scope-max-timeout').  This is run_bash_command.  The
arguments are as gptel passes them (`gptel-scope--arg'): a missing or
malformed one is an invalid_argument result, as any error is."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback))
        (args (list :command command :directory directory :timeout timeout)))
    (gptel-scope--guard once "run_bash_command"
      (gptel-scope--with-error-event "run_bash_command" args
        ;; Every argument is read, in order, before anything is judged.
        (gptel-scope--check-local)
        (gptel-scope--string-arg "command" command)
        (gptel-scope--directory-arg directory)
        (gptel-scope--arg "timeout" timeout 'natnum)
        (let ((d (gptel-scope-check-bash-command command directory buffer t)))
          (gptel-scope--run buffer once d (gptel-scope-exec-shell-argv command) timeout
                            (lambda ()
                              (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
                                (let ((gptel-scope-prompt-on-denial nil))
                                  (gptel-scope-run-bash-command once command directory timeout))))
                            args))))))

(defun gptel-scope--args-list (args)
  "Return ARGS, the argument array of run_command, as a list of strings.
Missing (some backends drop an empty array) is no arguments; else it
must be an array of strings (`gptel-scope--arg'), or signal."
  (gptel-scope--arg "args" args 'strings))

(defun gptel-scope-run-command (callback &optional command args directory timeout)
  "Judge COMMAND with ARGS (no shell) in DIRECTORY and run it if allowed.
CALLBACK receives the JSON result, exactly once.  TIMEOUT as in
`gptel-scope-run-bash-command'.  This is run_command: ARGS are never
re-interpreted by a shell (C12).  The arguments are as gptel passes
them (`gptel-scope--arg'); a missing ARGS is no arguments."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback))
        (event-args (list :command command :args args :directory directory :timeout timeout)))
    (gptel-scope--guard once "run_command"
      (gptel-scope--with-error-event "run_command" event-args
        (gptel-scope--check-local)
        (let* ((command (gptel-scope--string-arg "command" command))
               (args (gptel-scope--args-list args))
               (dir (gptel-scope--directory-arg directory))
               (_ (gptel-scope--arg "timeout" timeout 'natnum))
               (_ (gptel-scope-load-module))
               (d (gptel-scope-module-check-argv
                   (gptel-scope--request buffer
                                         :command command
                                         :args (vconcat args)
                                         :directory dir
                                         :tool "run_command"
                                         :masked (gptel-scope--masked)))))
          (gptel-scope--run buffer once d (cons command args) timeout
                            (lambda ()
                              (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
                                (let ((gptel-scope-prompt-on-denial nil))
                                  (gptel-scope-run-command once command args directory timeout))))
                            event-args))))))

(defun gptel-scope-list-allowed-commands ()
  "Return the list of commands allowed by the current buffer's scope (C11)."
  (gptel-scope--redact
   (current-buffer)
   (condition-case err
       (progn
         (gptel-scope--check-local)
         (gptel-scope-load-module)
         (gptel-scope--result-text
          (gptel-scope-module-list-commands (gptel-scope--request (current-buffer)))))
     (error (format "No commands are available: %s (%s)"
                    (gptel-scope--error-message err) (gptel-scope--error-reason err))))))

(defun gptel-scope--confirm-p (tool command directory)
  "Return non-nil when the scope's approval_policy wants TOOL's call confirmed.
COMMAND runs in DIRECTORY; for run_command it is (PROGRAM . ARGS), ARGS
as gptel passes them.  `always' confirms every call, `mutating' the
calls that need write scope, `never' none.  An error (a malformed
argument, no scope) is signaled: gptel gets its :confirm function
from `gptel-scope--confirm-function', which answers it."
  (gptel-scope--check-local)
  (gptel-scope-load-module)
  (let ((policy (plist-get (gptel-scope-module-load-scope
                            (gptel-scope--request (current-buffer)))
                           :approval-policy)))
    (pcase policy
      ("always" t)
      ("mutating"
       (let ((d (if (equal tool "run_command")
                    (gptel-scope-module-check-argv
                     (gptel-scope--request (current-buffer)
                                           :command (gptel-scope--string-arg "command" (car-safe command))
                                           :args (vconcat (gptel-scope--args-list (cdr-safe command)))
                                           :directory (gptel-scope--directory-arg directory)
                                           :tool tool))
                  (gptel-scope-check-bash-command command directory nil t))))
         (or (equal (plist-get d :required-scope) "write")
             (equal (plist-get d :category) "dangerous")))))))

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
   :args (gptel-scope--tool-args '(:name "command" :type string
                       :description "The bash command to run")
               '(:name "directory" :type string
                       :description "The directory to run it in (required): absolute, or relative to the project")
               '(:name "timeout" :type integer :optional t
                       :description "Seconds before the command is killed; omit to use the scope's timeout"))
   (gptel-scope--confirm-arg
    (lambda (&optional command directory &rest _)
      (gptel-scope--confirm-p "run_bash_command" command directory))))
  (apply
   #'gptel-make-tool
   :name "run_command" :category "scope" :async t
   :function #'gptel-scope-run-command
   :description gptel-scope-run-command-description
   :args (gptel-scope--tool-args '(:name "command" :type string :description "The program to run, e.g. git")
               '(:name "args" :type array :items (:type string)
                       :description "Its arguments, one string each, e.g. [\"log\", \"--oneline\", \"-n\", \"5\"]")
               '(:name "directory" :type string
                       :description "The directory to run it in (required): absolute, or relative to the project")
               '(:name "timeout" :type integer :optional t
                       :description "Seconds before the program is killed; omit to use the scope's timeout"))
   (gptel-scope--confirm-arg
    (lambda (&optional command args directory &rest _)
      (gptel-scope--confirm-p "run_command" (cons command args) directory))))
  (gptel-make-tool
   :name "list_allowed_commands" :category "scope"
   :function #'gptel-scope-list-allowed-commands
   :description gptel-scope-list-allowed-commands-description
   :args nil))


(provide 'gptel-scope-tools)
;;; gptel-scope-tools.el ends here
