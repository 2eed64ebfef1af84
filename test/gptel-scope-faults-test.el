;;; gptel-scope-faults-test.el --- The tools under faults  -*- lexical-binding: t; -*-

;;; Commentary:

;; Each fault gives one clear answer and loses nothing: a scope file
;; deleted, truncated or made invalid between two calls; the module
;; missing or broken; a directory that vanishes between the decision and
;; the run; a command that ignores SIGTERM; output that never ends;
;; invalid UTF-8; two Emacs processes adding to one scope file at once.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-expand)

(defconst gptel-scope-test--faults-scope
  "# The scope of the fault tests.
paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
bash_tools:
  categories:
    read_only: [ls, cat, echo, printf, sleep, yes]   # viewing
    safe_write: [touch]
  allow_constructs: [trap]
  timeout: 5
"
  "A scope for the fault tests.")

(defun gptel-scope-test--faults-file (dir)
  "Return the scope.yml of DIR."
  (expand-file-name "scope.yml" dir))

(defun gptel-scope-test--write-scope (dir text &optional mtime)
  "Write TEXT as DIR's scope.yml, in place; with MTIME, give it that time."
  (let ((file (gptel-scope-test--faults-file dir)))
    (with-temp-file file
      (set-buffer-multibyte nil)
      (insert text))
    ;; Written by the user (a fault of the file, not an unapproved document).
    (gptel-scope-trust file)
    (when mtime (set-file-times file mtime))
    file))

(defun gptel-scope-test--mtime (file)
  "Return FILE's modification time."
  (file-attribute-modification-time (file-attributes file)))

;;;; The scope file changes between two calls

(ert-deftest gptel-scope-test-fault-scope-deleted-between-calls ()
  "A deleted scope answers no_scope_config, found by search or named."
  (dolist (named '(nil t))
    (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
      (gptel-scope-test-in-chat dir
        (when named (setq gptel-scope-file (gptel-scope-test--faults-file dir)))
        (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :success)))
        (delete-file (gptel-scope-test--faults-file dir))
        (dolist (r (list (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)
                         (gptel-scope-test-call #'gptel-scope-run-command "ls" [] dir)))
          (should (equal (plist-get r :reason) "no_scope_config"))
          (should-not (plist-get r :success))
          (should-not (plist-get r :output))
          (when named
            ;; The file named by the buffer is the one reported missing.
            (should (string-match-p (regexp-quote (concat (gptel-scope-test--faults-file dir) " does not exist"))
                                    (plist-get r :message)))))
        (should (string-match-p "no_scope_config" (gptel-scope-list-allowed-commands)))))))

(defconst gptel-scope-test--faults-cuts
  ;; (NAME TEXT REASON LINE KEY)
  `(("cut inside a flow list"
     ,(substring gptel-scope-test--faults-scope 0 (string-match "echo" gptel-scope-test--faults-scope))
     "invalid_config" 8 nil)
    ("cut inside a quoted pattern"
     ,(substring gptel-scope-test--faults-scope 0 (string-match "out/\\*\\*" gptel-scope-test--faults-scope))
     "invalid_config" 4 nil)
    ("cut inside a key"
     ,(substring gptel-scope-test--faults-scope 0 (+ 5 (string-match "allow_constructs" gptel-scope-test--faults-scope)))
     "invalid_config" 10 nil)
    ("a typo in a key"
     ,(replace-regexp-in-string "read_only" "read_onyl" gptel-scope-test--faults-scope)
     "invalid_config" 7 "bash_tools.categories.read_onyl")
    ("a tab where YAML wants spaces"
     ,(replace-regexp-in-string "^    read_only" "\tread_only" gptel-scope-test--faults-scope)
     "invalid_config" 7 nil)
    ("binary garbage" ,(unibyte-string #xff #xfe 0 1 2 #x80) "io_error" nil nil)
    ;; Cut after whole lines: a valid document that allows no command.
    ("cut after the paths"
     ,(substring gptel-scope-test--faults-scope 0 (string-match "bash_tools" gptel-scope-test--faults-scope))
     "command_not_allowed" nil nil)
    ("truncated to nothing" "" "command_not_allowed" nil nil))
  "Scope files truncated or made invalid, and the answer each gets.")

(ert-deftest gptel-scope-test-fault-scope-truncated-or-invalid-between-calls ()
  "Each broken scope gets its specific answer, never the scope of the first call.
The broken file is written with the first file's modification time,
as `cp -p' or `touch -r' leave it, so only its content tells."
  (pcase-dolist (`(,name ,text ,reason ,line ,key) gptel-scope-test--faults-cuts)
    (ert-info (name)
      (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
        (let* ((file (gptel-scope-test--faults-file dir))
               (old (time-subtract nil 60)))
          (set-file-times file old)
          (gptel-scope-test-in-chat dir
            (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir) :success)))
            (gptel-scope-test--write-scope dir text old)
            (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
              (should-not (plist-get r :success))
              (should-not (plist-get r :output))
              (should (equal (plist-get r :reason) reason))
              (when (equal reason "invalid_config")
                (should (string-match-p (format "\\`invalid_config: %s:%d: " (regexp-quote file) line)
                                        (plist-get r :message)))
                (should (string-match-p "Nothing runs until the scope file is fixed" (plist-get r :message))))
              (when key
                (should (string-match-p (regexp-quote (car (last (split-string key "\\."))))
                                        (plist-get r :message))))
              (when (equal reason "io_error")
                (should (string-match-p (regexp-quote file) (plist-get r :message)))))
            ;; Fixed again: allowed again, at once.
            (gptel-scope-test--write-scope dir gptel-scope-test--faults-scope)
            (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)
                                     :success)))))))))

