;;; gptel-scope-exec-test.el --- Tests of command execution  -*- lexical-binding: t; -*-

;;; Commentary:

;; Real processes: output and exit codes, timeouts that kill the whole
;; process group and every descendant, bounded capture of endless output,
;; binary output that still encodes as JSON, a sanitized environment,
;; closed standard input.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-exec)

(ert-deftest gptel-scope-test-b27-b29-s01-command-completes-with-output ()
  (let ((r (gptel-scope-test--run "echo out; echo err >&2")))
    (should (eq (plist-get r :success) t))
    (should (equal (plist-get r :exit-code) 0))
    (should (equal (plist-get r :output) "out\nerr\n"))
    (should-not (plist-get r :timed-out))
    (should (integerp (plist-get r :duration-ms)))))

(ert-deftest gptel-scope-test-s03-command-leads-its-own-process-group ()
  "Emacs starts the command in a session of its own: its pid is its group."
  (let* ((done nil)
         (gptel-scope-exec-argv-function nil)
         (proc (gptel-scope-exec-start (gptel-scope-exec-shell-argv "sleep 5") temporary-file-directory
                                       (lambda (_) (setq done t)) :timeout 1))
         (attrs (process-attributes (gptel-scope-exec-pid proc))))
    (should (equal (alist-get 'pgrp attrs) (gptel-scope-exec-pid proc)))
    (should (equal (alist-get 'sess attrs) (gptel-scope-exec-pid proc)))
    (with-timeout (10 (error "No result")) (while (not done) (accept-process-output nil 0.05)))))

(ert-deftest gptel-scope-test-b30-b31-non-zero-exit-keeps-output ()
  (let ((r (gptel-scope-test--run "echo partial; exit 3")))
    (should-not (plist-get r :success))
    (should (equal (plist-get r :exit-code) 3))
    (should (equal (plist-get r :output) "partial\n"))))

(ert-deftest gptel-scope-test-b28-s03-timeout-kills-every-child ()
  "bash -c 'sleep 300 & sleep 300' with a 1 s timeout: no process survives."
  (let* ((start (float-time))
         (r (gptel-scope-test--run "sleep 300 & sleep 300" :timeout 1))
         (pids (plist-get r :pids)))
    (should (eq (plist-get r :timed-out) t))
    (should-not (plist-get r :success))
    (should (< (- (float-time) start) 5))
    ;; Both sleeps were seen running, and none survives.
    (should (>= (length pids) 2))
    (should (equal (gptel-scope-test--wait-dead pids) nil))))

(ert-deftest gptel-scope-test-b28-s03-timeout-keeps-what-was-printed ()
  (let* ((pidfile (make-temp-file "gptel-scope-pids"))
         (r (gptel-scope-test--run
             (format "sleep 300 & echo $! > %s; echo started; wait" pidfile)
             :timeout 1)))
    (unwind-protect
        (progn
          (should (eq (plist-get r :timed-out) t))
          (should (equal (plist-get r :output) "started\n"))
          (let ((pid (string-to-number (gptel-scope-test-file-string pidfile))))
            (should (> pid 0))
            (should (equal (gptel-scope-test--wait-dead (list pid)) nil))))
      (delete-file pidfile))))

(ert-deftest gptel-scope-test-s03-timeout-kills-a-process-ignoring-sigterm ()
  (let ((r (gptel-scope-test--run "trap '' TERM; echo stubborn; sleep 300" :timeout 1)))
    (should (eq (plist-get r :timed-out) t))
    (should (equal (plist-get r :output) "stubborn\n"))
    (should (equal (gptel-scope-test--wait-dead (plist-get r :pids)) nil))))

(ert-deftest gptel-scope-test-s03-timeout-kills-children-that-left-the-group ()
  (skip-unless (executable-find "setsid"))
  (let ((r (gptel-scope-test--run "setsid sleep 300 & sleep 300" :timeout 1)))
    (should (eq (plist-get r :timed-out) t))
    (should (>= (length (plist-get r :pids)) 2))
    (should (equal (gptel-scope-test--wait-dead (plist-get r :pids)) nil))))

(ert-deftest gptel-scope-test-background-jobs-die-with-the-command ()
  (let* ((r (gptel-scope-test--run "sleep 300 & echo $!"))
         (pid (string-to-number (plist-get r :output))))
    (should (eq (plist-get r :success) t))
    (should (< (plist-get r :duration-ms) 5000))
    (should (equal (gptel-scope-test--wait-dead (list pid)) nil))))

(ert-deftest gptel-scope-test-flood-capture-stays-bounded ()
  "`yes' never stops: killed at the timeout in the middle of the flood, the
capture keeps at most the cap (its first and last bytes) and counts the rest."
  (let* ((gptel-scope-capture-factor 10)
         (r (gptel-scope-test--run "yes" :timeout 1 :max-chars 1000))
         (cap (* 10 1024)))
    (should (eq (plist-get r :timed-out) t))
    (should-not (plist-get r :success))
    (should (eq (plist-get r :truncated) t))
    (should (= (plist-get r :kept-bytes) cap))
    (should (> (plist-get r :total-bytes) (* 10 cap)))
    (should (= (plist-get r :lines) (/ (plist-get r :total-bytes) 2)))
    (should (< (length (plist-get r :output)) 1500))
    (should (string-prefix-p "y\ny\n" (plist-get r :output)))
    (should (string-suffix-p "y\ny\n" (plist-get r :output)))
    (should (string-match-p (format "showing 999 characters of %d bytes (500 of %d lines), the first 499 above and the last 500 below\\. Narrow the output with filters such as 'head', 'grep' or 'tail'\\.]"
                                    (plist-get r :total-bytes) (plist-get r :lines))
                            (plist-get r :output)))
    (should (equal (gptel-scope-test--wait-dead (plist-get r :pids)) nil))))

(ert-deftest gptel-scope-test-b33-b34-long-output-truncated-with-notice ()
  (let ((r (gptel-scope-test--run "yes | head -c 5000000" :max-chars 1000)))
    (should (eq (plist-get r :success) t))
    (should (eq (plist-get r :truncated) t))
    (should (equal (plist-get r :total-bytes) 5000000))
    (should (string-match-p "showing [0-9]+ characters of 5000000 bytes" (plist-get r :output)))
    (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output)))))

(ert-deftest gptel-scope-test-b32-short-output-returned-fully ()
  (let ((r (gptel-scope-test--run "seq 1 5" :max-chars 100)))
    (should (equal (plist-get r :output) "1\n2\n3\n4\n5\n"))
    (should-not (plist-get r :truncated))))

(ert-deftest gptel-scope-test-s09-binary-output-encodes-as-json ()
  (let ((r (gptel-scope-test--run
            "printf 'ok \\377\\310 \\xe2\\x82\\xac \\x00\\n'; head -c 3000 /dev/urandom")))
    (should (string-prefix-p "ok \uFFFD\uFFFD \u20ac \u2400\n" (plist-get r :output)))
    (let ((json (json-serialize (list :output (plist-get r :output)))))
      (should (equal (plist-get (json-parse-string json :object-type 'plist) :output)
                     (plist-get r :output))))))

(ert-deftest gptel-scope-test-s09-every-byte-sequence-decodes-to-json ()
  (dotimes (_ 50)
    (let ((bytes (apply #'unibyte-string (mapcar (lambda (_) (random 256)) (make-list 400 0)))))
      (should (vectorp (json-parse-string (json-serialize (vector (gptel-scope-exec-decode bytes))))))))
  (dolist (bytes (list (unibyte-string #xED #xA0 #x80) (unibyte-string #xF4 #x90 #x80 #x80)
                       (unibyte-string #xF8 #x88 #x80 #x80 #x80) (unibyte-string #xC0 #xAF)
                       (unibyte-string #xE2 #x82)))
    (should (stringp (json-serialize (vector (gptel-scope-exec-decode bytes)))))))

(ert-deftest gptel-scope-test-environment-is-sanitized ()
  (let* ((evil (make-temp-file "gptel-scope-bashenv" nil ".sh" "echo SOURCED\n"))
         (process-environment (append (list (concat "BASH_ENV=" evil) (concat "ENV=" evil) "PAGER=less")
                                      process-environment))
         (r (gptel-scope-test--run "echo \"[$BASH_ENV][$ENV][$PAGER][$GIT_PAGER][$GIT_TERMINAL_PROMPT]\"")))
    (delete-file evil)
    (should (equal (plist-get r :output) "[][][cat][cat][0]\n"))))

(ert-deftest gptel-scope-test-environment-follows-setenv ()
  "The sanitized environment is made again when `process-environment' changes,
also in place (`setenv' of a variable already set).  Without a scope a
command gets the core variables only."
  (let ((process-environment (append '("LC_PAPER=a4" "GPTEL_SCOPE_T=1") (copy-sequence process-environment))))
    (should (member "LC_PAPER=a4" (gptel-scope-exec-environment)))
    (should-not (seq-find (lambda (e) (string-prefix-p "GPTEL_SCOPE_T" e)) (gptel-scope-exec-environment)))
    (should (eq (gptel-scope-exec-environment) (gptel-scope-exec-environment)))
    (setenv "LC_PAPER" "letter")
    (should (member "LC_PAPER=letter" (gptel-scope-exec-environment)))
    (should-not (member "LC_PAPER=a4" (gptel-scope-exec-environment)))
    (setenv "BASH_ENV" "/tmp/evil")
    (should-not (seq-find (lambda (e) (string-prefix-p "BASH_ENV" e)) (gptel-scope-exec-environment)))
    (setq process-environment (cons "ENV" process-environment))
    (should-not (member "ENV" (gptel-scope-exec-environment)))
    (should (member "PAGER=cat" (gptel-scope-exec-environment)))))

(ert-deftest gptel-scope-test-s09-decode-matches-emacs-on-valid-text ()
  "The module decodes process output as Emacs does valid UTF-8 (S09)."
  (dolist (text '("plain" "héllo wörld ✓ 日本語 🦀" "a\nb\r\n\t"))
    (should (equal (gptel-scope-exec-decode (encode-coding-string text 'utf-8)) text)))
  (should (equal (gptel-scope-exec-decode (unibyte-string ?a 0 ?b)) "a\u2400b"))
  (should (equal (gptel-scope-exec-decode (unibyte-string #xE2 #x82 ?a)) "\uFFFD\uFFFDa")))

(ert-deftest gptel-scope-test-standard-input-is-closed ()
  (let ((r (gptel-scope-test--run "cat; wc -c" :timeout 5)))
    (should (eq (plist-get r :success) t))
    (should-not (plist-get r :timed-out))
    (should (string-match-p "\\`0\n\\'" (plist-get r :output)))))

(ert-deftest gptel-scope-test-s06-a-failing-result-still-answers-once ()
  (cl-letf (((symbol-function 'gptel-scope-module-capture-finish) (lambda (&rest _) (error "Broken"))))
    (let ((r (gptel-scope-test--run "echo hi")))
      (should-not (plist-get r :success))
      (should (equal (plist-get r :error) "Broken"))
      (should (equal (plist-get r :exit-code) 0)))))

(ert-deftest gptel-scope-test-c12-argv-runs-without-a-shell ()
  (let ((r (gptel-scope-test--run (list "printf" "%s|" "$(id)" ";" "*" "a b"))))
    (should (equal (plist-get r :output) "$(id)|;|*|a b|"))))

(provide 'gptel-scope-exec-test)
;;; gptel-scope-exec-test.el ends here
