;;; gptel-scope-capture-test.el --- Tests of output capture  -*- lexical-binding: t; -*-

;;; Commentary:

;; The module starts a command and drains its output from a pipe: a
;; flood comes back as its first and last part with exact counts,
;; binary and invalid UTF-8 decode, a timeout in the middle of a flood
;; keeps what was read, a child left writing in the background does not
;; hold the result, nothing is written to disk, nothing of the module is
;; left behind, the command meets what `make-process' would give it, and
;; without the module's start a process filter does the same.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-exec)

(defun gptel-scope-test--spawned-p (proc)
  "Return non-nil when the module started the command PROC stands for."
  (and (process-get proc 'gptel-scope-pid) (null (process-id proc))))

(defun gptel-scope-test--start (command &optional directory)
  "Start the shell COMMAND in DIRECTORY; return (PROC . RESULT-CELL).
It runs without the sandbox, as `gptel-scope-test--run' does."
  (let* ((gptel-scope-exec-argv-function nil)
         (cell (list nil))
         (proc (gptel-scope-exec-start (gptel-scope-exec-shell-argv command)
                                       (or directory temporary-file-directory)
                                       (lambda (r) (setcar cell r)))))
    (cons proc cell)))

(defun gptel-scope-test--await (cell)
  "Wait for the result in CELL and return it."
  (with-timeout (30 (error "No result"))
    (while (not (car cell)) (accept-process-output nil 0.02)))
  (car cell))

(ert-deftest gptel-scope-test-capture-flood-of-300-mb-head-tail-and-counts ()
  "300 MB of `yes': the first and last lines, and every byte and line counted."
  (let* ((r (gptel-scope-test--run "yes | head -c 300000000; echo the end" :max-chars 1000 :timeout 60))
         (output (plist-get r :output)))
    (should (eq (plist-get r :success) t))
    (should (eq (plist-get r :truncated) t))
    (should (= (plist-get r :total-bytes) 300000008))
    (should (= (plist-get r :lines) 150000001))
    (should (string-prefix-p "y\ny\ny\n" output))
    (should (string-suffix-p "y\ny\nthe end\n" output))
    (should (string-match-p "showing 999 characters of 300000008 bytes (497 of 150000001 lines), the first 499 above and the last 500 below\\." output))))

(ert-deftest gptel-scope-test-capture-binary-and-invalid-utf-8-at-both-ends ()
  "Invalid bytes and NUL decode, in the first part and in the last."
  (let* ((r (gptel-scope-test--run
             "printf 'ok \\377\\310 \\xe2\\x82\\xac \\x00\\n'; head -c 1000000 /dev/urandom; printf '\\n\\xe2\\x82 end \\x00\\n'"
             :max-chars 100))
         (output (plist-get r :output)))
    (should (eq (plist-get r :truncated) t))
    (should (= (plist-get r :total-bytes) (+ 12 1000000 10)))
    (should (string-prefix-p "ok \uFFFD\uFFFD \u20ac \u2400\n" output))
    (should (string-suffix-p "\n\uFFFD\uFFFD end \u2400\n" output))
    (should (equal (aref (json-parse-string (json-serialize (vector output))) 0) output))))

(ert-deftest gptel-scope-test-capture-timeout-in-a-flood-keeps-what-was-read ()
  "A flood killed at its timeout: timed out, killed, its output so far."
  (let* ((r (gptel-scope-test--run "echo first; yes" :timeout 1 :max-chars 100)))
    (should (eq (plist-get r :timed-out) t))
    (should-not (plist-get r :success))
    (should (string-prefix-p "first\ny\ny\n" (plist-get r :output)))
    (should (> (plist-get r :total-bytes) 1000000))
    (should (equal (gptel-scope-test--wait-dead (plist-get r :pids)) nil))))

(ert-deftest gptel-scope-test-capture-background-writer-does-not-hold-the-result ()
  "A child left writing in the background: the result comes at once, and
the child dies with the command."
  (let* ((pidfile (make-temp-file "gptel-scope-pid"))
         (r (gptel-scope-test--run
             (format "(while :; do echo x; sleep 0.01; done) & echo $! > %s; echo done" pidfile))))
    (unwind-protect
        (let ((pid (string-to-number (gptel-scope-test-file-string pidfile))))
          (should (eq (plist-get r :success) t))
          (should (string-match-p "^done$" (plist-get r :output)))
          (should (< (plist-get r :duration-ms) 3000))
          (should (> pid 0))
          (should (equal (gptel-scope-test--wait-dead (list pid)) nil)))
      (delete-file pidfile))))