;;;; A scope.yml that is not a regular file

(ert-deftest gptel-scope-test-fault-scope-file-is-a-fifo ()
  "A scope.yml that is a FIFO is answered at once, never waited on.
A writer holds the FIFO open for 10 s without writing, so a read that
waits on it fails this test after 10 s instead of blocking it."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let ((file (gptel-scope-test--faults-file dir))
          (writer nil))
      (delete-file file)
      (should (zerop (call-process "mkfifo" nil nil nil file)))
      (setq writer (start-process "fifo-writer" nil "sh" "-c"
                                  (format "exec sleep 10 > %s" (shell-quote-argument file))))
      (unwind-protect
          (gptel-scope-test-in-chat dir
            (let* ((start (float-time))
                   (r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
              (should (< (- (float-time) start) 5))
              (should-not (plist-get r :success))
              (should (equal (plist-get r :reason) "invalid_config"))
              (should (string-match-p (format "\\`invalid_config: %s: is a FIFO, not a regular file"
                                              (regexp-quote file))
                                      (plist-get r :message)))))
        (delete-process writer)))))

(ert-deftest gptel-scope-test-fault-scope-file-links-to-a-device ()
  "A scope.yml that is a symlink to /dev/zero is refused at once, unread."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let ((file (gptel-scope-test--faults-file dir)))
      (delete-file file)
      (make-symbolic-link "/dev/zero" file)
      (gptel-scope-test-in-chat dir
        (let* ((start (float-time))
               (r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
          (should (< (- (float-time) start) 5))
          (should-not (plist-get r :success))
          (should (equal (plist-get r :reason) "invalid_config"))
          (should (string-match-p "is a character device, not a regular file" (plist-get r :message))))))))

(ert-deftest gptel-scope-test-fault-scope-narrowed-with-the-same-length-and-time ()
  "A rewrite that keeps length and modification time is still seen."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let* ((file (gptel-scope-test--faults-file dir))
           (old (time-subtract nil 60)))
      (set-file-times file old)
      (gptel-scope-test-in-chat dir
        (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir) :success)))
        (gptel-scope-test--write-scope
         dir (replace-regexp-in-string "echo," "ech0," gptel-scope-test--faults-scope) old)
        (should (equal (file-attribute-size (file-attributes file)) (length gptel-scope-test--faults-scope)))
        (should (time-equal-p (gptel-scope-test--mtime file) old))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
          (should (equal (plist-get r :reason) "command_not_allowed"))
          (should (equal (plist-get r :resource) "echo")))))))

;;;; The module

