;;; gptel-scope-pty-test.el --- Tests of terminal sessions and events  -*- lexical-binding: t; -*-

;;; Commentary:

;; exec_command and write_stdin with real processes on real ptys, under
;; real scope files; the events they and run_bash_command emit, the
;; audit file and the log buffer.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-pty)
(require 'gptel-scope-events)

(defconst gptel-scope-test--pty-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
bash_tools:
  categories:
    read_only: [cat, bash, zsh, env, printf, echo, sleep, grep]
    safe_write: [touch]
  max_output_chars: 100
  timeout: 5
"
  "The scope of the terminal session tests.")

(defun gptel-scope-test--pty-processes ()
  "Return the live processes of terminal sessions."
  (seq-filter (lambda (p) (string-prefix-p "gptel-scope-pty-" (process-name p))) (process-list)))

(defun gptel-scope-test--pid-gone-p (pid)
  "Return non-nil once PID has ended (gone, or a zombie waiting to be reaped)."
  (with-timeout (3 nil)
    (while (let ((a (process-attributes pid)))
             (and a (not (equal (alist-get 'state a) "Z"))))
      (accept-process-output nil 0.05))
    t))

(defmacro gptel-scope-test--with-sessions (&rest body)
  "Run BODY with no terminal session open before, and none left after."
  (declare (indent 0))
  `(let ((gptel-scope-pty--sessions (make-hash-table))
         (gptel-scope--event-ring nil))
     (unwind-protect (progn ,@body)
       (gptel-scope-pty-close-all))))

(defun gptel-scope-test--write (session chars &optional yield &rest more)
  "Call write_stdin on SESSION with CHARS, YIELD and MORE arguments; return the answer.
YIELD, in milliseconds, is 500 unless given.  The session's program is
waited for first: see `gptel-scope-test-await-session'."
  (when (integerp session) (gptel-scope-test-await-session session))
  (apply #'gptel-scope-test-call #'gptel-scope-write-stdin session chars (or yield 500) more))

(ert-deftest gptel-scope-test-f08-f09-cat-session-echoes-and-ends-on-eof ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        (let* ((r (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir))
               (id (plist-get r :session_id)))
          (should (integerp id))
          (should (eq (plist-get r :success) t))
          (should (equal (plist-get r :output) ""))
          (should (eq (plist-get r :exited) nil))
          (should (eq (plist-get r :exit_code) nil))
          (should (equal (plist-get r :warnings) []))
          (should (string-match-p "is running" (plist-get r :message)))
          (should (= (length (gptel-scope-test--pty-processes)) 1))
          (let ((r (gptel-scope-test--write id "hello\n")))
            (should (equal (plist-get r :output) "hello\n"))
            (should (equal (plist-get r :session_id) id))
            (should (equal (plist-get r :bytes) 6)))
          (let ((r (gptel-scope-test--write id "wörld 日本\n")))
            (should (equal (plist-get r :output) "wörld 日本\n")))
          ;; A line longer than a terminal passes is refused, not cut; nothing is sent.
          (let ((r (gptel-scope-test--write id (concat (make-string 5000 ?a) "\n"))))
            (should (equal (plist-get r :reason) "invalid_argument"))
            (should (string-match-p "a line of 5000 bytes; a terminal passes at most 4095" (plist-get r :message))))
          (should (equal (plist-get (gptel-scope-test--write id (concat (make-string 4095 ?b) "\n")) :output)
                         (concat (make-string 4095 ?b) "\n")))
          ;; JSON false and null, as gptel passes them, are no close and defaults.
          (let ((r (gptel-scope-test--write id :null :null :json-false :json-false)))
            (should (eq (plist-get r :exited) nil))
            (should (equal (plist-get r :session_id) id)))
          ;; Polling with no input: nothing new.
          (should (equal (plist-get (gptel-scope-test--write id "" 0) :output) ""))
          ;; End of file: cat exits 0, the answer says so once, the id is gone.
          (let ((r (gptel-scope-test--write id "\x04" 5000)))
            (should (eq (plist-get r :exited) t))
            (should (equal (plist-get r :exit_code) 0))
            (should (eq (plist-get r :session_id) nil))
            (should (eq (plist-get r :success) t))
            (should (< (plist-get r :duration_ms) 4000))
            (should (string-match-p "exited with code 0. The id is no longer valid" (plist-get r :message))))
          (let ((r (gptel-scope-test--write id "more\n")))
            (should (equal (plist-get r :reason) "invalid_argument"))
            (should (equal (plist-get r :tool) "write_stdin"))
            (should (string-match-p (format "Unknown session_id %d" id) (plist-get r :message)))
            (should (string-match-p "Open sessions: none" (plist-get r :message))))
          (should (null (gptel-scope-test--pty-processes))))))))

(ert-deftest gptel-scope-test-f08-interactive-shell-session ()
  ;; `bash -i' is refused by the judge (an interactive shell runs startup
  ;; files); `bash --norc' on a terminal is an interactive shell without them.
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        (let ((r (gptel-scope-test-call #'gptel-scope-exec-command "bash -i" dir)))
          (should (equal (plist-get r :reason) "flag_not_allowed"))
          (should (string-match-p "interactive shells run startup files" (plist-get r :message)))
          (should (null (gptel-scope-test--pty-processes))))
        ;; The judge lets plain `bash' through (its stdin is closed in run_bash_command);
        ;; on a terminal it would be interactive and run ~/.bashrc: refused here.
        ;; (`bash -O extglob' is refused before that: -O sets a shell option.)
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "bash -O extglob" dir) :reason)
                       "unsupported_construct"))
        (dolist (c '("bash" "env bash" "echo ls | bash" "zsh"))
          (let ((r (gptel-scope-test-call #'gptel-scope-exec-command c dir)))
            (should (equal (plist-get r :reason) "interactive_shell_startup_files"))
            (should (string-match-p "Start it as `\\(bash --norc\\|zsh -f\\)`" (plist-get r :message)))))
        (should (null (gptel-scope-test--pty-processes)))
        (should (equal (gptel-scope-pty--rc-shell '(:commands ((:argv ("bash" "script.sh")) (:argv ("bash" "-c" "ls"))
                                                               (:argv ("bash" "-ec" "ls")) (:argv ("zsh" "-f")))))
                       nil))
        (let* ((r (gptel-scope-test-call #'gptel-scope-exec-command "bash --norc" dir 500))
               (id (plist-get r :session_id)))
          (should (integerp id))
          ;; The prompt, in the first answer or, on a loaded machine, once
          ;; the shell waits for input.
          (let ((prompt (concat (plist-get r :output)
                                (progn (gptel-scope-test-await-session id)
                                       (plist-get (gptel-scope-test--write id "" 500) :output)))))
            (should (string-match-p "\\$ \\'\\|# \\'" prompt)))
          (should (string-match-p "not judged" (aref (plist-get r :warnings) 0)))
          (let ((r (gptel-scope-test--write id "echo $((6*7)) $- $PWD\n" 500)))
            ;; $- holds i: the shell is interactive; it runs in the judged directory.
            (should (string-match-p (format "^42 [a-zA-Z]*i[a-zA-Z]* %s$" (regexp-quote (directory-file-name dir)))
                                    (plist-get r :output))))
          (let ((r (gptel-scope-test--write id "exit 3\n" 5000)))
            (should (eq (plist-get r :exited) t))
            (should (equal (plist-get r :exit_code) 3))
            (should (eq (plist-get r :success) nil))))
        (should (null (gptel-scope-test--pty-processes)))))))

(ert-deftest gptel-scope-test-f08-s04-denied-command-never-starts ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        (let ((before (length (process-list))))
          (dolist (c '(("touch new.txt" "directory_not_in_scope")
                       ("sort" "command_not_allowed")
                       ("cat x; rm -rf out" "command_not_allowed")))
            (let ((r (gptel-scope-test-call #'gptel-scope-exec-command (car c) dir)))
              (should (eq (plist-get r :success) nil))
              (should (equal (plist-get r :reason) (cadr c)))
              ;; The same advice as run_bash_command's.
              (should (string-match-p "request_scope_expansion" (plist-get r :message)))))
          (should (= (length (process-list)) before))
          (should (null (gptel-scope-test--pty-processes)))
          (should (= (hash-table-count gptel-scope-pty--sessions) 0))
          (should-not (file-exists-p (expand-file-name "new.txt" dir)))
          (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :reason)))
                                 (gptel-scope-events))
                         '((denied "command_not_allowed") (denied "command_not_allowed")
                           (denied "directory_not_in_scope")))))
        ;; An allow-once grant of run_bash_command lets the command start once.
        (setq gptel-scope--allow-once (list (cons "run_bash_command" "sort")))
        (let* ((r (gptel-scope-test-call #'gptel-scope-exec-command "sort" dir))
               (id (plist-get r :session_id)))
          (should (integerp id))
          (should (null gptel-scope--allow-once))
          (gptel-scope-test--write id "b\na\n")
          (should (equal (plist-get (gptel-scope-test--write id "\x04" 5000) :output) "a\nb\n")))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "sort" dir) :reason)
                       "command_not_allowed"))))))

