;;; gptel-scope-sandbox-test.el --- Tests of the bubblewrap sandbox  -*- lexical-binding: t; -*-

;;; Commentary:

;; The bwrap command line built from a scope's mounts; and, where
;; bubblewrap works (it needs user namespaces), real commands the
;; validator allowed that still cannot write outside the write scope,
;; see outside the read scope, see what the deny patterns hide, reach
;; the network, or outlive their timeout.  Without bubblewrap those tests
;; are skipped; `bwrap' then refuses to run anything and `auto' runs
;; commands as they are.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-pty)

(defun gptel-scope-test--bwrap-works-p ()
  "Return non-nil when bubblewrap runs a command here."
  (let ((gptel-scope-sandbox-program "bwrap")
        (gptel-scope-sandbox--works nil))
    (gptel-scope-sandbox-works-p)))

(defun gptel-scope-test--index (elt list &optional from)
  "Return the position of ELT in LIST at or after FROM."
  (let ((i (seq-position (nthcdr (or from 0) list) elt)))
    (and i (+ i (or from 0)))))

(ert-deftest gptel-scope-test-sandbox-command-line ()
  "Outermost mounts first, hidden paths last, then the command."
  (gptel-scope-test-with-project dir nil
    (let* ((out (expand-file-name "out" dir))
           (secret (expand-file-name "secret" dir))
           (key (expand-file-name "out/key.pem" dir))
           (gptel-scope-sandbox-program "bwrap")
           ;; No TMPDIR: the command line has no --setenv.
           (process-environment (cons "TMPDIR" process-environment)))
      (make-directory out)
      (make-directory secret)
      (with-temp-file key (insert "k"))
      (let* ((argv (gptel-scope-sandbox-argv
                    '("bash" "-c" "ls") out
                    (list :read (list "/" (directory-file-name dir)) :write (list out)
                          :hide (list secret key "/elsewhere/.ssh" (expand-file-name "missing" dir)))))
             (scope-part (nthcdr (gptel-scope-test--index "--ro-bind-try" argv
                                                          (gptel-scope-test--index "/dev" argv))
                                 argv)))
        (should (equal (seq-take argv 5) '("bwrap" "--die-with-parent" "--unshare-all" "--cap-drop" "ALL")))
        ;; The root of the read scope comes first, before the private /tmp.
        (should (equal (seq-take (nthcdr 5 argv) 3) '("--ro-bind-try" "/" "/")))
        (should (< (gptel-scope-test--index "/" argv) (gptel-scope-test--index "/tmp" argv)))
        (dolist (system '(("--ro-bind-try" "/usr" "/usr") ("--ro-bind-try" "/etc" "/etc")
                          ("--tmpfs" "/tmp") ("--proc" "/proc") ("--dev" "/dev")))
          (should (seq-some (lambda (tail) (equal (seq-take tail (length system)) system))
                            (cl-maplist #'identity argv))))
        ;; Then the project, read-only; its out/, writable; what is hidden.
        (should (equal scope-part
                       (append (list "--ro-bind-try" (directory-file-name dir) (directory-file-name dir)
                                     "--bind-try" out out
                                     "--tmpfs" secret "--remount-ro" secret
                                     "--ro-bind" (gptel-scope-sandbox--empty-file) key
                                     "--remount-ro" "/" "--chdir" out "--" "bash" "-c" "ls"))))))))

(ert-deftest gptel-scope-test-sandbox-network-only-when-the-scope-says ()
  "No network unless the scope's sandbox: {network: true}; TMPDIR is the private /tmp."
  (let ((gptel-scope-sandbox-program "bwrap")
        (process-environment (cons "TMPDIR=/var/tmp/mine" process-environment)))
    (should-not (member "--share-net" (gptel-scope-sandbox-argv '("true") "/" nil)))
    (should-not (member "--share-net" (gptel-scope-sandbox-argv '("true") "/" '(:network :false))))
    (let ((argv (gptel-scope-sandbox-argv '("true") "/" '(:network t))))
      (should (equal (seq-take argv 6) '("bwrap" "--die-with-parent" "--unshare-all" "--cap-drop" "ALL" "--share-net")))
      (should (seq-some (lambda (tail) (equal (seq-take tail 3) '("--setenv" "TMPDIR" "/tmp")))
                        (cl-maplist #'identity argv))))))

(defconst gptel-scope-test--sandbox-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
  deny: [\"${project_root}/secret/**\"]
bash_tools:
  categories:
    read_only: [ls, cat, find, sleep]
    safe_write: [touch, xargs, ./out/gen.sh]
  path_arguments: warn
  timeout: 5
"
  "A scope whose commands can write where the validator does not see.")

(defmacro gptel-scope-test-with-sandbox-project (dir outside &rest body)
  "Bind DIR to a project of the sandbox scope and OUTSIDE to a directory beside it.
The project has out/, secret/key, out/names naming OUTSIDE/x, and
out/gen.sh writing OUTSIDE/y.  Run BODY in a chat buffer there."
  (declare (indent 2))
  `(gptel-scope-test-with-project ,dir gptel-scope-test--sandbox-scope
     (let ((,outside (file-name-as-directory (file-truename (make-temp-file "gptel-scope-outside-" t)))))
       (unwind-protect
           (progn
             (make-directory (expand-file-name "out" ,dir))
             (make-directory (expand-file-name "secret" ,dir))
             (with-temp-file (expand-file-name "secret/key" ,dir) (insert "k\n"))
             (with-temp-file (expand-file-name "out/names" ,dir) (insert ,outside "x\n"))
             (with-temp-file (expand-file-name "out/gen.sh" ,dir)
               (insert "#!/bin/sh\ntouch " ,outside "y\n"))
             (set-file-modes (expand-file-name "out/gen.sh" ,dir) #o755)
             (gptel-scope-test-in-chat ,dir ,@body))
         (delete-directory ,outside t)))))

(ert-deftest gptel-scope-test-sandbox-validator-allows-what-writes-outside ()
  "Without the sandbox these allowed commands write outside the scope."
  (gptel-scope-test-with-sandbox-project dir outside
    (let ((gptel-scope-sandbox nil))
      (dolist (command '("xargs touch < names" "./gen.sh"))
        (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command command "out") :success))))
      (should (file-exists-p (expand-file-name "x" outside)))
      (should (file-exists-p (expand-file-name "y" outside))))))

(ert-deftest gptel-scope-test-sandbox-keeps-allowed-commands-in-the-scope ()
  (skip-unless (gptel-scope-test--bwrap-works-p))
  (gptel-scope-test-with-sandbox-project dir outside
    (let ((gptel-scope-sandbox 'bwrap)
          (gptel-scope-sandbox-program "bwrap")
          (gptel-scope-sandbox--works nil))
      ;; Allowed by the validator, stopped by the sandbox: outside does not exist there.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "xargs touch < names" "out")))
        ;; xargs: the command it ran failed.
        (should (equal (plist-get r :exit_code) 123))
        (should (string-match-p (concat "touch: cannot touch '" (regexp-quote outside) "x': No such file or directory")
                                (plist-get r :output))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "./gen.sh" "out")))
        (should-not (plist-get r :success))
        (should (string-match-p "No such file or directory" (plist-get r :output))))
      (should-not (file-exists-p (expand-file-name "x" outside)))
      (should-not (file-exists-p (expand-file-name "y" outside)))
      ;; The write scope is writable.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch made" "out")))
        (should (eq (plist-get r :success) t))
        (should (file-exists-p (expand-file-name "out/made" dir))))
      ;; The read scope is read-only, even to a script the validator cannot read.
      (with-temp-file (expand-file-name "out/names" dir) (insert dir "x\n" "/new-at-root\n"))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "xargs touch < names" "out")))
        (should (string-match-p (concat "cannot touch '" (regexp-quote dir) "x': Read-only file system")
                                (plist-get r :output)))
        (should (string-match-p "cannot touch '/new-at-root': Read-only file system" (plist-get r :output))))
      (should-not (file-exists-p (expand-file-name "x" dir)))
      ;; The deny patterns' directory is empty; the rest of the project is seen.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "find .. -name key -o -name names" "out")))
        (should (equal (plist-get r :output) "../out/names\n")))
      ;; Only the system directories, the scope and an empty private home: no /var, and
      ;; nothing of the real home.
      (let* ((home (directory-file-name (expand-file-name "~")))
             (top (car (split-string home "/" t)))
             (r (gptel-scope-test-call #'gptel-scope-run-bash-command (format "ls / && ls -A %s" home) "out")))
        ;; The home lists nothing: every line is a top directory.
        (should-not (seq-difference (split-string (plist-get r :output) "\n" t)
                                    (list "bin" "dev" "etc" "lib" "lib32" "lib64" "libx32" "proc" "sbin" "tmp" "usr" top))))
      ;; No network: the only interface is the loopback.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat /proc/net/dev" "out")))
        (should (equal (mapcar (lambda (l) (car (split-string l ":")))
                               (seq-filter (lambda (l) (string-match-p ":" l))
                                           (mapcar #'string-trim (split-string (plist-get r :output) "\n" t))))
                       '("lo")))))))

(ert-deftest gptel-scope-test-sandbox-wraps-terminal-sessions-too ()
  (skip-unless (gptel-scope-test--bwrap-works-p))
  (gptel-scope-test-with-sandbox-project dir outside
    (let ((gptel-scope-sandbox 'bwrap)
          (gptel-scope-sandbox-program "bwrap")
          (gptel-scope-sandbox--works nil)
          (gptel-scope-pty--sessions (make-hash-table)))
      (unwind-protect
          (let* ((home (directory-file-name (expand-file-name "~")))
                 (real (directory-files home nil "\\`\\([^.]\\|\\.[^.]\\)"))
                 (r (gptel-scope-test-call #'gptel-scope-exec-command (format "./gen.sh; ls / /var; ls -A %s" home) "out" 2000)))
            (should (string-match-p "No such file or directory" (plist-get r :output)))
            ;; No /var; the home is the sandbox's own, empty: none of the real one's names.
            (should (string-match-p "cannot access '/var'" (plist-get r :output)))
            (should real)
            (should-not (seq-intersection real (split-string (plist-get r :output) "[ \r\n\t]+" t)))
            (should-not (file-exists-p (expand-file-name "y" outside))))
        (gptel-scope-pty-close-all)))))

(ert-deftest gptel-scope-test-sandbox-timeout-kills-the-sandboxed-command ()
  (skip-unless (gptel-scope-test--bwrap-works-p))
  (gptel-scope-test-with-sandbox-project dir _outside
    (let* ((gptel-scope-sandbox 'bwrap)
           (gptel-scope-sandbox--works nil)
           (gptel-scope-kill-grace 0.5)
           (tag (format "%d.%03d" (+ 50 (random 40)) (random 1000)))
           (start (float-time))
           (r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                     (format "ls; sleep %s & sleep %s" tag tag) "out" 1)))
      (should (equal (plist-get r :reason) "timeout"))
      (should (equal (plist-get r :output) "gen.sh\nnames\n"))
      (should (< (- (float-time) start) 4))
      (with-timeout (3) (while (seq-some (lambda (pid) (string-match-p (regexp-quote (concat "sleep " tag))
                                                                       (or (alist-get 'args (process-attributes pid)) "")))
                                         (list-system-processes))
                          (accept-process-output nil 0.05)))
      (should-not (seq-some (lambda (pid) (string-match-p (regexp-quote (concat "sleep " tag))
                                                          (or (alist-get 'args (process-attributes pid)) "")))
                            (list-system-processes))))))

(ert-deftest gptel-scope-test-sandbox-required-but-unavailable ()
  "`bwrap' without bubblewrap runs nothing; `auto' runs without it."
  (gptel-scope-test-with-sandbox-project dir _outside
    (let ((gptel-scope-sandbox-program "no-such-bwrap-here")
          (gptel-scope-sandbox--works nil))
      (setq gptel-scope--allow-once (list (cons "run_bash_command" "touch granted")))
      (let* ((gptel-scope-sandbox 'bwrap)
             (r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch granted" "out")))
        (should (equal (plist-get r :reason) "sandbox_unavailable"))
        (should (string-match-p (regexp-quote "Nothing ran: unavailable: gptel-scope-sandbox is `bwrap' but bubblewrap (`no-such-bwrap-here') cannot run here: bubblewrap (bwrap) is not installed.  To fix it: install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap); no command runs") (plist-get r :message)))
        (should-not (file-exists-p (expand-file-name "out/granted" dir)))
        (should (equal gptel-scope--allow-once '(("run_bash_command" . "touch granted")))))
      (let* ((gptel-scope-sandbox 'auto)
             (gptel-scope-sandbox--warned nil)
             (warned nil)
             (r (cl-letf (((symbol-function 'display-warning)
                           (lambda (_type message &rest _) (push message warned))))
                  (prog1 (gptel-scope-test-call #'gptel-scope-run-bash-command "touch granted" "out")
                    (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" "out")))))
        (should (eq (plist-get r :success) t))
        (should (file-exists-p (expand-file-name "out/granted" dir)))
        ;; Said once, with the wall used instead, what to install and what is missing.
        (should (= (length warned) 1))
        (if (> (gptel-scope-sandbox-landlock-abi) 0)
            (should (string-match-p (regexp-quote "Commands run under Landlock (ABI ") (car warned)))
          (should (string-prefix-p "Commands run without a sandbox: bubblewrap (`no-such-bwrap-here') cannot run here: bubblewrap (bwrap) is not installed." (car warned))))
        (should (string-match-p (regexp-quote "To fix it: install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap") (car warned)))
        (should (string-prefix-p (if (> (gptel-scope-sandbox-landlock-abi) 0) "landlock: Landlock (ABI "
                                   "none: bubblewrap (`no-such-bwrap-here') cannot run here: bubblewrap (bwrap) is not installed")
                                 (gptel-scope-sandbox-status)))))))

(ert-deftest gptel-scope-test-sandbox-command-line-masks ()
  "Masks come after every mount, outermost first; nothing under a masked directory."
  (gptel-scope-test-with-project dir nil
    (let* ((p (directory-file-name dir))
           (out (expand-file-name "out" dir))
           (gptel-scope-sandbox-program "bwrap")
           (empty (gptel-scope-sandbox--empty-file))
           (argv nil))
      (make-directory out)
      (make-directory (expand-file-name "sec" dir))
      (dolist (f '("out/scope.yml" "sec/scope.yml"))
        (with-temp-file (expand-file-name f dir) (insert "{}\n")))
      (setq argv (gptel-scope-sandbox-argv
                  '("true") p
                  (list :read (list p) :write (list (concat p "/sec/out") out)
                        :protect (list (concat p "/sec/scope.yml") (concat p "/out/scope.yml"))
                        :masks (list (list :path (concat p "/out/.env") :kind "file")
                                     (list :path (concat p "/sec") :kind "dir")
                                     (list :path (concat p "/sec/out/.env") :kind "file")))))
      (should (equal (nthcdr (gptel-scope-test--index "--ro-bind-try" argv (gptel-scope-test--index "/dev" argv)) argv)
                     (list "--ro-bind-try" p p
                           "--bind-try" out out
                           "--bind-try" (concat p "/sec/out") (concat p "/sec/out")
                           ;; sec/ covers sec/out and its .env: one empty file system.
                           "--tmpfs" (concat p "/sec") "--remount-ro" (concat p "/sec")
                           "--ro-bind" empty (concat p "/out/.env")
                           ;; Only the protected file that exists outside the masks.
                           "--ro-bind" (concat p "/out/scope.yml") (concat p "/out/scope.yml")
                           "--remount-ro" "/" "--chdir" p "--" "true")))
      ;; The empty file is made again when it is no longer empty.
      (set-file-modes empty #o644)
      (with-temp-file empty (insert "x"))
      (should-not (equal (gptel-scope-sandbox--empty-file) empty))
      (delete-file empty)
      (should (eql 0 (file-attribute-size (file-attributes (gptel-scope-sandbox--empty-file))))))))

(defconst gptel-scope-test--deny-token "tok-4f1c9e2a7b"
  "The text held by the denied files of the masking fixture: it must never show.")

(defconst gptel-scope-test--deny-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
  deny: [\"**/.env\", \"**/*.pem\"]
bash_tools:
  categories:
    read_only: [grep, cat, find, ls]
  timeout: 10
"
  "The most common scope: the project readable, `.env' and keys denied by glob.")

(defmacro gptel-scope-test-with-deny-project (dir &rest body)
  "Bind DIR to a project of the masking fixture; run BODY in a chat buffer there.
It holds .env, a/b/key.pem, out/.env and sub/.env (a symlink to
linked.txt), all holding `gptel-scope-test--deny-token', and the
ordinary files notes.txt and a/b/code.txt holding K=ordinary."
  (declare (indent 1))
  `(gptel-scope-test-with-project ,dir gptel-scope-test--deny-scope
     (make-directory (expand-file-name "a/b" ,dir) t)
     (make-directory (expand-file-name "out" ,dir))
     (make-directory (expand-file-name "sub" ,dir))
     (dolist (f '(".env" "a/b/key.pem" "out/.env" "linked.txt"))
       (with-temp-file (expand-file-name f ,dir) (insert "K=" gptel-scope-test--deny-token "\n")))
     (make-symbolic-link "../linked.txt" (expand-file-name "sub/.env" ,dir))
     (dolist (f '("notes.txt" "a/b/code.txt"))
       (with-temp-file (expand-file-name f ,dir) (insert "K=ordinary\n")))
     (gptel-scope-test-in-chat ,dir ,@body)))

(defun gptel-scope-test--sandboxed (dir command)
  "Run the shell COMMAND in DIR under the sandbox of DIR's scope; return its output."
  (let ((argv (gptel-scope-sandbox-argv (list "/bin/sh" "-c" command) (directory-file-name dir)
                                        (gptel-scope-sandbox-mounts))))
    (with-temp-buffer
      (apply #'call-process (car argv) nil t nil (cdr argv))
      (buffer-string))))

(defmacro gptel-scope-test--deny-masked (command ordinary)
  "Run COMMAND sandboxed in the masking fixture: no token; ORDINARY says if K=ordinary shows."
  `(progn
     (skip-unless (gptel-scope-test--bwrap-works-p))
     (gptel-scope-test-with-deny-project dir
       (let ((out (gptel-scope-test--sandboxed dir ,command)))
         (should-not (string-match-p gptel-scope-test--deny-token out))
         (should (eq ,ordinary (and (string-match-p "K=ordinary" out) t)))
         ;; Without the sandbox the same command shows the token: the fixture is sound.
         (should (string-match-p gptel-scope-test--deny-token
                                 (let ((default-directory dir))
                                   (shell-command-to-string ,command))))))))

(ert-deftest gptel-scope-test-deny-masked-grep-r ()
  "`grep -rn K .' finds the ordinary files and nothing of the denied ones."
  (gptel-scope-test--deny-masked "grep -rn K ." t))

(ert-deftest gptel-scope-test-deny-masked-grep-r-include ()
  "`grep -r . --include=.env' reads the masked .env files: empty."
  (gptel-scope-test--deny-masked "grep -r . --include=.env --include=*.pem; echo K=ordinary" t))

(ert-deftest gptel-scope-test-deny-masked-cat-env ()
  "`cat .env' reads an empty file."
  (gptel-scope-test--deny-masked "cat .env out/.env sub/.env" nil))

(ert-deftest gptel-scope-test-deny-masked-find-exec-cat ()
  "`find . -exec cat {} +' reads every file: the ordinary ones and empty masks."
  (gptel-scope-test--deny-masked "find . -type f -exec cat {} +" t))

(ert-deftest gptel-scope-test-deny-masked-find-exec-cat-each ()
  "`find . -name .env -exec cat {} \\;' follows the symlink too: masked."
  (gptel-scope-test--deny-masked "find . -name .env -exec cat {} \\; ; find -L . -name .env -exec cat {} \\;" nil))

(ert-deftest gptel-scope-test-deny-masked-cat-pem ()
  "`cat a/b/key.pem' reads an empty file."
  (gptel-scope-test--deny-masked "cat a/b/key.pem" nil))

(ert-deftest gptel-scope-test-deny-masked-run-bash-command ()
  "Through run_bash_command: whatever the validator decides, no token in the result."
  (skip-unless (gptel-scope-test--bwrap-works-p))
  (gptel-scope-test-with-deny-project dir
    (let ((gptel-scope-sandbox 'bwrap)
          (gptel-scope-sandbox--works nil))
      (dolist (command '("grep -rn K ." "find . -type f -exec cat {} +" "cat notes.txt a/b/code.txt"))
        (let ((r (gptel-scope-test-call-raw #'gptel-scope-run-bash-command command ".")))
          (should-not (string-match-p gptel-scope-test--deny-token r))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat notes.txt a/b/code.txt" ".")))
        (should (equal (plist-get r :output) "K=ordinary\nK=ordinary\n")))
      ;; Allowed (the denied files masked, not refused), grep -rn simply works.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "grep -rn K ." ".")))
        (when (eq (plist-get r :success) t)
          (should (equal (sort (split-string (plist-get r :output) "\n" t) #'string<)
                         '("./a/b/code.txt:1:K=ordinary" "./notes.txt:1:K=ordinary")))
          (should (eql (plist-get r :exit_code) 0))))
      ;; The masks are files the command cannot change nor remove.
      (should (equal (gptel-scope-test--sandboxed dir "rm -f out/.env 2>/dev/null || echo kept; cat out/.env")
                     "kept\n"))
      (should (file-exists-p (expand-file-name "out/.env" dir))))))

(ert-deftest gptel-scope-test-deny-masked-symlink-masks-its-target ()
  "A denied symlink masks what it leads to: its target reads empty under either name."
  (skip-unless (gptel-scope-test--bwrap-works-p))
  (gptel-scope-test-with-deny-project dir
    (should (equal (gptel-scope-test--sandboxed dir "cat sub/.env linked.txt; ls -A sub") ".env\n"))))

(ert-deftest gptel-scope-test-deny-mask-unknown-runs-nothing ()
  "When the walk cannot tell which entries to mask, nothing runs, and the message says why."
  (gptel-scope-test-with-deny-project dir
    (let ((gptel-scope-sandbox 'bwrap)
          (gptel-scope-sandbox--works (list (cons gptel-scope-sandbox-program t)))
          (why "the sandbox cannot tell which entries under /p the deny patterns `**/.env` cover: more than 100000 entries under /p"))
      (cl-letf (((symbol-function 'gptel-scope-sandbox-mounts)
                 (lambda (&rest _) (list :read (list (directory-file-name dir)) :cannot_mask why))))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "ls > out/ran" ".")))
          (should (equal (plist-get r :reason) "sandbox_unavailable"))
          (should (string-match-p (regexp-quote why) (plist-get r :message)))
          (should-not (file-exists-p (expand-file-name "out/ran" dir))))))))

;;;; A failure the sandbox caused says so

(ert-deftest gptel-scope-test-sandbox-failure-notes ()
  "Exit 127 of a program found outside, a read-only path, a path not shown: each named."
  (let* ((dir (file-name-as-directory (file-truename (make-temp-file "gptel-scope-note-" t))))
         (tool (expand-file-name "bin/mytool" dir))
         (shown (expand-file-name "notes.txt" dir)))
    (unwind-protect
        (progn
          (make-directory (file-name-directory tool))
          (with-temp-file tool (insert "#!/bin/sh\n"))
          (set-file-modes tool #o755)
          (with-temp-file shown (insert "n\n"))
          (let ((exec-path (cons (file-name-directory tool) exec-path)))
            (dolist (row
                     `(;; A program the sandbox does not show: where it is outside, what to do.
                       ("make: mytool: No such file or directory\n" 127
                        ,(format "The sandbox caused this: `mytool' is %s outside the sandbox but not inside it" tool))
                       ("bash: line 1: mytool: command not found\n" 127
                        ,(format "`mytool' is %s outside the sandbox" tool))
                       ;; Not installed anywhere: the command's own failure.
                       ("bash: line 1: no-such-program-x: command not found\n" 127 nil)
                       ;; 127 from the program itself, not the shell: nothing said.
                       ("mytool: command not found\n" 1 nil)
                       ;; Read-only: the path, the directory to ask for.
                       ("touch: cannot touch 'new.txt': Read-only file system\n" 1
                        ,(format "The sandbox caused this: %snew.txt is read-only inside it" dir))
                       ("sed: couldn't open temporary file ./sedAb12: Read-only file system\n" 4
                        ,(format "%ssedAb12 is read-only inside it" dir))
                       ;; A path that exists outside but is not shown.
                       ("cat: notes.txt: No such file or directory\n" 1
                        ,(format "The sandbox caused this: %s exists outside the sandbox but is not shown inside it" shown))
                       ;; Missing outside too: the command's own failure.
                       ("cat: gone.txt: No such file or directory\n" 1 nil)
                       ("" 2 nil)))
              (let ((note (gptel-scope-sandbox-failure-note (nth 0 row) (nth 1 row) dir)))
                (if (nth 2 row)
                    (should (and note (string-match-p (regexp-quote (nth 2 row)) note)))
                  (should-not note))))))
      (delete-directory dir t))))

(ert-deftest gptel-scope-test-sandbox-failure-note-reaches-the-model ()
  "A sandboxed command's failure result carries the note; an unsandboxed one does not."
  (let ((decision (list :warnings nil :directory "/tmp"))
        (result (list :success nil :exit-code 1 :output "touch: cannot touch 'x': Read-only file system\n"
                      :duration-ms 1)))
    (should (string-match-p "The sandbox caused this: /tmp/x is read-only"
                            (plist-get (gptel-scope-test-parse
                                        (gptel-scope--result-json decision (append (list :sandboxed t) result) 30))
                                       :message)))
    (should (equal (plist-get (gptel-scope-test-parse (gptel-scope--result-json decision result 30)) :message)
                   "The command failed with exit code 1; its output is shown."))))

(provide 'gptel-scope-sandbox-test)
;;; gptel-scope-sandbox-test.el ends here
