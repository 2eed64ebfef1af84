;;; gptel-scope-corpus-test.el --- The shared corpora through Emacs and the module  -*- lexical-binding: t; -*-

;;; Commentary:

;; The attack corpus judged through the real path (elisp request, module,
;; scope loader over the defaults): no attack allowed, no benign command
;; denied.  Every miss is reported with its id.  The same for the
;; project's own corpus, tests/corpus/attacks-extra.tsv.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-cli)

(defconst gptel-scope-test--corpus
  (expand-file-name "tests/corpus/" gptel-scope-test-root)
  "The corpus directory (tests/corpus).")

(defun gptel-scope-test--unescape (s)
  "Decode the escapes of attacks.tsv in S."
  (replace-regexp-in-string
   "\\\\\\(u[0-9a-fA-F]\\{4\\}\\|[nt0r\\\\]\\)"
   (lambda (m)
     (let ((e (substring m 1)))
       (pcase e
         ("n" "\n") ("t" "\t") ("0" (string 0)) ("r" "\r") ("\\" "\\")
         (_ (string (string-to-number (substring e 1) 16))))))
   s t t))

(defun gptel-scope-test--attack-fixture ()
  "Lay out the fixture of corpus/README.md; return its root."
  (let ((root (file-name-as-directory (file-truename (make-temp-file "gptel-scope-attacks-" t)))))
    (dolist (d '("repo/src" "repo/docs" "repo/bin" "home/.ssh" "repo-secrets"))
      (make-directory (expand-file-name d root) t))
    (dolist (f '("repo/README.md" "repo/notes.txt" "repo/list.txt" "repo/files.txt" "repo/.env"
                 "repo/src/main.c" "repo/docs/CHANGELOG.md" "repo/bin/tool" "home/.ssh/id_rsa"
                 "home/.bashrc" "repo-secrets/creds.txt"))
      (with-temp-file (expand-file-name f root) (insert "x\n")))
    (make-symbolic-link (expand-file-name "home" root) (expand-file-name "repo/link_to_home" root))
    ;; The scope documents of the XSCOPE cases (as tests/common/mod.rs lays them out).
    (with-temp-file (expand-file-name "repo/scope.yml" root) (insert "paths:\n  read: [\"/**\"]\n"))
    (with-temp-file (expand-file-name "repo/preset.md" root) (insert "---\npaths: {}\n---\n"))
    (make-symbolic-link "scope.yml" (expand-file-name "repo/cfg" root))
    ;; The user's git configuration names a hooks directory in the project (XGCFG cases).
    (with-temp-file (expand-file-name "home/.gitconfig" root)
      (insert "[core]\n\thooksPath = ~/../repo/.githooks\n"))
    root))

(defconst gptel-scope-test--corpus-writers
  "printf, echo, sed, tee, cp, ln, install, dd, mkdir, touch, rsync, mv, rm, tar, git, sh, gzip, truncate, chmod, find, xargs, patch"
  "The commands of the scope_document cases, all listed in their scope.")

;; The project's own corpus.
(defconst gptel-scope-test--extra-corpus
  (expand-file-name "tests/corpus/attacks-extra.tsv" gptel-scope-test-root)
  "The project's attack corpus (same columns as attacks.tsv).")

