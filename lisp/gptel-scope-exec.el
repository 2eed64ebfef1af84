;;; gptel-scope-exec.el --- Running judged commands for gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Runs a command the module has already judged, asynchronously (never
;; with `call-process': a timeout cannot interrupt it):
;;
;; - shell commands run as `bash --noprofile --norc -c COMMAND', the
;;   grammar the module parsed; argv commands run with no shell;
;; - the environment is the scope's (`gptel-scope-exec-environment-function',
;;   set by gptel-scope-env; without it only the core variables PATH,
;;   HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TZ and TMPDIR), then
;;   sanitized: BASH_ENV and ENV unset, pagers off, git never prompts;
;; - every command runs under the supervisor `gptel-scope-run'
;;   (`gptel-scope-exec-wrap'): the call's resource limits, Landlock when
;;   that is the wall, and when the command ends or is stopped every
;;   process it started is killed (it is their subreaper);
;; - the module starts the supervisor (`gptel-scope-module-spawn'), as
;;   `make-process' would: the program found on `exec-path', in a session
;;   of its own (setsid), so the command is the leader of a process group
;;   holding everything it starts and has no terminal; every signal at its
;;   default; standard input from /dev/null, so a command waiting for
;;   input ends instead of hanging until the timeout;
;; - its output (stdout and stderr together) does not pass through Lisp:
;;   it goes to a pipe that a thread of the module drains, keeping its
;;   first and last bytes (`gptel-scope-capture-factor' times the limit in
;;   all) and counting the rest; nothing is written to disk.  Another
;;   thread waits for the command and says how it ended through a pipe
;;   process, which stands for the command in Lisp;
;; - on timeout the process group, and every descendant that left it, get
;;   SIGTERM and then SIGKILL, and when the command ends whatever it left
;;   running in the background is killed too;
;; - where the module cannot start commands, `make-process' does, and a
;;   process filter gives the output to the module;
;; - the module decodes the output as UTF-8, each invalid byte as U+FFFD
;;   and NUL as U+2400 (so `json-serialize' never fails, and any JSON
;;   parser takes the result), hides the values of the secrets the
;;   command did not get, and over the limit shows its first and last
;;   part around a notice.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'gptel-scope-core)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-env)

(declare-function gptel-scope-module-truncate "gptel-scope-module" (chunks max-chars))
(declare-function gptel-scope-module-truncate-stream "gptel-scope-module" (text max-bytes max-lines))
(declare-function gptel-scope-module-spawn "gptel-scope-module"
                  (program argv environment directory cap-bytes channel))
(declare-function gptel-scope-module-capture-new "gptel-scope-module" (cap-bytes))
(declare-function gptel-scope-module-capture-push "gptel-scope-module" (capture bytes))
(declare-function gptel-scope-module-capture-finish "gptel-scope-module"
                  (capture max-chars redactor wait-ms))

(defconst gptel-scope-exec--git-config
  '(("core.fsmonitor" . "false") ("core.hooksPath" . "/dev/null") ("core.pager" . "cat")
    ("core.sshCommand" . "ssh") ("credential.helper" . "") ("gpg.program" . "gpg")
    ("gpg.ssh.program" . "ssh-keygen") ("gpg.x509.program" . "gpgsm")
    ("commit.gpgSign" . "false") ("tag.gpgSign" . "false") ("log.showSignature" . "false")
    ("sequence.editor" . "true") ("protocol.ext.allow" . "never")
    ("safe.bareRepository" . "explicit"))
  "Git settings every command gets, over every configuration file.
Git runs the programs its configuration names (a file system monitor,
hooks, a pager, ssh, credential helpers, gpg); these keys, given as git's
own command-line settings (GIT_CONFIG_COUNT), put git's defaults back
wherever the configuration comes from (a repository made on the
command line, an included file): a listed git command runs git.  Hooks
never run in a tool call.  A bare repository is used only when named.
Drivers named by attributes (filters, textconv, merge drivers) have no
fixed key: the repository's configuration that defines them is
protected instead (SECURITY.md).")

(defconst gptel-scope-exec--set
  (append
   '("PAGER=cat" "GIT_PAGER=cat" "MANPAGER=cat" "SYSTEMD_PAGER=cat" "GIT_TERMINAL_PROMPT=0"
     "GIT_EDITOR=true" "EDITOR=true" "VISUAL=true" "TERM=dumb")
   (list (format "GIT_CONFIG_COUNT=%d" (length gptel-scope-exec--git-config)))
   (let ((i -1))
     (mapcan (lambda (kv)
               (setq i (1+ i))
               (list (format "GIT_CONFIG_KEY_%d=%s" i (car kv))
                     (format "GIT_CONFIG_VALUE_%d=%s" i (cdr kv))))
             gptel-scope-exec--git-config)))
  "Variables every command gets.")

(defconst gptel-scope-exec--unset '("BASH_ENV" "ENV" "PROMPT_COMMAND" "CDPATH" "GLOBIGNORE")
  "Variables removed from the environment of every command.")

(defvar gptel-scope-exec-argv-function #'gptel-scope-sandbox-wrap
  "Function (ARGV DIRECTORY) saying how ARGV runs, or nil.
`gptel-scope-exec-wrap' calls it, in the buffer whose scope applies,
for each command: by default the sandbox's `gptel-scope-sandbox-wrap';
nil runs ARGV as it is, under the supervisor alone.  It returns a plist
\(:argv ARGV :wall WALL :spec SPEC): the argv to run (bubblewrap's
around ARGV, or ARGV), the wall it runs behind (`bwrap', `landlock' or
nil) and the supervisor's spec (a plist for `json-serialize': :wall,
:read, :write, :network, :limits); or a plain argv, or nil for ARGV as
it is.  It may signal to refuse the run.")

(defvar gptel-scope-exec-environment-function #'gptel-scope-env-for-command
  "Function returning (ENV . REDACTOR) for a command, or nil.
`gptel-scope-exec-start' calls it with no argument, in the buffer whose
scope applies: ENV is the list of NAME=VALUE entries the command gets
\(before the variables of `gptel-scope-exec--set'), REDACTOR what hides
the values left out in its output.  By default the scope's environment
\(`gptel-scope-env-for-command'); nil gives a command only the core
variables of Emacs's environment (`gptel-scope-exec--core').")

(defun gptel-scope-exec--scoped ()
  "Return (ENV . REDACTOR) for a command started in the current buffer."
  (if gptel-scope-exec-environment-function
      (funcall gptel-scope-exec-environment-function)
    (let ((case-fold-search nil))
      (cons (seq-filter (lambda (e) (string-match-p gptel-scope-exec--core e)) process-environment)
            nil))))

(defvar gptel-scope-exec--live nil
  "Processes started by `gptel-scope-exec-start' that have not ended.")

(defconst gptel-scope-exec--dropped
  (append gptel-scope-exec--unset
          (mapcar (lambda (e) (substring e 0 (string-search "=" e))) gptel-scope-exec--set))
  "Names of the variables taken out of `process-environment' for a command.")

(defvar gptel-scope-exec--environment nil
  "The last sanitized environment: (INPUT COPY RESULT).
INPUT is the environment it was made from, COPY a copy of that list
\(the same strings), RESULT the environment.  It is used again while the
environment holds the same entries, so a command costs no new one.")

(defun gptel-scope-exec--dropped-p (entry)
  "Return non-nil when ENTRY, of `process-environment', names a dropped variable."
  (let ((end (or (string-search "=" entry) (length entry))))
    (seq-some (lambda (name) (and (= end (length name)) (string-prefix-p name entry)))
              gptel-scope-exec--dropped)))

(cl-defun gptel-scope-exec-environment (&optional (base nil base-p))
  "Return BASE, a list of NAME=VALUE entries, sanitized for a command.
BASE defaults to the scope's environment of a command started in the
current buffer (`gptel-scope-exec-environment-function').  The result is
shared between calls while BASE does not change: do not modify it."
  (let ((cached gptel-scope-exec--environment)
        (process-environment (if base-p base (car (gptel-scope-exec--scoped)))))
    ;; The scope's environment is a new list at each call: the same entries
    ;; (`setenv' may replace one in place) give the same result.
    (if (and cached (equal (cadr cached) process-environment))
        (nth 2 cached)
      (let ((env (append gptel-scope-exec--set
                         (seq-remove #'gptel-scope-exec--dropped-p process-environment))))
        (setq gptel-scope-exec--environment
              (list process-environment (copy-sequence process-environment) env))
        env))))

(defun gptel-scope-exec--supervised (argv spec)
  "Return the argv running ARGV under the supervisor with SPEC.
The program of ARGV is found on the variable `exec-path', as
`make-process' finds it; signal `file-missing' when it is not there, and
`gptel-scope-module-error' when the supervisor is missing."
  (let ((program (gptel-scope-exec--program argv))
        (run (gptel-scope-run-program)))
    (unless program
      (signal 'file-missing (list "Searching for program" "No such file or directory" (car argv))))
    (unless (file-executable-p run)
      (signal 'gptel-scope-module-error
              (list (format "The supervisor %s is missing: run M-x gptel-scope-build-module" run))))
    (append (list run (json-serialize (append (or spec '(:wall "none"))
                                              (list :grace (float gptel-scope-kill-grace))))
                  "--" program)
            (cdr argv))))

(defun gptel-scope-exec-wrap (argv directory)
  "Return (RUN . WALL): the argv to run ARGV in DIRECTORY, and its wall.
RUN is the argv under the supervisor `gptel-scope-run', which applies
the call's limits and kills every process the command started when it
ends, whatever the wall; WALL is the wall around it (`bwrap',
`landlock'), or nil.  Called in the buffer whose scope applies."
  (let* ((said (and gptel-scope-exec-argv-function
                    (funcall gptel-scope-exec-argv-function argv directory)))
         (plist (and (keywordp (car-safe said)) said))
         (inner (cond (plist (plist-get plist :argv)) (said said) (t argv)))
         (wall (if plist (plist-get plist :wall) (and said (not (eq said argv)) 'wrapped))))
    (cons (gptel-scope-exec--supervised inner (plist-get plist :spec)) wall)))

(defun gptel-scope-exec-shell-argv (command)
  "Return the argv running the shell COMMAND with bash and no startup files."
  (list "bash" "--noprofile" "--norc" "-c" command))

(defun gptel-scope-exec-decode (bytes)
  "Decode the unibyte string BYTES as UTF-8, invalid bytes as U+FFFD.
Each byte that is not part of a valid UTF-8 sequence becomes one
U+FFFD, and NUL bytes become U+2400 (SYMBOL FOR NULL), which every JSON
parser takes.  The result is always accepted by `json-serialize'.
The module decodes, as it does the output of `gptel-scope-exec-start';
without it, Emacs does."
  (if (fboundp 'gptel-scope-module-truncate)
      (plist-get (gptel-scope-module-truncate bytes most-positive-fixnum) :output)
    (gptel-scope-exec--decode-in-lisp bytes)))

(defun gptel-scope-exec-truncate-stream (text max-bytes max-lines)
  "Return TEXT, output of a terminal session, cut to MAX-BYTES and MAX-LINES.
A plist from the module: :output, what is shown, and what was cut."
  (gptel-scope-module-truncate-stream text max-bytes max-lines))

(defun gptel-scope-exec--decode-in-lisp (bytes)
  "Decode BYTES as `gptel-scope-exec-decode' does, without the module."
  (let ((s (replace-regexp-in-string
            "\0" "\u2400"
            (replace-regexp-in-string "[\200-\377]" "\uFFFD"
                                      (decode-coding-string bytes 'utf-8-unix t) t t)
            t t)))
    (if (ignore-errors (json-serialize (vector s)))
        s
      ;; Surrogates and characters beyond Unicode that Emacs decodes.
      (apply #'string (mapcar (lambda (c) (if (or (> c #x10FFFF) (<= #xD800 c #xDFFF)) #xFFFD c))
                              (string-to-list s))))))

(defun gptel-scope-exec--descendants (pid)
  "Return the pids of the living descendants of PID, nearest first.
Run from timers and sentinels in whatever buffer is current: the
processes are this machine's, asked with a local `default-directory'
\(with a remote one, Emacs 29 and later would ask TRAMP, and connect)."
  (let ((children (make-hash-table)) (out nil) (todo (list pid))
        (default-directory "/"))
    (dolist (p (ignore-errors (list-system-processes)))
      (let ((ppid (alist-get 'ppid (ignore-errors (process-attributes p)))))
        (when ppid (push p (gethash ppid children)))))
    (while todo
      (dolist (c (gethash (pop todo) children))
        (unless (memq c out)
          (push c out)
          (push c todo))))
    (nreverse out)))

(defun gptel-scope-exec--signal (pid pids signal)
  "Send SIGNAL to the process group of PID and to each of PIDS."
  (ignore-errors (signal-process (- pid) signal))
  (dolist (p pids) (ignore-errors (signal-process p signal))))

(defun gptel-scope-exec-kill (proc &optional immediately group-only)
  "Kill PROC, its process group and its descendants.
SIGTERM first (the supervisor gives it `gptel-scope-kill-grace' seconds,
then kills the tree), SIGKILL 2 seconds after that as a backstop, or
SIGKILL at once when IMMEDIATELY is non-nil.  With GROUP-ONLY, only
signal the process group (after PROC ended its children belong to
init, and the group holds those that did not leave it)."
  (let ((pid (gptel-scope-exec-pid proc)))
    (when pid
      (let ((pids (unless group-only (gptel-scope-exec--descendants pid))))
        (if immediately
            (gptel-scope-exec--signal pid pids 'SIGKILL)
          (gptel-scope-exec--signal pid pids 'SIGTERM)
          ;; The supervisor kills what is left after the grace itself; this is the
          ;; backstop for a supervisor that cannot.
          (run-at-time (+ gptel-scope-kill-grace 2) nil
                       #'gptel-scope-exec--signal pid pids 'SIGKILL))))))

(defun gptel-scope-exec--kill-group (proc)
  "Kill what is left of the process group of PROC, which has ended.
SIGTERM, and SIGKILL `gptel-scope-kill-grace' seconds later when
the group still had members (an empty group needs no second signal)."
  (let ((pid (gptel-scope-exec-pid proc)))
    (when (and pid (eql 0 (ignore-errors (signal-process (- pid) 'SIGTERM))))
      (run-at-time gptel-scope-kill-grace nil
                   #'gptel-scope-exec--signal pid nil 'SIGKILL))))

(defun gptel-scope-exec-kill-all ()
  "Kill the commands started by gptel-scope that are still running."
  (interactive)
  (dolist (proc gptel-scope-exec--live)
    (gptel-scope-exec-kill proc t))
  (setq gptel-scope-exec--live nil))

(defun gptel-scope-exec--exiting ()
  "Kill the running commands and stop reading their output: Emacs is exiting."
  (dolist (proc gptel-scope-exec--live)
    (let ((capture (process-get proc 'gptel-scope-capture)))
      (when capture
        (ignore-errors (gptel-scope-module-capture-finish capture 0 nil 0)))))
  (gptel-scope-exec-kill-all))

(add-hook 'kill-emacs-hook #'gptel-scope-exec--exiting)

(defun gptel-scope-exec--no-directory (directory)
  "Signal that DIRECTORY, judged a moment ago, cannot be entered now."
  (signal 'gptel-scope-invalid-argument
          (list (format "The directory %s no longer exists or cannot be entered (it was removed or changed after the command was judged); nothing ran"
                        directory))))

;;;; Starting a command

(defconst gptel-scope-exec--drain-wait-ms 200
  "Milliseconds the result waits for the output to end once the command ended.
What the command left running may hold its output open until its
process group dies; past this wait the result shows what was read.")

(defvar gptel-scope-exec--spawn t
  "Non-nil to let the module start commands where it can.
Where it cannot (a system without the C library functions it uses), or
when this is nil, `make-process' starts them and a process filter gives
their output to the module.")

(defun gptel-scope-exec-pid (proc)
  "Return the process id of the command that PROC stands for.
PROC is what `gptel-scope-exec-start' returned: the process of the
command, or the pipe process through which the module says it ended."
  (or (process-get proc 'gptel-scope-pid) (process-id proc)))

(defun gptel-scope-exec--program (argv)
  "Return the program of ARGV found as `make-process' would find it, or nil."
  (let ((program (car argv)))
    (if (file-name-absolute-p program) program (executable-find program))))

(defun gptel-scope-exec--status (line)
  "Return (SIGNALED . CODE) from LINE, the module's word on how a command ended."
  (cond ((string-match "\\`exit \\([0-9]+\\)" line) (cons nil (string-to-number (match-string 1 line))))
        ((string-match "\\`signal \\([0-9]+\\)" line) (cons t (string-to-number (match-string 1 line))))
        (t (cons nil nil))))

(defun gptel-scope-exec--failed (directory err)
  "Signal ERR, the failure to start a command in DIRECTORY.
When DIRECTORY cannot be entered now (it went in the instant after
it was looked at), say so as `gptel-scope-exec--no-directory' does."
  (unless (file-accessible-directory-p directory)
    (gptel-scope-exec--no-directory directory))
  (signal (car err) (cdr err)))

(defun gptel-scope-exec--spawn (argv directory cap ended)
  "Start ARGV in DIRECTORY with the module, its output captured (CAP bytes).
Return a pipe process standing for it, through which the module says
when it ended; then ENDED is called with the pipe process, whether a
signal killed the command, its exit status or signal, and, when the
pipe process was deleted first, `deleted' (the command is to be
killed).  Return nil when the module cannot start it (the caller then
does): the program is not found, or this system lacks what the module
needs."
  (let ((program (and gptel-scope-exec--spawn
                      (fboundp 'gptel-scope-module-spawn)
                      (gptel-scope-exec--program argv))))
    (when program
      (let* ((said "")
             (channel (make-pipe-process
                       :name "gptel-scope" :coding 'binary :noquery t
                       ;; Deleted (`list-processes', `delete-process'): the command
                       ;; is killed at once and the result says so.
                       :sentinel (lambda (p _event)
                                   (when (and (process-get p 'gptel-scope-pid)
                                              (not (process-live-p p)))
                                     (funcall ended p t 9 'deleted)))
                       :filter (lambda (p text)
                                 (setq said (concat said text))
                                 (when (string-search "\n" said)
                                   (let ((status (gptel-scope-exec--status said)))
                                     (funcall ended p (car status) (cdr status)))))))
             (started (condition-case err
                          ;; argv[0] is the program's file name, as `make-process' gives it.
                          (gptel-scope-module-spawn program (cons program (cdr argv)) process-environment
                                                    (expand-file-name directory) cap channel)
                        (error (delete-process channel)
                               (gptel-scope-exec--failed directory err)))))
        (if (not started)
            (progn (delete-process channel) nil)
          (process-put channel 'gptel-scope-pid (car started))
          (process-put channel 'gptel-scope-capture (cdr started))
          channel)))))

(defun gptel-scope-exec--make-process (argv directory cap ended)
  "Start ARGV in DIRECTORY with `make-process', its output given to a capture.
The capture keeps CAP bytes.  Return the process; ENDED is called as
by `gptel-scope-exec--spawn'."
  (let* ((capture (gptel-scope-module-capture-new cap))
         (proc (condition-case err
                   (make-process
                    :name "gptel-scope"
                    :command argv
                    :connection-type 'pipe
                    :coding 'binary
                    :noquery t
                    :filter (lambda (_p s) (gptel-scope-module-capture-push capture s))
                    :sentinel (lambda (p _event)
                                (unless (process-live-p p)
                                  (funcall ended p (eq (process-status p) 'signal)
                                           (process-exit-status p)))))
                 (error (gptel-scope-exec--failed directory err)))))
    (process-put proc 'gptel-scope-capture capture)
    ;; No command gets input: reading stdin sees its end at once.
    (ignore-errors (process-send-eof proc))
    proc))

(cl-defun gptel-scope-exec-start (argv directory callback &key (timeout 30) (max-chars 20000))
  "Run ARGV in DIRECTORY and call CALLBACK once with a result plist.
TIMEOUT is in seconds; MAX-CHARS bounds the output returned.  The
plist has :success, :exit-code (nil when killed by a signal), :signal,
:output, :truncated, :timed-out, :sandboxed (the wall it ran
behind, `bwrap' or `landlock', or nil: `gptel-scope-exec-wrap'),
:duration-ms, :total-bytes (all the
output), :kept-bytes (the part kept in memory, its first and last
bytes) and :lines (the lines of all the output); when the result
itself could not be made, :error says why.  CALLBACK is called once
even then.  Return a process standing for the command (its pid is
`gptel-scope-exec-pid').  When DIRECTORY cannot be entered nothing runs
and CALLBACK is not called: this signals `gptel-scope-invalid-argument'.
A program that is not there signals `file-missing', as `make-process'
does."
  (let* ((start (float-time))
         (max-chars (max 0 max-chars))
         (cap (* (max 1 gptel-scope-capture-factor) (max 1024 max-chars)))
         (timed-out nil) (done nil) (timer nil) (sandboxed nil)
         (default-directory (file-name-as-directory directory))
         ;; The scope's environment, and what hides the values it leaves out.
         (scoped (gptel-scope-exec--scoped))
         (redactor (cdr scoped))
         (process-environment (gptel-scope-exec-environment (car scoped)))
         (proc nil))
    (unless (file-accessible-directory-p directory)
      (gptel-scope-exec--no-directory directory))
    (let ((run (gptel-scope-exec-wrap argv directory)))
      (setq argv (car run) sandboxed (cdr run)))
    (let ((ended
           (lambda (p signaled code &optional deleted)
             (unless done
               (setq done t)
               (setq gptel-scope-exec--live (delq p gptel-scope-exec--live))
               (when timer (cancel-timer timer))
               ;; Nothing the command started may outlive it.
               (if deleted
                   (gptel-scope-exec-kill p t)
                 (gptel-scope-exec--kill-group p))
               (let ((capture (process-get p 'gptel-scope-capture))
                     (cut nil))
                 (when (process-get p 'gptel-scope-pid)
                   (delete-process p))
                 (condition-case err
                     (let* (;; Redacted before the cut: no cut shows part of a secret.
                            (_ (setq cut (gptel-scope-module-capture-finish
                                          capture max-chars redactor
                                          gptel-scope-exec--drain-wait-ms)))
                            (output (plist-get cut :output)))
                       (when (plist-get cut :error)
                         (setq output (format "%s\n[%s]" output (plist-get cut :error))))
                       (funcall callback
                                (list :success (and (not timed-out) (not signaled) (eql code 0))
                                      :exit-code (unless signaled code)
                                      :signal (and signaled code)
                                      :output output
                                      :truncated (plist-get cut :truncated)
                                      :lines (plist-get cut :lines)
                                      :timed-out timed-out
                                      :sandboxed sandboxed
                                      :total-bytes (plist-get cut :total-bytes)
                                      :kept-bytes (plist-get cut :kept-bytes)
                                      :duration-ms (round (* 1000 (- (float-time) start))))))
                   ;; An error here would be lost, and the caller never answered.
                   (error
                    (ignore-errors
                      (funcall callback
                               (list :success nil :error (error-message-string err)
                                     :exit-code (unless signaled code)
                                     :output "" :truncated nil :timed-out timed-out
                                     :total-bytes (plist-get cut :total-bytes)
                                     :kept-bytes (plist-get cut :kept-bytes)
                                     :duration-ms (round (* 1000 (- (float-time) start)))))))))))))
      (setq proc (or (gptel-scope-exec--spawn argv directory cap ended)
                     (gptel-scope-exec--make-process argv directory cap ended))))
    (push proc gptel-scope-exec--live)
    (setq timer
          (run-at-time (max 0 timeout) nil
                       (lambda ()
                         (unless done
                           (setq timed-out t)
                           (gptel-scope-exec-kill proc)))))
    proc))

(provide 'gptel-scope-exec)
;;; gptel-scope-exec.el ends here