(ert-deftest gptel-scope-test-fault-module-missing ()
  "No module and no way to build one: every tool answers module_unavailable, once."
  (gptel-scope-test-with-package-copy dir nil
    (pcase-let ((`(,code ,out ,_)
                 (gptel-scope-test--emacs
                  dir
                  '((setq gptel-scope-build-module nil)
                    (require 'gptel-scope)
                    (condition-case err (gptel-scope-load-module)
                      (error (princ (format "LOAD %S %s\n" (car err) (cadr err)))))
                    (with-temp-buffer
                      (setq default-directory temporary-file-directory)
                      (let ((n 0))
                        (gptel-scope-run-bash-command (lambda (r) (setq n (1+ n)) (princ (format "BASH %s\n" r))) "ls" ".")
                        (gptel-scope-run-command (lambda (r) (setq n (1+ n)) (princ (format "ARGV %s\n" r))) "ls" [] ".")
                        (princ (format "LIST %s\n" (gptel-scope-list-allowed-commands)))
                        (accept-process-output nil 0.2)
                        (princ (format "CALLBACKS %d\n" n))))))))
      (should (eq code 0))
      (should (string-match-p "^LOAD gptel-scope-module-error The gptel-scope module .*/gptel-scope-module.so is missing or outdated: run M-x gptel-scope-build-module$" out))
      (should (string-match-p "^BASH {\"success\":false,\"reason\":\"module_unavailable\",\"tool\":\"run_bash_command\"" out))
      (should (string-match-p "^ARGV {\"success\":false,\"reason\":\"module_unavailable\",\"tool\":\"run_command\"" out))
      (should (string-match-p "^LIST No commands are available: .* is missing or outdated.* (module_unavailable)$" out))
      (should (string-match-p "^CALLBACKS 2$" out)))))

(ert-deftest gptel-scope-test-fault-module-file-broken ()
  "A module file that is not a library (a copy cut short) is a module error."
  (gptel-scope-test-with-package-copy dir nil
    (with-temp-file (expand-file-name (concat "gptel-scope-module" module-file-suffix) dir)
      (insert "\177ELF cut short"))
    (pcase-let ((`(,code ,out ,err)
                 (gptel-scope-test--emacs
                  dir
                  '((setq gptel-scope-build-module nil)
                    (require 'gptel-scope)
                    (condition-case err (gptel-scope-load-module)
                      (error (princ (format "LOAD %S %s\n" (car err) (cadr err)))))
                    (with-temp-buffer
                      (setq default-directory temporary-file-directory)
                      (gptel-scope-run-bash-command (lambda (r) (princ (format "BASH %s\n" r))) "ls" "."))))))
      (should (eq code 0))
      (should (string-match-p "^LOAD gptel-scope-module-error The gptel-scope module .* cannot be loaded" out))
      (should (string-match-p "^BASH {\"success\":false,\"reason\":\"module_unavailable\"" out))
      ;; Loading the package only warned.
      (should (string-match-p "Warning (gptel-scope)" err)))))

(ert-deftest gptel-scope-test-fault-module-file-removed-after-loading ()
  "The loaded module keeps working when its file goes away."
  (gptel-scope-test-with-package-copy dir nil
    (copy-file (gptel-scope--module-file) dir)
    (copy-file (gptel-scope-run-program) dir)
    (gptel-scope-test-with-project project gptel-scope-test--faults-scope
      (pcase-let ((`(,code ,out ,_)
                   (gptel-scope-test--emacs
                    dir
                    `((setq gptel-scope-build-module nil)
                      (require 'gptel-scope)
                      (setq gptel-scope-trust-file ,gptel-scope-trust-file)
                      (delete-file (gptel-scope--module-file))
                      (with-temp-buffer
                        (setq default-directory ,project)
                        (gptel-scope-run-bash-command (lambda (r) (princ (format "BASH %s\n" r))) "echo hi" ".")
                        (with-timeout (10) (while t (accept-process-output nil 0.05))))))))
        (should (eq code 0))
        (should (string-match-p "^BASH {\"success\":true,\"exit_code\":0,\"output\":\"hi\\\\n\"" out))))))

;;;; Running

