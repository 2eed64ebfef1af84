;;; gptel-scope-everyday-test.el --- The everyday commands of the profiles, with and without the sandbox  -*- lexical-binding: t; -*-

;;; Commentary:

;; What a user of a shipped profile (scope-profiles/: coding, read-only,
;; restricted) does all day must work under the default sandbox
;; (`gptel-scope-sandbox' `auto', bubblewrap here) as it works without
;; it.  Each everyday command the profile lists goes through
;; run_bash_command, `gptel-scope-run-bash-command', as gptel calls it,
;; twice, each time in a fresh copy of the fixture at the same path:
;; once with `gptel-scope-sandbox' nil (the reference) and once with
;; `auto'.  The two must agree: whether it ran, its exit code, its
;; output (only durations are normalised, never paths), and what it
;; left in the project (every file but those under .git and target,
;; and the repository's HEAD, index and status, read with git after the
;; call).
;;
;; The fixture (`gptel-scope-test--everyday-base'): a git repository
;; with three commits of fixed dates, a change staged and one not, a
;; repository-local user; a cargo crate without dependencies (Cargo.lock,
;; src/main.rs with a unit test); a Makefile; an npm package whose test
;; and build scripts use node alone; text files for sed, grep, awk; and
;; a HOME as a user has it: rustup's layout (~/.cargo/bin/cargo a link
;; to ~/.cargo/bin/rustup, which runs the toolchain's cargo under
;; ~/.rustup), first on PATH as rustup's installer puts it, and an
;; nvm-style node (~/.nvm/versions/node/v20.0.0/bin/node).  Here
;; /usr/bin/node is on PATH too, so the nvm one only shows where it is
;; the only node.
;;
;; The project's scope.yml is the profile, written by `gptel-scope-init'
;; as a user does it (and so approved); the only addition is
;; environment variables the chat gives as inline scope
;; (`gptel-scope-inline'): fixed commit dates, so that a commit's hash
;; is the same in both runs, CARGO_NET_OFFLINE, and CARGO_TARGET_DIR
;; in the project.
;;
;; Which commands a profile lists is read from what the model is told
;; (list_allowed_commands): a command of
;; `gptel-scope-test-everyday-commands' is run when every program it
;; needs is in the profile's read_only, safe_write or dangerous
;; category.  A dangerous one goes through Allow once: the model's call
;; is refused with dangerous_command, the user presses `o' in the
;; expansion menu, and the call is made again.  When this machine has a
;; real rustup (~/.cargo/bin/cargo in the real HOME), cargo build, test,
;; check, fmt and clippy also run on the fixture crate with the real
;; toolchain and the real HOME.
;;
;; One test per profile fails naming every command that does not work
;; without the sandbox or that works differently under it, and prints
;; a table.  Allow once and Add to scope of a command and of a path
;; must work under the sandbox as without it.  These tests compare the
;; two modes: they are skipped where bubblewrap does not work.  Two
;; more run in both modes wherever they are: `git commit' runs no hook
;; written into the repository, and a repository given with --git-dir
;; whose config names core.fsmonitor runs nothing.
;;
;; Each of these tests runs again under Landlock (the tests named
;; `gptel-scope-test-everyday-landlock-...'): `auto' where bubblewrap
;; fails as Ubuntu 24.04's AppArmor rule makes it fail
;; (`gptel-scope-test-apparmor-bwrap'), so that the wall is Landlock;
;; the same comparison with the reference run without a sandbox.  They
;; are skipped where the kernel does not enforce Landlock.  What every
;; test printed is printed again, together, when Emacs exits.
;;
;; The restricted profile's `approval_policy: always' is gptel's
;; confirmation before each call; these calls are made directly.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-expand)
(require 'gptel-scope-explain)
(require 'gptel-scope-trust)

;;;; The commands

(defconst gptel-scope-test-everyday-commands
  '(;; Looking around
    (:command "pwd" :needs ("pwd"))
    (:command "ls -a" :needs ("ls"))
    (:command "ls -la src" :needs ("ls"))
    (:command "cat README.md" :needs ("cat"))
    (:command "head -n 3 notes.txt" :needs ("head"))
    (:command "tail -n 2 notes.txt" :needs ("tail"))
    (:command "wc -l notes.txt src/main.rs" :needs ("wc"))
    (:command "grep -rn TODO src" :needs ("grep"))
    (:command "grep -c TODO notes.txt" :needs ("grep"))
    (:command "rg -n TODO src" :needs ("rg") :requires "rg")
    (:command "find . -name '*.rs'" :needs ("find"))
    (:command "file README.md" :needs ("file") :requires "file")
    (:command "stat -c '%n %s %F' Cargo.toml" :needs ("stat"))
    (:command "tree src" :needs ("tree") :requires "tree")
    (:command "du -sh src" :needs ("du"))
    (:command "sort data.csv" :needs ("sort"))
    (:command "sort words.txt | uniq -c" :needs ("sort" "uniq"))
    (:command "cut -d, -f1 data.csv" :needs ("cut"))
    (:command "diff notes-old.txt notes.txt" :needs ("diff") :exit 1)
    (:command "jq -r .scripts.test package.json" :needs ("jq") :requires "jq")
    (:command "sed -n 2,3p notes.txt" :needs ("sed"))
    (:command "awk -F, 'NR > 1 { s += $2 } END { print s }' data.csv" :needs ("awk"))
    ;; git, reading
    (:command "git status" :needs ("git status"))
    (:command "git status --short" :needs ("git status"))
    (:command "git log --oneline -3" :needs ("git log"))
    (:command "git diff" :needs ("git diff"))
    (:command "git diff --cached --stat" :needs ("git diff"))
    (:command "git show --stat HEAD" :needs ("git show"))
    (:command "git blame src/main.rs" :needs ("git blame"))
    (:command "git ls-files" :needs ("git ls-files"))
    (:command "git rev-parse HEAD" :needs ("git rev-parse"))
    (:command "git rev-parse --show-toplevel" :needs ("git rev-parse"))
    ;; Writing
    (:command "mkdir -p build/tmp" :needs ("mkdir"))
    (:command "touch new.txt" :needs ("touch"))
    (:command "echo hello > hello.txt" :needs ("echo"))
    (:command "printf '%s\\n' one two > list.txt" :needs ("printf"))
    (:command "cp notes.txt notes.bak" :needs ("cp"))
    (:command "echo 'TODO: more tests' | tee -a notes.txt" :needs ("echo" "tee"))
    (:command "sed -i 's/TODO/DONE/' notes.txt" :needs ("sed"))
    (:command "git add notes.txt" :needs ("git add"))
    (:command "git commit -m 'Update the todo list'" :needs ("git commit"))
    (:command "make" :needs ("make"))
    (:command "make check" :needs ("make"))
    ;; Toolchains: rustup's layout in HOME, npm
    (:command "cargo build" :needs ("cargo build") :label "cargo build [rustup layout]")
    (:command "cargo test" :needs ("cargo test") :label "cargo test [rustup layout]")
    (:command "cargo check" :needs ("cargo check") :label "cargo check [rustup layout]")
    (:command "cargo fmt" :needs ("cargo fmt") :label "cargo fmt [rustup layout]")
    (:command "cargo clippy" :needs ("cargo clippy") :label "cargo clippy [rustup layout]")
    (:command "cargo build" :needs ("cargo build") :home real :label "cargo build [real rustup]")
    (:command "cargo test" :needs ("cargo test") :home real :label "cargo test [real rustup]")
    (:command "cargo check" :needs ("cargo check") :home real :label "cargo check [real rustup]")
    (:command "cargo fmt --check" :needs ("cargo fmt") :home real :label "cargo fmt --check [real rustup]")
    (:command "cargo clippy" :needs ("cargo clippy") :home real :label "cargo clippy [real rustup]")
    (:command "npm test" :needs ("npm test") :requires "npm")
    (:command "npm run build" :needs ("npm run") :requires "npm")
    ;; Dangerous: run after Allow once
    (:command "rm old.log" :needs ("rm"))
    (:command "rmdir empty" :needs ("rmdir"))
    (:command "mv old.log archive.log" :needs ("mv"))
    (:command "chmod +x scripts/run.sh" :needs ("chmod"))
    (:command "git checkout -- notes.txt" :needs ("git checkout"))
    (:command "git reset HEAD todo.txt" :needs ("git reset"))
    (:command "git restore notes.txt" :needs ("git restore")))
  "The everyday commands, each a plist.
:command, the command line the model sends from the project's root;
:needs, the entries of the scope's categories it needs (a profile
runs it when it lists them all); :exit, the exit code of its normal
outcome (0 unless given); :requires, a program it is skipped without;
:home `real' to run it with the real HOME, only when that has rustup;
:label, its name in the table (the command unless given).  Go is
listed by the coding profile but has no command here.")

(defconst gptel-scope-test--everyday-timeout 300
  "Seconds to wait for one tool call's answer.")

(defconst gptel-scope-test--everyday-inline
  '(:environment (:set (:GIT_AUTHOR_DATE "2026-02-02T10:00:00+00:00"
                        :GIT_COMMITTER_DATE "2026-02-02T10:00:00+00:00"
                        :CARGO_NET_OFFLINE "true"
                        :CARGO_TARGET_DIR "target")))
  "Inline scope of the chat: fixed commit dates, cargo offline.
CARGO_TARGET_DIR keeps cargo's output in the project, whatever the
user's cargo configuration says.")

(defconst gptel-scope-test--everyday-askable
  '("command_not_allowed" "dangerous_command" "directory_not_in_scope"
    "path_not_in_scope" "subcommand_not_allowed" "flag_not_allowed")
  "The refusals the user may lift from the expansion menu.")

;;;; The fixture

(defconst gptel-scope-test--everyday-system-path
  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  "The system part of PATH in every run.")

(defconst gptel-scope-test--everyday-real-home (getenv "HOME")
  "The real home directory, as Emacs started.")

(defconst gptel-scope-test--everyday-main-rs
  "//! The fixture's program.

/// Adds two numbers.
fn add(a: i32, b: i32) -> i32 {
    a + b
}

fn main() {
    // TODO: read the numbers from the command line.
    println!(\"{}\", add(2, 3));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }
}
"
  "The crate's src/main.rs, formatted as rustfmt does.")

(defconst gptel-scope-test--everyday-commits
  `(("2026-01-05T09:00:00+00:00" "Start the fixture"
     ("README.md" . "# fixture\n\nA small project for the everyday commands of the profiles.\n")
     ("notes.txt" . "Notes\nTODO: write the parser\nkeep it small\nTODO: document the flags\n")
     ("notes-old.txt" . "Notes\nTODO: write the parser\nkeep it small\n")
     ("todo.txt" . "- parser\n")
     ("Cargo.toml" . "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n")
     ("Cargo.lock" . "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n\n[[package]]\nname = \"fixture\"\nversion = \"0.1.0\"\n")
     ("src/main.rs" . ,gptel-scope-test--everyday-main-rs))
    ("2026-01-06T09:00:00+00:00" "Add the Makefile and the npm package"
     ("Makefile" . ".PHONY: all check clean\n\nall: out/notes.txt\n\nout/notes.txt: notes.txt\n\tmkdir -p out\n\tsed 's/^/> /' notes.txt > out/notes.txt\n\ncheck:\n\t@echo \"checking the notes\"\n\t@grep -c TODO notes.txt\n\nclean:\n\trm -rf out\n")
     ("package.json" . "{\n  \"name\": \"fixture\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": {\n    \"test\": \"node test.js\",\n    \"build\": \"node build.js\"\n  }\n}\n")
     ("lib.js" . "exports.add = (a, b) => a + b;\n")
     ("test.js" . "const assert = require(\"assert\");\nconst { add } = require(\"./lib.js\");\nassert.strictEqual(add(2, 3), 5);\nconsole.log(\"ok 1 - add\");\n")
     ("build.js" . "const fs = require(\"fs\");\nconst { add } = require(\"./lib.js\");\nfs.mkdirSync(\"dist\", { recursive: true });\nfs.writeFileSync(\"dist/bundle.js\", `module.exports = ${add(2, 3)};\\n`);\nconsole.log(\"built dist/bundle.js\");\n")
     (".npmrc" . "update-notifier=false\nfund=false\naudit=false\n"))
    ("2026-01-07T09:00:00+00:00" "Add the data files"
     ("data.csv" . "name,count\nalpha,3\nbeta,5\nalpha,2\n")
     ("words.txt" . "apple\nbanana\napple\ncherry\nbanana\napple\n")
     ("old.log" . "started\nstopped\n")
     ("scripts/run.sh" . "#!/bin/sh\necho run\n")
     (".gitignore" . "/target/\n/dist/\n/out/\n.env\n")))
  "The fixture's history: (DATE MESSAGE (FILE . CONTENT)...), oldest first.")

(defconst gptel-scope-test--everyday-rustup
  "#!/bin/bash
# rustup's proxy: run the tool of its name from the default toolchain.
exec \"${RUSTUP_HOME:-$HOME/.rustup}/toolchains/stable/bin/$(basename \"$0\")\" \"$@\"
"
  "The synthetic ~/.cargo/bin/rustup.")

(defconst gptel-scope-test--everyday-toolchain-cargo
  "#!/bin/bash
echo \"cargo of the stable toolchain: $*\"
"
  "The synthetic toolchain's cargo: a fixed line and its arguments.")

(defvar gptel-scope-test--everyday-base nil
  "The directory of this session's fixture (project/ and home/), once made.")

(defun gptel-scope-test--everyday-write (file content &optional modes)
  "Write CONTENT to FILE, making its directory; set MODES when given."
  (make-directory (file-name-directory file) t)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region content nil file nil 'silent))
  (when modes (set-file-modes file modes)))

(defun gptel-scope-test--everyday-git (dir date &rest args)
  "Run git with ARGS in DIR, out of the user's configuration.
DATE, when non-nil, is the date of the commits it makes.  Return its
output; signal when it fails."
  (let ((process-environment
         (append (list "GIT_CONFIG_NOSYSTEM=1" "GIT_CONFIG_GLOBAL=/dev/null")
                 (and date (list (concat "GIT_AUTHOR_DATE=" date) (concat "GIT_COMMITTER_DATE=" date)))
                 process-environment)))
    (with-temp-buffer
      (unless (eql 0 (apply #'call-process "git" nil t nil "-C" dir
                            "-c" "user.name=Fixture Author" "-c" "user.email=author@example.invalid"
                            args))
        (error "Git %S failed in %s: %s" args dir (buffer-string)))
      (buffer-string))))

(defun gptel-scope-test--everyday-make-home (home)
  "Make the user's toolchains in the directory HOME.
rustup's layout: ~/.cargo/bin/cargo a link to the rustup proxy there,
which runs the toolchain's cargo in ~/.rustup; and an nvm-style node."
  (gptel-scope-test--everyday-write (expand-file-name ".cargo/bin/rustup" home)
                                    gptel-scope-test--everyday-rustup #o755)
  (make-symbolic-link "rustup" (expand-file-name ".cargo/bin/cargo" home))
  (gptel-scope-test--everyday-write (expand-file-name ".rustup/toolchains/stable/bin/cargo" home)
                                    gptel-scope-test--everyday-toolchain-cargo #o755)
  (let ((node (executable-find "node")))
    (when node
      (make-directory (expand-file-name ".nvm/versions/node/v20.0.0/bin" home) t)
      (make-symbolic-link (file-truename node) (expand-file-name ".nvm/versions/node/v20.0.0/bin/node" home)))))

(defun gptel-scope-test--everyday-base ()
  "Return the directory of this session's fixture, made at the first call.
It holds project/, the git repository, home/, the user's home, and
outside/, a directory beside the project."
  (or gptel-scope-test--everyday-base
      (let* ((dir (file-name-as-directory (file-truename (make-temp-file "gptel-scope-everyday-base-" t))))
             (project (expand-file-name "project" dir)))
        (add-hook 'kill-emacs-hook (lambda () (delete-directory dir t)))
        (make-directory project)
        (gptel-scope-test--everyday-git project (caar gptel-scope-test--everyday-commits)
                                        "init" "-q" "--template=" "-b" "main")
        (pcase-dolist (`(,date ,message . ,files) gptel-scope-test--everyday-commits)
          (pcase-dolist (`(,file . ,content) files)
            (gptel-scope-test--everyday-write (expand-file-name file project) content))
          (apply #'gptel-scope-test--everyday-git project date "add" "--" (mapcar #'car files))
          (gptel-scope-test--everyday-git project date "commit" "-q" "-m" message))
        ;; The user commits from this repository: its own name and address.
        (gptel-scope-test--everyday-git project nil "config" "user.name" "Project User")
        (gptel-scope-test--everyday-git project nil "config" "user.email" "user@example.invalid")
        ;; Work in progress: a change staged, one not; untracked files; an empty directory.
        (gptel-scope-test--everyday-write (expand-file-name "todo.txt" project) "- parser\n- flags\n")
        (gptel-scope-test--everyday-git project nil "add" "todo.txt")
        (gptel-scope-test--everyday-write (expand-file-name "notes.txt" project)
                                          "Notes\nTODO: write the parser\nkeep it small\nTODO: document the flags\nTODO: add a test\n")
        (gptel-scope-test--everyday-write (expand-file-name ".env" project) "DEBUG=1\n")
        (make-directory (expand-file-name "empty" project))
        ;; One pack instead of loose objects: fewer files to copy for each run.
        (gptel-scope-test--everyday-git project nil "repack" "-a" "-d" "-q")
        (gptel-scope-test--everyday-git project nil "prune-packed")
        (gptel-scope-test--everyday-make-home (expand-file-name "home" dir))
        ;; A directory beside the project, outside every profile's scope.
        (gptel-scope-test--everyday-write (expand-file-name "outside/README" dir) "Not in the project.\n")
        (setq gptel-scope-test--everyday-base dir))))

(defun gptel-scope-test--everyday-template (root profile)
  "Make ROOT/template, the fixture with scope.yml of PROFILE; return it.
scope.yml is written by `gptel-scope-init', as a user starts a scope.
The fixture's home goes to ROOT/home, shared by the runs of ROOT:
commands find their toolchains there but keep nothing of their own."
  (let ((template (expand-file-name "template/" root)))
    (make-directory root t)
    (gptel-scope-test--everyday-copy (gptel-scope-test--everyday-base) template)
    (rename-file (expand-file-name "home" template) (expand-file-name "home" root))
    (let ((inhibit-message t))
      (gptel-scope-init (expand-file-name "project" template) profile))
    template))

(defun gptel-scope-test--everyday-copy (from to)
  "Make TO a copy of the fixture FROM, as fresh as FROM.
TO must not exist or be a fixture copy, which is removed first.  git
then records the copy's files in its index, as a user's repository
has them.  One process does it all (each costs Emacs a fork)."
  (let ((process-environment (append '("GIT_CONFIG_NOSYSTEM=1" "GIT_CONFIG_GLOBAL=/dev/null")
                                     process-environment)))
    (with-temp-buffer
      (unless (eql 0 (call-process "sh" nil t nil "-c"
                                   ;; chmod: a command may have taken permissions away.
                                   "{ rm -rf -- \"$2\" 2>/dev/null || { chmod -R u+rwX \"$2\"; rm -rf -- \"$2\"; }; } && cp -a \"$1\" \"$2\" && git -C \"$2/project\" update-index -q --refresh"
                                   "sh" (directory-file-name from) (directory-file-name to)))
        (error "Cannot copy the fixture %s to %s: %s" from to (buffer-string))))))

(defun gptel-scope-test--everyday-remove (root)
  "Remove ROOT, a directory made by an everyday test."
  (unless (string-match-p "/gptel-scope-everyday-[^/]+/?\\'" root)
    (error "Not an everyday fixture: %s" root))
  (call-process "sh" nil nil nil "-c" "chmod -R u+rwX \"$1\"; rm -rf -- \"$1\"" "sh" root))

(defmacro gptel-scope-test--everyday-with-root (var &rest body)
  "Bind VAR to a fresh directory for a test's fixtures, run BODY, remove it."
  (declare (indent 1))
  `(let ((,var (file-name-as-directory (file-truename (make-temp-file "gptel-scope-everyday-" t)))))
     (unwind-protect (progn ,@body)
       (gptel-scope-test--everyday-remove ,var))))

;;;; Snapshots of what a command left

(defun gptel-scope-test--everyday-hash (file)
  "Return the SHA-1 of FILE's bytes."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally file)
    (secure-hash 'sha1 (current-buffer))))

(defun gptel-scope-test--everyday-effects (project)
  "Return the state of PROJECT now, to compare one run with another.
Every file and directory but those under .git and target (a file by
its mode and bytes), the names in target, and the repository's
branch, HEAD, index and work tree as git's status reads them."
  (let ((files nil))
    (dolist (f (delete (expand-file-name "target" project)
                       (directory-files-recursively
                        project "" t (lambda (d) (not (member (file-name-nondirectory d) '(".git" "target")))))))
      (let ((a (file-attributes f)))
        (push (cons (file-relative-name f project)
                    (cond ((stringp (file-attribute-type a)) (list 'link (file-attribute-type a)))
                          ((file-attribute-type a) (list 'dir))
                          ((file-readable-p f)
                           (list 'file (file-attribute-modes a) (gptel-scope-test--everyday-hash f)))
                          (t (list 'file (file-attribute-modes a)))))
              files)))
    (list :files (sort files (lambda (a b) (string< (car a) (car b))))
          :target (let ((target (expand-file-name "target" project)))
                    (and (file-directory-p target)
                         (directory-files target nil directory-files-no-dot-files-regexp)))
          ;; The branch, HEAD, and each path whose index or work tree entry differs from
          ;; HEAD's, with the objects of both.
          :git (condition-case err
                   (gptel-scope-test--everyday-git project nil "status" "--porcelain=v2" "--branch" "-uall")
                 (error (error-message-string err))))))

(defun gptel-scope-test--everyday-effects-diff (ref box &optional wall)
  "Return how BOX, what the sandboxed run left, differs from REF, strings.
WALL names the sandbox in them (\"the sandbox\" unless given)."
  (let ((diffs nil)
        (wall (or wall "the sandbox"))
        (rf (plist-get ref :files)) (bf (plist-get box :files)))
    (dolist (e rf)
      (let ((b (assoc (car e) bf)))
        (cond ((not b) (push (format "%s: only without the sandbox" (car e)) diffs))
              ((not (equal e b)) (push (format "%s: differs" (car e)) diffs)))))
    (dolist (e bf)
      (unless (assoc (car e) rf)
        (push (format "%s: only under %s" (car e) wall) diffs)))
    (unless (equal (plist-get ref :target) (plist-get box :target))
      (push (format "target/: %S without the sandbox, %S under %s"
                    (plist-get ref :target) (plist-get box :target) wall)
            diffs))
    (unless (equal (plist-get ref :git) (plist-get box :git))
      (push "the repository (branch, HEAD, index or status) differs" diffs))
    (nreverse diffs)))

;;;; Running a command

(defun gptel-scope-test--everyday-real-cargo-bin ()
  "Return the real ~/.cargo/bin when rustup's cargo is in it, else nil."
  (let ((bin (and gptel-scope-test--everyday-real-home
                  (expand-file-name ".cargo/bin" gptel-scope-test--everyday-real-home))))
    (and bin (file-executable-p (expand-file-name "cargo" bin)) bin)))

(defun gptel-scope-test--everyday-environment (work home)
  "Return `process-environment' for a run in the fixture copy WORK.
HOME is `real' for the real home and its rustup, else the fixture's
home beside WORK, with rustup's and nvm's directories first on PATH."
  (let* ((real (eq home 'real))
         (dir (if real
                  (directory-file-name (expand-file-name gptel-scope-test--everyday-real-home))
                (expand-file-name "home" (file-name-directory (directory-file-name work)))))
         (path (if real
                   (concat (gptel-scope-test--everyday-real-cargo-bin) ":"
                           gptel-scope-test--everyday-system-path)
                 (concat dir "/.cargo/bin:" dir "/.nvm/versions/node/v20.0.0/bin:"
                         gptel-scope-test--everyday-system-path))))
    (append (list (concat "HOME=" dir) (concat "PATH=" path))
            (seq-remove (lambda (e) (string-match-p "\\`\\(HOME\\|PATH\\)=" e)) process-environment))))

(defun gptel-scope-test--everyday-call (command)
  "Call run_bash_command with COMMAND from the current buffer; return the answer.
The answer is parsed; an error is signalled when there is not exactly one."
  (let ((results nil))
    (gptel-scope-run-bash-command (lambda (r) (push r results)) command ".")
    (with-timeout (gptel-scope-test--everyday-timeout (error "No answer in %d s" gptel-scope-test--everyday-timeout))
      (while (not results) (accept-process-output nil 0.01)))
    (accept-process-output nil 0.005)
    (unless (= (length results) 1)
      (error "%d answers instead of one" (length results)))
    (gptel-scope-test-parse (car results))))

(defun gptel-scope-test--everyday-refused-p (answer)
  "Return non-nil when ANSWER, a parsed tool result, is a refusal."
  (plist-member answer :allowed))

(defun gptel-scope-test--everyday-call-granting (command key)
  "Call run_bash_command with COMMAND, lifting each refusal with KEY.
Only the refusals the user may lift: KEY is \"o\" (Allow once) or
\"a\" (Add to scope); the model asks with request_scope_expansion for
what the refusal names, the user answers KEY, the model makes the call
again.  At most three times.  Return
\(ANSWER ASKED), ASKED the reasons of the refusals lifted."
  (let ((asked nil)
        (answer (gptel-scope-test--everyday-call command)))
    (while (and (< (length asked) 3)
                (gptel-scope-test--everyday-refused-p answer)
                (plist-get answer :resource)
                (member (plist-get answer :reason) gptel-scope-test--everyday-askable))
      (push (plist-get answer :reason) asked)
      (let ((answers (gptel-scope-test-ask key (plist-get answer :tool) (plist-get answer :resource))))
        (unless (eq (plist-get (car (funcall answers)) :success) t)
          (error "The expansion was not granted: %S" (funcall answers))))
      (setq answer (gptel-scope-test--everyday-call command)))
    (list answer (nreverse asked))))

(defun gptel-scope-test--everyday-trust (file)
  "Approve the scope document FILE unless its content is approved already."
  (unless (plist-get (gptel-scope-trust-status file) :approved)
    (let ((inhibit-message t))
      (gptel-scope-trust file))))

(defun gptel-scope-test--everyday-mode-name (mode)
  "Return the name in the tables of MODE, nil, `auto' or `landlock'."
  (pcase mode
    ('nil "no sandbox")
    ('auto "sandbox")
    ('landlock "Landlock")
    (_ (format "%s" mode))))

(defun gptel-scope-test--everyday-skip-unless-wall (mode)
  "Skip the current test unless the wall MODE runs behind works here.
MODE is `auto' (bubblewrap) or `landlock'."
  (pcase mode
    ('auto (unless (gptel-scope-test-bwrap-works-p)
             (ert-skip "bubblewrap is missing or cannot create namespaces here: nothing to compare")))
    ('landlock (unless (gptel-scope-test-landlock-works-p)
                 (ert-skip "this kernel does not enforce Landlock: nothing to compare")))))

(defun gptel-scope-test--everyday-in-chat (work mode home fn)
  "Call FN in a chat buffer of the fixture copy WORK with the sandbox MODE.
MODE is nil (`gptel-scope-sandbox' nil), `auto' (`auto' with the real
bubblewrap: the default sandbox) or `landlock' (`auto' where bubblewrap
fails as Ubuntu's AppArmor rule makes it fail, so that the wall is
Landlock; an error when it is not); HOME as for
`gptel-scope-test--everyday-environment'.  The chat's directory is
WORK/project, whose scope.yml applies, with the inline environment of
`gptel-scope-test--everyday-inline'."
  (let ((project (expand-file-name "project/" work))
        (landlock (eq mode 'landlock)))
    (gptel-scope-test--everyday-trust (expand-file-name "scope.yml" project))
    (let ((process-environment (gptel-scope-test--everyday-environment work home))
          (gptel-scope-sandbox (if landlock 'auto mode))
          (gptel-scope-sandbox-program (if landlock (gptel-scope-test-apparmor-bwrap) "bwrap"))
          ;; Under Landlock, `auto' warns once that bubblewrap cannot run: expected here.
          (gptel-scope-sandbox--warned (or landlock gptel-scope-sandbox--warned))
          (gptel-scope-prompt-on-denial nil))
      (when (and landlock (not (eq (gptel-scope-sandbox-wall) 'landlock)))
        (error "The wall is %S, not Landlock, with bubblewrap failing as under AppArmor"
               (gptel-scope-sandbox-wall)))
      (gptel-scope-test-with-expansion
        (with-temp-buffer
          (setq default-directory project)
          (setq gptel-scope-inline gptel-scope-test--everyday-inline)
          (funcall fn))))))

(defun gptel-scope-test--everyday-normalise (output)
  "Return OUTPUT with its durations replaced, which differ from run to run."
  (and output
       (replace-regexp-in-string "\\bin [0-9]+\\(?:\\.[0-9]+\\)?m?s\\b" "in <duration>" output t t)))

(defun gptel-scope-test--everyday-run (root template entry mode grant)
  "Run the command of ENTRY in a fresh copy of TEMPLATE under ROOT, in MODE.
MODE is nil, `auto' or `landlock' (`gptel-scope-test--everyday-in-chat');
with GRANT (a key, \"o\"), each refusal the user may lift is lifted
so.  Return a plist: :answer (the parsed result), :asked (the reasons
of the refusals lifted), :effects, :error."
  (let ((work (expand-file-name "work/" root)))
    (gptel-scope-test--everyday-copy template work)
    (let ((answer nil) (asked nil) (err nil))
      (condition-case e
          (gptel-scope-test--everyday-in-chat
           work mode (plist-get entry :home)
           (lambda ()
             (if grant
                 (let ((r (gptel-scope-test--everyday-call-granting (plist-get entry :command) grant)))
                   (setq answer (car r) asked (cadr r)))
               (setq answer (gptel-scope-test--everyday-call (plist-get entry :command))))))
        (error (setq err (error-message-string e))))
      (list :answer answer :asked asked :error err
            :effects (gptel-scope-test--everyday-effects (expand-file-name "project" work))))))

(defun gptel-scope-test--everyday-outcome (run)
  "Return the outcome of RUN's answer as a list, to compare it with another."
  (let ((a (plist-get run :answer)))
    (cond ((plist-get run :error) (list 'error (plist-get run :error)))
          ((gptel-scope-test--everyday-refused-p a)
           (list 'refused (plist-get a :reason) (plist-get run :asked)))
          (t (list 'ran (plist-get a :success) (plist-get a :exit_code)
                   (gptel-scope-test--everyday-normalise (plist-get a :output))
                   (plist-get run :asked))))))

(defun gptel-scope-test--everyday-first-line (text)
  "Return the first non-empty line of TEXT, or \"(no output)\"."
  (or (seq-find (lambda (l) (not (string-empty-p (string-trim l))))
                (split-string (or text "") "\n"))
      "(no output)"))

(defun gptel-scope-test--everyday-describe (run)
  "Return RUN's outcome in a few words and the first line of what it said."
  (let ((a (plist-get run :answer)))
    (cond ((plist-get run :error) (format "harness error: %s" (plist-get run :error)))
          ((gptel-scope-test--everyday-refused-p a)
           (format "refused (%s): %s" (plist-get a :reason)
                   (gptel-scope-test--everyday-first-line (plist-get a :message))))
          (t (format "exit %s: %s" (plist-get a :exit_code)
                     (gptel-scope-test--everyday-first-line (plist-get a :output)))))))

;;;; A profile's commands

(defun gptel-scope-test--everyday-categories (template)
  "Return the categories the model is told about in TEMPLATE's project.
An alist (CATEGORY . ENTRIES) of run_bash_command's read_only,
safe_write and dangerous lists, read from list_allowed_commands."
  (let* ((text (gptel-scope-test--everyday-in-chat template nil nil #'gptel-scope-list-allowed-commands))
         (start (string-search "\nrun_bash_command" text))
         (categories nil))
    (unless start
      (error "No run_bash_command section in list_allowed_commands: %s" text))
    (dolist (line (split-string (substring text start) "\n"))
      (when (string-match "\\`  \\(read_only\\|safe_write\\|dangerous\\) ([^)]*): \\(.*\\)\\'" line)
        (push (cons (match-string 1 line) (split-string (match-string 2 line) ", " t)) categories)))
    (unless categories
      (error "No category in list_allowed_commands: %s" text))
    categories))

(defun gptel-scope-test--everyday-selection (categories)
  "Return the commands to run under CATEGORIES, and those left out.
\(RUN SKIPPED): RUN the entries of `gptel-scope-test-everyday-commands'
whose needs CATEGORIES all list, each with :dangerous when one is in
the dangerous category; SKIPPED strings saying which of those cannot
run here and why."
  (let ((listed (append (cdr (assoc "read_only" categories)) (cdr (assoc "safe_write" categories))))
        (dangerous (cdr (assoc "dangerous" categories)))
        (run nil) (skipped nil))
    (dolist (e gptel-scope-test-everyday-commands)
      (let ((needs (plist-get e :needs))
            (label (or (plist-get e :label) (plist-get e :command))))
        (when (seq-every-p (lambda (n) (or (member n listed) (member n dangerous))) needs)
          (cond
           ((and (plist-get e :requires) (not (executable-find (plist-get e :requires))))
            (push (format "%s (%s is not installed)" label (plist-get e :requires)) skipped))
           ((and (eq (plist-get e :home) 'real) (not (gptel-scope-test--everyday-real-cargo-bin)))
            (push (format "%s (no rustup in the real ~/.cargo/bin)" label) skipped))
           (t (push (append (list :label label
                                  :dangerous (and (seq-some (lambda (n) (member n dangerous)) needs) t))
                            e)
                    run))))))
    (list (nreverse run) (nreverse skipped))))

(defun gptel-scope-test--everyday-judge (entry ref box &optional mode)
  "Judge BOX, a run of ENTRY under the sandbox, against REF, one without it.
MODE is BOX's, `auto' unless given.  Return a plist: :works, the
reference is its normal outcome; :same, the sandboxed run agrees with
it; :problems, strings."
  (let* ((a (plist-get ref :answer))
         (expected (or (plist-get entry :exit) 0))
         (outcome (gptel-scope-test--everyday-outcome ref))
         (asked (plist-get ref :asked))
         (works (and (eq (car outcome) 'ran)
                     (eql (plist-get a :exit_code) expected)
                     (or (not (plist-get entry :dangerous))
                         (equal (car asked) "dangerous_command"))))
         (wall (if (eq mode 'landlock) "Landlock" "the sandbox"))
         (effects (gptel-scope-test--everyday-effects-diff (plist-get ref :effects) (plist-get box :effects) wall))
         (same (and (equal outcome (gptel-scope-test--everyday-outcome box)) (null effects)))
         (problems nil))
    (unless works
      (push (format "does not work without the sandbox: %s%s"
                    (gptel-scope-test--everyday-describe ref)
                    (if (and (plist-get entry :dangerous) (eq (car outcome) 'ran)
                             (not (equal (car asked) "dangerous_command")))
                        (format " (a dangerous command, asked: %S)" asked)
                      ""))
            problems))
    (unless same
      (push (format "under %s: %s%s" wall
                    (gptel-scope-test--everyday-describe box)
                    (if (and (equal outcome (gptel-scope-test--everyday-outcome box)) effects)
                        (format " (same answer, but %s)" (string-join effects "; "))
                      (if effects (format " (and %s)" (string-join effects "; ")) "")))
            problems))
    (list :works works :same (and works same) :problems (nreverse problems))))

(defvar gptel-scope-test--everyday-summaries nil
  "What each everyday test printed in this session, newest first.")

(defun gptel-scope-test--everyday-table (profile results skipped seconds &optional mode)
  "Return the table of PROFILE's RESULTS, which took SECONDS, as text.
RESULTS are (ENTRY . JUDGEMENT); SKIPPED the commands not run here;
MODE the sandbox compared, `auto' unless given.  The table is also
kept for the summary printed when Emacs exits."
  (let* ((n (length results))
         (dangerous (seq-count (lambda (r) (plist-get (car r) :dangerous)) results))
         (works (seq-count (lambda (r) (plist-get (cdr r) :works)) results))
         (same (seq-count (lambda (r) (plist-get (cdr r) :same)) results))
         (table
          (concat
           (format "everyday commands, profile %s%s: %d commands the profile lists (%d dangerous, run after Allow once); %.0f s\n"
                   profile (if (eq mode 'landlock) ", Landlock" "") n dangerous seconds)
           (format "  %-38s %3d of %d work\n" "without the sandbox:" works n)
           (format "  %-38s %3d of %d work, with the same result\n"
                   (if (eq mode 'landlock)
                       "under Landlock (auto, bwrap failing):"
                     (format "under the sandbox (auto: %s):"
                             (if (gptel-scope-test-bwrap-works-p) "bubblewrap" "none")))
                   same n)
           (if skipped (format "  not run here: %s\n" (string-join skipped ", ")) "")
           (mapconcat (lambda (r)
                        (if (plist-get (cdr r) :problems)
                            (format "  FAIL %-34s %s\n" (plist-get (car r) :label)
                                    (string-join (plist-get (cdr r) :problems) "\n       "))
                          ""))
                      results ""))))
    (push (string-trim-right table) gptel-scope-test--everyday-summaries)
    table))

(defun gptel-scope-test--everyday-profile (profile &optional mode)
  "Run PROFILE's everyday commands both ways, print the table, return the failures.
Without the sandbox and in MODE, `auto' (bubblewrap) unless given, or
`landlock'; skipped where that wall does not work."
  (let ((mode (or mode 'auto)))
    (gptel-scope-test--everyday-skip-unless-wall mode)
    (gptel-scope-test--everyday-with-root root
      (let* ((start (float-time))
             (template (gptel-scope-test--everyday-template root profile))
             (selection (gptel-scope-test--everyday-selection (gptel-scope-test--everyday-categories template)))
             (results
              (mapcar (lambda (entry)
                        (let* ((grant (and (plist-get entry :dangerous) "o"))
                               (ref (gptel-scope-test--everyday-run root template entry nil grant))
                               (box (gptel-scope-test--everyday-run root template entry mode grant)))
                          (cons entry (gptel-scope-test--everyday-judge entry ref box mode))))
                      (car selection))))
        (message "%s" (gptel-scope-test--everyday-table profile results (cadr selection) (- (float-time) start) mode))
        (should (> (length results) 0))
        (delq nil (mapcar (lambda (r)
                            (and (plist-get (cdr r) :problems)
                                 (cons (plist-get (car r) :label) (plist-get (cdr r) :problems))))
                          results))))))

(defun gptel-scope-test--everyday-print-summary ()
  "Print again, together, what every everyday test of this session printed."
  (when gptel-scope-test--everyday-summaries
    (message "everyday commands, the summary of this run:\n%s"
             (mapconcat (lambda (s) (concat "  " (replace-regexp-in-string "\n" "\n  " s)))
                        (reverse gptel-scope-test--everyday-summaries) "\n"))))

(add-hook 'kill-emacs-hook #'gptel-scope-test--everyday-print-summary)

;;;; Allow once and Add to scope

(defconst gptel-scope-test--everyday-grant-cases
  '(("read-only" "touch new.txt" "o" "project/new.txt"
     "a command the profile does not list, writing in the read-only project")
    ("read-only" "mkdir -p ../outside/made" "o" "outside/made"
     "a command the profile does not list, writing beside the project")
    ("coding" "touch ../outside/new.txt" "o" "outside/new.txt"
     "a write outside the write scope")
    ("read-only" "touch new.txt" "a" "project/new.txt"
     "a command and the project directory added to the scope")
    ("coding" "touch ../outside/new.txt" "a" "outside/new.txt"
     "a path outside the write scope added to the scope"))
  "The grant cases: (PROFILE COMMAND KEY FILE WHAT).
The model's COMMAND is refused; at each refusal the user presses KEY
\(\"o\" Allow once, \"a\" Add to scope) in the expansion menu and the model
makes the call again.  Then FILE, relative to the fixture's root, must
exist.  WHAT says what the case is.")

(defun gptel-scope-test--everyday-grant-run (root template case mode)
  "Run the grant CASE in a fresh copy of TEMPLATE under ROOT, in MODE.
Return (MODE ASKED OUTCOME CREATED AGAIN): the reasons of the
refusals lifted, the final call's outcome in words, whether the file
the command writes exists afterwards, and, after Add to scope, the
outcome of the same call made again, which must run without asking."
  (pcase-let* ((`(,_profile ,command ,key ,file ,_what) case)
               (work (expand-file-name "work/" root))
               (again nil))
    (gptel-scope-test--everyday-copy template work)
    (let* ((r (gptel-scope-test--everyday-in-chat
               work mode nil
               (lambda ()
                 (prog1 (condition-case err
                            (gptel-scope-test--everyday-call-granting command key)
                          (error (list nil nil (error-message-string err))))
                   (when (equal key "a")
                     (setq again (gptel-scope-test--everyday-describe
                                  (list :answer (gptel-scope-test--everyday-call command)))))))))
           (answer (car r)))
      (list mode (cadr r)
            (if (nth 2 r)
                (concat "harness error: " (nth 2 r))
              (gptel-scope-test--everyday-describe (list :answer answer)))
            (file-exists-p (expand-file-name file work))
            again))))

(defun gptel-scope-test--everyday-grants (key &optional mode)
  "Run the grant cases of KEY both ways; print them; return the failures.
Without the sandbox and in MODE, `auto' (bubblewrap) unless given, or
`landlock'; skipped where that wall does not work."
  (setq mode (or mode 'auto))
  (gptel-scope-test--everyday-skip-unless-wall mode)
  (gptel-scope-test--everyday-with-root root
    (let ((failures nil) (lines nil) (templates nil))
      (dolist (case gptel-scope-test--everyday-grant-cases)
        (when (equal (nth 2 case) key)
          (let* ((dir (file-name-as-directory (expand-file-name (car case) root)))
                 (template (or (cdr (assoc (car case) templates))
                               (let ((tem (gptel-scope-test--everyday-template dir (car case))))
                                 (push (cons (car case) tem) templates)
                                 tem))))
            (dolist (run (list (gptel-scope-test--everyday-grant-run dir template case nil)
                               (gptel-scope-test--everyday-grant-run dir template case mode)))
              (pcase-let ((`(,mode ,asked ,outcome ,created ,again) run))
                (let ((ok (and created (string-prefix-p "exit 0:" outcome)
                               (or (not (equal key "a")) (string-prefix-p "exit 0:" again)))))
                  (push (format "  %-4s %-10s %-26s %-10s asked %-45s %s%s%s"
                                (if ok "ok" "FAIL") (car case) (nth 1 case)
                                (gptel-scope-test--everyday-mode-name mode)
                                (mapconcat #'identity asked ", ") outcome
                                (if created "" " (nothing written)")
                                (if again (format "; again: %s" again) ""))
                        lines)
                  (unless ok
                    (push (list (car case) (nth 1 case) (pcase mode ('nil 'no-sandbox) ('auto 'sandbox) (_ mode))
                                :asked asked :outcome outcome :created created :again again)
                          failures))))))))
      (let ((text (format "everyday grants, %s under %s and without it:\n%s"
                          (if (equal key "o") "Allow once" "Add to scope")
                          (if (eq mode 'landlock) "Landlock" "the sandbox")
                          (string-join (nreverse lines) "\n"))))
        (push text gptel-scope-test--everyday-summaries)
        (message "%s" text))
      (nreverse failures))))

;;;; git runs nothing the model wrote

(defun gptel-scope-test--everyday-hook-run (root template mode)
  "Commit through run_bash_command in a copy of TEMPLATE under ROOT, in MODE.
The repository has a pre-commit hook, written as a model would,
creating a marker file.  Return (MODE OUTCOME MARKER SUBJECT):
the call's outcome in words, whether the marker exists, and the
subject of the commit at HEAD afterwards."
  (let* ((work (expand-file-name "work/" root))
         (project (expand-file-name "project/" work))
         (marker (expand-file-name "hook-ran" project)))
    (gptel-scope-test--everyday-copy template work)
    (gptel-scope-test--everyday-write (expand-file-name ".git/hooks/pre-commit" project)
                                      (format "#!/bin/sh\ntouch '%s'\n" marker) #o755)
    (let ((outcome (condition-case err
                       (gptel-scope-test--everyday-describe
                        (list :answer (gptel-scope-test--everyday-in-chat
                                       work mode nil
                                       (lambda ()
                                         (gptel-scope-test--everyday-call "git commit -m 'Update the todo list'")))))
                     (error (concat "harness error: " (error-message-string err))))))
      (list mode outcome (file-exists-p marker)
            (string-trim (gptel-scope-test--everyday-git project nil "log" "-1" "--format=%s"))))))

(defconst gptel-scope-test--everyday-fsmonitor-commands
  '("git --git-dir=evil.git --work-tree=. status --short"
    "git --git-dir evil.git --work-tree . status --short")
  "Commands reading the status of a repository whose config names core.fsmonitor.")

(defun gptel-scope-test--everyday-fsmonitor-outcome (outcome)
  "Return OUTCOME, of `gptel-scope-test--everyday-fsmonitor-run', in words."
  (pcase outcome
    (`(ran ,code ,output) (format "ran, exit %s: %s" code (gptel-scope-test--everyday-first-line output)))
    (`(refused ,reason) (format "refused (%s)" reason))
    (_ (format "%S" outcome))))

(defun gptel-scope-test--everyday-fsmonitor-run (root template mode command)
  "Run COMMAND in MODE, in a copy of TEMPLATE under ROOT with a hostile git dir.
The project holds evil.git, a repository made apart from the work tree
\(used with --git-dir), whose config names as core.fsmonitor a script
of the project creating a marker file: all of it written as a model
could write it.  Return (MODE COMMAND OUTCOME MARKER EXPECTED): the
call's outcome, whether the marker exists, and what git prints for the
command when the script is not run (core.fsmonitor off)."
  (let* ((work (expand-file-name "work/" root))
         (project (expand-file-name "project/" work))
         (marker (expand-file-name "fsmonitor-ran" project))
         (script (expand-file-name "tools/fsmonitor.sh" project)))
    (gptel-scope-test--everyday-copy template work)
    (gptel-scope-test--everyday-git project nil "init" "-q" "--bare" "--template=" "evil.git")
    (gptel-scope-test--everyday-git project nil "config" "-f" "evil.git/config" "core.fsmonitor" script)
    (gptel-scope-test--everyday-write script (format "#!/bin/sh\ntouch '%s'\n" marker) #o755)
    (let* ((answer (condition-case err
                       (gptel-scope-test--everyday-in-chat
                        work mode nil (lambda () (gptel-scope-test--everyday-call command)))
                     (error (list :error (error-message-string err)))))
           (created (file-exists-p marker))
           (expected (progn
                       (when created (delete-file marker))
                       (apply #'gptel-scope-test--everyday-git project nil "-c" "core.fsmonitor=false"
                              (cdr (split-string-and-unquote command))))))
      (list mode command
            (cond ((plist-get answer :error) (list 'error (plist-get answer :error)))
                  ((gptel-scope-test--everyday-refused-p answer)
                   (list 'refused (plist-get answer :reason)))
                  (t (list 'ran (plist-get answer :exit_code) (plist-get answer :output))))
            created expected))))

;;;; Tests

(defun gptel-scope-test--everyday-hook (mode)
  "Commit with a pre-commit hook without the sandbox and in MODE; check both.
MODE is `auto' or `landlock'.  The runs are printed."
  (gptel-scope-test--everyday-with-root root
    (let* ((template (gptel-scope-test--everyday-template root "coding"))
           (runs (list (gptel-scope-test--everyday-hook-run root template nil)
                       (gptel-scope-test--everyday-hook-run root template mode))))
      (push (format "everyday git commit with a pre-commit hook (coding%s):\n%s"
                    (if (eq mode 'landlock) ", Landlock" "")
                    (mapconcat (lambda (r) (format "  %-10s %s; hook %s; HEAD: %s"
                                                   (gptel-scope-test--everyday-mode-name (car r)) (nth 1 r)
                                                   (if (nth 2 r) "RAN" "did not run") (nth 3 r)))
                               runs "\n"))
            gptel-scope-test--everyday-summaries)
      (message "%s" (car gptel-scope-test--everyday-summaries))
      ;; The hook did not run, and the commit was made.
      (should (equal (mapcar (lambda (r) (list (car r) :hook-ran (nth 2 r) :head (nth 3 r))) runs)
                     `((nil :hook-ran nil :head "Update the todo list")
                       (,mode :hook-ran nil :head "Update the todo list")))))))

(defun gptel-scope-test--everyday-fsmonitor (mode)
  "Run the core.fsmonitor commands without the sandbox and in MODE; check them.
MODE is `auto' or `landlock'.  The runs are printed."
  (gptel-scope-test--everyday-with-root root
    (let* ((template (gptel-scope-test--everyday-template root "coding"))
           (runs (apply #'append
                        (mapcar (lambda (command)
                                  (list (gptel-scope-test--everyday-fsmonitor-run root template nil command)
                                        (gptel-scope-test--everyday-fsmonitor-run root template mode command)))
                                gptel-scope-test--everyday-fsmonitor-commands))))
      (push (format "everyday core.fsmonitor of a --git-dir repository (coding%s):\n%s"
                    (if (eq mode 'landlock) ", Landlock" "")
                    (mapconcat (lambda (r) (format "  %-10s %-52s %s; script %s"
                                                   (gptel-scope-test--everyday-mode-name (car r)) (nth 1 r)
                                                   (gptel-scope-test--everyday-fsmonitor-outcome (nth 2 r))
                                                   (if (nth 3 r) "RAN" "did not run")))
                               runs "\n"))
            gptel-scope-test--everyday-summaries)
      (message "%s" (car gptel-scope-test--everyday-summaries))
      (let ((name (lambda (r) (format "%s, %s: %s" (nth 1 r) (gptel-scope-test--everyday-mode-name (car r))
                                      (gptel-scope-test--everyday-fsmonitor-outcome (nth 2 r))))))
        ;; No marker: the script never ran.
        (should (equal (mapcar name (seq-filter (lambda (r) (nth 3 r)) runs)) nil))
        ;; Refused, or run as git runs it without the script, exactly.
        (should (equal (mapcar name (seq-remove
                                     (lambda (r)
                                       (pcase (nth 2 r)
                                         (`(refused ,reason) (stringp reason))
                                         (`(ran ,code ,output) (and (eql code 0) (equal output (nth 4 r))))))
                                     runs))
                       nil))
        ;; The sandbox does not change what the engine decides.
        (should (equal (mapcar (lambda (r) (list (nth 1 r) (car (nth 2 r)))) (seq-remove #'car runs))
                       (mapcar (lambda (r) (list (nth 1 r) (car (nth 2 r)))) (seq-filter #'car runs))))))))

(ert-deftest gptel-scope-test-everyday-coding ()
  "Every everyday command the coding profile lists works, the same under the sandbox."
  (should (equal (gptel-scope-test--everyday-profile "coding") nil)))

(ert-deftest gptel-scope-test-everyday-read-only ()
  "Every everyday command the read-only profile lists works, the same under the sandbox."
  (should (equal (gptel-scope-test--everyday-profile "read-only") nil)))

(ert-deftest gptel-scope-test-everyday-restricted ()
  "Every everyday command the restricted profile lists works, the same under the sandbox."
  (should (equal (gptel-scope-test--everyday-profile "restricted") nil)))

(ert-deftest gptel-scope-test-everyday-allow-once-under-sandbox ()
  "What the user allowed once runs under the sandbox as it runs without it.
A command the profile does not list and a path outside the write
scope: after Allow once the retried call succeeds and its file is there."
  (should (equal (gptel-scope-test--everyday-grants "o") nil)))

(ert-deftest gptel-scope-test-everyday-add-to-scope-under-sandbox ()
  "What the user added to the scope runs under the sandbox as it runs without it.
A command with its directory, and a path outside the write scope:
after Add to scope the retried call succeeds, its file is there, and
the same call runs again without asking."
  (should (equal (gptel-scope-test--everyday-grants "a") nil)))

(ert-deftest gptel-scope-test-everyday-git-commit-runs-no-hook ()
  "`git commit' through run_bash_command makes the commit and runs no hook.
The pre-commit hook was written into .git/hooks as a model would; the
commit must be made, with and without the sandbox, and the hook must
not run."
  (gptel-scope-test--everyday-hook 'auto))

(ert-deftest gptel-scope-test-everyday-git-dir-fsmonitor-runs-nothing ()
  "A --git-dir repository whose config names core.fsmonitor runs nothing.
Either the engine refuses the command, or git runs without the
script: then its output is exactly what git prints with core.fsmonitor
off.  The same with and without the sandbox."
  (gptel-scope-test--everyday-fsmonitor 'auto))

;;;; The same under Landlock

;; Where bubblewrap cannot run (Ubuntu 24.04's AppArmor rule), `auto'
;; is Landlock: each test above again, bubblewrap made to fail as
;; AppArmor makes it fail.  Skipped where the kernel has no Landlock.

(ert-deftest gptel-scope-test-everyday-landlock-coding ()
  "Every everyday command the coding profile lists works, the same under Landlock."
  (should (equal (gptel-scope-test--everyday-profile "coding" 'landlock) nil)))

(ert-deftest gptel-scope-test-everyday-landlock-read-only ()
  "Every everyday command the read-only profile lists works, the same under Landlock."
  (should (equal (gptel-scope-test--everyday-profile "read-only" 'landlock) nil)))

(ert-deftest gptel-scope-test-everyday-landlock-restricted ()
  "Every everyday command the restricted profile lists works, the same under Landlock."
  (should (equal (gptel-scope-test--everyday-profile "restricted" 'landlock) nil)))

(ert-deftest gptel-scope-test-everyday-landlock-allow-once ()
  "What the user allowed once runs under Landlock as it runs without it."
  (should (equal (gptel-scope-test--everyday-grants "o" 'landlock) nil)))

(ert-deftest gptel-scope-test-everyday-landlock-add-to-scope ()
  "What the user added to the scope runs under Landlock as it runs without it."
  (should (equal (gptel-scope-test--everyday-grants "a" 'landlock) nil)))

(ert-deftest gptel-scope-test-everyday-landlock-git-commit-runs-no-hook ()
  "`git commit' under Landlock makes the commit and runs no hook."
  (gptel-scope-test--everyday-skip-unless-wall 'landlock)
  (gptel-scope-test--everyday-hook 'landlock))

(ert-deftest gptel-scope-test-everyday-landlock-git-dir-fsmonitor-runs-nothing ()
  "Under Landlock too, a --git-dir repository's core.fsmonitor runs nothing."
  (gptel-scope-test--everyday-skip-unless-wall 'landlock)
  (gptel-scope-test--everyday-fsmonitor 'landlock))

(provide 'gptel-scope-everyday-test)
;;; gptel-scope-everyday-test.el ends here
