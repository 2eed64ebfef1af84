;;; gptel-scope-pty.el --- Terminal sessions: exec_command and write_stdin  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Two gptel tools run a command in a pseudo-terminal and talk to it:
;;
;;   exec_command(cmd, workdir, yield_time_ms=250, max_output_tokens=8000)
;;   write_stdin(session_id, chars="", yield_time_ms=250,
;;               max_output_tokens=8000, close=false)
;;
;; exec_command judges CMD exactly as run_bash_command does (the same
;; check, refusals, allow-once grants and request_scope_expansion
;; advice), then starts `bash --noprofile --norc -c CMD' on a pty in the
;; judged directory with the runner's environment, registers a session
;; id and, after up to YIELD_TIME_MS (sooner when the command ends),
;; answers with the output so far.  write_stdin sends CHARS to the
;; session and answers with the output that came since the last answer.
;;
;; Only CMD is judged: what is typed into a session goes to the program
;; as it is.  A scope that lists an interpreter (bash, python3) lets the
;; model do in a session whatever that interpreter can do; the judge
;; says so with a warning, which the answer carries.
;;
;; A session ends when its process exits (the answer that reports the
;; exit is the last one; the id is unknown afterwards), on end of file
;; (CHARS "\u0004" at the start of a line), when asked (close: true
;; kills the process and everything it started), and when Emacs exits.
;; At most `gptel-scope-pty-max-sessions' sessions are open at a time.
;;
;; Output caps (F10): each answer shows at most MAX_OUTPUT_TOKENS x 4
;; bytes and `gptel-scope-pty-poll-max-lines' lines; over the whole
;; session at most `gptel-scope-pty-session-max-bytes' bytes (and
;; `gptel-scope-pty-session-max-lines' lines) are shown.  A session keeps
;; at most that many bytes in memory in all: past it, output is counted,
;; not kept.  Output is decoded as UTF-8 (invalid bytes become U+FFFD),
;; the terminal's CR LF line ends become LF, and the cut is made by the
;; module, with a `[truncated]' marker giving the sizes.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-exec)
(require 'gptel-scope-events)
(require 'gptel-scope-session)
(require 'gptel-scope-call)
(require 'gptel-scope-tools)
(require 'gptel-scope-env)


;;;; Options

(defcustom gptel-scope-pty-max-sessions 8
  "How many terminal sessions may be open at a time.
exec_command refuses to start more (reason \"too_many_sessions\")
until one ends or is closed."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-pty-session-max-bytes 1048576
  "Bytes of output one terminal session may keep and show in all.
Past this many bytes of output the rest is counted, not kept, and
the answers say so."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-pty-session-max-lines 20000
  "Lines of output one terminal session may show in all."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-pty-poll-max-lines 1000
  "Lines of output one answer of exec_command or write_stdin may show.
The bytes of an answer are capped by the call's max_output_tokens."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-pty-max-yield-ms 30000
  "Upper bound of the yield_time_ms a call may ask for, in milliseconds."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-pty-write-timeout 1.0
  "Seconds write_stdin waits for a program to take its input.
A program that does not read lets the terminal's buffers fill (about
12 KB); Emacs would then wait for it.  After this many seconds the
call goes on, the answer says so, and the rest of the input waits in
Emacs, to go before any later input."
  :type 'number
  :group 'gptel-scope)

(defconst gptel-scope-pty-bytes-per-token 4
  "Bytes of output shown per token of max_output_tokens.")

(defconst gptel-scope-pty-default-yield-ms 250
  "Milliseconds a call waits for output when it does not say.")

(defconst gptel-scope-pty-default-tokens 8000
  "The max_output_tokens of a call that does not say.")

(defconst gptel-scope-pty-max-line-bytes 4095
  "Bytes of one line a terminal passes to a program reading lines.
A longer line is cut by the terminal, so write_stdin refuses it.")

;;;; Sessions

(cl-defstruct (gptel-scope-pty--session
               (:constructor gptel-scope-pty--make-session)
               (:copier nil))
  "A terminal session: its process and the output not yet shown."
  id process command directory start buffer
  (chunks nil) (carry "") (kept 0) (redactor nil) (total 0) (polled 0) (reported-dropped 0)
  (shown-bytes 0) (shown-lines 0)
  exited exit-code signal closed waiter)

(defvar gptel-scope-pty--sessions (make-hash-table)
  "The open terminal sessions by id.")

(defvar gptel-scope-pty--last-id 0
  "The id of the last session started.")

(defun gptel-scope-pty-session-ids ()
  "Return the ids of the open terminal sessions, in order."
  (sort (hash-table-keys gptel-scope-pty--sessions) #'<))

(defun gptel-scope-pty--filter (session string)
  "Keep STRING, output of SESSION, within the session's memory cap."
  (let* ((len (length string))
         (room (max 0 (- gptel-scope-pty-session-max-bytes
                         (gptel-scope-pty--session-kept session))))
         (keep (min room len)))
    (cl-incf (gptel-scope-pty--session-total session) len)
    (when (> keep 0)
      (push (if (= keep len) string (substring string 0 keep))
            (gptel-scope-pty--session-chunks session))
      (cl-incf (gptel-scope-pty--session-kept session) keep))))

(defun gptel-scope-pty--sentinel (session process)
  "Record the end of SESSION's PROCESS and answer a call waiting for it."
  (unless (or (process-live-p process) (gptel-scope-pty--session-exited session))
    (setf (gptel-scope-pty--session-exited session) t)
    (if (eq (process-status process) 'signal)
        (setf (gptel-scope-pty--session-signal session) (process-exit-status process))
      (setf (gptel-scope-pty--session-exit-code session) (process-exit-status process)))
    ;; Nothing the command started may outlive it.
    (gptel-scope-exec-kill process nil t)
    (gptel-scope-pty--answer-now session)))

(defun gptel-scope-pty--kill (session)
  "Kill SESSION's process and everything it started, and forget the process."
  (let ((proc (gptel-scope-pty--session-process session)))
    (when (process-live-p proc)
      (gptel-scope-exec-kill proc t))
    (when (processp proc)
      (set-process-sentinel proc #'ignore)
      (delete-process proc))))

(defun gptel-scope-pty--forget (session)
  "Remove SESSION from the open sessions and kill its process if alive."
  (remhash (gptel-scope-pty--session-id session) gptel-scope-pty--sessions)
  (gptel-scope-pty--kill session))

;;;###autoload
(defun gptel-scope-pty-close-all ()
  "Close every terminal session: kill its process and all it started.
A call waiting on a session is answered.  Run by `kill-emacs-hook'."
  (interactive)
  (dolist (id (gptel-scope-pty-session-ids))
    (let ((session (gethash id gptel-scope-pty--sessions)))
      (setf (gptel-scope-pty--session-closed session) t)
      (gptel-scope-pty--kill session)
      (ignore-errors (gptel-scope-pty--answer-now session))
      (remhash id gptel-scope-pty--sessions))))

(add-hook 'kill-emacs-hook #'gptel-scope-pty-close-all)

(defun gptel-scope-pty--close-buffer-sessions ()
  "Close the terminal sessions of the buffer being killed."
  (let ((buffer (current-buffer)))
    (dolist (id (gptel-scope-pty-session-ids))
      (let ((session (gethash id gptel-scope-pty--sessions)))
        (when (eq (gptel-scope-pty--session-buffer session) buffer)
          (setf (gptel-scope-pty--session-closed session) t)
          (gptel-scope-pty--kill session)
          (ignore-errors (gptel-scope-pty--answer-now session))
          (remhash id gptel-scope-pty--sessions))))))

(add-hook 'kill-buffer-hook #'gptel-scope-pty--close-buffer-sessions)

;;;; Output

(defun gptel-scope-pty--utf8-end (raw)
  "Return the start of an unfinished UTF-8 character ending RAW.
That is the length of RAW when its last character is whole."
  (let* ((n (length raw)) (stop (max 0 (- n 4))) (i (1- n)))
    (while (and (>= i stop) (= (logand (aref raw i) #xC0) #x80))
      (cl-decf i))
    (if (< i stop)
        n
      (let* ((b (aref raw i))
             (need (cond ((>= b #xF8) 1) ((>= b #xF0) 4) ((>= b #xE0) 3) ((>= b #xC0) 2) (t 1))))
        (if (> need (- n i)) i n)))))

(defun gptel-scope-pty--take (session tokens)
  "Return the output of SESSION since its last answer, capped for TOKENS.
A plist: :output (with the markers), :truncated, :bytes (bytes
received since the last answer) and :lines (lines of the new text)."
  (let* ((raw (apply #'concat (gptel-scope-pty--session-carry session)
                     (nreverse (gptel-scope-pty--session-chunks session))))
         (end (if (gptel-scope-pty--session-exited session) (length raw) (gptel-scope-pty--utf8-end raw)))
         (text (string-replace "\r\n" "\n" (gptel-scope-exec-decode (substring raw 0 end))))
         ;; Secrets are redacted before the cut; an end that begins one waits
         ;; for the rest of the output (or the end of the process).
         (redactor (gptel-scope-pty--session-redactor session))
         (keep (if (gptel-scope-pty--session-exited session)
                   (length text)
                 (gptel-scope-env-hold-back text redactor)))
         (held (substring text keep))
         (text (gptel-scope-env-redact (substring text 0 keep) redactor))
         (bytes (min (* tokens gptel-scope-pty-bytes-per-token)
                     (max 0 (- gptel-scope-pty-session-max-bytes
                               (gptel-scope-pty--session-shown-bytes session)))))
         (lines (min gptel-scope-pty-poll-max-lines
                     (max 0 (- gptel-scope-pty-session-max-lines
                               (gptel-scope-pty--session-shown-lines session)))))
         (cut (gptel-scope-exec-truncate-stream text bytes lines))
         (total (gptel-scope-pty--session-total session))
         (dropped (- total (gptel-scope-pty--session-kept session)))
         (new-drop (> dropped (gptel-scope-pty--session-reported-dropped session)))
         (output (plist-get cut :output)))
    (setf (gptel-scope-pty--session-chunks session) nil
          (gptel-scope-pty--session-carry session)
          ;; Bytes: unibyte even when HELD is ASCII (NOCOPY could give back a
          ;; multibyte string, and the next concat would make the raw bytes
          ;; characters).
          (concat (encode-coding-string held 'utf-8-unix) (substring raw end)))
    (cl-incf (gptel-scope-pty--session-shown-bytes session) (plist-get cut :shown-bytes))
    (cl-incf (gptel-scope-pty--session-shown-lines session) (plist-get cut :shown-lines))
    (when new-drop
      (setf (gptel-scope-pty--session-reported-dropped session) dropped)
      (setq output (concat output
                           (if (or (string-empty-p output) (string-suffix-p "\n" output)) "" "\n")
                           (format "[The session printed %d bytes; past its cap of %d bytes the other %d were counted, not kept.]"
                                   total gptel-scope-pty-session-max-bytes dropped))))
    (prog1 (list :output output
                 :truncated (or (plist-get cut :truncated) new-drop)
                 :bytes (- total (gptel-scope-pty--session-polled session))
                 :lines (plist-get cut :total-lines))
      (setf (gptel-scope-pty--session-polled session) total))))

;;;; Waiting and answering

(defun gptel-scope-pty--answer-now (session)
  "Answer at once the call waiting on SESSION, if any."
  (let ((waiter (gptel-scope-pty--session-waiter session)))
    (when waiter
      (setf (gptel-scope-pty--session-waiter session) nil)
      (cancel-timer (car waiter))
      (funcall (cdr waiter)))))

(defun gptel-scope-pty--wait (session yield-ms answer)
  "Call ANSWER after YIELD-MS milliseconds, or when SESSION ends if sooner.
A call already waiting on SESSION is answered first."
  (gptel-scope-pty--answer-now session)
  (if (or (gptel-scope-pty--session-exited session)
          (gptel-scope-pty--session-closed session)
          (<= yield-ms 0))
      (funcall answer)
    (setf (gptel-scope-pty--session-waiter session)
          (cons (run-at-time (/ yield-ms 1000.0) nil #'gptel-scope-pty--answer-now session)
                answer))))

(defun gptel-scope-pty--message (session notes)
  "Return the message of an answer about SESSION, after NOTES (strings)."
  (let ((id (gptel-scope-pty--session-id session))
        (code (gptel-scope-pty--session-exit-code session))
        (sig (gptel-scope-pty--session-signal session)))
    (string-join
     (append notes
             (list
              (cond
               ((gptel-scope-pty--session-closed session)
                (format "Session %d was closed: its process and everything it started were killed. The id is no longer valid." id))
               ((and (gptel-scope-pty--session-exited session) sig)
                (format "The process of session %d was killed by signal %d. The id is no longer valid." id sig))
               ((gptel-scope-pty--session-exited session)
                (format "The process of session %d exited with code %d. The id is no longer valid." id code))
               (t (format "Session %d is running. Send input with write_stdin (\"\\n\" ends a line, \"\\u0004\" at the start of a line is end of file, \"\\u0003\" interrupts), poll with empty chars, or end it with close: true." id)))))
     " ")))

(defun gptel-scope-pty--respond (session tool args id start tokens callback &optional notes extra)
  "Answer the call ID of TOOL with ARGS on SESSION through CALLBACK.
The output since the last answer is capped for TOKENS; START is the
call's start time; NOTES are sentences put first in the message;
EXTRA is a plist added to the JSON.  The session is forgotten when
it has ended.  Emits the call's `truncated' and `end' events."
  (condition-case err
      (let* ((took (gptel-scope-pty--take session tokens))
             (ended (or (gptel-scope-pty--session-exited session)
                        (gptel-scope-pty--session-closed session)))
             (code (gptel-scope-pty--session-exit-code session))
             (sig (gptel-scope-pty--session-signal session))
             (sid (gptel-scope-pty--session-id session))
             (ms (round (* 1000 (- (float-time) start))))
             (common (list :id id :session-id sid :bytes (plist-get took :bytes)
                           :lines (plist-get took :lines) :duration-ms ms)))
        (when ended (gptel-scope-pty--forget session))
        (when (plist-get took :truncated)
          (apply #'gptel-scope--emit 'truncated tool args
                 :message "The output of the answer was cut" common))
        (apply #'gptel-scope--emit 'end tool args
               :exit-code code
               :reason (cond ((gptel-scope-pty--session-closed session) "closed")
                             (sig "signal")
                             (ended "exited"))
               common)
        (funcall callback
                 (apply #'gptel-scope--json
                        :success (not (or sig (and code (/= code 0))))
                        :session_id (if ended :null sid)
                        :output (plist-get took :output)
                        :exited (and ended t)
                        :exit_code (or code :null)
                        :truncated (plist-get took :truncated)
                        :bytes (plist-get took :bytes)
                        :total_bytes (gptel-scope-pty--session-total session)
                        :duration_ms ms
                        (append (and sig (list :signal sig))
                                (and (gptel-scope-pty--session-closed session) (list :closed t))
                                extra
                                (list :message (gptel-scope-pty--message session notes))))))
    (error
     (gptel-scope--emit 'error tool args :id id :reason "error" :message (error-message-string err))
     (funcall callback (gptel-scope--error-json err tool)))))

;;;; Arguments

(defun gptel-scope-pty--number-arg (name value default)
  "Return VALUE, the argument NAME, as a natural number; DEFAULT if absent.
See `gptel-scope--arg': 5.0 and \"5\" are 5; else signal."
  (or (gptel-scope--arg name value 'natnum) default))

(defun gptel-scope-pty--yield-arg (value)
  "Return the yield time VALUE in milliseconds, defaulted and capped."
  (min (gptel-scope-pty--number-arg "yield_time_ms" value gptel-scope-pty-default-yield-ms)
       gptel-scope-pty-max-yield-ms))

(defun gptel-scope-pty--tokens-arg (value)
  "Return the max_output_tokens VALUE, defaulted."
  (gptel-scope-pty--number-arg "max_output_tokens" value gptel-scope-pty-default-tokens))

(defun gptel-scope-pty--session-arg (value)
  "Return the open session whose id is VALUE; else signal."
  (let* ((id (gptel-scope--arg "session_id" value 'integer t))
         (session (and id (gethash id gptel-scope-pty--sessions))))
    ;; A session belongs to the chat buffer that started it, as grants do.
    (unless (and session (eq (gptel-scope-pty--session-buffer session) (current-buffer)))
      (setq session nil))
    (or session
        (signal 'gptel-scope-invalid-argument
                (list (format "Unknown session_id %d: no open session of this chat has it (a session that ended was reported once and then forgotten). Open sessions: %s. Start one with exec_command."
                              id
                              (let ((mine (seq-filter (lambda (id) (eq (gptel-scope-pty--session-buffer
                                                                         (gethash id gptel-scope-pty--sessions))
                                                                        (current-buffer)))
                                                      (gptel-scope-pty-session-ids))))
                                (if mine (mapconcat #'number-to-string mine ", ") "none"))))))))

;;;; The tools

(defun gptel-scope-pty--send (process bytes)
  "Send BYTES to PROCESS; return nil when it did not take them in time.
See `gptel-scope-pty-write-timeout'."
  (with-timeout (gptel-scope-pty-write-timeout nil)
    (process-send-string process bytes)
    t))

(defun gptel-scope-pty--input (chars)
  "Return CHARS encoded for the terminal; signal when a line is too long.
A terminal in line mode keeps `gptel-scope-pty-max-line-bytes' bytes
of a line and drops the rest, so such input is refused, not cut."
  (let ((bytes (encode-coding-string chars 'utf-8-unix)))
    (dolist (line (split-string bytes "[\n\r\x04]"))
      (when (> (length line) gptel-scope-pty-max-line-bytes)
        (signal 'gptel-scope-invalid-argument
                (list (format "chars holds a line of %d bytes; a terminal passes at most %d bytes of a line to a program reading lines, and would drop the rest. Split the line, or put the data in a file and have the program read it."
                              (length line) gptel-scope-pty-max-line-bytes)))))
    bytes))

(defun gptel-scope-pty--start (decision cmd id)
  "Start CMD, let through by DECISION, as the session ID; return the session."
  (let* ((default-directory (file-name-as-directory (plist-get decision :directory)))
         ;; The runner's environment, the scope's; an interactive shell keeps
         ;; no history file.
         (scoped (gptel-scope-exec--scoped))
         (process-environment (cons "HISTFILE=" (gptel-scope-exec-environment (car scoped))))
         (session (gptel-scope-pty--make-session
                   :id id :command cmd :directory (plist-get decision :directory)
                   :start (float-time) :buffer (current-buffer)
                   :redactor (cdr scoped)))
         (proc (make-process
                :name (format "gptel-scope-pty-%d" id)
                :command (car (gptel-scope-exec-wrap (gptel-scope-exec-shell-argv cmd) default-directory))
                :connection-type 'pty
                :coding 'binary
                :noquery t
                :filter (lambda (_p s) (gptel-scope-pty--filter session s))
                :sentinel (lambda (p _e) (gptel-scope-pty--sentinel session p)))))
    (ignore-errors (set-process-window-size proc 24 120))
    (setf (gptel-scope-pty--session-process session) proc)
    (puthash id session gptel-scope-pty--sessions)
    session))

(defconst gptel-scope-pty--rc-shells
  '(("bash" ("--norc" "--rcfile" "--init-file" "--posix") ("-o" "+o" "-O" "+O" "--rcfile" "--init-file"))
    ("zsh" ("-f" "--no-rcs" "--norcs") ("-o" "+o")))
  "Shells that run startup files when interactive.
Each entry: the name, the options that keep its startup files from
running, and the options that take an argument.")

(defun gptel-scope-pty--rc-shell (decision)
  "Return the argv of a shell of DECISION that would run startup files, or nil.
On a terminal a shell with no script and no -c is interactive and
runs ~/.bashrc or ~/.zshrc, which nobody judged (the judge refuses
`bash -i' for that reason); `bash --norc' and `zsh -f' do not."
  (seq-find
   (lambda (argv)
     (let ((entry (assoc (file-name-nondirectory (car argv)) gptel-scope-pty--rc-shells))
           (args (cdr argv)) (script nil) (safe nil))
       (when entry
         (while (and args (not script) (not safe))
           (let ((a (pop args)))
             (cond ((equal a "--") (setq script (car args)))
                   ((member a (nth 1 entry)) (setq safe t))
                   ((equal a "-c") (setq safe t))
                   ((member a (nth 2 entry)) (pop args))
                   ((string-match-p "\\`[-+][a-zA-Z]*c" a) (setq safe t))
                   ((not (string-match-p "\\`[-+]" a)) (setq script a)))))
         (not (or script safe)))))
   (mapcar (lambda (c) (plist-get c :argv)) (plist-get decision :commands))))

(defun gptel-scope-pty--too-many (tool args)
  "Return the JSON refusing TOOL with ARGS a new session, and emit it."
  (let ((msg (format "There are already %d open terminal sessions (ids %s), the most allowed. End one first: write_stdin with its session_id and close: true, or \"\\u0004\" for end of file."
                     (hash-table-count gptel-scope-pty--sessions)
                     (mapconcat #'number-to-string (gptel-scope-pty-session-ids) ", "))))
    (gptel-scope--emit 'error tool args :reason gptel-scope--reason-too-many-sessions :message msg)
    (gptel-scope--json :success nil :reason gptel-scope--reason-too-many-sessions :tool tool
                       :sessions (vconcat (gptel-scope-pty-session-ids))
                       :message msg)))

(defun gptel-scope-exec-command (callback &optional cmd workdir yield-time-ms max-output-tokens)
  "Judge the shell command CMD in WORKDIR and start it on a pty if allowed.
CALLBACK receives, exactly once, the JSON answer after up to
YIELD-TIME-MS milliseconds (250 by default; sooner when the command
ends): session_id, output, exited, exit_code, truncated, bytes,
total_bytes, warnings, message.  MAX-OUTPUT-TOKENS (8000) caps the
output of the answer at 4 bytes a token.  CMD is judged as
run_bash_command judges it.  This is exec_command."
  (let ((buffer (current-buffer))
        (once (gptel-scope--once callback))
        (args (list :cmd cmd :workdir workdir :yield_time_ms yield-time-ms
                    :max_output_tokens max-output-tokens)))
    (gptel-scope--guard once gptel-scope--tool-exec-command
      (gptel-scope--with-error-event gptel-scope--tool-exec-command args
        (gptel-scope--check-local)
        (let* ((cmd (gptel-scope--string-arg "cmd" cmd))
               (workdir (progn (gptel-scope--directory-arg workdir "workdir") workdir))
               (yield (gptel-scope-pty--yield-arg yield-time-ms))
               (tokens (gptel-scope-pty--tokens-arg max-output-tokens))
               (d (gptel-scope-check-bash-command cmd workdir buffer)))
          (cond
           ((not (plist-get d :allowed))
            (gptel-scope--emit 'denied gptel-scope--tool-exec-command args
                               :reason (or (plist-get d :reason) gptel-scope--reason-denied)
                               :message (plist-get d :message))
            (gptel-scope--refuse
             buffer once d
             (lambda ()
               (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
                 (let ((gptel-scope-prompt-on-denial nil))
                   (gptel-scope-exec-command once cmd workdir yield-time-ms max-output-tokens))))))
           ((gptel-scope-pty--rc-shell d)
            (let* ((argv (gptel-scope-pty--rc-shell d))
                   (name (file-name-nondirectory (car argv)))
                   (msg (format "On a terminal `%s` with no script is an interactive shell and would run your startup files (~/.%src), which were not judged. Start it as %s."
                                (string-join argv " ") name
                                (if (equal name "zsh") "`zsh -f`" "`bash --norc`"))))
              (gptel-scope--emit 'denied gptel-scope--tool-exec-command args
                                 :reason gptel-scope--reason-interactive-shell-startup-files :message msg)
              (funcall once (gptel-scope--json :success nil :allowed nil
                                               :reason gptel-scope--reason-interactive-shell-startup-files
                                               :tool gptel-scope--tool-exec-command :command cmd :message msg))))
           ((>= (hash-table-count gptel-scope-pty--sessions) gptel-scope-pty-max-sessions)
            (funcall once (gptel-scope-pty--too-many gptel-scope--tool-exec-command args)))
           (t
            (let* ((sid (cl-incf gptel-scope-pty--last-id))
                   (id (gptel-scope--event-id))
                   (start (float-time))
                   (_ (gptel-scope--emit 'start gptel-scope--tool-exec-command args :id id :session-id sid))
                   (session (gptel-scope-pty--start d cmd sid)))
              ;; The grant is used up by the call it let through (E18).
              (gptel-scope--use-grants buffer (plist-get d :grants-used))
              (gptel-scope-pty--wait
               session yield
               ;; Run by a timer or the sentinel: an error here must still answer.
               (lambda ()
                 (gptel-scope--guard once gptel-scope--tool-exec-command
                   (gptel-scope-pty--respond
                    session gptel-scope--tool-exec-command args id start tokens once nil
                    (list :warnings (vconcat (plist-get d :warnings)))))))))))))))

(defun gptel-scope-write-stdin (callback &optional session-id chars yield-time-ms max-output-tokens close)
  "Send CHARS to the terminal session SESSION-ID; answer with its new output.
CALLBACK receives, exactly once, the JSON answer after up to
YIELD-TIME-MS milliseconds (250; sooner when the process ends), as
for `gptel-scope-exec-command'.  CHARS may be empty, to poll;
\"\\u0004\" at the start of a line is end of file, \"\\u0003\"
interrupts.  With CLOSE non-nil the session is closed after the wait:
its process and everything it started are killed.  An unknown id is
an invalid_argument error.  This is write_stdin."
  (let ((once (gptel-scope--once callback))
        (args (list :session_id session-id :chars chars :yield_time_ms yield-time-ms
                    :max_output_tokens max-output-tokens :close close)))
    (gptel-scope--guard once gptel-scope--tool-write-stdin
      (gptel-scope--with-error-event gptel-scope--tool-write-stdin args
        ;; Sessions are local; a chat whose directory became remote is
        ;; refused as every tool refuses it.
        (gptel-scope--check-local)
        (let* ((session (gptel-scope-pty--session-arg session-id))
               (chars (or (gptel-scope--arg "chars" chars 'text) ""))
               (input (gptel-scope-pty--input chars))
               (yield (gptel-scope-pty--yield-arg yield-time-ms))
               (tokens (gptel-scope-pty--tokens-arg max-output-tokens))
               ;; Only JSON true closes: gptel reads false as :json-false.
               (close (gptel-scope--arg "close" close 'boolean))
               (proc (gptel-scope-pty--session-process session))
               (id (gptel-scope--event-id))
               (start (float-time))
               (notes nil))
          (gptel-scope--emit 'start gptel-scope--tool-write-stdin args :id id
                             :session-id (gptel-scope-pty--session-id session))
          (unless (string-empty-p chars)
            (cond ((not (process-live-p proc))
                   (push "The session had ended before the input came; it was not sent." notes))
                  ((not (gptel-scope-pty--send proc input))
                   (push (format "The program did not take all of the input within %s s (it is not reading it): the rest waits and goes before any later input, so \\u0003 will not reach it; close the session with close: true if it is stuck."
                                 gptel-scope-pty-write-timeout)
                         notes))))
          (gptel-scope-pty--wait
           session yield
           ;; Run by a timer or the sentinel: an error here must still answer.
           (lambda ()
             (gptel-scope--guard once gptel-scope--tool-write-stdin
               (when (and close (not (gptel-scope-pty--session-exited session)))
                 (setf (gptel-scope-pty--session-closed session) t)
                 (gptel-scope-pty--kill session))
               (gptel-scope-pty--respond session gptel-scope--tool-write-stdin args id start tokens once notes)))))))))

;;;; Approval

(defun gptel-scope-pty-confirm-p (&rest _)
  "Return non-nil when the scope's approval_policy wants write_stdin confirmed.
Input to a session is not judged, so both `always' and `mutating'
confirm it.  An error is signaled, for `gptel-scope--confirm-function'
to answer."
  (gptel-scope--check-local)
  (member (plist-get (gptel-scope--loaded-scope) :approval-policy)
          '("always" "mutating")))

;;;; Descriptions for the model

(defconst gptel-scope-exec-command-description
  "Start a command in a terminal (a pty) and keep talking to it with write_stdin: for interactive programs, REPLs and long-running commands. The command is judged exactly as run_bash_command judges it (a refusal names what to ask for with request_scope_expansion, tool_name \"run_bash_command\"); only the command is judged, not what you type into it later. The workdir is required: absolute, or relative to the project. The answer comes after yield_time_ms (sooner when the command ends) and is JSON: session_id (null once the process ended), output so far, exited, exit_code, truncated, warnings, message. Each answer shows at most max_output_tokens x 4 bytes, and a session shows a bounded amount in all; narrow chatty output. Prefer run_bash_command for commands that need no input."
  "What the model is told about exec_command.")

(defconst gptel-scope-write-stdin-description
  "Write characters to a terminal session started by exec_command and return the output that came since the last answer. Send \"\\n\" to end a line; \"\\u0004\" at the start of a line is end of file (most programs then exit), \"\\u0003\" interrupts the running program; empty chars just polls. close: true ends the session, killing its process and everything it started. The answer is JSON like exec_command's; once exited is true the session_id is no longer valid. Close sessions you no longer need: only a few may be open at a time."
  "What the model is told about write_stdin.")

;;;; Registration with gptel

(declare-function gptel-make-tool "ext:gptel-request")

(defun gptel-scope-pty-register-tools ()
  "Register exec_command and write_stdin with gptel, in the category \"scope\"."
  (apply
   #'gptel-make-tool
   :name gptel-scope--tool-exec-command :category "scope" :async t
   :function #'gptel-scope-exec-command
   :description gptel-scope-exec-command-description
   :args (gptel-scope--tool-args '(:name "cmd" :type string :description "The bash command to start in a terminal")
               '(:name "workdir" :type string
                       :description "The directory to run it in (required): absolute, or relative to the project")
               '(:name "yield_time_ms" :type integer :optional t
                       :description "Milliseconds to wait for output before answering (default 250, at most 30000)")
               '(:name "max_output_tokens" :type integer :optional t
                       :description "Most output to return, in tokens of about 4 bytes (default 8000)"))
   (gptel-scope--confirm-arg
    (lambda (&optional cmd workdir &rest _)
      (gptel-scope--confirm-p gptel-scope--tool-run-bash-command cmd workdir))))
  (apply
   #'gptel-make-tool
   :name gptel-scope--tool-write-stdin :category "scope" :async t
   :function #'gptel-scope-write-stdin
   :description gptel-scope-write-stdin-description
   :args (gptel-scope--tool-args '(:name "session_id" :type integer :description "The session_id exec_command returned")
               '(:name "chars" :type string :optional t
                       :description "Characters to send, e.g. \"ls\\n\"; \"\\u0004\" is end of file, \"\\u0003\" interrupts; empty to poll")
               '(:name "yield_time_ms" :type integer :optional t
                       :description "Milliseconds to wait for output before answering (default 250, at most 30000)")
               '(:name "max_output_tokens" :type integer :optional t
                       :description "Most output to return, in tokens of about 4 bytes (default 8000)")
               '(:name "close" :type boolean :optional t
                       :description "true to end the session after the wait, killing its process"))
   (gptel-scope--confirm-arg #'gptel-scope-pty-confirm-p)))

(provide 'gptel-scope-pty)
;;; gptel-scope-pty.el ends here