(ert-deftest gptel-scope-test-capture-endless-writer-outside-the-group ()
  "A writer that left the command's process group and prints without end
does not hold the result: it comes with what was read, cut, and the
writer dies once nothing reads the pipe."
  (let* ((pidfile (make-temp-file "gptel-scope-pid"))
         ;; The pid is written once the writer has a session of its own.
         (r (gptel-scope-test--run
             (format "setsid sh -c 'echo $$ > %s; exec yes' & while [ ! -s %s ]; do sleep 0.01; done; echo done"
                     pidfile pidfile)
             :max-chars 100)))
    (unwind-protect
        (let ((pid (string-to-number (gptel-scope-test-file-string pidfile))))
          (should (eq (plist-get r :success) t))
          (should (eq (plist-get r :truncated) t))
          (should (> (plist-get r :total-bytes) 0))
          (should (< (plist-get r :duration-ms) 10000))
          (should (> pid 0))
          (should (equal (gptel-scope-test--wait-dead (list pid)) nil)))
      (delete-file pidfile))))

(defun gptel-scope-test--own (what)
  "Return the entries of WHAT, a directory of /proc/self, as a sorted list."
  (sort (directory-files (concat "/proc/self/" what) nil "\\`[0-9]") #'string<))

(ert-deftest gptel-scope-test-capture-short-commands-in-a-row-whole-with-status ()
  "Commands that print a little, one after another: each result is all its
output with its exit status, none is killed once it ended by itself (no
pid is signalled after it was reaped), and no descriptor, thread or
process of them is left behind."
  (skip-unless (file-directory-p "/proc/self/task"))
  (gptel-scope-test-settle)
  (let* ((fds (gptel-scope-test--own "fd"))
         (processes (process-list))
         (kills 0)
         (count (lambda (&rest _) (cl-incf kills))))
    (advice-add 'gptel-scope-exec-kill :before count)
    (unwind-protect
        (dotimes (i 30)
          (let ((r (gptel-scope-test--run (format "echo out %d; echo err %d >&2; exit %d" i i (% i 4)))))
            (should (equal (list (plist-get r :output) (plist-get r :exit-code) (plist-get r :success)
                                 (plist-get r :total-bytes))
                           (list (format "out %d\nerr %d\n" i i) (% i 4) (= 0 (% i 4))
                                 (+ 10 (* 2 (length (number-to-string i)))))))))
      (advice-remove 'gptel-scope-exec-kill count))
    (should (= kills 0))
    ;; The module's threads end within 50 ms of their command's result.
    (with-timeout (2 nil)
      (while (cdr (gptel-scope-test--own "task")) (accept-process-output nil 0.02)))
    (should (equal (gptel-scope-test--own "task") (list (number-to-string (emacs-pid)))))
    (should (equal (gptel-scope-test--own "fd") fds))
    (should (equal (process-list) processes))))

(ert-deftest gptel-scope-test-capture-argv-flood-through-the-module ()
  "An argv command printing 1.3 MB, started by the module: its first and
last lines around the notice, every byte and line counted, its status."
  (should (gptel-scope-test--spawned-p (car (gptel-scope-test--start "true"))))
  (let* ((bytes (cl-loop for n from 1 to 200000 sum (1+ (length (number-to-string n)))))
         (r (gptel-scope-test--run '("seq" "1" "200000") :max-chars 60))
         (output (plist-get r :output)))
    (should (equal (list (plist-get r :success) (plist-get r :exit-code) (plist-get r :truncated)
                         (plist-get r :total-bytes) (plist-get r :lines))
                   (list t 0 t bytes 200000)))
    (should (string-prefix-p "1\n2\n3\n" output))
    (should (string-suffix-p "\n199999\n200000\n" output))
    (should (string-match-p (format "characters of %d bytes ([0-9]+ of 200000 lines)" bytes) output))))

(ert-deftest gptel-scope-test-capture-argv-timeout-kills-and-keeps-the-output ()
  "An argv command past its timeout: timed out, killed by SIGTERM, its
output so far kept."
  (let ((r (gptel-scope-test--run '("sh" "-c" "echo started; exec sleep 300") :timeout 1)))
    (should (equal (list (plist-get r :timed-out) (plist-get r :success) (plist-get r :exit-code)
                         (plist-get r :signal) (plist-get r :output))
                   '(t nil nil 15 "started\n")))
    (should (equal (gptel-scope-test--wait-dead (plist-get r :pids)) nil))))

(ert-deftest gptel-scope-test-capture-small-output-without-waiting ()
  "The result of a command that printed a little does not wait for the
bound on the end of the output: it comes when the output ends."
  (let* ((gptel-scope-exec--drain-wait-ms 20000)
         (r (gptel-scope-test--run "echo a; echo b >&2; echo c")))
    (should (equal (plist-get r :output) "a\nb\nc\n"))
    (should-not (plist-get r :truncated))
    (should (equal (list (plist-get r :total-bytes) (plist-get r :kept-bytes) (plist-get r :lines))
                   '(6 6 3)))
    (should (< (plist-get r :duration-ms) 10000))))

(ert-deftest gptel-scope-test-capture-output-a-pipe-input-null-no-file ()
  "The command's output is a pipe and its input /dev/null; nothing is made
in the temporary directory while output flows."
  (let* ((temporary-file-directory (file-name-as-directory (make-temp-file "gptel-scope-tmp-" t)))
         (before (directory-files temporary-file-directory))
         (run (gptel-scope-test--start
               "readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 | sed 's/:.*//'; yes | head -c 20000000 | tail -c 2; sleep 0.3")))
    (should (gptel-scope-test--spawned-p (car run)))
    (accept-process-output nil 0.1)
    (should (equal (directory-files temporary-file-directory) before))
    (let ((r (gptel-scope-test--await (cdr run))))
      (should (equal (plist-get r :output) "/dev/null\npipe\npipe\ny\n")))
    (should (equal (directory-files temporary-file-directory) before))
    (delete-directory temporary-file-directory)))

(ert-deftest gptel-scope-test-capture-writes-no-file-under-a-file-size-limit ()
  "The output is no file: a command whose files may not grow past 512 bytes
\(`ulimit -f 1', what would stop a flood filling the disk) prints 3 MB in full."
  (let ((r (gptel-scope-test--run "ulimit -f 1; yes | head -c 3000000; echo end" :max-chars 100)))
    (should (eq (plist-get r :success) t))
    (should (= (plist-get r :total-bytes) 3000004))
    (should (string-suffix-p "y\ny\nend\n" (plist-get r :output)))))

(ert-deftest gptel-scope-test-capture-without-the-module-start-through-a-filter ()
  "Where the module cannot start commands `make-process' does, and the
process filter feeds the module: the same result."
  (let* ((gptel-scope-exec--spawn nil)
         (run (gptel-scope-test--start "echo a; echo b >&2; yes | head -c 3000000"))
         (_ (should-not (gptel-scope-test--spawned-p (car run))))
         (_ (should (process-id (car run))))
         (r (gptel-scope-test--await (cdr run))))
    (should (eq (plist-get r :success) t))
    (should (= (plist-get r :total-bytes) 3000004))
    (should (string-prefix-p "a\nb\ny\n" (plist-get r :output)))
    (should (string-suffix-p "y\ny\n" (plist-get r :output)))
    (should (eq (plist-get r :truncated) t))))

(defun gptel-scope-test--both-ways (argv)
  "Run ARGV started by the module and by `make-process'; return both outputs."
  (mapcar (lambda (spawn)
            (let* ((gptel-scope-exec--spawn spawn)
                   (gptel-scope-exec-argv-function nil)
                   (cell (list nil))
                   (proc (gptel-scope-exec-start argv temporary-file-directory
                                                 (lambda (r) (setcar cell r)))))
              (should (eq (and (gptel-scope-test--spawned-p proc) t) spawn))
              (plist-get (gptel-scope-test--await cell) :output)))
          '(t nil)))

(ert-deftest gptel-scope-test-capture-changes-nothing-else ()
  "A command started by the module meets what `make-process' gives it: the
same environment (names bash would not export included), argv, traps,
limits, mask and descriptors, a process group of its own (in the session
of its supervisor, `gptel-scope-run'); its
input is /dev/null rather than a pipe at its end.  The soft limit on
open files is Emacs's own, as Emacs 30's `make-process' gives it (Emacs
28's puts back the one Emacs started with), so it is left out."
  (let* ((env (append '("A.B=1" "C-D=2" "SHLVL=5" "OLDPWD=/x" "Z=last")
                      (seq-filter (lambda (e) (string-prefix-p "PATH=" e)) process-environment)))
         (gptel-scope-exec-environment-function (lambda () (cons env nil)))
         ;; The shell lists its own descriptors with builtins: a pipeline would
         ;; list them while the shell still holds the pipe it forked with.
         ;; A command running meanwhile: none of its descriptors (the pipe
         ;; through which the module says it ended) reaches the others.
         (running (gptel-scope-test--start "sleep 1")))
    (should (gptel-scope-test--spawned-p (car running)))
    (let ((both (gptel-scope-test--both-ways
                 (gptel-scope-exec-shell-argv
                  "printenv; echo \"[$0][$#]\"; trap -p; ulimit -a | grep -v '(-n)'; umask; for f in /proc/$$/fd/*; do printf '%s ' \"${f##*/}\"; done; echo; ps -o pgid=,sid=,tty= -p $$ | awk -v p=$$ '{print ($1 == p) ($2 == p) $3}'"))))
      (should (string-match-p "^A\\.B=1$" (car both)))
      (should (string-match-p "^\\[/.*/bash\\]\\[0\\]$" (car both)))
      ;; A process group of its own, in the session of its supervisor.
      (should (string-match-p "^10\\?$" (car both)))
      (should (equal (car both) (cadr both))))
    (let ((both (gptel-scope-test--both-ways '("printenv"))))
      (should (string-match-p "^A\\.B=1$" (car both)))
      (should (equal (car both) (cadr both))))
    (should (eq (plist-get (gptel-scope-test--await (cdr running)) :success) t))))

(ert-deftest gptel-scope-test-capture-bubblewrap-started-by-the-module ()
  "The command's wrapper (bubblewrap) is what the module starts: the flood
comes back as without it."
  (skip-unless (and (executable-find "bwrap")
                    (eql 0 (call-process "bwrap" nil nil nil "--ro-bind" "/" "/" "--dev" "/dev" "true"))))
  (let* ((gptel-scope-exec-argv-function
          (lambda (argv _directory)
            (append '("bwrap" "--ro-bind" "/" "/" "--dev" "/dev" "--proc" "/proc"
                      "--tmpfs" "/tmp" "--unshare-pid" "--die-with-parent" "--")
                    argv)))
         (r (gptel-scope-test--run-wrapped "yes | head -c 3000000; echo end; ls /tmp | wc -l")))
    (should (eq (plist-get r :success) t))
    (should (= (plist-get r :total-bytes) (+ 3000000 4 2)))
    (should (string-suffix-p "y\ny\nend\n0\n" (plist-get r :output)))))

(defun gptel-scope-test--run-wrapped (command)
  "Run the shell COMMAND through `gptel-scope-exec-argv-function'; return the result."
  (let* ((cell (list nil))
         (proc (gptel-scope-exec-start (gptel-scope-exec-shell-argv command) temporary-file-directory
                                       (lambda (r) (setcar cell r)))))
    (should (gptel-scope-test--spawned-p proc))
    (gptel-scope-test--await cell)))

(ert-deftest gptel-scope-test-capture-emacs-exiting-kills-the-command ()
  "When Emacs exits no sentinel runs: its hook kills the command and stops
reading its output."
  (let* ((run (gptel-scope-test--start "echo started; sleep 30"))
         (pid (gptel-scope-exec-pid (car run))))
    (should (gptel-scope-test--alive-p pid))
    (gptel-scope-exec--exiting)
    (should (equal (gptel-scope-test--wait-dead (list pid)) nil))
    (should-not (plist-get (gptel-scope-test--await (cdr run)) :success))))

(ert-deftest gptel-scope-test-capture-deleting-the-process-kills-the-command ()
  "The process standing for a command, deleted (as from `list-processes'):
the command and what it started die at once, and the result says so."
  (let* ((pidfile (make-temp-file "gptel-scope-pid"))
         (run (gptel-scope-test--start (format "echo started; sleep 300 & echo $! > %s; wait" pidfile)))
         (proc (car run))
         (pid (gptel-scope-exec-pid proc)))
    (unwind-protect
        (progn
          (with-timeout (10 (error "Not started"))
            (while (string-empty-p (gptel-scope-test-file-string pidfile)) (accept-process-output nil 0.02)))
          (should (gptel-scope-test--spawned-p proc))
          (delete-process proc)
          (let ((r (gptel-scope-test--await (cdr run)))
                (child (string-to-number (gptel-scope-test-file-string pidfile))))
            (should (equal (list (plist-get r :success) (plist-get r :exit-code) (plist-get r :signal)
                                 (plist-get r :output))
                           '(nil nil 9 "started\n")))
            (should (equal (gptel-scope-test--wait-dead (list pid child)) nil))
            (should-not (memq proc gptel-scope-exec--live))))
      (delete-file pidfile))))

(ert-deftest gptel-scope-test-capture-missing-program-starts-nothing ()
  "A program that is not there: `make-process' says so, and nothing is left."
  (let ((gptel-scope-exec-argv-function nil)
        (processes (process-list)))
    (should-error (gptel-scope-exec-start '("gptel-scope-no-such-program") temporary-file-directory #'ignore)
                  :type 'file-missing)
    (should (equal (process-list) processes))))

(provide 'gptel-scope-capture-test)
;;; gptel-scope-capture-test.el ends here
