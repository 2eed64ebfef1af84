;;; gptel-scope-session.el --- The scope of a chat buffer  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; What a chat buffer's tool calls run under: its scope sources and
;; document, the paths that hold its rules, its project root, the
;; envelope every request to the module carries (built in one place,
;; `gptel-scope--envelope', and cached for brief decisions), its
;; allow-once grants and the refusals it remembers for
;; request_scope_expansion.
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
;; No source at all: every tool answers no_scope_config.  gptel-scope
;; works on this machine only: a chat whose directory or scope is
;; remote is refused before anything touches it (`gptel-scope--check-local').

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-trust)

(declare-function gptel-scope-module-open "gptel-scope-module" (envelope))
(declare-function gptel-scope-module-judge "gptel-scope-module" (session call))
(declare-function gptel-scope-module-mounts "gptel-scope-module" (session call))
(declare-function project-root "project" (project))

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

(defun gptel-scope--envelope (sources home &optional root)
  "Return the scope envelope of the current buffer, a plist for the module.
A session of the module is opened on it (`gptel-scope--session'):
SOURCES (`gptel-scope-sources'), the allow-once grants, HOME, the check
of approvals, the protected paths and, when no source is a document,
the project root: ROOT, or the one `gptel-scope--project-root' finds."
  (nconc (list :sources sources
               :grants (gptel-scope--grants)
               :home home
               :check_trust t
               :protect (gptel-scope-protected-paths))
         (unless (cl-loop for s across sources thereis (plist-get s :file))
           (list :project_root (or root (gptel-scope--project-root))))))

(defvar-local gptel-scope--scope-json nil
  "This buffer's last scope envelope, and what it was made of.
A vector [PRESET INLINE DOCUMENT GRANTS HOME-ENTRY HOME ROOT JSON RULES]
\(copies of `gptel-scope', `gptel-scope-inline' and the allow-once
grants; the HOME entry of `process-environment' HOME was made from;
RULES what the approvals and the protected paths were made from).")

(defvar-local gptel-scope--session nil
  "The module's session on this buffer's scope: (JSON . SESSION).
JSON is the envelope it was opened on, as `gptel-scope--scope-json'
made it.")

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
  "Return the JSON of BUFFER's scope envelope (`gptel-scope--envelope').
It is made again only when one of its parts changed: every call looks
for the document and compares the rest; unchanged, the same string
comes back."
  (with-current-buffer buffer
    (let* ((doc (gptel-scope--document-checked (gptel-scope-document)))
           (c gptel-scope--scope-json)
           ;; `expand-file-name' of ~ is asked again only when HOME changed.
           (entry (gptel-scope--home-entry))
           (home (if (and c (eq (aref c 4) entry)) (aref c 5) (expand-file-name "~")))
           (root (unless doc (gptel-scope--project-root)))
           (rules (gptel-scope--rules-key)))
      (if (and c
               (equal (aref c 2) doc) (eq (aref c 5) home) (equal (aref c 6) root)
               (equal (aref c 0) gptel-scope) (equal (aref c 1) gptel-scope-inline)
               (equal (aref c 3) gptel-scope--allow-once)
               (equal (aref c 8) rules))
          (aref c 7)
        (let* ((sources (gptel-scope-sources))
               (json (json-serialize (gptel-scope--envelope sources home root))))
          (setq gptel-scope--scope-json
                (vector (copy-tree gptel-scope t) (copy-tree gptel-scope-inline t) doc
                        (copy-tree gptel-scope--allow-once) entry home root json rules))
          json)))))

(defun gptel-scope--session (buffer)
  "Return the module's session on BUFFER's scope, opened when it changed.
The envelope is `gptel-scope--scope-json' of BUFFER; the session is
opened on it again only when it is a new string."
  (gptel-scope-load-module)
  (let ((json (gptel-scope--scope-json buffer)))
    (with-current-buffer buffer
      (if (eq (car gptel-scope--session) json)
          (cdr gptel-scope--session)
        (let ((session (gptel-scope-module-open json)))
          (setq gptel-scope--session (cons json session))
          session)))))

(defun gptel-scope--judge (buffer tool &rest keys)
  "Return the module's answer to a call of TOOL with KEYS under BUFFER's scope.
KEYS are the call's own fields (a plist: its arguments, :directory,
:masked); the scope, the grants and the rest come from BUFFER's
session (`gptel-scope--session').  See `gptel-scope-module-judge'."
  (let ((session (gptel-scope--session buffer)))
    (gptel-scope-module-judge session (json-serialize (cons :tool (cons tool keys))))))

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
A violation of a brief decision (`gptel-scope-module-judge') has no
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

;;;; What the module makes of the scope

(defun gptel-scope--loaded-scope (&optional buffer)
  "Return BUFFER's scope as loaded by the module, a plist.
Its files, boundary, approval policy, timeout and so on; signal when it
does not load."
  (gptel-scope--judge (or buffer (current-buffer)) gptel-scope--tool-get-system-info))

(defun gptel-scope--sandbox-mounts (buffer &rest keys)
  "Return the sandbox mounts the module derives from BUFFER's scope and KEYS."
  (let ((session (gptel-scope--session buffer)))
    (gptel-scope-module-mounts session (json-serialize keys))))

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


(provide 'gptel-scope-session)
;;; gptel-scope-session.el ends here
