;;; gptel-scope-tools.el --- The gptel tools of gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The command tools, usable without gptel, and their registration with
;; `gptel-make-tool' in the category "scope" once gptel is loaded:
;;
;;   run_bash_command(command, directory[, timeout])
;;   run_command(command, args, directory[, timeout])   argv form, no shell
;;   list_allowed_commands()
;;   request_scope_expansion(tool_name, resource[, reason])
;;
;; (the file tools are in gptel-scope-fs.el, the terminal sessions in
;; gptel-scope-pty.el).  Each call takes the one path of
;; gptel-scope-call: arguments read, judged by the module under the
;; buffer's scope (gptel-scope-session), refused or asked about, run,
;; logged, redacted.  request_scope_expansion is answered from the
;; menu of gptel-scope-expand.
;;
;; Async tools catch every error and call their callback exactly once.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-session)
(require 'gptel-scope-events)
(require 'gptel-scope-exec)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-call)
(require 'gptel-scope-expand)

(declare-function gptel-make-tool "ext:gptel-request")

;;;; The command tools

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
    (gptel-scope--guard once gptel-scope--tool-run-bash-command
      (gptel-scope--with-error-event gptel-scope--tool-run-bash-command args
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
    (gptel-scope--guard once gptel-scope--tool-run-command
      (gptel-scope--with-error-event gptel-scope--tool-run-command event-args
        (gptel-scope--check-local)
        (let* ((command (gptel-scope--string-arg "command" command))
               (args (gptel-scope--args-list args))
               (dir (gptel-scope--directory-arg directory))
               (_ (gptel-scope--arg "timeout" timeout 'natnum))
               (d (gptel-scope--check-argv buffer command args dir gptel-scope--tool-run-command
                                           (gptel-scope--masked))))
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
         (gptel-scope--result-text (gptel-scope--allowed-commands (current-buffer))))
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
  (let ((policy (plist-get (gptel-scope--loaded-scope) :approval-policy)))
    (pcase policy
      ("always" t)
      ("mutating"
       (let ((d (if (equal tool gptel-scope--tool-run-command)
                    (gptel-scope--check-argv (current-buffer)
                                             (gptel-scope--string-arg "command" (car-safe command))
                                             (gptel-scope--args-list (cdr-safe command))
                                             (gptel-scope--directory-arg directory)
                                             tool)
                  (gptel-scope-check-bash-command command directory nil t))))
         (or (equal (plist-get d :required-scope) "write")
             (equal (plist-get d :category) "dangerous")))))))

;;;; Asking for more

(defun gptel-scope-request-scope-expansion (callback &optional tool-name resource reason)
  "Ask the user to widen the scope for TOOL-NAME on RESOURCE, for REASON.
CALLBACK receives the JSON answer, exactly once.  The request waits
in a queue while another one is answered.  This is
request_scope_expansion; it needs no scope itself.  The arguments are
as gptel passes them (`gptel-scope--arg'); a missing REASON is
\"(no reason given)\".  A remote chat directory or RESOURCE is
refused: nothing there can be added to a scope."
  (let ((once (gptel-scope--once callback)))
    (gptel-scope--guard once gptel-scope--tool-request-scope-expansion
      (gptel-scope--check-local)
      (gptel-scope--string-arg "tool_name" tool-name)
      (gptel-scope--string-arg "resource" resource)
      (gptel-scope--check-local "resource" resource)
      (let ((reason (or (gptel-scope--arg "reason" reason 'string) "(no reason given)")))
        (cond
         ((equal (cdr (assoc tool-name gptel-scope-tool-validation)) "meta")
          (funcall once (gptel-scope--json
                         :success t :message (format "%s needs no permission; call it directly." tool-name))))
         ((and (not (equal (plist-get (gptel-scope-denial tool-name resource) :access) "read"))
               (gptel-scope--rules-resource-p resource))
          (funcall once (gptel-scope--json
                         :success nil :allowed nil :reason gptel-scope--reason-scope-document :tool tool-name
                         :resource resource
                         :message (format "%s holds the rules this session runs under: no tool may write it and no request can grant that. The scope is the user's to change; tell the user what you need and why." resource))))
         (t
          (gptel-scope--enqueue (gptel-scope--make-request
                                  once tool-name resource reason
                                  (gptel-scope-denial tool-name resource)))))))))

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

(defun gptel-scope-tools-register-tools ()
  "Register run_bash_command, run_command and list_allowed_commands with gptel.
They go in the category \"scope\", so a preset can use :tools \\='(\"scope\").
With gptel 0.9.9.3 or later the scope's approval_policy decides which
calls gptel asks you to confirm."
  (apply
   #'gptel-make-tool
   :name gptel-scope--tool-run-bash-command :category "scope" :async t
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
      (gptel-scope--confirm-p gptel-scope--tool-run-bash-command command directory))))
  (apply
   #'gptel-make-tool
   :name gptel-scope--tool-run-command :category "scope" :async t
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
      (gptel-scope--confirm-p gptel-scope--tool-run-command (cons command args) directory))))
  (gptel-make-tool
   :name gptel-scope--tool-list-allowed-commands :category "scope"
   :function #'gptel-scope-list-allowed-commands
   :description gptel-scope-list-allowed-commands-description
   :args nil))

(defconst gptel-scope-request-scope-expansion-description
  "Ask the user to widen the scope after a tool refused a call for scope reasons (the refusal names request_scope_expansion, the tool and the resource). Pass the tool name, the resource exactly as the refusal gives it, and why the task needs it. The user may deny, allow it once (retry the same call right away), or add it to the scope permanently. On success retry the call; on denial do not retry or work around it. Commands get only the environment variables the scope lets through: when one fails for a missing variable, ask for it with the resource env:NAME (the name only)."
  "What the model is told about request_scope_expansion.")

(defun gptel-scope-register-expansion-tool ()
  "Register request_scope_expansion with gptel, in the category \"scope\"."
  (gptel-make-tool
   :name gptel-scope--tool-request-scope-expansion :category "scope" :async t
   :function #'gptel-scope-request-scope-expansion
   :description gptel-scope-request-scope-expansion-description
   :args (gptel-scope--tool-args '(:name "tool_name" :type string
                       :description "The tool that was refused, e.g. run_bash_command")
               '(:name "resource" :type string
                       :description "What to allow: the command, path or pattern the refusal named, or env:NAME for an environment variable")
               '(:name "reason" :type string
                       :description "Why the task needs it, in a sentence for the user"))))

(provide 'gptel-scope-tools)
;;; gptel-scope-tools.el ends here