(ert-deftest gptel-scope-test-f10-cap-per-poll ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        ;; 10 tokens: 40 bytes of the 300 printed.
        (let ((r (gptel-scope-test-call #'gptel-scope-exec-command "printf '%0300d' 0" dir 5000 10)))
          (should (eq (plist-get r :exited) t))
          (should (eq (plist-get r :truncated) t))
          (should (equal (plist-get r :bytes) 300))
          (should (equal (plist-get r :output)
                         (concat (make-string 40 ?0) "\n[truncated] showing 40 of 300 bytes, 1 of 1 lines"))))
        ;; Each answer of a session is capped on its own.
        (let ((id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id)))
          (should (equal (plist-get (gptel-scope-test--write id "0123456789\nabc\n" 250 2) :output)
                         "01234567\n[truncated] showing 8 of 15 bytes, 1 of 2 lines"))
          ;; The next answer starts afresh: what was cut is not shown later.
          (let ((r (gptel-scope-test--write id "xyz\n" 250 2)))
            (should (eq (plist-get r :truncated) nil))
            (should (equal (plist-get r :output) "xyz\n")))
          ;; The line cap of an answer.
          (let ((gptel-scope-pty-poll-max-lines 2))
            (should (equal (plist-get (gptel-scope-test--write id "1\n2\n3\n4\n") :output)
                           "1\n2\n[truncated] showing 4 of 8 bytes, 2 of 4 lines"))))))))

