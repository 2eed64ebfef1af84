;;; gptel-scope-capture-test.el --- Tests of output capture  -*- lexical-binding: t; -*-

;;; Commentary:

;; The output of a command goes to a FIFO that the module drains: a
;; flood comes back as its first and last part with exact counts,
;; binary and invalid UTF-8 decode, a timeout in the middle of a flood
;; keeps what was read, a child left writing in the background does not
;; hold the result, the FIFO is private and removed, nothing is written
;; to disk, and without a FIFO a process filter does the same.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-exec)

(defun gptel-scope-test--fifo-of (proc)
  "Return the FIFO the command of PROC writes to (nil when it has none)."
  (let ((command (process-command proc)))
    (and (equal (nth 4 command) gptel-scope-exec--redirect) (nth 5 command))))

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
writer dies once nothing reads the FIFO."
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

(ert-deftest gptel-scope-test-capture-short-commands-in-a-row-whole-with-status ()
  "Commands that print a little, one after another: each result is all its
output with its exit status, and no FIFO is left behind."
  (let ((before (directory-files temporary-file-directory nil "\\`gptel-scope-out-")))
    (dotimes (i 30)
      (let ((r (gptel-scope-test--run (format "echo out %d; echo err %d >&2; exit %d" i i (% i 4)))))
        (should (equal (list (plist-get r :output) (plist-get r :exit-code) (plist-get r :success)
                             (plist-get r :total-bytes))
                       (list (format "out %d\nerr %d\n" i i) (% i 4) (= 0 (% i 4))
                             (+ 10 (* 2 (length (number-to-string i)))))))))
    (should (equal (directory-files temporary-file-directory nil "\\`gptel-scope-out-") before))))

(ert-deftest gptel-scope-test-capture-argv-flood-through-the-filter ()
  "An argv command (no shell, so no FIFO) printing 1.3 MB: its first and
last lines around the notice, every byte and line counted, its status."
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

(ert-deftest gptel-scope-test-capture-fifo-private-removed-no-disk ()
  "The FIFO: mode 0600 in a directory of mode 0700 of its own, nothing
written to disk while output flows, both removed afterwards."
  (let* ((run (gptel-scope-test--start "yes | head -c 20000000; sleep 0.3"))
         (fifo (gptel-scope-test--fifo-of (car run)))
         (dir (and fifo (file-name-directory fifo))))
    (should fifo)
    (should (equal (file-attribute-modes (file-attributes fifo)) "prw-------"))
    (should (equal (file-attribute-modes (file-attributes dir)) "drwx------"))
    (should (equal (directory-files dir nil "\\`[^.]") '("output")))
    (should (= (file-attribute-size (file-attributes fifo)) 0))
    (let ((r (gptel-scope-test--await (cdr run))))
      (should (= (plist-get r :total-bytes) 20000000)))
    (should-not (file-exists-p fifo))
    (should-not (file-exists-p dir))))

(ert-deftest gptel-scope-test-capture-writes-no-file-under-a-file-size-limit ()
  "The output is no file: a command whose files may not grow past 512 bytes
\(`ulimit -f 1', what would stop a flood filling the disk) prints 3 MB in full."
  (let ((r (gptel-scope-test--run "ulimit -f 1; yes | head -c 3000000; echo end" :max-chars 100)))
    (should (eq (plist-get r :success) t))
    (should (= (plist-get r :total-bytes) 3000004))
    (should (string-suffix-p "y\ny\nend\n" (plist-get r :output)))))

(ert-deftest gptel-scope-test-capture-without-a-fifo-through-a-filter ()
  "When no FIFO can be made the process filter feeds the module: the same result."
  (let* ((dir temporary-file-directory)
         (temporary-file-directory "/nonexistent-gptel-scope-dir/")
         (run (gptel-scope-test--start "echo a; echo b >&2; yes | head -c 3000000" dir))
         (_ (should-not (gptel-scope-test--fifo-of (car run))))
         (r (gptel-scope-test--await (cdr run))))
    (should (eq (plist-get r :success) t))
    (should (= (plist-get r :total-bytes) 3000004))
    (should (string-prefix-p "a\nb\ny\n" (plist-get r :output)))
    (should (string-suffix-p "y\ny\n" (plist-get r :output)))
    (should (eq (plist-get r :truncated) t))))

(ert-deftest gptel-scope-test-capture-changes-nothing-else ()
  "A shell command gets the same environment through the FIFO as without
it; an argv command, which no shell touches, gives its output to the filter."
  (let* ((dir temporary-file-directory)
         (env (append '("A.B=1" "C-D=2" "SHLVL=5" "OLDPWD=/x" "Z=last")
                      (seq-filter (lambda (e) (string-prefix-p "PATH=" e)) process-environment)))
         (gptel-scope-exec-environment-function (lambda () (cons env nil)))
         (command "printenv; echo \"[$0][$#]\"; trap -p")
         (run (gptel-scope-test--start command dir))
         (through-fifo (progn (should (gptel-scope-test--fifo-of (car run)))
                              (plist-get (gptel-scope-test--await (cdr run)) :output)))
         (through-filter (let ((temporary-file-directory "/nonexistent-gptel-scope-dir/"))
                           (let ((run (gptel-scope-test--start command dir)))
                             (should-not (gptel-scope-test--fifo-of (car run)))
                             (plist-get (gptel-scope-test--await (cdr run)) :output)))))
    (should (string-match-p "^A\\.B=1$" through-fifo))
    (should (string-match-p "^\\[/.*/bash\\]\\[0\\]$" through-fifo))
    (should (equal through-fifo through-filter)))
  (let* ((gptel-scope-exec-argv-function nil)
         (proc (gptel-scope-exec-start '("printenv") temporary-file-directory #'ignore)))
    (should (equal (process-command proc) (list "printenv")))
    (while (process-live-p proc) (accept-process-output proc 0.05))))

(ert-deftest gptel-scope-test-capture-bubblewrap-inside-the-redirect ()
  "The command's wrapper (bubblewrap) runs inside the redirect: it needs no
bind for the FIFO, and the flood comes back as without it."
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
    (should (gptel-scope-test--fifo-of proc))
    (gptel-scope-test--await cell)))

(ert-deftest gptel-scope-test-capture-emacs-exiting-removes-the-fifo ()
  "When Emacs exits no sentinel runs: its hook kills the command and removes the FIFO."
  (let* ((run (gptel-scope-test--start "echo started; sleep 30"))
         (fifo (gptel-scope-test--fifo-of (car run))))
    (should (file-exists-p fifo))
    (gptel-scope-exec--exiting)
    (should-not (file-exists-p (file-name-directory fifo)))
    (should-not (plist-get (gptel-scope-test--await (cdr run)) :success))))

(ert-deftest gptel-scope-test-capture-missing-program-leaves-no-fifo ()
  "A program that is not there: `make-process' says so, and no FIFO is made."
  (let ((gptel-scope-exec-argv-function nil)
        (before (directory-files temporary-file-directory nil "\\`gptel-scope-out-")))
    (should-error (gptel-scope-exec-start '("gptel-scope-no-such-program") temporary-file-directory #'ignore)
                  :type 'file-missing)
    (should (equal (directory-files temporary-file-directory nil "\\`gptel-scope-out-") before))))

(provide 'gptel-scope-capture-test)
;;; gptel-scope-capture-test.el ends here
