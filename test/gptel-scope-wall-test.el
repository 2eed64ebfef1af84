;;; gptel-scope-wall-test.el --- Tests of the wall and the supervisor  -*- lexical-binding: t; -*-

;;; Commentary:

;; Through run_bash_command, as the model calls it, under each wall
;; this machine has (none, bubblewrap, Landlock with bubblewrap failing
;; as AppArmor makes it fail): nothing a command starts outlives the
;; call; a memory bomb is stopped by its limit, the result names it,
;; and Emacs's timers keep running meanwhile; the wall in use and why
;; bubblewrap cannot run are said.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-sandbox)

(defconst gptel-scope-test--wall-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [echo, sleep, setsid, nohup, \"true\", cat, sed]
    safe_write: [bash]
  allow_constructs: [function]
  timeout: 60
sandbox:
  limits: {memory: 256M}
"
  "A scope whose commands may start others and fill memory.")

(defun gptel-scope-test--walls ()
  "Return the walls to test here: (NAME SANDBOX PROGRAM) each."
  (append (list (list "none" nil "bwrap"))
          (and (gptel-scope-test-bwrap-works-p) (list (list "bwrap" 'bwrap "bwrap")))
          (and (gptel-scope-test-landlock-works-p)
               (list (list "landlock" 'auto (gptel-scope-test-apparmor-bwrap))))))

(defmacro gptel-scope-test--under-each-wall (dir &rest body)
  "Run BODY in a chat in a project DIR of the wall scope, under each wall."
  (declare (indent 1))
  `(gptel-scope-test-with-project ,dir gptel-scope-test--wall-scope
     (dolist (wall (gptel-scope-test--walls))
       (let ((gptel-scope-sandbox (nth 1 wall))
             (gptel-scope-sandbox-program (nth 2 wall))
             (gptel-scope-sandbox--warned t))
         (gptel-scope-test-in-chat ,dir
           (ert-info ((format "wall %s" (car wall)))
             (should (equal (symbol-name (or (gptel-scope-sandbox-wall) 'none)) (car wall)))
             ,@body))))))

(defun gptel-scope-test--tagged (tag)
  "Return the command lines of the processes whose arguments hold TAG."
  (let ((default-directory "/"))
    (delq nil (mapcar (lambda (pid)
                        (let ((args (alist-get 'args (process-attributes pid))))
                          (and args (string-search tag args) args)))
                      (list-system-processes)))))

(ert-deftest gptel-scope-test-wall-nothing-outlives-its-call ()
  "setsid -f, set -m, a double fork, nohup and disown: none left after the answer."
  (gptel-scope-test--under-each-wall dir
    (let* ((tag (format "%d.%04d" (+ 40 (random 50)) (random 10000)))
           (_ (with-temp-file (expand-file-name "leave.sh" dir)
                ;; A script the model wrote: each way of leaving its parent.
                (insert (format "setsid -f sleep %s1\nset -m\n(sleep %s2 &)\nset +m\n( (sleep %s3 &) & )\nnohup sleep %s4 >/dev/null 2>&1 &\ndisown\necho started\n"
                                tag tag tag tag))))
           (r (gptel-scope-test-call #'gptel-scope-run-bash-command "bash leave.sh" ".")))
      (should (equal (plist-get r :output) "started\n"))
      ;; The supervisor answers once every process is gone: none is left at the answer.
      (should (equal (gptel-scope-test--tagged (concat "sleep " tag)) nil)))))

(ert-deftest gptel-scope-test-wall-memory-bomb-stopped-and-named ()
  "A memory bomb ends at its limit, the result says so, Emacs's timers keep running."
  (gptel-scope-test--under-each-wall dir
    (let* ((ticks nil)
           (timer (run-at-time 0 0.05 (lambda () (push (float-time) ticks))))
           (r (unwind-protect
                  (gptel-scope-test-call #'gptel-scope-run-bash-command
                                         "a=x; while true; do a=$a$a; done" ".")
                (cancel-timer timer)))
           (gaps (cl-loop for (a b) on ticks while b collect (- a b))))
      (should (string-match-p (regexp-quote "[gptel-scope: its memory limit") (plist-get r :output)))
      (should (string-match-p (regexp-quote "raise sandbox.limits.memory in the scope.]") (plist-get r :output)))
      (should-not (plist-get r :success))
      ;; Measured, not timed: the timer ran throughout (its largest gap is printed).
      (should (> (length ticks) 1))
      (message "memory bomb under %s: %d ticks, largest gap %.3f s"
               (or (gptel-scope-sandbox-wall) 'none) (length ticks) (apply #'max 0 gaps)))))

(ert-deftest gptel-scope-test-wall-fork-bomb-stopped-and-named ()
  "A fork bomb ends at the process limit and the result says so.
The kernel holds no root process to its process limit, and a bomb run
as root starves the machine: as root this is tested by `cargo test'
\(tests/wall.rs), running the bomb as nobody."
  (skip-unless (/= (user-uid) 0))
  (gptel-scope-test--under-each-wall dir
    (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                    "f() { f | f & }; f; sleep 30" ".")))
      (should (string-match-p (regexp-quote "[gptel-scope: its process limit stopped it: ") (plist-get r :output))))))

(ert-deftest gptel-scope-test-wall-landlock-when-apparmor-forbids-bubblewrap ()
  "Where bubblewrap fails as under Ubuntu's AppArmor rule, `auto' runs under Landlock.
The status, the warning and the refusal of `wall' name the cause and its fix."
  (skip-unless (gptel-scope-test-landlock-works-p))
  (let* ((gptel-scope-sandbox-program (gptel-scope-test-apparmor-bwrap))
         (gptel-scope-sandbox 'auto)
         (apparmor (file-exists-p "/proc/sys/kernel/apparmor_restrict_unprivileged_userns")))
    (should (eq (gptel-scope-sandbox-wall) 'landlock))
    (should (string-prefix-p "landlock: Landlock (ABI " (gptel-scope-sandbox-status)))
    ;; bubblewrap's own words are quoted, whatever the cause found.
    (should (string-match-p (regexp-quote "bwrap: setting up uid map: Permission denied")
                            (gptel-scope-sandbox-status)))
    (unless apparmor
      (should (string-match-p "containers often forbid namespaces" (gptel-scope-sandbox-status))))
    (let ((gptel-scope-sandbox 'bwrap))
      (should (null (gptel-scope-sandbox-wall)))
      (should (string-prefix-p "unavailable: gptel-scope-sandbox is `bwrap' but bubblewrap"
                               (gptel-scope-sandbox-status))))
    (let ((gptel-scope-sandbox 'wall))
      (should (eq (gptel-scope-sandbox-wall) 'landlock)))))

(ert-deftest gptel-scope-test-wall-landlock-confines-a-command ()
  "Under Landlock a command the module let through reads and writes only its scope."
  (skip-unless (gptel-scope-test-landlock-works-p))
  (let ((outside (file-name-as-directory (file-truename (make-temp-file "gptel-scope-outside-" t)))))
    (unwind-protect
        (progn
          (with-temp-file (expand-file-name "f" outside) (insert "secret\n"))
          (gptel-scope-test-with-project dir (concat gptel-scope-test--wall-scope "  # \n")
            (let ((gptel-scope-sandbox 'landlock)
                  (gptel-scope-sandbox-program (gptel-scope-test-apparmor-bwrap)))
              (gptel-scope-test-in-chat dir
                ;; A script the module cannot see into reads and writes outside: refused by the wall.
                (with-temp-file (expand-file-name "x.sh" dir)
                  (insert (format "cat %sf; echo w > %sw; echo in > in.txt; cat in.txt\n" outside outside)))
                (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "bash x.sh 2>&1 | sed 's/^.*: //'" ".")))
                  (should (equal (plist-get r :output) "Permission denied\nPermission denied\nin\n")))
                (should-not (file-exists-p (expand-file-name "w" outside)))))))
      (delete-directory outside t))))

(provide 'gptel-scope-wall-test)
;;; gptel-scope-wall-test.el ends here