(ert-deftest gptel-scope-test-f10-cap-per-session ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        ;; A command printing 500 bytes into a session that may keep 100.
        (let* ((gptel-scope-pty-session-max-bytes 100)
               (r (gptel-scope-test-call #'gptel-scope-exec-command "printf '%0500d' 0" dir 5000)))
          (should (eq (plist-get r :truncated) t))
          (should (equal (plist-get r :total_bytes) 500))
          (should (equal (plist-get r :output)
                         (concat (make-string 100 ?0)
                                 "\n[The session printed 500 bytes; past its cap of 100 bytes the other 400 were counted, not kept.]"))))
        ;; Across answers: 20 bytes in all.
        (let* ((gptel-scope-pty-session-max-bytes 20)
               (id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id)))
          (let ((r (gptel-scope-test--write id "0123456789\n")))
            (should (eq (plist-get r :truncated) nil))
            (should (equal (plist-get r :output) "0123456789\n")))
          (let ((r (gptel-scope-test--write id "abcdefghij\n")))
            (should (eq (plist-get r :truncated) t))
            (should (equal (plist-get r :output)
                           "abcdefghi\n[The session printed 22 bytes; past its cap of 20 bytes the other 2 were counted, not kept.]")))
          (let ((r (gptel-scope-test--write id "z\n")))
            (should (equal (plist-get r :bytes) 2))
            (should (equal (plist-get r :total_bytes) 24))
            (should (equal (plist-get r :output)
                           "[The session printed 24 bytes; past its cap of 20 bytes the other 4 were counted, not kept.]")))
          (should (= (gptel-scope-pty--session-kept (gethash id gptel-scope-pty--sessions)) 20)))
        ;; The lines a session shows in all.
        (let* ((gptel-scope-pty-session-max-lines 3)
               (id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id)))
          (should (equal (plist-get (gptel-scope-test--write id "a\nb\n") :output) "a\nb\n"))
          (should (equal (plist-get (gptel-scope-test--write id "c\nd\n") :output)
                         "c\n[truncated] showing 2 of 4 bytes, 1 of 2 lines"))
          (should (equal (plist-get (gptel-scope-test--write id "e\n") :output)
                         "[truncated] showing 0 of 2 bytes, 0 of 1 lines")))))))

