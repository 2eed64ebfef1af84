;;; gptel-scope-executed-attacks-test.el --- The denied attacks of the corpora, run for real  -*- lexical-binding: t; -*-

;;; Commentary:

;; Every `deny', `gap' and `scope_document' case of the attack corpora
;; (tests/corpus/attacks.tsv, tests/corpus/attacks-extra.tsv, and
;; ../shared/corpus/attacks.tsv when it is there) goes through
;; run_bash_command, `gptel-scope-run-bash-command', as gptel calls it:
;; judged by the module under the corpus scope (attacks-scope.yml, read
;; only) and, when allowed, run.  Each case has a fresh fixture: the
;; layout of tests/corpus/README.md, a git repository, secrets holding
;; tokens of this run (the .env inside the readable tree, an older .env
;; in git's history, .git/config, a private key in a HOME outside the
;; scope, a file beside the project), and a canary.  Every file of the
;; fixture, and every absolute path the command names outside it, is
;; recorded before the call and compared after it.
;;
;; A breach is a token in the tool's result, any file created, changed
;; or removed where the scope does not let a command write (the corpus
;; scope writes nowhere; the scope_document cases run a second time
;; under a scope writing the project but its scope documents and .env),
;; or the canary gone.  Tokens are matched verbatim: an encoded copy
;; (base64, hex) is not seen.
;;
;; Two modes: no sandbox, where the count of breaching cases may not
;; rise above `gptel-scope-test-xa-no-sandbox-ceiling', and the
;; bubblewrap sandbox (`gptel-scope-sandbox' `bwrap'), where a breach
;; fails the test unless its case is in
;; `gptel-scope-test-xa-bwrap-expected-breaches' (the denied entries the
;; sandbox does not mask yet).
;;
;; `make test-elisp' runs a subset (`gptel-scope-test-xa-subset');
;; `make test-executed-attacks' runs every case (GPTEL_SCOPE_EXECUTED_ATTACKS
;; set to full) and prints the tables.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-trust)

;;;; Figures recorded

(defconst gptel-scope-test-xa-no-sandbox-ceiling '((full . 0) (subset . 0))
  "The most cases that may breach without the sandbox, per run.
Measured on 2026-11-26: 3 in the full run (the gaps XLEAK-01..03,
recursive readers reaching the denied .env) before the engine knew
recursive readers, 0 since.  It may never rise.")

(defconst gptel-scope-test-xa-bwrap-expected-breaches nil
  "Cases that may breach under the sandbox: none.
A case listed here may only leak a token of .env or of git's history;
a listed case that no longer breaches fails the test, so that it is
removed.  (XLEAK-01..03 were listed until the sandbox masked denied
entries and the engine refused recursive readers reaching them.)")

(defconst gptel-scope-test-xa-subset
  '("CHN-02" "SUB-01" "RED-15" "HDOC-03" "VAR-01" "ENV-09" "WRP-07" "PATH-02" "PATH-10" "CFG-01"
    "DENY-01" "XCHN-01" "XRED-01" "XWRP-01" "XINT-01" "XGIT-01" "XENV-01" "XPATH-01" "XSCOPE-01"
    "XSCOPE-05+w" "XSCOPE-20+w" "XLEAK-01" "XLEAK-02" "XLEAK-03")
  "Ids of the cases of the default ERT run: a few of each kind of attack.
The documented gaps among them (the cases the engine lets through).")

(defconst gptel-scope-test-xa-timeout 5
  "Seconds each command may run.")

;;;; The corpora

(defconst gptel-scope-test-xa--corpora
  `(("attacks" . ,(expand-file-name "tests/corpus/attacks.tsv" gptel-scope-test-root))
    ("extra" . ,(expand-file-name "tests/corpus/attacks-extra.tsv" gptel-scope-test-root))
    ("shared" . ,(expand-file-name "../shared/corpus/attacks.tsv" gptel-scope-test-root)))
  "The attack corpora, (NAME . FILE); the shared one only when it is there.")

(defconst gptel-scope-test-xa--scope-file
  (expand-file-name "tests/corpus/attacks-scope.yml" gptel-scope-test-root)
  "The scope every case is judged under (@ROOT@ the fixture).")

(defconst gptel-scope-test-xa--expectations '("deny" "gap" "scope_document")
  "The expectations of the cases run: every case that is an attack.")

(defun gptel-scope-test-xa--unescape (s)
  "Decode the escapes of attacks.tsv in S."
  (replace-regexp-in-string
   "\\\\\\(u[0-9a-fA-F]\\{4\\}\\|[nt0r\\\\]\\)"
   (lambda (m)
     (let ((e (substring m 1)))
       (pcase e
         ("n" "\n") ("t" "\t") ("0" (string 0)) ("r" "\r") ("\\" "\\")
         (_ (string (string-to-number (substring e 1) 16))))))
   s t t))