(ert-deftest gptel-scope-test-fault-directory-vanishes-before-the-run ()
  "Judged, then the directory is gone: one clear refusal, and the grant kept.
The directory goes after the decision, before the runner looks, and
again in the instant between the runner's look and the process start."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let ((sub (expand-file-name "gone" dir))
          (check (symbol-function 'gptel-scope-module-judge))
          (accessible (symbol-function 'file-accessible-directory-p)))
      (gptel-scope-test-in-chat dir
        (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm x")))
        (pcase-dolist (`(,when ,message)
                       `((after-decision ,(concat "The directory " (regexp-quote sub)
                                                  " no longer exists or cannot be entered .*; nothing ran"))
                         (before-start ,(concat "The directory " (regexp-quote sub)
                                                " no longer exists or cannot be entered .*; nothing ran"))))
          (dolist (command '("ls" "rm x"))
            (ert-info ((format "%s %s" when command))
              (make-directory sub)
              (cl-letf (((symbol-function 'gptel-scope-module-judge)
                         (lambda (&rest args)
                           (prog1 (apply check args) (delete-directory sub t))))
                        ;; Before the start: the runner's look sees it, later looks do not.
                        ((symbol-function 'file-accessible-directory-p)
                         (let ((looks 0))
                           (lambda (d) (or (and (eq when 'before-start) (= 1 (cl-incf looks)))
                                           (funcall accessible d))))))
                (let ((calls 0) (result nil))
                  (gptel-scope-run-bash-command (lambda (r) (cl-incf calls) (setq result r)) command sub)
                  (gptel-scope-test-settle)
                  (should (= calls 1))
                  (let ((r (gptel-scope-test-parse result)))
                    (should-not (plist-get r :success))
                    (should (equal (plist-get r :reason) "invalid_argument"))
                    (should (equal (plist-get r :tool) "run_bash_command"))
                    (should (string-match-p message (plist-get r :message)))))))))
        ;; Nothing ran, so the grant is not used up.
        (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm x"))))
        (should-not (seq-some (lambda (p) (string-prefix-p "gptel-scope" (process-name p))) (process-list)))))))

(ert-deftest gptel-scope-test-fault-directory-swapped-for-a-link-before-the-run ()
  "Judged, then the directory is replaced by a link out of the scope: nothing runs there."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let ((sub (expand-file-name "out/sub" dir))
          (outside (file-name-as-directory (file-truename (make-temp-file "gptel-scope-outside-" t))))
          (check (symbol-function 'gptel-scope-module-judge)))
      (unwind-protect
          (gptel-scope-test-in-chat dir
            (make-directory sub t)
            (cl-letf (((symbol-function 'gptel-scope-module-judge)
                       (lambda (&rest args)
                         (prog1 (apply check args)
                           (delete-directory sub)
                           (make-symbolic-link (directory-file-name outside) sub)))))
              (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch out-of-scope" sub)))
                (should (equal (plist-get r :reason) "invalid_argument"))
                (should (string-match-p (format "The directory %s now leads to %s (it changed after the command was judged); nothing ran"
                                                (regexp-quote sub) (regexp-quote (directory-file-name outside)))
                                        (plist-get r :message)))))
            (should-not (file-exists-p (expand-file-name "out-of-scope" outside))))
        (delete-directory outside t)))))

(defun gptel-scope-test--pids-of (pattern)
  "Return the pids whose command line matches PATTERN."
  (seq-filter (lambda (pid)
                (let ((args (alist-get 'args (process-attributes pid))))
                  (and args (string-match-p pattern args))))
              (list-system-processes)))

(ert-deftest gptel-scope-test-fault-command-ignoring-sigterm ()
  "SIGTERM ignored: SIGKILL after the grace period, timeout with the output.
Without the sandbox: in it, SIGTERM ends bubblewrap and with it every
process of the sandbox at once."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (gptel-scope-test-in-chat dir
      (let* ((gptel-scope-sandbox nil)
             (gptel-scope-kill-grace 0.5)
             (seconds (+ 100 (random 900)))
             (start (float-time))
             (r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                       (format "trap '' TERM; echo stubborn; sleep %d" seconds)
                                       dir 1))
             (elapsed (- (float-time) start)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (eq (plist-get r :timed_out) t))
        (should (equal (plist-get r :output) "stubborn\n"))
        (should (eq (plist-get r :exit_code) nil))
        (should (string-match-p "timed out after 1 seconds" (plist-get r :message)))
        ;; SIGTERM at 1 s did nothing; SIGKILL came 0.5 s later.
        (should (>= elapsed 1.5))
        (should (< elapsed 4))
        (should (>= (plist-get r :duration_ms) 1500))
        ;; Killed: gone moments after the answer (SIGKILL's delivery is not synchronous).
        (should-not (gptel-scope-test--wait-dead (gptel-scope-test--pids-of (format "\\`sleep %d\\'" seconds))))))))

(ert-deftest gptel-scope-test-fault-output-that-never-ends ()
  "`yes': its first and last lines kept, all counted, killed at the timeout."
  (gptel-scope-test-with-project dir (replace-regexp-in-string "timeout: 5" "timeout: 1\n  max_output_chars: 1000"
                                                               gptel-scope-test--faults-scope)
    (gptel-scope-test-in-chat dir
      (let* ((gptel-scope-capture-factor 10)
             (start (float-time))
             (r (gptel-scope-test-call #'gptel-scope-run-bash-command "yes" dir))
             (output (plist-get r :output)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (eq (plist-get r :truncated) t))
        (should (< (- (float-time) start) 4))
        (should (string-prefix-p "y\ny\ny\n" output))
        (should (< (length output) 1500))
        (should (string-suffix-p "y\ny\ny\n" output))
        (should (string-match "showing [0-9]+ characters of \\([0-9]+\\) bytes" output))
        (should (> (string-to-number (match-string 1 output)) 1000000))
        (should-not (gptel-scope-test--pids-of "\\`yes\\'"))))))

(ert-deftest gptel-scope-test-fault-invalid-utf-8-output ()
  "Bytes that are not UTF-8 come back as U+FFFD in valid JSON."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (gptel-scope-test-in-chat dir
      (let* ((json (gptel-scope-test-call-raw #'gptel-scope-run-bash-command
                                              "printf 'a\\xff\\xfeb\\xc3\\n'" dir))
             (r (gptel-scope-test-parse json)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :output) "a\uFFFD\uFFFDb\uFFFD\n"))
        ;; The JSON text itself is valid UTF-8 that any parser takes.
        (should (equal (decode-coding-string (encode-coding-string json 'utf-8) 'utf-8) json))
        (should (string-match-p "\"output\":\"a\uFFFD\uFFFDb\uFFFD\\\\n\"" json))))))

;;;; Two Emacs processes editing one scope file

(defconst gptel-scope-test--concurrent-adds 40
  "Additions each Emacs makes.")

(defun gptel-scope-test--adder (lisp file tag start)
  "Start a batch Emacs adding to FILE, from LISP, tagged TAG, at time START.
It alternates commands and paths, through `gptel-scope-add-to-scope',
and prints one line per addition: OK or ERR."
  (let ((forms
         `(progn
            (setq gptel-scope-build-module nil)
            (require 'gptel-scope)
            (while (< (float-time) ,start) (sleep-for 0.01))
            (dotimes (i ,gptel-scope-test--concurrent-adds)
              (let ((request
                     (if (cl-evenp i)
                         (list :document ,file :validation-type "command" :tool "run_bash_command"
                               :resource (format "cmd_%s_%d --flag" ,tag i) :directory ,(file-name-directory file))
                       (list :document ,file :validation-type "path" :tool "run_bash_command" :access "read"
                             :resource (format "/data/%s/%d/**" ,tag i) :directory ,(file-name-directory file)))))
                (condition-case err
                    (let ((r (gptel-scope-add-to-scope request)))
                      (princ (format "OK %s %S\n" ,tag (plist-get r :patterns-added))))
                  (error (princ (format "ERR %s %S\n" ,tag err)))))))))
    (make-process :name (format "adder-%s" tag)
                  :buffer (generate-new-buffer (format " *adder-%s*" tag))
                  :command (list (expand-file-name invocation-name invocation-directory)
                                 "-Q" "--batch" "-L" lisp "--eval" (prin1-to-string forms))
                  :connection-type 'pipe
                  :noquery t)))

(ert-deftest gptel-scope-test-fault-two-emacs-add-to-one-scope ()
  "Three Emacs processes add to one scope.yml at once: nothing is lost."
  (gptel-scope-test-with-project dir gptel-scope-test--faults-scope
    (let* ((file (gptel-scope-test--faults-file dir))
           (lisp (expand-file-name "lisp" gptel-scope-test-root))
           (start (+ (float-time) 1.5))
           (tags '("a" "b" "c"))
           (procs (mapcar (lambda (tag) (gptel-scope-test--adder lisp file tag start)) tags))
           (snapshots 0))
      (unwind-protect
          (progn
            ;; Meanwhile this Emacs reads the file as often as it can: always whole.
            (with-timeout (60 (error "The adders did not finish"))
              (while (seq-some #'process-live-p procs)
                (let ((text (gptel-scope-test-file-string file)))
                  (should (string-prefix-p "# The scope of the fault tests.\n" text))
                  (should (string-suffix-p "  timeout: 5\n" text))
                  (cl-incf snapshots))
                (accept-process-output nil 0.005)))
            ;; A process that exited may still have output in its pipe: wait for its
            ;; sentinel (the default one notes the end in the buffer), which runs only
            ;; once the output is all read.
            (dolist (p procs)
              (with-timeout (10 (error "No end noted for %s" p))
                (while (not (with-current-buffer (process-buffer p)
                              (save-excursion (goto-char (point-min))
                                              (re-search-forward "^Process adder-[a-z]+ finished" nil t))))
                  (accept-process-output p 0.05))))
            (dolist (p procs)
              (should (eq (process-exit-status p) 0))
              (let ((out (with-current-buffer (process-buffer p) (buffer-string))))
                (should-not (string-match-p "^ERR" out))
                (should (= (cl-count-if (lambda (l) (string-prefix-p "OK " l)) (split-string out "\n"))
                           gptel-scope-test--concurrent-adds))))
            (let* ((text (gptel-scope-test-file-string file))
                   (scope (gptel-scope-test-judge "get_system_info"
                           (json-serialize (list :sources (vector (list :file file)))))))
              (message "two-emacs: %d additions, %d whole snapshots read meanwhile"
                       (* (length tags) gptel-scope-test--concurrent-adds) snapshots)
              ;; Comments kept.
              (should (string-prefix-p "# The scope of the fault tests.\n" text))
              (should (string-match-p "\\]   # viewing\n" text))
              ;; Every addition is there.
              (dolist (tag tags)
                (dotimes (i gptel-scope-test--concurrent-adds)
                  (if (cl-evenp i)
                      (should (string-match-p (format "[ ,]cmd_%s_%d[],]" tag i) text))
                    (should (member (format "/data/%s/%d/**" tag i) (plist-get scope :read))))))
              (should (= (length (plist-get scope :read))
                         (1+ (* (length tags) (/ gptel-scope-test--concurrent-adds 2)))))
              ;; No temporary file left behind.
              (should (equal (directory-files dir nil "\\`[^.]\\|\\`\\.[^.]") '("scope.yml")))))
        (dolist (p procs)
          (when (process-live-p p) (delete-process p))
          (kill-buffer (process-buffer p)))))))

;;;; The audit log on a full disk

(defun gptel-scope-test--mount-tmpfs (dir size)
  "Mount a tmpfs of SIZE (\"64k\") on DIR; return nil when that is not possible here."
  (and (eql 0 (user-uid))
       (executable-find "mount")
       (eql 0 (call-process "mount" nil nil nil "-t" "tmpfs" "-o" (concat "size=" size) "tmpfs" dir))))

(defun gptel-scope-test--audit-lines (file)
  "Return the lines of FILE, each parsed as JSON (a line that is not signals)."
  (mapcar (lambda (l) (json-parse-string l :object-type 'plist))
          (split-string (gptel-scope-test-file-string file) "\n" t)))

(ert-deftest gptel-scope-test-fault-audit-log-on-a-full-disk ()
  "A full disk keeps every line of the audit file whole, and warns once.
A 20 KB event that does not fit leaves nothing; the small end event
after it is a line of its own; the tool call still answers."
  (let* ((dir (make-temp-file "gptel-scope-full-" t))
         (mounted (gptel-scope-test--mount-tmpfs dir "64k"))
         (warnings 0))
    (unwind-protect
        (progn
          (unless mounted
            (ert-skip "Cannot mount a 64 KB tmpfs here (needs root and mount(8))"))
          (gptel-scope-test-with-project proj gptel-scope-test--faults-scope
            (let ((gptel-scope-audit-file (expand-file-name "audit.jsonl" dir))
                  (gptel-scope--audit-failure nil)
                  (big (make-string 20000 ?x)))
              (cl-letf (((symbol-function 'display-warning)
                         (lambda (&rest _) (setq warnings (1+ warnings)))))
                (gptel-scope--emit 'start "read_file" (list :path "first"))
                ;; Leave about 10 KB free: the big event cannot fit, a small one can.
                (with-temp-file (expand-file-name "fill" dir)
                  (set-buffer-multibyte nil)
                  (insert (make-string (* 50 1024) ?f)))
                (gptel-scope--emit 'start "read_file" (list :path big) :id "big")
                (gptel-scope--emit 'end "read_file" (list :path "x") :id "big")
                (gptel-scope--emit 'start "read_file" (list :path big) :id "big2")
                (gptel-scope-test-in-chat proj
                  (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" proj)
                                           :success))))
                (let ((lines (gptel-scope-test--audit-lines gptel-scope-audit-file)))
                  (should (equal (plist-get (car lines) :type) "start"))
                  (should (seq-find (lambda (e) (and (equal (plist-get e :type) "end")
                                                     (equal (plist-get e :id) "big")))
                                    lines))
                  (should-not (seq-find (lambda (e) (member (plist-get e :id) '("big" "big2")))
                                        (seq-filter (lambda (e) (equal (plist-get e :type) "start")) lines)))
                  (should (seq-find (lambda (e) (equal (plist-get e :tool) "run_bash_command")) lines)))
                (should (= warnings 1))
                ;; Room again: the big event is written whole.
                (delete-file (expand-file-name "fill" dir))
                (gptel-scope--emit 'start "read_file" (list :path big) :id "big3")
                (should (seq-find (lambda (e) (equal (plist-get e :id) "big3"))
                                  (gptel-scope-test--audit-lines gptel-scope-audit-file)))
                (should (= warnings 1))))))
      (when mounted (call-process "umount" nil nil nil dir))
      (delete-directory dir t))))

;;;; The empty file of the sandbox

(ert-deftest gptel-scope-test-fault-sandbox-empty-file-is-removed ()
  "The sandbox's empty file goes when Emacs exits; a killed Emacs's goes with the next."
  (let* ((lisp (file-name-directory (locate-library "gptel-scope-sandbox")))
         (forms (lambda (wait)
                  `((require 'gptel-scope-sandbox)
                    (message "FILE %s" (gptel-scope-sandbox--empty-file))
                    ,@(and wait '((while t (sleep-for 1)))))))
         (child-file (lambda (out) (and (string-match "^FILE \\(.*\\)$" out) (match-string 1 out)))))
    ;; An Emacs that exits removes its file.
    (pcase-let ((`(,code ,out ,err) (gptel-scope-test--emacs lisp (funcall forms nil))))
      (should (eql code 0))
      (let ((f (funcall child-file (concat out err))))
        (should f)
        (should (string-match-p (format "gptel-scope-empty-[0-9]+-" ) f))
        (should-not (file-exists-p f))))
    ;; A killed Emacs leaves its file; the next Emacs that makes one removes it.
    (let* ((p (make-process :name "empty-file-killed" :buffer (generate-new-buffer " *empty-file*")
                            :command (list (expand-file-name invocation-name invocation-directory)
                                           "-Q" "--batch" "-L" lisp "--eval"
                                           (prin1-to-string (cons 'progn (funcall forms t))))
                            :connection-type 'pipe :noquery t))
           (f nil))
      (unwind-protect
          (progn
            (with-timeout (30 (error "The child Emacs printed no file"))
              (while (not (setq f (funcall child-file (with-current-buffer (process-buffer p) (buffer-string)))))
                (accept-process-output p 0.05)))
            (signal-process p 'SIGKILL)
            (with-timeout (10 (error "The child Emacs was not reaped"))
              (while (process-live-p p) (accept-process-output p 0.05)))
            (should (file-exists-p f))
            (let ((gptel-scope-sandbox--empty-file nil)
                  (mine nil))
              (unwind-protect
                  (progn
                    (setq mine (gptel-scope-sandbox--empty-file))
                    (should-not (file-exists-p f))
                    (should (file-exists-p mine))
                    (should (eql 0 (file-attribute-size (file-attributes mine))))
                    (should (equal (file-modes mine) #o444)))
                (when mine (gptel-scope-sandbox--empty-remove)))))
        (when (process-live-p p) (delete-process p))
        (kill-buffer (process-buffer p))
        (when (and f (file-exists-p f)) (delete-file f))))))

(provide 'gptel-scope-faults-test)
;;; gptel-scope-faults-test.el ends here
