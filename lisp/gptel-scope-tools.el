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
;;   run_bash_command(command, directory)
;;   run_command(command, args, directory)   argv form, no shell
;;   list_allowed_commands()
;;
;; Which scope applies to a buffer: `gptel-scope-file' if set; else scope.yml
;; or preset.md in `gptel-scope-directory'; else the nearest scope.yml upward
;; from `default-directory'; plus `gptel-scope-inline' (a plist, or a profile
;; name).  Async tools catch every error and call their callback exactly once.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'gptel-scope)
(require 'gptel-scope-exec)

(declare-function gptel-scope-module-check-command "gptel-scope-module" (request))
(declare-function gptel-scope-module-check-argv "gptel-scope-module" (request))
(declare-function gptel-scope-module-list-commands "gptel-scope-module" (request))
(declare-function gptel-make-tool "ext:gptel")

(defvar-local gptel-scope-file nil
  "The scope document of this buffer (scope.yml or preset.md), or nil.")

(defvar-local gptel-scope-directory nil
  "The session directory of this buffer, holding scope.yml or preset.md, or nil.")

(defvar-local gptel-scope-inline nil
  "Inline scope of this buffer: a plist of scope keys, or a profile name.")

(defvar-local gptel-scope--allow-once nil
  "Allow-once grants of this buffer: a list of (TOOL . RESOURCE).")

(defcustom gptel-scope-profile-directory
  (seq-find #'file-directory-p
            (list (expand-file-name "scope-profiles/" gptel-scope--directory)
                  (expand-file-name "../scope-profiles/" gptel-scope--directory))
            (expand-file-name "scope-profiles/" gptel-scope--directory))
  "Directory of scope profiles (NAME.yml)."
  :type 'directory
  :group 'gptel-scope)

(defcustom gptel-scope-prompt-on-denial nil
  "Non-nil: open the expansion menu at a refusal the user could allow.
The tool call then waits for the answer: Allow once or Add to scope run
it, Deny returns the refusal to the model."
  :type 'boolean
  :group 'gptel-scope)

(defvar gptel-scope--denial-handler nil
  "Function (BUFFER DECISION RETRY CALLBACK) asking the user at a refusal.")

(defun gptel-scope--askable-p (decision)
  "Non-nil when the refusal DECISION is one the user may lift."
  (and (plist-get decision :resource)
       (member (plist-get decision :reason)
               '("command_not_allowed" "dangerous_command" "directory_not_in_scope"
                 "path_not_in_scope" "subcommand_not_allowed"))))

(defun gptel-scope-document (&optional buffer)
  "Return the scope document file in effect for BUFFER, or nil."
  (with-current-buffer (or buffer (current-buffer))
    (cond
     (gptel-scope-file (expand-file-name gptel-scope-file))
     (gptel-scope-directory
      (seq-find #'file-exists-p
                (mapcar (lambda (f) (expand-file-name f gptel-scope-directory))
                        '("scope.yml" "preset.md"))))
     ((let ((dir (locate-dominating-file default-directory "scope.yml")))
        (and dir (expand-file-name "scope.yml" dir)))))))

(defun gptel-scope-sources (&optional buffer)
  "Return the scope sources of BUFFER as a vector for the module."
  (with-current-buffer (or buffer (current-buffer))
    (let ((inline gptel-scope-inline)
          (doc (gptel-scope-document))
          (sources nil))
      (cond ((or (stringp inline) (and inline (symbolp inline)))
             (push (list :profile (expand-file-name (format "%s.yml" inline) gptel-scope-profile-directory))
                   sources))
            ((consp inline)
             (push (list :inline (json-serialize (gptel-scope--plist-to-json inline)) :name "inline scope")
                   sources)))
      (when doc (push (list :file doc) sources))
      (vconcat (nreverse sources)))))

(defun gptel-scope--plist-to-json (value)
  "Convert VALUE, a plist with keyword keys and list values, for `json-serialize'."
  (cond ((and (consp value) (keywordp (car value)))
         (let (out)
           (while value
             (push (intern (concat ":" (replace-regexp-in-string "-" "_" (substring (symbol-name (car value)) 1))))
                   out)
             (push (gptel-scope--plist-to-json (cadr value)) out)
             (setq value (cddr value)))
           (nreverse out)))
        ((consp value) (vconcat (mapcar #'gptel-scope--plist-to-json value)))
        ((null value) [])
        ((symbolp value) (symbol-name value))
        (t value)))

(defun gptel-scope--grants (&optional buffer)
  "Return the allow-once grants of BUFFER as a vector for the module."
  (with-current-buffer (or buffer (current-buffer))
    (vconcat (mapcar (lambda (g) (list :tool (car g) :resource (cdr g))) gptel-scope--allow-once))))

(defun gptel-scope--use-grants (buffer used)
  "Remove from BUFFER's allow-once list the grants in USED (plists)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (dolist (g used)
        (setq gptel-scope--allow-once
              (cl-remove (cons (plist-get g :tool) (plist-get g :resource))
                         gptel-scope--allow-once :test #'equal :count 1))))))

(defun gptel-scope--request (buffer &rest keys)
  "Return the JSON request for BUFFER's scope with KEYS added."
  (json-serialize
   (append keys (list :sources (gptel-scope-sources buffer)
                      :grants (gptel-scope--grants buffer)
                      :home (expand-file-name "~")))))

(defun gptel-scope--json (&rest plist)
  "Serialize PLIST for the model, nil values as false."
  (let (out)
    (while plist
      (push (car plist) out)
      (push (let ((v (cadr plist))) (cond ((eq v t) t) ((null v) :false) (t v))) out)
      (setq plist (cddr plist)))
    (json-serialize (nreverse out))))

(defun gptel-scope--error-result (err)
  "The JSON result for an unexpected error ERR."
  (gptel-scope--json :success nil :reason "error" :message (error-message-string err)))

(defun gptel-scope--directory-arg (directory)
  "Expand DIRECTORY against the buffer's `default-directory' (B13, B26)."
  (if (or (null directory) (string-empty-p directory))
      (signal 'gptel-scope-error (list "The directory argument is required: pass the directory to run in"))
    (directory-file-name (expand-file-name directory))))

(defun gptel-scope--run (buffer callback decision argv &optional retry)
  "Run ARGV if DECISION is an allowed one; call CALLBACK with the JSON result.
BUFFER holds the grants the decision used.  RETRY, a function, runs the
call again after the user lifted a refusal (`gptel-scope-prompt-on-denial')."
  (if (not (plist-get decision :allowed))
      (if (and retry gptel-scope-prompt-on-denial gptel-scope--denial-handler
               (gptel-scope--askable-p decision))
          (funcall gptel-scope--denial-handler buffer decision retry callback)
        (funcall callback (plist-get decision :response)))
    (gptel-scope--use-grants buffer (plist-get decision :grants-used))
    (gptel-scope-exec-start
     argv (plist-get decision :directory)
     (lambda (r)
       (funcall callback
                (gptel-scope--json
                 :success (plist-get r :success)
                 :exit_code (plist-get r :exit-code)
                 :output (plist-get r :output)
                 :truncated (plist-get r :truncated)
                 :warnings (vconcat (plist-get decision :warnings))
                 :duration_ms (plist-get r :duration-ms)
                 :reason (if (plist-get r :timed-out) "timeout" :null)
                 :message (cond ((plist-get r :timed-out)
                                 (format "The command timed out after %s seconds and was killed with its children; the output so far is shown. Narrow it or make it faster."
                                         (plist-get decision :timeout)))
                                ((plist-get r :success) "The command succeeded.")
                                (t (format "The command failed with exit code %s; its output is shown."
                                           (plist-get r :exit-code)))))))
     :timeout (plist-get decision :timeout)
     :max-chars (plist-get decision :max-output-chars))))

(defmacro gptel-scope--guard (callback &rest body)
  "Run BODY; on any error call CALLBACK with the error as JSON."
  (declare (indent 1))
  `(condition-case err
       (progn ,@body)
     (error (funcall ,callback (gptel-scope--error-result err)))))

(defun gptel-scope-run-bash-command (callback command directory)
  "Judge and run the shell COMMAND in DIRECTORY; call CALLBACK with JSON."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback)))
    (gptel-scope--guard once
      (gptel-scope-load-module)
      (let* ((dir (gptel-scope--directory-arg directory))
             (d (gptel-scope-module-check-command
                 (gptel-scope--request buffer :command command :directory dir :tool "run_bash_command"))))
        (gptel-scope--run buffer once d (gptel-scope-exec-shell-argv command)
                          (lambda ()
                            (with-current-buffer buffer
                              (let ((gptel-scope-prompt-on-denial nil))
                                (gptel-scope-run-bash-command once command directory)))))))))

(defun gptel-scope-run-command (callback command args directory)
  "Judge and run COMMAND with ARGS (no shell) in DIRECTORY; call CALLBACK."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback)))
    (gptel-scope--guard once
      (gptel-scope-load-module)
      (let* ((dir (gptel-scope--directory-arg directory))
             (args (append args nil))
             (d (gptel-scope-module-check-argv
                 (gptel-scope--request buffer :command command :args (vconcat args)
                                       :directory dir :tool "run_command"))))
        (gptel-scope--run buffer once d (cons command args))))))

(defun gptel-scope-list-allowed-commands ()
  "Return the list of allowed commands for the current buffer's scope."
  (condition-case err
      (progn
        (gptel-scope-load-module)
        (gptel-scope-module-list-commands (gptel-scope--request (current-buffer))))
    (error (format "No scope applies: %s" (error-message-string err)))))

(defun gptel-scope--once (callback)
  "Return a function calling CALLBACK at most once."
  (let ((called nil))
    (lambda (result)
      (unless called
        (setq called t)
        (funcall callback result)))))

(defconst gptel-scope-run-bash-command-description
  "Run a bash command in a directory, within the user's scope. The directory is required. Every command of a pipeline, list or substitution is checked; commands outside the scope are refused with a reason and what to do instead. Prefer file tools for reading and listing files. Use relative paths inside the project so the scope can check them. If a command is refused for scope, call request_scope_expansion."
  "What the model is told about run_bash_command.")

(defun gptel-scope-register-tools ()
  "Register the gptel-scope tools with gptel, in the category \"scope\"."
  (gptel-make-tool
   :name "run_bash_command" :category "scope" :async t
   :function #'gptel-scope-run-bash-command
   :description gptel-scope-run-bash-command-description
   :args (list '(:name "command" :type string :description "The bash command")
               '(:name "directory" :type string :description "The directory to run in (required; absolute, or relative to the project)")))
  (gptel-make-tool
   :name "run_command" :category "scope" :async t
   :function #'gptel-scope-run-command
   :description "Run a program with arguments, without a shell (arguments are never re-interpreted). See list_allowed_commands for the programs and flags allowed."
   :args (list '(:name "command" :type string :description "The program")
               '(:name "args" :type array :items (:type string) :description "Its arguments")
               '(:name "directory" :type string :description "The directory to run in")))
  (gptel-make-tool
   :name "list_allowed_commands" :category "scope"
   :function #'gptel-scope-list-allowed-commands
   :description "List the commands, subcommands and categories the scope allows."
   :args nil))

(with-eval-after-load 'gptel
  (gptel-scope-register-tools))

(provide 'gptel-scope-tools)
;;; gptel-scope-tools.el ends here