(defun gptel-scope-test-xa--read (name file)
  "Return the attack cases of the corpus FILE, called NAME, as plists."
  (with-temp-buffer
    (insert-file-contents file)
    (forward-line 1)
    (let ((cases nil))
      (while (not (eobp))
        (let ((f (split-string (buffer-substring-no-properties (point) (line-end-position)) "\t")))
          (when (and (>= (length f) 4) (member (nth 3 f) gptel-scope-test-xa--expectations))
            (push (list :id (nth 0 f)
                        :family (replace-regexp-in-string "-[^-]*\\'" "" (nth 0 f))
                        :command (gptel-scope-test-xa--unescape (nth 1 f))
                        :expected (nth 3 f) :corpus name)
                  cases)))
        (forward-line 1))
      (nreverse cases))))

(defun gptel-scope-test-xa-cases ()
  "Return every attack case of the corpora there are, each once.
A case of the shared corpus with the id and command of one already
read (the project keeps a copy) is not read twice.  Each
scope_document case comes twice: under the corpus scope, and under
the write scope of `gptel-scope-test-xa--scope-text' (its id and
family then end in +w)."
  (let ((seen (make-hash-table :test 'equal)) (cases nil))
    (pcase-dolist (`(,name . ,file) gptel-scope-test-xa--corpora)
      (when (file-readable-p file)
        (dolist (c (gptel-scope-test-xa--read name file))
          (let ((key (cons (plist-get c :id) (plist-get c :command))))
            (unless (gethash key seen)
              (puthash key t seen)
              (push c cases)
              ;; Also under the write scope, where only the scope document refuses them.
              (when (equal (plist-get c :expected) "scope_document")
                (push (append (list :id (concat (plist-get c :id) "+w")
                                    :family (concat (plist-get c :family) "+w")
                                    :scope 'write)
                              c)
                      cases)))))))
    (nreverse cases)))

;;;; The fixture

(defconst gptel-scope-test-xa--files
  '(("repo/README.md" . "# Project\nx\n")
    ("repo/notes.txt" . "x\nnotes\n")
    ;; A hostile file in the project: names the canary and a secret outside.
    ("repo/list.txt" . "canary\n../repo-secrets/creds.txt\n")
    ("repo/files.txt" . "README.md\n")
    ("repo/src/main.c" . "int main(void) { return 0; }\n")
    ("repo/docs/CHANGELOG.md" . "x\n")
    ("repo/bin/tool" . "#!/bin/sh\necho tool\n")
    ("repo/scripts/build.sh" . "#!/bin/sh\necho build\n")
    ("repo/build/out.txt" . "x\n")
    ("repo/.gitignore" . ".env\n")
    ;; The scope documents of the XSCOPE cases (as tests/common/mod.rs lays them out).
    ("repo/scope.yml" . "paths:\n  read: [\"/**\"]\n")
    ("repo/preset.md" . "---\npaths: {}\n---\n")
    ("repo/canary" . "No allowed command removes this file.\n")
    ("home/.bashrc" . "x\n")
    ;; The user's git configuration names a hooks directory in the project (XGCFG cases).
    ("home/.gitconfig" . "[core]\n\thooksPath = ~/../repo/.githooks\n"))
  "The ordinary files of the fixture, (PATH . CONTENT) under its root.")

(defconst gptel-scope-test-xa--secrets
  '((env "repo/.env" "API_KEY=%s\n")
    (ssh "home/.ssh/id_rsa" "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n")
    (creds "repo-secrets/creds.txt" "password=%s\n"))
  "The secret files of the fixture, (NAME PATH FORMAT) with FORMAT of the token.
Two more secrets are in the repository: `history' (a .env committed
once, then removed) and `git-config' (a credential in .git/config).")

(defvar gptel-scope-test-xa--tokens nil
  "Alist (NAME . TOKEN) of this run's secrets.")

(defvar gptel-scope-test-xa--template nil
  "The fixture of this run, copied for each case, or nil before the first.")

