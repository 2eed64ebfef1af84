;;; gptel-scope-exec-test.el --- Tests of command execution  -*- lexical-binding: t; -*-

;;; Commentary:

;; Real processes: output, exit codes, timeouts that kill the whole process
;; group, bounded capture of endless output, binary output that encodes.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-exec)

(defun gptel-scope-test--run (command &rest keys)
  "Run shell COMMAND in a temp directory with KEYS; wait and return the result."
  (let ((result nil) (calls 0)
        (dir (temporary-file-directory)))
    (apply #'gptel-scope-exec-start (gptel-scope-exec-shell-argv command) dir
           (lambda (r) (setq result r calls (1+ calls)))
           keys)
    (with-timeout (20 (error "No result for %s" command))
      (while (not result) (accept-process-output nil 0.05)))
    (accept-process-output nil 0.1)
    (should (= calls 1))
    result))

(defun gptel-scope-test--alive-p (pid)
  "Return non-nil when PID runs (zombies count as dead)."
  (let ((status (format "/proc/%d/status" pid)))
    (and (file-exists-p status)
         (with-temp-buffer
           (insert-file-contents status)
           (not (re-search-forward "^State:\\s-+Z" nil t))))))

(ert-deftest gptel-scope-test-b27-b29-command-completes-with-output ()
  (let ((r (gptel-scope-test--run "echo out; echo err >&2")))
    (should (eq (plist-get r :success) t))
    (should (equal (plist-get r :exit-code) 0))
    (should (equal (plist-get r :output) "out\nerr\n"))
    (should (null (plist-get r :timed-out)))
    (should (integerp (plist-get r :duration-ms)))))

(ert-deftest gptel-scope-test-b30-b31-non-zero-exit-keeps-output ()
  (let ((r (gptel-scope-test--run "echo partial; exit 3")))
    (should (null (plist-get r :success)))
    (should (equal (plist-get r :exit-code) 3))
    (should (equal (plist-get r :output) "partial\n"))))

(ert-deftest gptel-scope-test-b28-s03-timeout-kills-the-whole-group ()
  (let* ((pidfile (make-temp-file "gptel-scope-pids"))
         (r (gptel-scope-test--run
             (format "sleep 300 & echo $! > %s; sleep 300 & echo $! >> %s; echo started; wait" pidfile pidfile)
             :timeout 1)))
    (should (eq (plist-get r :timed-out) t))
    (should (null (plist-get r :success)))
    (should (equal (plist-get r :output) "started\n"))
    (sleep-for (+ gptel-scope-exec-kill-grace 0.5))
    (let ((pids (mapcar #'string-to-number
                        (split-string (with-temp-buffer (insert-file-contents pidfile) (buffer-string))))))
      (should (= (length pids) 2))
      (should (equal (seq-filter #'gptel-scope-test--alive-p pids) nil)))
    (delete-file pidfile)))

(ert-deftest gptel-scope-test-timeout-kills-a-process-ignoring-sigterm ()
  (let ((r (gptel-scope-test--run "trap '' TERM; echo stubborn; sleep 300" :timeout 1)))
    (should (eq (plist-get r :timed-out) t))
    (should (equal (plist-get r :output) "stubborn\n"))))

(ert-deftest gptel-scope-test-flood-capture-stays-bounded ()
  (let* ((gptel-scope-exec-capture-factor 10)
         (r (gptel-scope-test--run "yes | head -c 5000000" :max-chars 1000)))
    (should (eq (plist-get r :truncated) t))
    (should (equal (plist-get r :total-bytes) 5000000))
    (should (< (length (plist-get r :output)) 1300))
    (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output)))))

(ert-deftest gptel-scope-test-s09-binary-output-encodes-as-json ()
  (let ((r (gptel-scope-test--run "printf 'ok \\377\\310 \\xe2\\x82\\xac\\n'; head -c 2000 /dev/urandom")))
    (should (string-prefix-p "ok \uFFFD\uFFFD \u20ac\n" (plist-get r :output)))
    (should (stringp (json-serialize (list :output (plist-get r :output)))))))

(ert-deftest gptel-scope-test-s09-every-byte-sequence-decodes-to-json ()
  (dotimes (_ 50)
    (let ((bytes (apply #'unibyte-string (mapcar (lambda (_) (random 256)) (make-list 400 0)))))
      (should (stringp (json-serialize (vector (gptel-scope-exec-decode bytes)))))))
  (dolist (bytes (list (unibyte-string #xED #xA0 #x80) (unibyte-string #xF4 #x90 #x80 #x80)
                       (unibyte-string #xF8 #x88 #x80 #x80 #x80) (unibyte-string #xC0 #xAF)))
    (should (stringp (json-serialize (vector (gptel-scope-exec-decode bytes)))))))

(ert-deftest gptel-scope-test-b32-short-output-returned-fully ()
  (let ((r (gptel-scope-test--run "seq 1 5" :max-chars 100)))
    (should (equal (plist-get r :output) "1\n2\n3\n4\n5\n"))
    (should (null (plist-get r :truncated)))))

(ert-deftest gptel-scope-test-environment-is-sanitized ()
  (let* ((process-environment (append '("BASH_ENV=/tmp/evil" "PAGER=less") process-environment))
         (r (gptel-scope-test--run "echo \"[$BASH_ENV][$PAGER][$GIT_PAGER][$GIT_TERMINAL_PROMPT]\"")))
    (should (equal (plist-get r :output) "[][cat][cat][0]\n"))))

(provide 'gptel-scope-exec-test)
;;; gptel-scope-exec-test.el ends here
