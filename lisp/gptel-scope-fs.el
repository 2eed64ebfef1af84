;;; gptel-scope-fs.el --- File tools under the scope and boundary  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Keywords: tools, convenience
;; SPDX-License-Identifier: GPL-3.0-or-later

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The file tools the model gets beside run_bash_command: read_file,
;; list_dir, grep_files and apply_patch, and get_system_info.  The module
;; does the work: every path is made absolute, normalized and followed
;; through symlinks, confined to the boundary (fs.mode and fs.root of the
;; scope) and judged by the path scope (paths.read/write/deny and the
;; buffer's allow-once grants).  A refusal is JSON with a reason code;
;; one that the user may lift names the resource for
;; request_scope_expansion, and with `gptel-scope-prompt-on-denial' the
;; menu opens at once.
;;
;; The same check guards tools that gptel-scope did not define (MCP file
;; tools, say): add `gptel-scope-guard-tool-call' to gptel's
;; `gptel-pre-tool-call-functions' and list their path arguments in
;; `gptel-scope-guarded-tools'.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'gptel-scope-core)
(require 'gptel-scope-trust)
(require 'gptel-scope-session)
(require 'gptel-scope-events)
(require 'gptel-scope-env)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-lint)
(require 'gptel-scope-call)
(require 'gptel-scope-expand)

(declare-function gptel-make-tool "ext:gptel-request")
(declare-function gptel-scope-module-version "gptel-scope-module" ())

(defcustom gptel-scope-guarded-tools nil
  "Tools not defined by gptel-scope whose path arguments are checked.
Each element is (TOOL . ARGS): TOOL a tool name or a regexp matching
tool names, ARGS a list of (ARGUMENT . ACCESS), ARGUMENT the keyword of
a path argument (as gptel passes it, e.g. :path) and ACCESS `read' or
`write'.  A path outside the boundary or the scope blocks the call with
the refusal as its result.  Active when `gptel-scope-guard-tool-call' is
in `gptel-pre-tool-call-functions' (gptel 0.9.9.5 or later); the guard
is off for tools whose calls gptel-scope judges itself."
  :type '(alist :key-type (string :tag "Tool name or regexp")
                :value-type (repeat (cons (symbol :tag "Argument keyword")
                                          (choice (const read) (const write)))))
  :group 'gptel-scope)

(defconst gptel-scope-fs-tools
  (list gptel-scope--tool-read-file gptel-scope--tool-list-dir
        gptel-scope--tool-grep-files gptel-scope--tool-apply-patch)
  "The file tools of this feature.")

;;;; Calling the module

(defun gptel-scope-fs--int (name value)
  "Return VALUE, the optional argument NAME, as a natural number or nil.
See `gptel-scope--arg': 5.0 and \"5\" are 5; else signal."
  (gptel-scope--arg name value 'natnum))

(defun gptel-scope-fs--keys (args)
  "Return the plist ARGS without its nil, :null and :false values."
  (let (out)
    (while args
      (unless (gptel-scope--absent-p (cadr args))
        (setq out (cons (cadr args) (cons (car args) out))))
      (setq args (cddr args)))
    (nreverse out)))

(defun gptel-scope-fs-call (op args &optional buffer tool)
  "Run the module's file tool OP with ARGS, a plist, under BUFFER's scope.
TOOL, default OP, is the tool the result and the grants are for.
Return the module's outcome, a plist: the result's fields but its
content, and :response, the JSON the model is sent; a failure says
what telling the user and asking take (`gptel-scope-module-judge')."
  (gptel-scope--file-tool op (or buffer (current-buffer)) (or tool op) (gptel-scope-fs--keys args)))

(defun gptel-scope-fs--emit (type tool args &rest props)
  "Emit the event TYPE of TOOL called with ARGS, with PROPS."
  (apply #'gptel-scope--emit type tool args props))

(defun gptel-scope-fs--tool (callback op make-args)
  "Run the file tool OP; give CALLBACK the JSON result, exactly once.
MAKE-ARGS, a function, returns the tool's arguments as a plist; an
error in it (a malformed argument) is a result too, as every error is.
A remote chat directory or :path is refused before anything else."
  (let ((once (gptel-scope--once callback)))
    (gptel-scope--guard once op
      (gptel-scope--check-local)
      (let ((args (funcall make-args)))
        (gptel-scope--check-local "path" (plist-get args :path))
        (gptel-scope-fs--run (current-buffer) once op args)))))

(defun gptel-scope-fs--run (buffer callback op args)
  "Run the file tool OP with ARGS, a plist, for BUFFER; give CALLBACK the JSON.
A refusal the user may lift is recorded for request_scope_expansion and,
with `gptel-scope-prompt-on-denial', asked about at once."
  (let* ((id (gptel-scope--event-id))
         (start (float-time)))
    (gptel-scope-fs--emit 'start op args :id id)
    (let* ((r (condition-case err
                  (gptel-scope-fs-call op args buffer)
                (error (gptel-scope-fs--emit 'error op args :id id
                                             :reason (gptel-scope--error-reason err)
                                             :message (gptel-scope--error-message err))
                       (signal (car err) (cdr err)))))
           (ms (round (* 1000 (- (float-time) start)))))
      (if (plist-get r :success)
          (progn
            (gptel-scope--use-grants buffer (plist-get r :grants-used))
            (gptel-scope-fs--emit 'end op args :id id :duration-ms ms
                                  :bytes (plist-get r :bytes) :lines (plist-get r :lines))
            (when (or (plist-get r :truncated) (plist-get r :has-more)
                      (> (or (plist-get r :cut-lines) 0) 0))
              (gptel-scope-fs--emit 'truncated op args :id id :bytes (plist-get r :bytes)))
            (funcall callback (plist-get r :response)))
        (gptel-scope-fs--emit (if (plist-get r :refused) 'denied 'error)
                              op args :id id :reason (plist-get r :reason)
                              :message (plist-get r :message) :duration-ms ms)
        ;; The refusal's answer, as every tool's: an unapproved scope document
        ;; offered, the user asked, the call run again when it is lifted.
        (gptel-scope--refuse
         buffer callback r
         (lambda ()
           (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
             (gptel-scope--guard callback op
               (gptel-scope-fs--run buffer callback op args)))))))))

;;;; The tools

(defun gptel-scope-read-file (callback &optional path offset limit mode)
  "Read PATH: LIMIT lines (default 400) from line OFFSET (0-based).
MODE \"indentation\" shows the block of code holding line OFFSET instead
of a slice.  Lines over 400 characters are cut with a marker; binary
files are refused.  CALLBACK receives the JSON result.  This is read_file.
The arguments are as gptel passes them (`gptel-scope--arg')."
  (gptel-scope-fs--tool callback gptel-scope--tool-read-file
                        (lambda () (list :path (gptel-scope--arg "path" path 'string t)
                                         :offset (gptel-scope-fs--int "offset" offset)
                                         :limit (gptel-scope-fs--int "limit" limit)
                                         :mode (gptel-scope--arg "mode" mode 'string)))))

(defun gptel-scope-list-dir (callback &optional path depth offset limit)
  "List PATH (default the project) breadth-first to DEPTH levels (default 2).
Entries are sorted, one a line, with / for directories, * for
executables and @ for symlinks; LIMIT entries (default 200) from OFFSET.
CALLBACK receives the JSON result.  This is list_dir."
  (gptel-scope-fs--tool callback gptel-scope--tool-list-dir
                        (lambda () (list :path (gptel-scope--arg "path" path 'string)
                                         :depth (gptel-scope-fs--int "depth" depth)
                                         :offset (gptel-scope-fs--int "offset" offset)
                                         :limit (gptel-scope-fs--int "limit" limit)))))

(defun gptel-scope-grep-files (callback &optional pattern path include limit)
  "Search the files under PATH (default the project) for the regexp PATTERN.
INCLUDE, a glob or a list of globs, narrows the files; LIMIT (default
200) caps the matches.  Lines come as file:line:match.  CALLBACK
receives the JSON result.  This is grep_files."
  (gptel-scope-fs--tool callback gptel-scope--tool-grep-files
                        (lambda () (list :pattern (gptel-scope--string-arg "pattern" pattern)
                                         :path (gptel-scope--arg "path" path 'string)
                                         :include (let ((i (gptel-scope--arg "include" include 'string-or-strings)))
                                                    (if (listp i) (and i (vconcat i)) i))
                                         :limit (gptel-scope-fs--int "limit" limit)))))

(defun gptel-scope-apply-patch (callback &optional patch)
  "Apply PATCH, a unified diff or a *** Begin Patch envelope.
Every file must be in the write scope; hunks must match exactly; all
files are written or none.  CALLBACK receives the JSON result with
per-file stats.  This is apply_patch."
  (gptel-scope-fs--tool callback gptel-scope--tool-apply-patch
                        (lambda () (list :patch (gptel-scope--string-arg "patch" patch)))))

(defun gptel-scope-system-info (&rest _)
  "Return JSON describing the system and the scope in effect.
This is get_system_info: platform, Emacs, module and shell versions,
the scope files, the file-system boundary, the environment of
commands (names only) and the denied paths git's history holds (a
bounded look at the repository by git's plumbing), running nothing
else.  It takes no argument
\(any given is ignored); a remote chat directory, and any other error,
is its result."
  (gptel-scope--redact (current-buffer) (gptel-scope-fs--system-info)))

(defun gptel-scope-fs--denied-in-history ()
  "Return the denied paths in git's history, a vector of sentences.
From `gptel-scope-lint' (`denied_in_history'): git commands that print
files from history are refused while a denied path is there."
  (vconcat
   (delq nil (mapcar (lambda (w) (and (equal (plist-get w :code) "denied_in_history")
                                      (plist-get w :message)))
                     (ignore-errors (gptel-scope-lint-warnings))))))

(defun gptel-scope-fs--system-info ()
  "Return the JSON of `gptel-scope-system-info', not yet redacted."
  (condition-case err
      (progn
        (gptel-scope--check-local)
        (let* ((scope (condition-case err
                          (gptel-scope--loaded-scope)
                        (error (list :error (error-message-string err)))))
               (module (ignore-errors (gptel-scope-module-version)))
               (doc (gptel-scope-document))
               (status (and doc (ignore-errors (gptel-scope-trust-status doc)))))
          (gptel-scope--json
           :success t
           :system_type (symbol-name system-type)
           :system_configuration system-configuration
           :emacs_version emacs-version
           :module_version (or module :null)
           :shell (or (executable-find "bash") :null)
           :home (expand-file-name "~")
           :default_directory (expand-file-name default-directory)
           :project_root (or (plist-get scope :project-root) (gptel-scope--project-root))
           :scope_files (vconcat (plist-get scope :files))
           :scope_document (or doc :null)
           :scope_document_approved (if status (if (plist-get status :approved) t :false) :null)
           :scope_error (or (plist-get scope :error) :null)
           :fs_mode (or (plist-get scope :fs-mode) :null)
           :approval_policy (or (plist-get scope :approval-policy) :null)
           :timeout (or (plist-get scope :timeout) :null)
           :sandbox (gptel-scope-sandbox-status)
           :denied_in_history (gptel-scope-fs--denied-in-history)
           :environment (gptel-scope-env-summary))))
    (error (gptel-scope--error-json err gptel-scope--tool-get-system-info))))

;;;; Guarding other tools

(defun gptel-scope--guard-spec (name)
  "Return the path arguments `gptel-scope-guarded-tools' lists for tool NAME."
  (cdr (seq-find (lambda (entry)
                   (or (equal (car entry) name)
                       (ignore-errors (string-match-p (concat "\\`\\(?:" (car entry) "\\)\\'") name))))
                 gptel-scope-guarded-tools)))

(defun gptel-scope-guard-check (name args &optional buffer)
  "Check the path arguments of a call of tool NAME with ARGS, a plist.
Return nil when they are all in scope (or the tool is not guarded),
else the refusal's JSON for the model.  BUFFER holds the scope.
A remote chat directory or path signals `gptel-scope-remote-directory'."
  (let ((spec (and (not (member name gptel-scope-fs-tools))
                   (not (assoc name gptel-scope-tool-validation))
                   (gptel-scope--guard-spec name))))
    (when spec
      (with-current-buffer (or buffer (current-buffer)) (gptel-scope--check-local)))
    (catch 'refused
      (dolist (arg spec)
        (let ((v (plist-get args (car arg))))
          (dolist (path (if (or (vectorp v) (consp v)) (append v nil) (list v)))
            (when (and (stringp path) (not (string-empty-p path)))
              (gptel-scope--check-local (substring (symbol-name (car arg)) 1) path)
              (let ((r (gptel-scope-fs-call
                        gptel-scope--tool-check-path
                        (list :path path :access (symbol-name (cdr arg))
                              :directory (directory-file-name (expand-file-name default-directory)))
                        buffer name)))
                ;; A grant that let the path through is used up by the call.
                (gptel-scope--use-grants (or buffer (current-buffer)) (plist-get r :grants-used))
                (unless (plist-get r :success)
                  (gptel-scope--remember-denial (or buffer (current-buffer)) r)
                  (throw 'refused (plist-get r :response))))))))
      nil)))

(defun gptel-scope-guard-tool-call (call)
  "Block CALL when a path argument is outside the scope.
For `gptel-pre-tool-call-functions': CALL is a plist with :name and
:args.  Tools listed in `gptel-scope-guarded-tools' are checked."
  (condition-case err
      (let ((refusal (gptel-scope-guard-check (plist-get call :name) (plist-get call :args))))
        (and refusal (list :block refusal)))
    (error (list :block (gptel-scope--error-json err (plist-get call :name))))))

;;;; Registration with gptel

(defconst gptel-scope-fs-descriptions
  `((,gptel-scope--tool-read-file . "Read a text file inside the scope: `limit' lines (default 400, at most 2000) from line `offset' (0-based). With mode \"indentation\", show instead the whole block of code that holds line `offset'. Lines over 400 characters are cut with \"… [truncated line]\". Paths are relative to the project root or absolute; they may not leave the file-system boundary, even through symlinks. The result is JSON: content, start_line, end_line, has_more, next_offset (the offset to read on from), total_lines (null for a file over 4 MiB read in part). Binary files are refused. If a path is refused for scope, call request_scope_expansion with this tool's name and the resource the refusal names.")
    (,gptel-scope--tool-list-dir . "List a directory inside the scope breadth-first, sorted, one entry a line relative to `path', marked / (directory), * (executable) or @ (symlink, not followed). `depth' levels (default 2), `limit' entries (default 200) from `offset'. Entries the scope denies are left out and counted in `hidden'.")
    (,gptel-scope--tool-grep-files . "Search files inside the scope for a regular expression (Rust regex syntax), recursively from `path' (default the project root). `include' narrows the files by glob (\"*.rs\" or a list). Matches come as file:line:text, at most `limit' (default 200); `truncated' says more exist. Hidden files, .gitignored files, binary files and files the scope denies are skipped.")
    (,gptel-scope--tool-apply-patch . "Change files with a patch: a unified diff (--- a/PATH, +++ b/PATH, @@ -l,n +l,n @@ hunks; /dev/null to create or delete) or the envelope *** Begin Patch / *** Add File: PATH / *** Update File: PATH (with @@ and ' ', '-', '+' lines; *** Move to: to rename) / *** Delete File: PATH / *** End Patch. Hunks must match the file exactly (no fuzz, no offset): read the file first. Every file must be in the write scope; all files are written or none. The result lists each file with lines added and removed.")
    (,gptel-scope--tool-get-system-info . "Describe the system without running a command: platform, Emacs and module versions, the shell, the project root, the scope files in effect, the file-system mode, the approval policy and the sandbox commands run in. Prefer it to shell commands like uname."))
  "What the model is told about each file tool.")

(defun gptel-scope-fs--description (tool)
  "Return the description of TOOL."
  (cdr (assoc tool gptel-scope-fs-descriptions)))

(defun gptel-scope-fs--confirm-p (tool)
  "Return non-nil when the scope's approval_policy wants TOOL confirmed.
`always' confirms every call, `mutating' the writing tool apply_patch.
An error is signaled, for `gptel-scope--confirm-function' to answer."
  (gptel-scope--check-local)
  (pcase (plist-get (gptel-scope--loaded-scope) :approval-policy)
    ("always" t)
    ("mutating" (equal tool gptel-scope--tool-apply-patch))))

(defun gptel-scope-fs-register-tools ()
  "Register the file tools and get_system_info with gptel, category \"scope\"."
  (cl-flet ((confirm (tool) (gptel-scope--confirm-arg
                             (lambda (&rest _) (gptel-scope-fs--confirm-p tool)))))
    (apply #'gptel-make-tool
           :name gptel-scope--tool-read-file :category "scope" :async t
           :function #'gptel-scope-read-file
           :description (gptel-scope-fs--description gptel-scope--tool-read-file)
           :args (gptel-scope--tool-args '(:name "path" :type string :description "The file: relative to the project root, or absolute")
                       '(:name "offset" :type integer :optional t :description "First line, 0-based (default 0)")
                       '(:name "limit" :type integer :optional t :description "How many lines (default 400)")
                       '(:name "mode" :type string :enum ["slice" "indentation"] :optional t
                               :description "slice (default) or indentation"))
           (confirm gptel-scope--tool-read-file))
    (apply #'gptel-make-tool
           :name gptel-scope--tool-list-dir :category "scope" :async t
           :function #'gptel-scope-list-dir
           :description (gptel-scope-fs--description gptel-scope--tool-list-dir)
           :args (gptel-scope--tool-args '(:name "path" :type string :optional t :description "The directory (default the project root)")
                       '(:name "depth" :type integer :optional t :description "Levels to descend (default 2)")
                       '(:name "offset" :type integer :optional t :description "Entries to skip (default 0)")
                       '(:name "limit" :type integer :optional t :description "Entries to show (default 200)"))
           (confirm gptel-scope--tool-list-dir))
    (apply #'gptel-make-tool
           :name gptel-scope--tool-grep-files :category "scope" :async t
           :function #'gptel-scope-grep-files
           :description (gptel-scope-fs--description gptel-scope--tool-grep-files)
           :args (gptel-scope--tool-args '(:name "pattern" :type string :description "A regular expression")
                       '(:name "path" :type string :optional t :description "Where to search (default the project root)")
                       '(:name "include" :type string :optional t :description "A glob of the files to search, e.g. *.py")
                       '(:name "limit" :type integer :optional t :description "Most matches (default 200)"))
           (confirm gptel-scope--tool-grep-files))
    (apply #'gptel-make-tool
           :name gptel-scope--tool-apply-patch :category "scope" :async t
           :function #'gptel-scope-apply-patch
           :description (gptel-scope-fs--description gptel-scope--tool-apply-patch)
           :args (gptel-scope--tool-args '(:name "patch" :type string :description "A unified diff or a *** Begin Patch envelope"))
           (confirm gptel-scope--tool-apply-patch))
    (apply #'gptel-make-tool
           :name gptel-scope--tool-get-system-info :category "scope"
           :function #'gptel-scope-system-info
           :description (gptel-scope-fs--description gptel-scope--tool-get-system-info)
           :args nil
           (confirm gptel-scope--tool-get-system-info))))

(provide 'gptel-scope-fs)
;;; gptel-scope-fs.el ends here
