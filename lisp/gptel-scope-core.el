;;; gptel-scope-core.el --- Options, errors and the module loader of gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; The bottom layer of gptel-scope, required by every feature: the
;; customization group and the options every feature shares, the error
;; symbols and reason codes, the names of the tools, JSON for the model
;; that never fails, and the loader of the Rust module (building it with
;; cargo when it is missing or of another version).  It requires no
;; other gptel-scope file, so the features above it form an acyclic
;; graph (each lists what it requires):
;;
;;   gptel-scope-core      options, errors, tool names, JSON, module loader
;;   gptel-scope-trust     approval of scope documents (core)
;;   gptel-scope-session   the scope of a chat buffer, the envelope of
;;                         module requests, grants, refusals (core, trust)
;;   gptel-scope-events    the audit log          (core, trust, session)
;;   gptel-scope-sandbox   bubblewrap, Landlock   (core, session)
;;   gptel-scope-env       the environment of commands, redaction of
;;                         secrets                (core, session, sandbox)
;;   gptel-scope-exec      running a judged command (core, sandbox, env)
;;   gptel-scope-lint      the scope's own flaws  (core, session)
;;   gptel-scope-expand    answering request_scope_expansion, allow-once,
;;                         Add to scope           (core, session)
;;   gptel-scope-menu      its transient menu, loaded when first shown
;;                         (transient, expand)
;;   gptel-scope-call      the one path of a tool call (core, trust,
;;                         session, events, sandbox, env, exec, expand)
;;   gptel-scope-tools     the command tools, request_scope_expansion
;;                         (call, expand, exec, ...)
;;   gptel-scope-fs        the file tools         (call, env, sandbox, lint)
;;   gptel-scope-pty       terminal sessions      (call, tools, exec, env)
;;   gptel-scope-explain   explain, init          (session, call, env, lint)
;;   gptel-scope           the entry point: requires the features and
;;                         registers the tools with gptel, last.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)

;;;; Customization