(defun gptel-scope-test--corpus-misses (tsv)
  "Judge every case of the attack corpus TSV through the module.
Return (COUNT . MISSES), MISSES being one string per miss, in file order.
A `gap' case (a documented limitation) is a miss when it is denied, so
that closing the gap forces the case to become `deny'."
  (let* ((root (gptel-scope-test--attack-fixture))
         (rootname (directory-file-name root))
         (scope-text (with-temp-buffer
                       (insert-file-contents (expand-file-name "attacks-scope.yml" gptel-scope-test--corpus))
                       (replace-regexp-in-string "@ROOT@" rootname (buffer-string) t t)))
         (ro (expand-file-name "scope-ro.yml" root))
         (rw (expand-file-name "scope-rw.yml" root))
         (all (expand-file-name "scope-all.yml" root))
         (protect (vector (concat rootname "/repo/scope.yml") (concat rootname "/repo/preset.md")))
         (misses nil) (count 0))
    (unwind-protect
        (progn
          (with-temp-file ro (insert scope-text))
          (with-temp-file all
            (insert (format "paths:\n  read: [\"%s/repo/**\"]\n  write: [\"%s/repo/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, head, grep]\n    safe_write: [%s]\n  path_arguments: enforce\n"
                            rootname rootname gptel-scope-test--corpus-writers)))
          (with-temp-file rw
            (insert (replace-regexp-in-string "write: \\[\\]" (format "write: [\"%s/repo/**\"]" rootname)
                                              scope-text t t)))
          (with-temp-buffer
            (insert-file-contents tsv)
            (forward-line 1)
            (while (not (eobp))
              (let ((fields (split-string (buffer-substring (point) (line-end-position)) "\t")))
                (when (>= (length fields) 4)
                  (let* ((id (nth 0 fields))
                         (cmd (replace-regexp-in-string
                               "@ROOT@" rootname (gptel-scope-test--unescape (nth 1 fields)) t t))
                         (expected (nth 3 fields))
                         (judge (lambda (file)
                                  (gptel-scope-cli-judge-plist
                                   "run_bash_command"
                                   (list :command cmd :directory (concat rootname "/repo")
                                         :home (concat rootname "/home")
                                         :protect protect
                                         :sources (vector (list :file file)))
                                   :evidence t)))
                         (d (funcall judge ro)))
                    (setq count (1+ count))
                    (pcase expected
                      ("allow" (unless (plist-get d :allowed) (push (format "%s over-blocked: %s" id (plist-get d :reason)) misses)))
                      ("deny" (when (plist-get d :allowed) (push (format "%s allowed" id) misses)))
                      ("gap" (unless (plist-get d :allowed) (push (format "%s gap now denied: mark it deny" id) misses)))
                      ("scope_document"
                       (when (plist-get d :allowed) (push (format "%s allowed read-only" id) misses))
                       (let ((w (funcall judge all)))
                         (unless (and (not (plist-get w :allowed))
                                      (equal (plist-get w :reason) "scope_document"))
                           (push (format "%s with every write allowed: %s" id (plist-get w :reason)) misses))))
                      ("needs_write"
                       (unless (and (not (plist-get d :allowed))
                                    (member (plist-get d :reason) '("directory_not_in_scope" "path_not_in_scope")))
                         (push (format "%s read-only: %s" id (plist-get d :reason)) misses))
                       (unless (plist-get (funcall judge rw) :allowed)
                         (push (format "%s denied with write scope" id) misses)))
                      (_ (push (format "%s unknown expectation %s" id expected) misses))))))
              (forward-line 1))))
      (delete-directory root t))
    (cons count (nreverse misses))))

(ert-deftest gptel-scope-test-attack-corpus-through-the-module ()
  (skip-unless (file-exists-p (expand-file-name "attacks.tsv" gptel-scope-test--corpus)))
  (let ((r (gptel-scope-test--corpus-misses (expand-file-name "attacks.tsv" gptel-scope-test--corpus))))
    (should (equal (car r) 226))
    (should (equal (cdr r) nil))))

(ert-deftest gptel-scope-test-extra-attack-corpus-through-the-module ()
  (skip-unless (file-exists-p (expand-file-name "attacks-scope.yml" gptel-scope-test--corpus)))
  (let ((r (gptel-scope-test--corpus-misses gptel-scope-test--extra-corpus)))
    (should (equal (car r) 655))
    (should (equal (cdr r) nil))))

(provide 'gptel-scope-corpus-test)
;;; gptel-scope-corpus-test.el ends here
