;;; gptel-scope-load-test.el --- The tools under load  -*- lexical-binding: t; -*-

;;; Commentary:

;; Fifty tool calls at once from five chat buffers, ten each: allowed,
;; slow, refused, let through by an allow-once grant of their own buffer,
;; refused although another buffer holds a grant for the same call, and
;; killed at their timeout.  Every callback is called exactly once, no
;; grant crosses buffers, and no process outlives its timeout.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)

(defconst gptel-scope-test--load-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
bash_tools:
  categories:
    read_only: [echo, sleep]
    dangerous: [rm]
  timeout: 5
"
  "The scope of the load test.")

(defconst gptel-scope-test--load-buffers 5 "Chat buffers of the load test.")

(defun gptel-scope-test--load-calls (i tag)
  "Return the ten calls of buffer I, as (TOOL COMMAND EXPECT).
COMMAND is a string for run_bash_command, a list for run_command.
TAG makes the sleeps of this run recognizable.  EXPECT is a plist:
:reason, :output, :success, and :timeout for the calls that time out."
  (let ((next (mod (1+ i) gptel-scope-test--load-buffers)))
    `((bash ,(format "echo fast-%d" i) (:success t :output ,(format "fast-%d\n" i)))
      (bash ,(format "sleep 0.%d; echo slow-%d" (1+ i) i) (:success t :output ,(format "slow-%d\n" i)))
      (bash "sort x" (:reason "command_not_allowed"))
      (bash ,(format "rm nogrant-%d" i) (:reason "dangerous_command"))
      ;; The grant of this buffer lets its call through, once.
      (bash ,(format "rm g-%d" i) (:success t :output ""))
      ;; The grant of the next buffer does not.
      (bash ,(format "rm g-%d" next) (:reason "dangerous_command"))
      (bash ,(format "echo begun-%d; sleep %s" i tag) (:reason "timeout" :output ,(format "begun-%d\n" i) :timeout 1))
      (bash ,(format "sleep %s & sleep %s" tag tag) (:reason "timeout" :output "" :timeout 1))
      (argv ("cat" ,(format "c-%d" i)) (:success t :output ,(format "argv %d\n" i)))
      ;; Used up by the call above.
      (bash ,(format "rm g-%d" i) (:reason "dangerous_command")))))

(defun gptel-scope-test--alive (pid)
  "Return non-nil when PID runs (a zombie counts as dead)."
  (let ((attrs (process-attributes pid)))
    (and attrs (not (equal (alist-get 'state attrs) "Z")))))

(ert-deftest gptel-scope-test-load-fifty-calls-from-five-buffers ()
  (gptel-scope-test-with-project dir gptel-scope-test--load-scope
    (let* ((out (expand-file-name "out" dir))
           (gptel-scope-kill-grace 0.5)
           (tag (format "%d.%03d" (+ 40 (random 50)) (random 1000)))
           (buffers nil) (calls nil) (pids nil) (started nil) (most-at-once 0) (answers (make-hash-table :test #'equal))
           (record (lambda (proc) (push proc started) (push (gptel-scope-exec-pid proc) pids) proc))
           (start (float-time)))
      (make-directory out)
      (dotimes (i gptel-scope-test--load-buffers)
        (with-temp-file (expand-file-name (format "g-%d" i) out) (insert "x"))
        (with-temp-file (expand-file-name (format "c-%d" i) out) (insert (format "argv %d\n" i))))
      (advice-add 'gptel-scope-exec-start :filter-return record)
      (unwind-protect
          (progn
            (dotimes (i gptel-scope-test--load-buffers)
              (let ((b (generate-new-buffer (format " *chat-%d*" i))))
                (push b buffers)
                (with-current-buffer b
                  (setq default-directory (file-name-as-directory out))
                  (setq gptel-scope--allow-once (list (cons "run_bash_command" (format "rm g-%d" i)))))))
            (setq buffers (nreverse buffers))
            ;; Call j of every buffer, then call j+1: every call is issued
            ;; before the first one can end.
            (dotimes (j 10)
              (dotimes (i gptel-scope-test--load-buffers)
                (pcase-let* ((`(,tool ,args ,expect) (nth j (gptel-scope-test--load-calls i tag)))
                             (key (list i j))
                             (callback (lambda (r) (push r (gethash key answers)))))
                  (push (list key expect) calls)
                  (with-current-buffer (nth i buffers)
                    (pcase tool
                      ('bash (gptel-scope-run-bash-command callback args out (plist-get expect :timeout)))
                      ('argv (gptel-scope-run-command callback (car args) (vconcat (cdr args)) out)))))))
            (should (= (length calls) 50))
            ;; Wait for every answer, noting every process and descendant seen.
            (with-timeout (30 (error "Answers: %d of 50" (hash-table-count answers)))
              (while (< (hash-table-count answers) 50)
                (setq most-at-once (max most-at-once (seq-count #'process-live-p gptel-scope-exec--live)))
                (dolist (p gptel-scope-exec--live)
                  (when (process-live-p p)
                    (cl-pushnew (gptel-scope-exec-pid p) pids)
                    (dolist (d (gptel-scope-exec--descendants (gptel-scope-exec-pid p))) (cl-pushnew d pids))))
                (accept-process-output nil 0.02)))
            (let ((elapsed (- (float-time) start)))
              ;; Late or second answers would come by now.
              (with-timeout ((+ gptel-scope-kill-grace 1.0)) (while t (accept-process-output nil 0.05)))
              ;; Every callback exactly once.
              (should (= (hash-table-count answers) 50))
              (let ((durations nil))
                (pcase-dolist (`(,key ,expect) calls)
                  (ert-info ((format "buffer %d call %d" (car key) (cadr key)))
                    (should (= (length (gethash key answers)) 1))
                    (let ((r (gptel-scope-test-parse (car (gethash key answers)))))
                      (when (plist-member expect :success)
                        (should (eq (plist-get r :success) (plist-get expect :success))))
                      (should (equal (plist-get r :reason) (plist-get expect :reason)))
                      (when (plist-member expect :output)
                        (should (equal (plist-get r :output) (plist-get expect :output))))
                      (when (plist-get r :duration_ms) (push (plist-get r :duration_ms) durations))
                      (when (plist-get expect :timeout)
                        ;; Killed at its timeout: it would sleep TAG seconds.
                        (should (< (plist-get r :duration_ms) (* 1000 (string-to-number tag))))))))
                (message "load: 50 calls from %d buffers answered in %.2f s, %d commands at once at most; %d started, %d processes seen; run durations %d-%d ms"
                         gptel-scope-test--load-buffers elapsed most-at-once (length started) (length pids)
                         (apply #'min durations) (apply #'max durations))
                ;; All at once, not one after the other: commands ran side by side.
                (should (>= most-at-once 2)))
              ;; Grants: each buffer used its own, none crossed.
              (dotimes (i gptel-scope-test--load-buffers)
                (should (null (buffer-local-value 'gptel-scope--allow-once (nth i buffers))))
                (should-not (file-exists-p (expand-file-name (format "g-%d" i) out))))
              (should (null (default-value 'gptel-scope--allow-once)))
              ;; No process outlives its call: 6 calls of each buffer ran, the
              ;; timing-out ones with children.
              (should (= (length started) 30))
              (should (> (length pids) 30))
              (should-not (seq-filter #'gptel-scope-test--alive pids))
              (should-not (seq-filter (lambda (pid) (file-exists-p (format "/proc/%d/cmdline" pid)))
                                      (seq-filter #'gptel-scope-test--alive pids)))
              (should (null gptel-scope-exec--live))
              (should-not (seq-filter (lambda (p) (and (string-prefix-p "gptel-scope" (process-name p))
                                                       (process-live-p p)))
                                      (process-list)))
              (should-not (seq-filter
                           (lambda (pid)
                             (string-match-p (regexp-quote (concat "sleep " tag))
                                             (or (alist-get 'args (process-attributes pid)) "")))
                           (list-system-processes)))))
        (advice-remove 'gptel-scope-exec-start record)
        (mapc #'kill-buffer buffers)))))

(ert-deftest gptel-scope-test-load-grant-stays-in-its-buffer ()
  "A grant in buffer A does not let the same call through in buffer B."
  (gptel-scope-test-with-project dir gptel-scope-test--load-scope
    (let ((out (expand-file-name "out" dir)))
      (make-directory out)
      (with-temp-file (expand-file-name "f" out) (insert "x"))
      (let ((a (generate-new-buffer " *chat-a*"))
            (b (generate-new-buffer " *chat-b*")))
        (unwind-protect
            (progn
              (dolist (buf (list a b))
                (with-current-buffer buf (setq default-directory (file-name-as-directory out))))
              (with-current-buffer a
                (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm f"))))
              (with-current-buffer b
                (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "rm f" out)))
                  (should (equal (plist-get r :reason) "dangerous_command"))
                  (should (file-exists-p (expand-file-name "f" out)))
                  (should (null gptel-scope--allow-once))))
              (with-current-buffer a
                (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm f"))))
                (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "rm f" out)))
                  (should (eq (plist-get r :success) t))
                  (should-not (file-exists-p (expand-file-name "f" out)))
                  (should (null gptel-scope--allow-once)))))
          (kill-buffer a)
          (kill-buffer b))))))

(provide 'gptel-scope-load-test)
;;; gptel-scope-load-test.el ends here