(ert-deftest gptel-scope-test-f15-sessions-cleaned-up ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        (should (memq #'gptel-scope-pty-close-all kill-emacs-hook))
        ;; close: true kills the process and everything it started.
        (let* ((id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "sleep 60 & sleep 60" dir) :session_id))
               (proc (car (gptel-scope-test--pty-processes)))
               (pid (process-id proc))
               (child (car (gptel-scope-exec--descendants pid)))
               (r (gptel-scope-test--write id "" 0 nil t)))
          (should child)
          (should (eq (plist-get r :closed) t))
          (should (eq (plist-get r :exited) t))
          (should (eq (plist-get r :session_id) nil))
          (should (string-match-p "was closed" (plist-get r :message)))
          (should (null (gptel-scope-test--pty-processes)))
          (should (gptel-scope-test--pid-gone-p pid))
          (should (gptel-scope-test--pid-gone-p child))
          (should (equal (plist-get (gptel-scope-test--write id "") :reason) "invalid_argument")))
        ;; A program that does not read its input never blocks Emacs for long.
        (let* ((id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "sleep 60" dir) :session_id))
               (input (mapconcat #'identity (make-list 4000 "123456789") "\n"))
               (t0 (float-time))
               (r (gptel-scope-test--write id input 0)))
          (should (< (- (float-time) t0) (+ gptel-scope-pty-write-timeout 1.5)))
          (should (eq (plist-get r :exited) nil))
          (should (string-match-p "did not take all of the input within 1.0 s" (plist-get r :message)))
          (let ((r (gptel-scope-test--write id "" 0 nil t)))
            (should (eq (plist-get r :closed) t)))
          (should (null (gptel-scope-test--pty-processes))))
        ;; At most `gptel-scope-pty-max-sessions' at a time.
        (let* ((gptel-scope-pty-max-sessions 2)
               (a (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id))
               (b (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "sleep 60" dir) :session_id))
               (r (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir))
               (pids (mapcar #'process-id (gptel-scope-test--pty-processes)))
               (answers nil))
          (should (equal (plist-get r :reason) "too_many_sessions"))
          (should (equal (plist-get r :sessions) (vector a b)))
          (should (= (length pids) 2))
          ;; Emacs exits: every session is closed, a waiting call answered.
          (gptel-scope-write-stdin (lambda (x) (push x answers)) a "" 20000)
          (run-hooks 'kill-emacs-hook)
          (should (= (length answers) 1))
          (should (eq (plist-get (gptel-scope-test-parse (car answers)) :closed) t))
          (should (null (gptel-scope-test--pty-processes)))
          (should (= (hash-table-count gptel-scope-pty--sessions) 0))
          (dolist (pid pids) (should (gptel-scope-test--pid-gone-p pid))))))))

(ert-deftest gptel-scope-test-f12-s10-events-reach-the-hook ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (gptel-scope-test-in-chat dir
        (let* ((seen nil)
               (gptel-scope-event-functions
                (list (lambda (_) (error "A broken listener"))
                      (lambda (e) (push e seen)))))
          ;; A run: start and end of the same call.
          (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
            (should (equal (plist-get r :output) "hi\n")))
          (should (equal (mapcar (lambda (e) (plist-get e :type)) (reverse seen)) '(start end)))
          (let ((start (cadr seen)) (end (car seen)))
            (should (equal (plist-get start :tool) "run_bash_command"))
            (should (equal (plist-get start :args) (list :command "echo hi" :directory dir :timeout nil)))
            (should (stringp (plist-get start :id)))
            (should (equal (plist-get end :id) (plist-get start :id)))
            (should (equal (plist-get end :bytes) 3))
            (should (equal (plist-get end :lines) 1))
            (should (equal (plist-get end :exit-code) 0))
            (should (integerp (plist-get end :duration-ms)))
            (should (floatp (plist-get end :time))))
          ;; A refusal.
          (setq seen nil)
          (gptel-scope-test-call #'gptel-scope-run-bash-command "sort x" dir)
          (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :tool) (plist-get e :reason))) seen)
                         '((denied "run_bash_command" "command_not_allowed"))))
          ;; Truncated output (the scope keeps 100 characters), then the end.
          (setq seen nil)
          (gptel-scope-test-call #'gptel-scope-run-bash-command "printf '%0300d' 0" dir)
          (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :bytes))) (reverse seen))
                         '((start nil) (truncated 300) (end 300))))
          ;; An error, and run_command's events.
          (setq seen nil)
          (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" "")
          (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :reason))) seen)
                         '((error "invalid_argument"))))
          (setq seen nil)
          (gptel-scope-test-call #'gptel-scope-run-command "ls" [] dir)
          (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :tool) (plist-get e :exit-code))) (reverse seen))
                         '((start "run_command" nil) (end "run_command" 0))))
          ;; A terminal session: the session id on every event, the exit code on the last.
          (setq seen nil)
          (let ((id (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id)))
            (gptel-scope-test--write id "abc\n")
            (gptel-scope-test--write id "\x04" 5000)
            (gptel-scope-test--write id "")
            (gptel-scope-test-call #'gptel-scope-exec-command "sort" dir)
            (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :tool) (plist-get e :session-id)
                                                     (plist-get e :bytes) (plist-get e :exit-code) (plist-get e :reason)))
                                   (reverse seen))
                           `((start "exec_command" ,id nil nil nil) (end "exec_command" ,id 0 nil nil)
                             (start "write_stdin" ,id nil nil nil) (end "write_stdin" ,id 4 nil nil)
                             (start "write_stdin" ,id nil nil nil) (end "write_stdin" ,id 0 0 "exited")
                             (error "write_stdin" nil nil nil "invalid_argument")
                             (denied "exec_command" nil nil nil "command_not_allowed"))))
            (should (equal (plist-get (nth 1 seen) :args) (list :session_id id :chars "" :yield_time_ms 500
                                                                :max_output_tokens nil :close nil))))
          (should (eq (length (gptel-scope-events)) 17)))))))