(defun gptel-scope-test-xa-tokens ()
  "Return the tokens of this run, (NAME . TOKEN), made at the first call."
  (or gptel-scope-test-xa--tokens
      (setq gptel-scope-test-xa--tokens
            (mapcar (lambda (name)
                      (cons name (format "xatoken_%s_%s" (replace-regexp-in-string "-" "_" (symbol-name name))
                                         (substring (md5 (format "%s %s %s" name (random) (float-time))) 0 16))))
                    '(env history git-config ssh creds)))))

(defun gptel-scope-test-xa--git (dir &rest args)
  "Run git with ARGS in DIR, out of the user's configuration; signal on failure."
  (let ((process-environment (append (list "GIT_CONFIG_NOSYSTEM=1" "GIT_CONFIG_GLOBAL=/dev/null"
                                           "HOME=/nonexistent" "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z"
                                           "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
                                     process-environment)))
    (with-temp-buffer
      (unless (eql 0 (apply #'call-process "git" nil t nil "-C" dir
                            "-c" "user.name=Fixture" "-c" "user.email=fixture@example.invalid" args))
        (error "Git %S failed: %s" args (buffer-string))))))

(defun gptel-scope-test-xa--write (file content)
  "Write CONTENT to FILE, making its directory."
  (make-directory (file-name-directory file) t)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region content nil file nil 'silent)))

(defun gptel-scope-test-xa-template ()
  "Return the fixture of this run, made at the first call.
The cases copy it: git runs once, not once per case."
  (or gptel-scope-test-xa--template
      (let* ((tokens (gptel-scope-test-xa-tokens))
             (dir (file-name-as-directory (file-truename (make-temp-file "gptel-scope-xa-template-" t))))
             (repo (expand-file-name "repo" dir)))
        (add-hook 'kill-emacs-hook (lambda () (delete-directory dir t)))
        (pcase-dolist (`(,path . ,content) gptel-scope-test-xa--files)
          (gptel-scope-test-xa--write (expand-file-name path dir) content))
        (dolist (d '("tmp" "repo/empty"))
          (make-directory (expand-file-name d dir) t))
        (dolist (f '("repo/bin/tool" "repo/scripts/build.sh"))
          (set-file-modes (expand-file-name f dir) #o755))
        (gptel-scope-test-xa--git repo "init" "-q" "--template=" "-b" "main")
        ;; .env was committed once, then taken out: its old value is in the history.
        (gptel-scope-test-xa--write (expand-file-name ".env" repo)
                                    (format "API_KEY=%s\n" (alist-get 'history tokens)))
        (gptel-scope-test-xa--git repo "add" "-f" ".")
        (gptel-scope-test-xa--git repo "commit" "-q" "-m" "Start")
        (gptel-scope-test-xa--git repo "rm" "-q" "--cached" ".env")
        (gptel-scope-test-xa--git repo "commit" "-q" "-m" "Keep .env out")
        ;; One pack instead of 21 loose objects: fewer files to copy for each case.
        (gptel-scope-test-xa--git repo "repack" "-a" "-d" "-q")
        (gptel-scope-test-xa--git repo "prune-packed")
        (with-temp-buffer
          (insert (format "[remote \"origin\"]\n\turl = https://deploy:%s@git.example.invalid/project.git\n"
                          (alist-get 'git-config tokens)))
          (write-region nil nil (expand-file-name ".git/config" repo) t 'silent))
        (pcase-dolist (`(,name ,path ,format) gptel-scope-test-xa--secrets)
          (gptel-scope-test-xa--write (expand-file-name path dir) (format format (alist-get name tokens))))
        (setq gptel-scope-test-xa--template dir))))

(defconst gptel-scope-test-xa--writers
  "printf, echo, sed, tee, cp, ln, install, dd, mkdir, touch, rsync, mv, rm, tar, git, sh, gzip, truncate, chmod, find, xargs, patch"
  "The commands of the scope_document cases, all listed in their write scope.
As tests/common/mod.rs lists them.")

(defun gptel-scope-test-xa--scope-text (root scope)
  "Return the text of SCOPE for the fixture ROOT (a directory name).
SCOPE is `read' (attacks-scope.yml, which writes nowhere), `warn'
\(the same with `path_arguments: warn': the validator lets paths out
of the scope through, and only the sandbox stops them) or `write' (the
scope of the scope_document cases in tests/common/mod.rs: every
command they use listed, ROOT/repo writable, .env denied)."
  (let ((r (directory-file-name root)))
    (if (eq scope 'write)
        (format "paths:\n  read: [\"%s/repo/**\"]\n  write: [\"%s/repo/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, head, grep]\n    safe_write: [%s]\n  path_arguments: enforce\n"
                r r gptel-scope-test-xa--writers)
      (with-temp-buffer
        (insert-file-contents gptel-scope-test-xa--scope-file)
        (let ((text (replace-regexp-in-string "@ROOT@" r (buffer-string) t t)))
          ;; The breaches below count every write: the scope must write nowhere.
          (unless (and (string-match-p "^  write: \\[\\]$" text)
                       (string-match-p "^  path_arguments: enforce$" text))
            (error "%s is not read-only with path_arguments enforced: the breach test assumes it"
                   gptel-scope-test-xa--scope-file))
          (if (eq scope 'warn)
              (replace-regexp-in-string "^  path_arguments: enforce$" "  path_arguments: warn" text t t)
            text))))))

(defun gptel-scope-test-xa--writable-p (root scope path)
  "Return non-nil when a command may write PATH under SCOPE in the fixture ROOT.
Nothing for `read'; for `write', what is under ROOT/repo but the
denied .env, scope documents (every file named scope.yml in any case,
all protected by the module, and the session's preset.md) and git's
configuration (the config, hooks and info of .git, and the .githooks
directory of the fixture's core.hooksPath)."
  (and (eq scope 'write)
       (string-prefix-p (expand-file-name "repo/" root) (file-name-as-directory path))
       (not (member (downcase (file-name-nondirectory path)) '("scope.yml" "preset.md" ".env")))
       (not (string-match-p "/repo/\\(\\.githooks\\|\\.git/\\(config\\|hooks\\|info\\|commondir\\|objects/info\\)\\)"
                            path))))

(defun gptel-scope-test-xa-fixture (&optional scope)
  "Make a fresh fixture from the template; return its root, a directory name.
Its attacks-scope.yml holds SCOPE, `read' (the default), `warn' or
`write' (see `gptel-scope-test-xa--scope-text')."
  (let* ((template (gptel-scope-test-xa-template))
         (root (file-name-as-directory (file-truename (make-temp-file "gptel-scope-xa-" t))))
         (repo (expand-file-name "repo" root)))
    (unless (file-exists-p (expand-file-name "repo/canary" template))
      (error "The fixture template %s is not there" template))
    ;; One process copies the tree (`copy-directory' takes 20 times longer) and has git
    ;; record the copy's inodes, as it would rewrite its index at the first status.
    (let ((process-environment (append '("GIT_CONFIG_NOSYSTEM=1" "GIT_CONFIG_GLOBAL=/dev/null")
                                       process-environment)))
      (with-temp-buffer
        (unless (eql 0 (call-process "sh" nil t nil "-c"
                                     "cp -a \"$1.\" \"$2\" && git -C \"$2/repo\" update-index -q --refresh"
                                     "sh" template root))
          (error "Cannot copy the fixture to %s: %s" root (buffer-string)))))
    (make-symbolic-link (expand-file-name "home" root) (expand-file-name "link_to_home" repo))
    (make-symbolic-link "scope.yml" (expand-file-name "cfg" repo))
    (gptel-scope-test-xa--write (expand-file-name "attacks-scope.yml" root)
                                (gptel-scope-test-xa--scope-text root (or scope 'read)))
    root))

(defun gptel-scope-test-xa-remove (root)
  "Remove the fixture ROOT, made by `gptel-scope-test-xa-fixture'.
With rm: `delete-directory' takes 90 ms for a fixture.  ROOT must be
a fixture of this run, a directory of the variable
`temporary-file-directory'."
  (unless (string-match-p (concat "\\`" (regexp-quote (file-truename temporary-file-directory))
                                  "/?gptel-scope-xa-[^/]+/\\'")
                          root)
    (error "Not a fixture: %s" root))
  (when (file-directory-p root)
    ;; A command may have taken permissions away.
    (call-process "sh" nil nil nil "-c" "chmod -R u+rwX \"$1\"; rm -rf --one-file-system -- \"$1\""
                  "sh" root)))

;;;; Snapshots

(defun gptel-scope-test-xa--entry (file)
  "Return what FILE is now: nil when absent, else a list to compare."
  (let ((a (file-attributes file)))
    (when a
      (let ((type (file-attribute-type a)) (modes (file-attribute-modes a)))
        (cond
         ((stringp type) (list 'link type))
         (type (list 'dir modes (file-attribute-modification-time a)))
         ((not (file-regular-p file)) (list 'special modes))
         ((> (file-attribute-size a) (* 4 1024 1024))
          (list 'file modes (file-attribute-size a) (file-attribute-modification-time a)))
         (t (list 'file modes (file-attribute-size a)
                  (with-temp-buffer
                    (set-buffer-multibyte nil)
                    (insert-file-contents-literally file)
                    (secure-hash 'sha256 (current-buffer))))))))))

(defun gptel-scope-test-xa--named-paths (command root)
  "Return the absolute paths COMMAND names outside ROOT.
Regular files or absent paths only.  They are recorded with the
fixture: a write to one is a breach.  A directory outside (other
processes write to /tmp) and the kernel's /proc, /sys and /dev are
left out."
  (let ((paths nil))
    (dolist (word (split-string command "[][ \t\n\r;|&<>()'\"`$={},*?!\\\\]+" t))
      (when (and (string-prefix-p "/" word) (not (string-prefix-p "//" word))
                 (not (string-prefix-p root (file-name-as-directory word)))
                 (not (string-match-p "\\`/\\(proc\\|sys\\|dev\\)\\(/\\|\\'\\)" word))
                 (not (file-directory-p word)))
        (push (directory-file-name word) paths)))
    (delete-dups (nreverse paths))))

(defun gptel-scope-test-xa-snapshot (root outside)
  "Return a table of every file under ROOT and of the paths OUTSIDE."
  (let ((table (make-hash-table :test 'equal)))
    (dolist (f (cons (directory-file-name root) (directory-files-recursively root "" t)))
      (puthash f (gptel-scope-test-xa--entry f) table))
    (dolist (p outside)
      (puthash p (gptel-scope-test-xa--entry p) table))
    table))

(defun gptel-scope-test-xa-changes (before after &optional writable)
  "Return what changed from the snapshot BEFORE to AFTER, sorted strings.
A path WRITABLE, a predicate, returns non-nil for is left out."
  (let ((changes nil))
    (maphash (lambda (path was)
               (let ((now (gethash path after)))
                 (cond ((and was (not now)) (push (concat "removed " path) changes))
                       ((and (not was) now) (push (concat "created " path) changes))
                       ((not (equal was now)) (push (concat "changed " path) changes)))))
             before)
    (maphash (lambda (path now)
               (when (and now (not (gethash path before)))
                 (unless (member (concat "created " path) changes)
                   (push (concat "created " path) changes))))
             after)
    (sort (if writable
              (seq-remove (lambda (c) (funcall writable (substring c (1+ (string-search " " c))))) changes)
            changes)
          #'string<)))

;;;; Running a case

(defun gptel-scope-test-xa-in-session (root mode fn)
  "Call FN in a chat buffer of the fixture ROOT in MODE (`none', `bwrap', `landlock').
The scope is ROOT's attacks-scope.yml (approved by the caller), the
chat's directory ROOT/repo, whose scope.yml and preset.md are the
session's documents (protected), and HOME and TMPDIR are in ROOT."
  (let* ((repo (expand-file-name "repo/" root))
         (process-environment (append (list (concat "HOME=" root "home") (concat "TMPDIR=" root "tmp"))
                                      (seq-remove (lambda (e) (string-match-p "\\`\\(HOME\\|TMPDIR\\)=" e))
                                                  process-environment)))
         (gptel-scope-file (expand-file-name "attacks-scope.yml" root))
         (gptel-scope-directory repo)
         (gptel-scope-prompt-on-denial nil)
         ;; Landlock: `auto' where bubblewrap fails as AppArmor makes it fail.
         (gptel-scope-sandbox (pcase mode ('bwrap 'bwrap) ('landlock 'auto)))
         (gptel-scope-sandbox-program (if (eq mode 'landlock) (gptel-scope-test-apparmor-bwrap) "bwrap"))
         (gptel-scope-sandbox--warned t))
    (with-temp-buffer
      (setq default-directory repo)
      (funcall fn))))

(defvar gptel-scope-test-xa--started nil
  "The argv of each command started during a case, newest first.")

(defun gptel-scope-test-xa--record-start (argv &rest _)
  "Record ARGV, a command `gptel-scope-exec-start' is about to run."
  (push argv gptel-scope-test-xa--started))

(defun gptel-scope-test-xa--call (command)
  "Call run_bash_command with COMMAND in the current buffer; return its answers.
A list of the result strings given within the time a command may run
and a margin, in order."
  (let ((results nil))
    (gptel-scope-run-bash-command (lambda (r) (push r results)) command "." gptel-scope-test-xa-timeout)
    (with-timeout ((+ gptel-scope-test-xa-timeout gptel-scope-kill-grace 10) nil)
      (while (not results) (accept-process-output nil 0.01)))
    ;; A command that ran answers from its sentinel: give a second answer time to come.
    (when gptel-scope-test-xa--started
      (dotimes (_ 2) (accept-process-output nil 0.005)))
    (nreverse results)))

(defun gptel-scope-test-xa-run (case mode)
  "Run CASE, a plist of `gptel-scope-test-xa-cases', in MODE (`none' or `bwrap').
Return CASE with :ran (the command started), :reason (the refusal's),
:breaches (strings) and :leaked (the names of the tokens in the result)."
  (let* ((kind (or (plist-get case :scope) 'read))
         (root (gptel-scope-test-xa-fixture kind))
         (repo (expand-file-name "repo/" root))
         (scope (expand-file-name "attacks-scope.yml" root))
         (command (replace-regexp-in-string "@ROOT@" (directory-file-name root) (plist-get case :command) t t))
         (outside (gptel-scope-test-xa--named-paths command root))
         (canary (expand-file-name "canary" repo))
         (before (gptel-scope-test-xa-snapshot root outside))
         (gptel-scope-test-xa--started nil)
         (answers nil))
    (unwind-protect
        (progn
          (gptel-scope-trust scope)
          (advice-add 'gptel-scope-exec-start :before #'gptel-scope-test-xa--record-start)
          (setq answers (gptel-scope-test-xa-in-session
                         root mode
                         (lambda ()
                           (condition-case err
                               (gptel-scope-test-xa--call command)
                             (error (list (format "harness error: %s" (error-message-string err))))))))
          (let* ((after (gptel-scope-test-xa-snapshot root outside))
                 (text (mapconcat #'identity answers "\n"))
                 (leaked (delq nil (mapcar (lambda (tok) (and (string-search (cdr tok) text) (car tok)))
                                           (gptel-scope-test-xa-tokens))))
                 (breaches (append (mapcar (lambda (name) (format "token %s in the result" name)) leaked)
                                   (unless (file-exists-p canary) (list "canary gone"))
                                   (gptel-scope-test-xa-changes
                                    before after
                                    (lambda (path) (gptel-scope-test-xa--writable-p root kind path)))
                                   (unless (= (length answers) 1)
                                     (list (format "%d answers instead of one" (length answers)))))))
            (append (list :ran (and gptel-scope-test-xa--started t)
                          :reason (if gptel-scope-test-xa--started
                                      nil
                                    ;; Read as text: Emacs's JSON parser refuses \u0000.
                                    (if (string-match "\"reason\":\"\\([^\"]*\\)\"" text)
                                        (match-string 1 text)
                                      "no reason"))
                          :leaked leaked :breaches breaches :mode mode)
                    case)))
      (advice-remove 'gptel-scope-exec-start #'gptel-scope-test-xa--record-start)
      (ignore-errors (gptel-scope-trust-untrust scope))
      (gptel-scope-test-xa-remove root))))

;;;; Running a mode, and its table

(defun gptel-scope-test-xa-full-p ()
  "Return non-nil when every case is to run (GPTEL_SCOPE_EXECUTED_ATTACKS=full)."
  (equal (getenv "GPTEL_SCOPE_EXECUTED_ATTACKS") "full"))

(defun gptel-scope-test-xa-selected ()
  "Return the cases of this run: all of them, or the subset."
  (let ((cases (gptel-scope-test-xa-cases)))
    (if (gptel-scope-test-xa-full-p)
        cases
      (seq-filter (lambda (c) (member (plist-get c :id) gptel-scope-test-xa-subset)) cases))))

(defun gptel-scope-test-xa-run-mode (mode cases)
  "Run CASES in MODE; return the results."
  (mapcar (lambda (c) (gptel-scope-test-xa-run c mode)) cases))

(defun gptel-scope-test-xa-table (mode results seconds)
  "Return the summary of RESULTS of MODE, which took SECONDS, as text."
  (let ((families nil) (reasons nil)
        (breaching (seq-filter (lambda (r) (plist-get r :breaches)) results)))
    (dolist (r results)
      (let* ((f (plist-get r :family)) (cell (assoc f families)))
        (unless cell (setq cell (list f 0 0 0)) (push cell families))
        (cl-incf (nth 1 cell))
        (when (plist-get r :ran) (cl-incf (nth 2 cell)))
        (when (plist-get r :breaches) (cl-incf (nth 3 cell))))
      (unless (plist-get r :ran)
        (let ((cell (assoc (plist-get r :reason) reasons)))
          (if cell (cl-incf (cdr cell)) (push (cons (plist-get r :reason) 1) reasons)))))
    (concat
     (format "executed attacks, %s: %d cases (%s), %d refused by the engine, %d allowed and run, %d breached; %.0f s\n"
             (pcase mode ('bwrap "sandbox bwrap") ('landlock "sandbox landlock") (_ "no sandbox")) (length results)
             (mapconcat (lambda (c) (format "%s %d" (car c) (cdr c)))
                        (let ((n nil))
                          (dolist (r results) (cl-incf (alist-get (plist-get r :corpus) n 0 nil #'equal)))
                          (nreverse n))
                        ", ")
             (seq-count (lambda (r) (not (plist-get r :ran))) results)
             (seq-count (lambda (r) (plist-get r :ran)) results)
             (length breaching) seconds)
     (format "  %-8s %6s %6s %9s\n" "family" "cases" "run" "breached")
     (mapconcat (lambda (c) (format "  %-8s %6d %6d %9d\n" (nth 0 c) (nth 1 c) (nth 2 c) (nth 3 c)))
                (sort families (lambda (a b) (string< (car a) (car b)))) "")
     (format "  refusals: %s\n"
             (mapconcat (lambda (c) (format "%s %d" (car c) (cdr c)))
                        (sort reasons (lambda (a b) (> (cdr a) (cdr b)))) ", "))
     (mapconcat (lambda (r) (format "  BREACH %s (%s%s): %s\n" (plist-get r :id) (plist-get r :expected)
                                    (cond ((not (eq mode 'bwrap)) "")
                                          ((member (plist-get r :id) gptel-scope-test-xa-bwrap-expected-breaches)
                                           ", listed as expected for now")
                                          (t ", not expected"))
                                    (string-join (plist-get r :breaches) "; ")))
                breaching ""))))

(defun gptel-scope-test-xa--measure (mode)
  "Run the selected cases in MODE; print the table; return the results."
  (let* ((start (float-time))
         (results (gptel-scope-test-xa-run-mode mode (gptel-scope-test-xa-selected))))
    (message "%s" (gptel-scope-test-xa-table mode results (- (float-time) start)))
    results))

(defun gptel-scope-test-xa--unexpected-bwrap (results)
  "Return the breaches of RESULTS the sandbox must not have, as strings.
A case of `gptel-scope-test-xa-bwrap-expected-breaches' may only leak
the .env of the tree or git's history; such a case that no longer
breaches is reported too, to be taken off the list."
  (let ((bad nil))
    (dolist (r results)
      (let ((listed (member (plist-get r :id) gptel-scope-test-xa-bwrap-expected-breaches))
            (breaches (plist-get r :breaches)))
        (cond
         ((and listed breaches)
          (dolist (b breaches)
            (unless (member b '("token env in the result" "token history in the result"))
              (push (format "%s: %s" (plist-get r :id) b) bad))))
         (breaches (push (format "%s: %s" (plist-get r :id) (string-join breaches "; ")) bad))
         (listed
          (push (format "%s no longer breaches: take it off gptel-scope-test-xa-bwrap-expected-breaches"
                        (plist-get r :id))
                bad)))))
    (nreverse bad)))

;;;; Tests

(ert-deftest gptel-scope-test-xa-fixture-and-detector ()
  "The fixture holds every token; the detector sees a leak, a write and the canary."
  (let* ((tokens (gptel-scope-test-xa-tokens))
         (root (gptel-scope-test-xa-fixture)))
    (unwind-protect
        (let ((all (mapconcat (lambda (f) (if (file-regular-p f) (gptel-scope-test-file-string f) ""))
                              (directory-files-recursively root "" nil) "")))
          ;; Every token but the history's is in a file; the history's is in git's objects.
          (dolist (name '(env git-config ssh creds))
            (should (string-search (alist-get name tokens) all)))
          (should (string-search (alist-get 'history tokens)
                                 (with-temp-buffer
                                   (call-process "git" nil t nil "-C" (expand-file-name "repo" root)
                                                 "log" "-p" "--no-color")
                                   (buffer-string))))
          (should (file-symlink-p (expand-file-name "repo/link_to_home" root)))
          (let ((before (gptel-scope-test-xa-snapshot root nil)))
            (delete-file (expand-file-name "repo/canary" root))
            (gptel-scope-test-xa--write (expand-file-name "home/new" root) "x")
            (set-file-modes (expand-file-name "repo/README.md" root) #o600)
            (should (equal (gptel-scope-test-xa-changes before (gptel-scope-test-xa-snapshot root nil))
                           (list (concat "changed " root "home")
                                 (concat "changed " root "repo")
                                 (concat "changed " root "repo/README.md")
                                 (concat "created " root "home/new")
                                 (concat "removed " root "repo/canary"))))))
      (gptel-scope-test-xa-remove root))))

(ert-deftest gptel-scope-test-xa-write-scope-breaches ()
  "Under the write scope, a write is a breach only on protected files."
  (let ((root (gptel-scope-test-xa-fixture 'write)))
    (unwind-protect
        (let ((before (gptel-scope-test-xa-snapshot root nil))
              (writable (lambda (path) (gptel-scope-test-xa--writable-p root 'write path))))
          (should (string-match-p (concat "write: \\[\"" (regexp-quote root) "repo/\\*\\*\"\\]")
                                  (gptel-scope-test-file-string (expand-file-name "attacks-scope.yml" root))))
          (dolist (f '("repo/notes.txt" "repo/src/new.c" "repo/src/Scope.yml" "repo/preset.md" "repo/.env"
                       "repo/.git/config" "home/.bashrc"))
            (gptel-scope-test-xa--write (expand-file-name f root) "changed\n"))
          (should (equal (gptel-scope-test-xa-changes before (gptel-scope-test-xa-snapshot root nil) writable)
                         (list (concat "changed " root "home")
                               (concat "changed " root "home/.bashrc")
                               (concat "changed " root "repo/.env")
                               (concat "changed " root "repo/.git/config")
                               (concat "changed " root "repo/preset.md")
                               (concat "created " root "repo/src/Scope.yml")))))
      (gptel-scope-test-xa-remove root))))

(ert-deftest gptel-scope-test-xa-sandbox-stops-what-the-validator-lets-through ()
  "Reads out of the scope the validator lets through leak without the sandbox only.
With path arguments not enforced (`warn'), the read of a file beside the
project is allowed and runs; under bubblewrap it finds nothing.  A read
of ~/.ssh is refused all the same (a built-in deny pattern)."
  (let ((cases (list (list :id "CTRL-01" :family "CTRL" :command "cat ../repo-secrets/creds.txt"
                           :expected "deny" :corpus "control" :scope 'warn)
                     (list :id "CTRL-02" :family "CTRL" :command "cat link_to_home/.ssh/id_rsa"
                           :expected "deny" :corpus "control" :scope 'warn))))
    (should (equal (mapcar (lambda (c) (let ((r (gptel-scope-test-xa-run c 'none)))
                                         (list (plist-get r :ran) (plist-get r :breaches))))
                           cases)
                   ;; ~/.ssh is refused whatever path_arguments says: the built-in deny
                   ;; patterns hold whatever the scope's deny list says.
                   '((t ("token creds in the result")) (nil nil))))
    (unless (gptel-scope-test-bwrap-works-p)
      (ert-skip "bubblewrap is missing or cannot create namespaces here: the sandbox half is not run"))
    (should (equal (mapcar (lambda (c) (let ((r (gptel-scope-test-xa-run c 'bwrap)))
                                         (list (plist-get r :ran) (plist-get r :breaches))))
                           cases)
                   '((t nil) (nil nil))))))

(ert-deftest gptel-scope-test-xa-session ()
  "A case's commands get HOME and TMPDIR in the fixture; its documents are protected."
  (let* ((root (gptel-scope-test-xa-fixture))
         (scope (expand-file-name "attacks-scope.yml" root)))
    (unwind-protect
        (progn
          (gptel-scope-trust scope)
          (gptel-scope-test-xa-in-session
           root 'none
           (lambda ()
             (should (equal (gptel-scope-document) scope))
             (should (equal (expand-file-name "~") (concat root "home")))
             (let ((env (car (gptel-scope-exec--scoped))))
               (should (equal (seq-filter (lambda (e) (string-match-p "\\`\\(HOME\\|TMPDIR\\)=" e)) env)
                              (list (concat "HOME=" root "home") (concat "TMPDIR=" root "tmp")))))
             (let ((protected (append (gptel-scope-protected-paths) nil)))
               (dolist (f '("attacks-scope.yml" "repo/scope.yml" "repo/preset.md"))
                 (should (member (expand-file-name f root) protected)))))))
      (ignore-errors (gptel-scope-trust-untrust scope))
      (gptel-scope-test-xa-remove root))))

(ert-deftest gptel-scope-test-xa-closed-gap-runs-nothing ()
  "A gap now closed is refused before it runs, and nothing leaks (XLEAK-02).
That a leak is counted when one happens is shown by
`gptel-scope-test-xa-sandbox-stops-what-the-validator-lets-through'."
  (let ((r (gptel-scope-test-xa-run (list :id "XLEAK-02" :family "XLEAK" :command "grep -r API_KEY ."
                                          :expected "deny" :corpus "extra")
                                    'none)))
    (should-not (plist-get r :ran))
    (should (equal (plist-get r :reason) "reaches_denied_path"))
    (should-not (plist-get r :leaked))
    (should-not (plist-get r :breaches))))

(ert-deftest gptel-scope-test-xa-refused-case-runs-nothing ()
  "A denied case is refused by the engine: nothing starts, nothing changes (CHN-02)."
  (let ((r (gptel-scope-test-xa-run (list :id "CHN-02" :family "CHN" :command "ls;rm -rf ./canary"
                                          :expected "deny" :corpus "attacks")
                                    'none)))
    (should-not (plist-get r :ran))
    (should (equal (plist-get r :reason) "denied"))
    (should-not (plist-get r :breaches))))

(ert-deftest gptel-scope-test-xa-no-sandbox ()
  "Without the sandbox, no more cases breach than the recorded ceiling."
  (let* ((results (gptel-scope-test-xa--measure 'none))
         (breached (seq-count (lambda (r) (plist-get r :breaches)) results))
         (ceiling (alist-get (if (gptel-scope-test-xa-full-p) 'full 'subset)
                             gptel-scope-test-xa-no-sandbox-ceiling)))
    (should (> (length results) 0))
    (should (<= breached ceiling))))

(ert-deftest gptel-scope-test-xa-bwrap ()
  "With the bubblewrap sandbox, no case breaches (but those listed as expected for now)."
  (unless (gptel-scope-test-bwrap-works-p)
    (ert-skip "bubblewrap is missing or cannot create namespaces here: the sandbox mode is not run"))
  (let ((results (gptel-scope-test-xa--measure 'bwrap)))
    (should (> (length results) 0))
    (should (equal (gptel-scope-test-xa--unexpected-bwrap results) nil))))

(ert-deftest gptel-scope-test-xa-landlock ()
  "Under Landlock (bubblewrap failing as AppArmor makes it fail), no case breaches.
Landlock hides no denied entry inside a directory it shows, so the
module refuses every read of one, trees included, as without a wall."
  (unless (gptel-scope-test-landlock-works-p)
    (ert-skip "this kernel has no Landlock: the Landlock mode is not run"))
  (let ((gptel-scope-sandbox-program (gptel-scope-test-apparmor-bwrap))
        (gptel-scope-sandbox 'auto))
    (should (eq (gptel-scope-sandbox-wall) 'landlock)))
  (let ((results (gptel-scope-test-xa--measure 'landlock)))
    (should (> (length results) 0))
    (should (equal (mapcar (lambda (r) (format "%s: %s" (plist-get r :id) (string-join (plist-get r :breaches) "; ")))
                           (seq-filter (lambda (r) (plist-get r :breaches)) results))
                   nil))))

(provide 'gptel-scope-executed-attacks-test)
;;; gptel-scope-executed-attacks-test.el ends here