(defgroup gptel-scope nil
  "Scoped shell tools for gptel."
  :group 'tools
  :prefix "gptel-scope-"
  :link '(url-link "https://github.com/gptel-scope/gptel-scope"))

(defconst gptel-scope--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "The directory of the gptel-scope elisp files.")

(defcustom gptel-scope-profile-directory
  (seq-find #'file-directory-p
            (list (expand-file-name "scope-profiles/" gptel-scope--directory)
                  (expand-file-name "../scope-profiles/" gptel-scope--directory))
            (expand-file-name "scope-profiles/" gptel-scope--directory))
  "Directory of the scope profiles, one NAME.yml file each.
A profile named in `gptel-scope-inline' or in a gptel preset's `:scope'
key is looked up here, and `gptel-scope-init' copies one of them."
  :type 'directory
  :group 'gptel-scope)

(defcustom gptel-scope-prompt-on-denial nil
  "Non-nil means open the expansion menu at a refusal the user could lift.
The tool call then waits for the user's answer: Allow once or Add to
scope runs it, Deny and Cancel return the refusal to the model.  When
nil the refusal goes to the model, which may call
request_scope_expansion itself."
  :type 'boolean
  :group 'gptel-scope)

(defcustom gptel-scope-capture-factor 10
  "Output kept in memory while a command runs, as a multiple of its limit.
Of a command's output, this many times the scope's `max_output_chars'
bytes are kept, the first half and the last half; the rest is counted,
not kept, so a command that never stops printing cannot fill memory."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-kill-grace 1.0
  "Seconds between SIGTERM and SIGKILL when a command is killed."
  :type 'number
  :group 'gptel-scope)

(defcustom gptel-scope-max-timeout 600
  "Upper bound, in seconds, of a timeout a model asks for in a tool call.
A call may pass its own timeout (for a long build, say); it is capped
at this value.  Without one the scope's `bash_tools.timeout' applies."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-build-module 'ask
  "Whether to build the module with cargo when it is missing or outdated.
`ask' asks first (interactive sessions; batch Emacs builds without
asking), t builds without asking, nil never builds: the tools then
report that the module is missing until you run
\\[gptel-scope-build-module]."
  :type '(choice (const :tag "Ask first" ask)
                 (const :tag "Build without asking" t)
                 (const :tag "Never" nil))
  :group 'gptel-scope)

(defcustom gptel-scope-cargo-program "cargo"
  "The cargo program that builds the module."
  :type 'string
  :group 'gptel-scope)

;;;; Errors

(defconst gptel-scope-version "0.1.0"
  "The version of gptel-scope; the module must be of the same version.")

;; The module defines the same symbols when it loads; defining them here
;; lets code catch them before it is loaded.
(define-error 'gptel-scope-error "gptel-scope error")
(define-error 'gptel-scope-invalid-config "Invalid scope configuration" 'gptel-scope-error)
(define-error 'gptel-scope-no-scope-config "No scope configuration" 'gptel-scope-error)
(define-error 'gptel-scope-io-error "gptel-scope file error" 'gptel-scope-error)
(define-error 'gptel-scope-invalid-argument "Invalid argument to gptel-scope" 'gptel-scope-error)
(define-error 'gptel-scope-edit-error "Cannot edit the scope document" 'gptel-scope-error)
(define-error 'gptel-scope-untrusted-scope "Scope document not approved" 'gptel-scope-error)
(define-error 'gptel-scope-module-error "gptel-scope module unavailable" 'gptel-scope-error)
(define-error 'gptel-scope-sandbox-error "gptel-scope sandbox unavailable" 'gptel-scope-error)
(define-error 'gptel-scope-remote-directory "Remote directory" 'gptel-scope-error)

;;;; Reason codes

;; The module owns the reason codes of its decisions and errors
;; (src/error/reason.rs): a refusal it returns says itself whether a
;; grant may lift it (:grantable) and whether the user may be asked
;; (:askable), and a file tool's failure whether it is a refusal by the
;; scope (:refused).  The elisp names here, once, each code it produces
;; or compares with; tests/owners.rs checks no other file writes one.

(defconst gptel-scope--reason-denied "denied"
  "The reason of a refusal that gives none (the module's `denied').")

(defconst gptel-scope--reason-scope-document "scope_document"
  "The reason of a refusal to write a scope document (the module's).")

(defconst gptel-scope--reason-invalid-argument "invalid_argument"
  "The reason of a malformed argument (the module's too).")

(defconst gptel-scope--reason-invalid-config "invalid_config"
  "The reason of a scope document that does not load (the module's).")

(defconst gptel-scope--reason-no-scope-config "no_scope_config"
  "The reason of a call where no scope document applies (the module's).")

(defconst gptel-scope--reason-untrusted-scope "untrusted_scope"
  "The reason of a call under an unapproved scope document (the module's).")

(defconst gptel-scope--reason-remote-directory "remote_directory"
  "The reason of a call in a remote directory.")

(defconst gptel-scope--reason-module-unavailable "module_unavailable"
  "The reason of a call made when the module cannot be loaded.")

(defconst gptel-scope--reason-sandbox-unavailable "sandbox_unavailable"
  "The reason of a call the sandbox cannot run.")

(defconst gptel-scope--reason-too-many-sessions "too_many_sessions"
  "The reason of a terminal session refused as one too many.")

(defconst gptel-scope--reason-interactive-shell-startup-files
  "interactive_shell_startup_files"
  "The reason of a terminal shell refused as it would run startup files.")


;;;; Tool names

;; The names the model calls the tools by, written here once; every
;; other file names a tool by its constant
;; (test/gptel-scope-layers-test.el checks it).

(defconst gptel-scope--tool-run-bash-command "run_bash_command"
  "The tool running a shell command (gptel-scope-tools).")

(defconst gptel-scope--tool-run-command "run_command"
  "The tool running a program with an argument array (gptel-scope-tools).")

(defconst gptel-scope--tool-list-allowed-commands "list_allowed_commands"
  "The tool listing the commands the scope allows (gptel-scope-tools).")

(defconst gptel-scope--tool-request-scope-expansion "request_scope_expansion"
  "The tool asking the user to widen the scope (gptel-scope-tools).")

(defconst gptel-scope--tool-read-file "read_file"
  "The file tool reading a file (gptel-scope-fs).")

(defconst gptel-scope--tool-list-dir "list_dir"
  "The file tool listing a directory (gptel-scope-fs).")

(defconst gptel-scope--tool-grep-files "grep_files"
  "The file tool searching files (gptel-scope-fs).")

(defconst gptel-scope--tool-apply-patch "apply_patch"
  "The file tool changing files with a patch (gptel-scope-fs).")

(defconst gptel-scope--tool-get-system-info "get_system_info"
  "The tool describing the system and the scope (gptel-scope-fs).")

(defconst gptel-scope--tool-exec-command "exec_command"
  "The tool starting a terminal session (gptel-scope-pty).")

(defconst gptel-scope--tool-write-stdin "write_stdin"
  "The tool writing to a terminal session (gptel-scope-pty).")

(defconst gptel-scope--tool-check-path "check_path"
  "The file operation judging one path (gptel-scope-fs's guarded tools).
Not a tool of the model's: it checks the paths other packages' tools
are given.")

;;;; Errors and JSON for the model

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

(defun gptel-scope--json-string (s)
  "Return S as a string `json-serialize' takes: valid Unicode.
A unibyte string is decoded as UTF-8; raw bytes, surrogates and
characters beyond Unicode become U+FFFD."
  (let ((s (if (multibyte-string-p s) s (decode-coding-string s 'utf-8-unix t))))
    (if (ignore-errors (json-serialize (vector s)))
        s
      (apply #'string (mapcar (lambda (c)
                                (if (or (> c #x10FFFF) (<= #xD800 c #xDFFF)) #xFFFD c))
                              (string-to-list s))))))

(defun gptel-scope--plist-p (value)
  "Return non-nil when VALUE is a proper list of keyword and value pairs."
  (and (consp value) (keywordp (car value))
       (let ((n (proper-list-p value)))
         (and n (cl-evenp n)
              (cl-loop for (k) on value by #'cddr always (keywordp k))))))

(defun gptel-scope--json-value (value &optional depth)
  "Return VALUE converted for `json-serialize', at nesting DEPTH.
Strings become valid Unicode, t true, nil null, keywords and symbols
their names, keyword plists objects (a key once), other proper lists
and vectors arrays, a dotted pair a two-element array, integers that
do not fit a fixnum and floats that are not finite strings, hash
tables objects, and anything else its printed representation.  Data
nested deeper than 16 levels is cut to its printed representation."
  (let ((depth (or depth 0)))
    (cond
     ((eq value t) t)
     ((null value) :null)
     ((memq value '(:null :false)) value)
     ((stringp value) (gptel-scope--json-string value))
     ((fixnump value) value)
     ((integerp value) (number-to-string value))
     ((floatp value) (if (or (isnan value) (= value 1.0e+INF) (= value -1.0e+INF))
                         (number-to-string value)
                       value))
     ((keywordp value) (substring (symbol-name value) 1))
     ((symbolp value) (gptel-scope--json-string (symbol-name value)))
     ((> depth 16) (gptel-scope--json-string (format "%S" value)))
     ((gptel-scope--plist-p value)
      (let ((seen nil) (out nil))
        (cl-loop for (k v) on value by #'cddr
                 unless (memq k seen)
                 do (push k seen)
                 (push k out)
                 (push (gptel-scope--json-value v (1+ depth)) out))
        (nreverse out)))
     ((and (consp value) (proper-list-p value))
      (vconcat (mapcar (lambda (v) (gptel-scope--json-value v (1+ depth))) value)))
     ((consp value)
      (if (consp (cdr value))
          ;; An improper list of more than a pair: its printed representation.
          (gptel-scope--json-string (format "%S" value))
        (vector (gptel-scope--json-value (car value) (1+ depth))
                (gptel-scope--json-value (cdr value) (1+ depth)))))
     ((and (vectorp value) (not (recordp value)))
      (vconcat (mapcar (lambda (v) (gptel-scope--json-value v (1+ depth))) value)))
     ((hash-table-p value)
      (let ((h (make-hash-table :test #'equal)))
        (maphash (lambda (k v)
                   (let ((key (gptel-scope--json-value k (1+ depth))))
                     (puthash (if (stringp key) key (format "%S" key))
                              (gptel-scope--json-value v (1+ depth)) h)))
                 value)
        h))
     (t (gptel-scope--json-string (format "%S" value))))))

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

;;;; The module

(declare-function gptel-scope-module-version "gptel-scope-module" ())
(defvar compilation-finish-functions)

(defvar gptel-scope--build-buffer nil
  "The compilation buffer of a module build under way, or nil.")

(defvar gptel-scope--declined nil
  "Non-nil once the user declined to build the module in this session.")

(defun gptel-scope--module-file ()
  "Return the file name of the module, next to the elisp files."
  (expand-file-name (concat "gptel-scope-module" module-file-suffix) gptel-scope--directory))

(defun gptel-scope--source-root ()
  "Return the directory holding the module's Cargo.toml, or nil.
That is the directory of the elisp files (an installed package, where
the recipe put Cargo.toml beside them) or its parent (a checkout, with
the elisp in lisp/)."
  (seq-find (lambda (dir) (file-exists-p (expand-file-name "Cargo.toml" dir)))
            (list gptel-scope--directory
                  (file-name-directory (directory-file-name gptel-scope--directory)))))

(defun gptel-scope--library-name ()
  "Return the file name cargo gives the built library on this system."
  (pcase system-type
    ((or 'windows-nt 'ms-dos 'cygwin) "gptel_scope.dll")
    ('darwin "libgptel_scope.dylib")
    (_ "libgptel_scope.so")))

(defun gptel-scope--build-args ()
  "Return the cargo arguments that build the module and its supervisor."
  (list "build" "--release" "--lib" "--bin" "gptel-scope-run"))

(defun gptel-scope-run-program ()
  "Return the file name of the supervisor of every command.
It is `gptel-scope-run', built with the module and installed next to
it (src/wall/: the call's limits, nothing outliving the call, Landlock)."
  (expand-file-name "gptel-scope-run" gptel-scope--directory))

(defun gptel-scope--build-ready (root)
  "Check that the module can be built from ROOT; return the cargo program.
Signal `gptel-scope-module-error' with what to do when it cannot."
  (unless root
    (signal 'gptel-scope-module-error
            (list (concat "Cannot build the gptel-scope module: Cargo.toml was not installed with "
                          "the elisp files.  Add \"Cargo.toml\", \"Cargo.lock\", \"src\", \"data\" "
                          "and \"scope-profiles\" to the recipe's :files, or put a built "
                          (file-name-nondirectory (gptel-scope--module-file))
                          " in " gptel-scope--directory))))
  (or (executable-find gptel-scope-cargo-program)
      (signal 'gptel-scope-module-error
              (list (format (concat "Cannot build the gptel-scope module: `%s' is not installed.  "
                                    "Install Rust (https://rustup.rs) and run M-x gptel-scope-build-module, "
                                    "or put a built module at %s")
                            gptel-scope-cargo-program (gptel-scope--module-file))))))

(defun gptel-scope--module-load (file)
  "Load the module FILE.
Signal `gptel-scope-module-error' when it is no loadable module (a copy
cut short, a library of another system)."
  (condition-case err
      (module-load file)
    (module-load-failed
     (signal 'gptel-scope-module-error
             (list (format "The gptel-scope module %s cannot be loaded (%s): rebuild it with M-x gptel-scope-build-module"
                           file (error-message-string err)))))))

(defun gptel-scope--install-library (root)
  "Copy the library built in ROOT next to the elisp files.
The copy is renamed into place, so a module Emacs has already loaded
keeps its own file."
  (let ((lib (expand-file-name (concat "target/release/" (gptel-scope--library-name)) root))
        (dest (gptel-scope--module-file)))
    (unless (file-exists-p lib)
      (signal 'gptel-scope-module-error (list (format "The build made no %s" lib))))
    (let ((tmp (concat dest ".new")))
      (copy-file lib tmp t)
      (rename-file tmp dest t))
    (let ((run (expand-file-name "target/release/gptel-scope-run" root))
          (dest (gptel-scope-run-program)))
      (unless (file-exists-p run)
        (signal 'gptel-scope-module-error (list (format "The build made no %s" run))))
      (copy-file run (concat dest ".new") t)
      (set-file-modes (concat dest ".new") #o755)
      (rename-file (concat dest ".new") dest t))
    dest))

(defun gptel-scope--build-finished (buffer status)
  "Install and load the module when the build in BUFFER ends with STATUS."
  (when (eq buffer gptel-scope--build-buffer)
    (setq gptel-scope--build-buffer nil)
    (if (not (string-prefix-p "finished" status))
        (message "gptel-scope: the module build failed (%s); see %s"
                 (string-trim status) (buffer-name buffer))
      (condition-case err
          (let ((root (buffer-local-value 'default-directory buffer)))
            (gptel-scope--install-library root)
            (if (featurep 'gptel-scope-module)
                (message "gptel-scope: module rebuilt; restart Emacs to use it (a loaded module cannot be replaced)")
              (gptel-scope--module-load (gptel-scope--module-file))
              (message "gptel-scope: module %s built and loaded" (gptel-scope-module-version))))
        (error (message "gptel-scope: %s" (error-message-string err)))))))

;;;###autoload
(defun gptel-scope-build-module (&optional synchronously)
  "Build the gptel-scope module with cargo and put it next to the elisp.
Interactively, and unless SYNCHRONOUSLY, the build runs in a
compilation buffer and the module is loaded when it succeeds.  In
batch Emacs, or with SYNCHRONOUSLY, wait for the build; signal
`gptel-scope-module-error' when it fails.  Return the module's file
name when the build is done, the compilation buffer otherwise."
  (interactive)
  (let* ((root (gptel-scope--source-root))
         (cargo (gptel-scope--build-ready root))
         (default-directory (file-name-as-directory root))
         (process-environment (cons (concat "CARGO_TARGET_DIR=" (expand-file-name "target" root))
                                    process-environment)))
    (if (or synchronously noninteractive)
        (with-temp-buffer
          (message "gptel-scope: building the module with cargo in %s (once; about 70 s on 2 cores)..." root)
          (unless (eql 0 (apply #'call-process cargo nil t nil (gptel-scope--build-args)))
            (signal 'gptel-scope-module-error
                    (list (concat "cargo build failed:\n"
                                  (let ((out (buffer-string)))
                                    (substring out (max 0 (- (length out) 3000))))))))
          (gptel-scope--install-library root))
      (require 'compile)
      (when (buffer-live-p gptel-scope--build-buffer)
        (user-error "The gptel-scope module is being built already, see %s"
                    (buffer-name gptel-scope--build-buffer)))
      (let* ((compilation-buffer-name-function (lambda (_mode) "*gptel-scope-build*"))
             (buffer (compile (mapconcat #'shell-quote-argument
                                         (cons cargo (gptel-scope--build-args)) " "))))
        (setq gptel-scope--build-buffer buffer)
        (with-current-buffer buffer
          (add-hook 'compilation-finish-functions #'gptel-scope--build-finished nil t))
        buffer))))

(defun gptel-scope--may-build-p (question)
  "Return non-nil when the module may be built now; ask QUESTION if needed."
  (cond ((null gptel-scope-build-module) nil)
        (noninteractive t)
        (gptel-scope--declined nil)
        ((eq gptel-scope-build-module t) t)
        ((and (daemonp) (null (frame-parameter nil 'client))) nil)
        ((y-or-n-p question) t)
        (t (setq gptel-scope--declined t) nil)))

(defun gptel-scope--start-build (question)
  "Build the module if allowed (asking QUESTION), or signal what to do.
In batch Emacs the module is built and loaded before this returns;
interactively the build starts and this signals that it is under way."
  (cond
   ((buffer-live-p gptel-scope--build-buffer)
    (signal 'gptel-scope-module-error
            (list "The gptel-scope module is being built; try again when the build ends")))
   ((gptel-scope--may-build-p question)
    (let ((result (gptel-scope-build-module)))
      (if (stringp result)
          (unless (featurep 'gptel-scope-module) (gptel-scope--module-load result))
        (signal 'gptel-scope-module-error
                 (list "Building the gptel-scope module (see *gptel-scope-build*; about 70 s on 2 cores, once); the tools work when it ends")))))
   (t (signal 'gptel-scope-module-error
              (list (format "The gptel-scope module %s is missing or outdated: run M-x gptel-scope-build-module"
                            (gptel-scope--module-file)))))))

(defvar gptel-scope--version-checked nil
  "The function `gptel-scope-module-version' last found to give this version.
A module, once loaded, stays; while the function is the same, each
tool call need not ask it again.")

(defun gptel-scope--check-version (&optional ask)
  "Signal `gptel-scope-module-error' unless the loaded module fits this elisp.
A module of another version is rebuilt (asking when ASK is non-nil
and the session is interactive); Emacs must restart to load it."
  (let ((v (if (and gptel-scope--version-checked
                    (eq gptel-scope--version-checked (symbol-function 'gptel-scope-module-version)))
               gptel-scope-version
             (gptel-scope-module-version))))
    (if (equal v gptel-scope-version)
        (setq gptel-scope--version-checked (symbol-function 'gptel-scope-module-version))
      (let ((msg (format "The loaded gptel-scope module is version %s, the elisp %s" v gptel-scope-version)))
        (condition-case nil
            (when (and ask (not (buffer-live-p gptel-scope--build-buffer))
                       (gptel-scope--may-build-p (concat msg "; rebuild it now? ")))
              (gptel-scope-build-module))
          (gptel-scope-module-error nil))
        (signal 'gptel-scope-module-error
                (list (concat msg ": restart Emacs once the module is rebuilt (M-x gptel-scope-build-module)")))))))

(defun gptel-scope-load-module (&optional ask)
  "Make sure the module of this version is loaded and return t.
A missing module is built when `gptel-scope-build-module' allows it;
with ASK non-nil an interactive session may be asked first, else a
missing module is only reported.  Signal `gptel-scope-module-error'
when the module cannot be had now."
  (cond
   ((featurep 'gptel-scope-module) (gptel-scope--check-version ask))
   ((not module-file-suffix)
    (signal 'gptel-scope-module-error (list "This Emacs was built without dynamic module support")))
   ((file-exists-p (gptel-scope--module-file))
    (gptel-scope--module-load (gptel-scope--module-file))
    (gptel-scope--check-version ask))
   ((or ask noninteractive)
    (gptel-scope--start-build "The gptel-scope module is missing; build it with cargo now (once; about 70 s on 2 cores)? ")
    (when (featurep 'gptel-scope-module) (gptel-scope--check-version)))
   (t (signal 'gptel-scope-module-error
              (list (if (buffer-live-p gptel-scope--build-buffer)
                        "The gptel-scope module is being built; try again when the build ends"
                      "The gptel-scope module is missing: run M-x gptel-scope-build-module")))))
  t)

(defun gptel-scope--module-available-p ()
  "Return non-nil when the module of this version is loaded or loadable."
  (ignore-errors (let ((gptel-scope-build-module nil)) (gptel-scope-load-module))))

(defun gptel-scope--load-module-at-startup ()
  "Load the module as gptel-scope is loaded, building it on first load.
Problems are shown as a warning, never as an error of `require'."
  (unless (or (bound-and-true-p byte-compile-current-file)
              (featurep 'gptel-scope-module))
    (condition-case err
        (gptel-scope-load-module t)
      (error (display-warning 'gptel-scope (error-message-string err) :warning)))))

(provide 'gptel-scope-core)
;;; gptel-scope-core.el ends here