(ert-deftest gptel-scope-test-s10-audit-file-has-json-lines ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (let* ((gptel-scope--event-ring nil)
           (gptel-scope-audit-file (expand-file-name "audit/log.jsonl" dir)))
      (gptel-scope-test-in-chat dir
        (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)
        (gptel-scope-test-call #'gptel-scope-run-bash-command "sort" dir))
      ;; Data JSON cannot hold as it is.
      (gptel-scope--emit 'error "odd" (list :bytes (unibyte-string 255 ?A)
                                            :raw (string-to-multibyte (unibyte-string 200))
                                            :symbol 'foo :nested '(:a (:b 1 :b 2)) :list '(1 "x" nil)
                                            :pair '(a . 2) :inf 1.0e+INF :big (expt 2 70)
                                            :buffer (get-buffer-create " *gptel-scope-odd*"))
                         :reason "odd")
      (let* ((lines (split-string (gptel-scope-test-file-string gptel-scope-audit-file) "\n" t))
             (events (mapcar (lambda (l) (json-parse-string (decode-coding-string l 'utf-8)
                                                            :object-type 'plist :null-object nil))
                             lines)))
        (should (= (file-modes gptel-scope-audit-file) #o600))
        (should (equal (mapcar (lambda (e) (plist-get e :type)) events) '("start" "end" "denied" "error")))
        (should (equal (plist-get (nth 0 events) :args) (list :command "echo hi" :directory dir :timeout nil)))
        (should (equal (plist-get (nth 0 events) :id) (plist-get (nth 1 events) :id)))
        (should (equal (plist-get (nth 1 events) :bytes) 3))
        (should (equal (plist-get (nth 2 events) :reason) "command_not_allowed"))
        (let ((args (plist-get (nth 3 events) :args)))
          (should (equal (plist-get args :bytes) "\uFFFDA"))
          (should (equal (plist-get args :raw) "\uFFFD"))
          (should (equal (plist-get args :symbol) "foo"))
          (should (equal (plist-get args :nested) '(:a (:b 1))))
          (should (equal (plist-get args :list) [1 "x" nil]))
          (should (equal (plist-get args :pair) ["a" 2]))
          (should (equal (plist-get args :inf) "1.0e+INF"))
          (should (equal (plist-get args :big) (number-to-string (expt 2 70))))
          (should (equal (plist-get args :buffer) "#<buffer  *gptel-scope-odd*>"))))
      (kill-buffer " *gptel-scope-odd*")
      ;; An audit file that cannot be written never breaks a tool.
      (let ((gptel-scope-audit-file "/proc/no-such-dir/audit.jsonl"))
        (gptel-scope-test-in-chat dir
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo ok" dir) :output)
                         "ok\n")))))))

(ert-deftest gptel-scope-test-f12-log-buffer-lists-events ()
  (let ((gptel-scope--event-ring nil)
        (gptel-scope-log-size 3))
    (gptel-scope--emit 'start "run_bash_command" '(:command "ls -la" :directory "/tmp") :id "1")
    (gptel-scope--emit 'end "run_bash_command" '(:command "ls -la" :directory "/tmp")
                       :id "1" :bytes 1234 :lines 7 :duration-ms 42 :exit-code 0)
    (gptel-scope--emit 'denied "exec_command" '(:cmd "sort\nx" :workdir "/tmp") :reason "command_not_allowed")
    (let ((buffer (gptel-scope-log)))
      (unwind-protect
          (with-current-buffer buffer
            (should (eq major-mode 'gptel-scope-log-mode))
            (let ((rows (split-string (buffer-string) "\n" t)))
              (should (= (length rows) 3))
              ;; Newest first.
              (should (string-match-p "denied +exec_command +command_not_allowed .*cmd=sort x workdir=/tmp" (nth 0 rows)))
              (should (string-match-p "end +run_bash_command +1234 +7 +42 +command=ls -la directory=/tmp" (nth 1 rows)))
              (should (string-match-p "start +run_bash_command" (nth 2 rows))))
            ;; g reads the events again; the ring keeps `gptel-scope-log-size'.
            (gptel-scope--emit 'error "write_stdin" '(:session_id 9) :reason "invalid_argument")
            (execute-kbd-macro (kbd "g"))
            (let ((rows (split-string (buffer-string) "\n" t)))
              (should (= (length rows) 3))
              (should (string-match-p "error +write_stdin +invalid_argument" (nth 0 rows))))
            ;; RET shows the whole event.
            (goto-char (point-min))
            (forward-line 1)
            (execute-kbd-macro (kbd "RET"))
            (with-current-buffer "*gptel-scope-event*"
              (should (string-match-p ":reason \"command_not_allowed\"" (buffer-string)))
              (should (string-match-p "\"cmd\":\"sort\\\\nx\"" (buffer-string)))))
        (kill-buffer buffer)
        (when (get-buffer "*gptel-scope-event*") (kill-buffer "*gptel-scope-event*"))))))

(ert-deftest gptel-scope-test-f16-pty-tools-registered ()
  (let ((specs nil))
    (cl-letf (((symbol-function 'gptel-make-tool) (lambda (&rest spec) (push spec specs))))
      (gptel-scope-register-tools))
    (let ((exec (seq-find (lambda (s) (equal (plist-get s :name) "exec_command")) specs))
          (write (seq-find (lambda (s) (equal (plist-get s :name) "write_stdin")) specs)))
      (should (eq (plist-get exec :function) #'gptel-scope-exec-command))
      (should (eq (plist-get write :function) #'gptel-scope-write-stdin))
      (dolist (s (list exec write))
        (should (plist-get s :async))
        (should (equal (plist-get s :category) "scope")))
      (should (equal (mapcar (lambda (a) (list (plist-get a :name) (plist-get a :type) (plist-get a :optional)))
                             (plist-get exec :args))
                     '(("cmd" string nil) ("workdir" string nil)
                       ("yield_time_ms" integer t) ("max_output_tokens" integer t))))
      (should (equal (mapcar (lambda (a) (list (plist-get a :name) (plist-get a :type) (plist-get a :optional)))
                             (plist-get write :args))
                     '(("session_id" integer nil) ("chars" string t) ("yield_time_ms" integer t)
                       ("max_output_tokens" integer t) ("close" boolean t)))))))

(ert-deftest gptel-scope-test-f15-sessions-belong-to-their-chat-buffer ()
  (gptel-scope-test-with-project dir gptel-scope-test--pty-scope
    (gptel-scope-test--with-sessions
      (let* ((chat (generate-new-buffer "chat-a"))
             (id (with-current-buffer chat
                   (setq default-directory (file-name-as-directory dir))
                   (plist-get (gptel-scope-test-call #'gptel-scope-exec-command "cat" dir) :session_id)))
             (pid (process-id (car (gptel-scope-test--pty-processes)))))
        ;; Another chat cannot drive it: the id is unknown there.
        (gptel-scope-test-in-chat dir
          (let ((r (gptel-scope-test--write id "hello\n")))
            (should (equal (plist-get r :reason) "invalid_argument"))
            (should (string-match-p "Open sessions: none" (plist-get r :message)))))
        (with-current-buffer chat
          (should (equal (plist-get (gptel-scope-test--write id "hi\n") :output) "hi\n")))
        ;; Killing the chat buffer closes its sessions.
        (kill-buffer chat)
        (should-not (gptel-scope-pty-session-ids))
        (should (gptel-scope-test--pid-gone-p pid))))))

(provide 'gptel-scope-pty-test)
;;; gptel-scope-pty-test.el ends here
