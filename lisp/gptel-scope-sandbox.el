;;; gptel-scope-sandbox.el --- Running commands in a bubblewrap sandbox  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The second wall around the commands the module allowed: unless
;; `gptel-scope-sandbox' is nil, each command runs under bubblewrap
;; (bwrap) wherever it works, and sees only
;;
;; - the scope's read paths, read-only, and its write paths, writable:
;;   each pattern of paths.read and paths.write reduced to its literal
;;   directory prefix by the module (`~/src/**/*.c' shows `~/src');
;; - the system directories a shell needs, read-only: /usr, /bin, /sbin,
;;   /lib*, /etc; a private /tmp (TMPDIR), /proc and a minimal /dev; an
;;   empty private home directory unless the scope shows the real one;
;; - nothing of what the deny patterns name as a whole file or directory,
;;   nor of the entries their globs (`**/.env', `**/*.pem') cover under
;;   the read and write paths, found by the module's walk of names
;;   before each command: a directory is covered by an empty read-only
;;   file system, anything else by an empty read-only file.  When the
;;   walk cannot tell (too many entries, an unreadable directory),
;;   nothing runs.
;;
;; Every other path does not exist inside; the root is read-only; the
;; command has no network (all namespaces unshared) unless the scope says
;; `sandbox: {network: true}', no capabilities, and dies with Emacs's
;; process.  The validator still decides what
;; runs: the sandbox only stops what it lets through from reaching
;; further than the scope's directories, for instance a path argument
;; that `path_arguments: warn' let pass.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'gptel-scope-core)
(require 'gptel-scope-session)

(defcustom gptel-scope-sandbox 'auto
  "The wall that confines the commands the module allowed.
`auto' (the default) runs each under bubblewrap where it works, else
under Landlock where the kernel has it (Linux 5.13 and later: where
AppArmor or a container forbids bubblewrap's user namespaces), else
with the module's checks alone, saying so once.  `wall' requires one
of the two and runs nothing without; `bwrap' requires bubblewrap and
`landlock' Landlock.  nil runs commands with the module's checks
alone.  Whatever the wall, every command runs under the supervisor
`gptel-scope-run': its limits (`sandbox.limits' of the scope), and no
process it started outlives the call."
  :type '(choice (const :tag "bubblewrap, else Landlock, else none" auto)
                 (const :tag "bubblewrap or Landlock, or run nothing" wall)
                 (const :tag "bubblewrap, or run nothing" bwrap)
                 (const :tag "Landlock, or run nothing" landlock)
                 (const :tag "No wall" nil))
  :group 'gptel-scope)

(defcustom gptel-scope-sandbox-denied-reads 'mask
  "What a command reading a whole tree gets when it holds denied entries.
With the sandbox running the command, `mask' (the default) allows it:
every entry a deny pattern covers reads as empty, and the model is told
so.  `refuse' refuses it (`reaches_denied_path') as without the sandbox,
naming the entry and how to exclude it."
  :type '(choice (const :tag "Allow; the sandbox masks them" mask)
                 (const :tag "Refuse, as without the sandbox" refuse))
  :group 'gptel-scope)

(defcustom gptel-scope-sandbox-program "bwrap"
  "The bubblewrap program."
  :type 'string
  :group 'gptel-scope)

(defconst gptel-scope-sandbox--system-read-only '("/usr" "/etc")
  "System directories every command sees, read-only.")

(defconst gptel-scope-sandbox--system-links '("/bin" "/sbin" "/lib" "/lib32" "/lib64" "/libx32")
  "Top directories that are links into /usr on merged systems, else read-only.")

(defvar gptel-scope-exec-call nil
  "What the decision of the call being started says it needs, or nil.
A plist (:read PATHS :write PATHS :write-in DIRS :programs NAMES):
what a grant let it read, the paths it writes, the directories a grant
let it write in, and the programs it runs.  Bound around
`gptel-scope-exec-start' by the tools, for
`gptel-scope-exec-argv-function' (the sandbox shows the call what its
decision allowed, and its programs' toolchains).")

(defvar gptel-scope-sandbox--works nil
  "Alist (PROGRAM . WORKS) of the sandbox programs tried in this session.")

(defun gptel-scope-sandbox--depth (path)
  "Return the number of components of the absolute PATH."
  (length (split-string path "/" t)))

(defvar gptel-scope-sandbox--empty-file nil
  "The empty read-only file bound over denied files, once made.")

(defconst gptel-scope-sandbox--empty-prefix "gptel-scope-empty-"
  "The start of the names of the empty files, before the pid of their Emacs.")

(defun gptel-scope-sandbox--empty-p (file)
  "Return non-nil when FILE is an empty regular file of this user."
  (let ((attrs (file-attributes file 'integer)))
    (and attrs
         (null (file-attribute-type attrs))
         (eql 0 (file-attribute-size attrs))
         (eql (user-uid) (file-attribute-user-id attrs)))))

(defun gptel-scope-sandbox--empty-clean ()
  "Delete the empty files that killed Emacs sessions of this user left.
Only files named `gptel-scope-sandbox--empty-prefix', the pid and a
random part, in the variable `temporary-file-directory', that are empty regular
files of this user and whose Emacs is no longer running."
  (let ((re (concat "\\`" (regexp-quote gptel-scope-sandbox--empty-prefix)
                    "\\([0-9]+\\)-[^/]+\\'")))
    (dolist (f (ignore-errors (directory-files temporary-file-directory t re t)))
      (let* ((name (file-name-nondirectory f))
             (pid (and (string-match re name) (string-to-number (match-string 1 name)))))
        (when (and pid (> pid 0) (/= pid (emacs-pid))
                   (null (process-attributes pid))
                   (gptel-scope-sandbox--empty-p f))
          (ignore-errors (delete-file f)))))))

(defun gptel-scope-sandbox--empty-remove ()
  "Delete this session's empty file, when Emacs exits."
  (let ((f gptel-scope-sandbox--empty-file))
    (when (and f (gptel-scope-sandbox--empty-p f))
      (ignore-errors (delete-file f)))
    (setq gptel-scope-sandbox--empty-file nil)))

(defun gptel-scope-sandbox--empty-file ()
  "Return the name of an empty, read-only regular file of this user.
Bound over each denied file: reading it gives nothing.  Made once per
session, with `make-temp-file' (created exclusively, with a random part
in its name after the pid of this Emacs), and made again when it is no
longer an empty regular file of this user.  It is deleted when Emacs
exits; one a killed Emacs left is deleted when the next makes its own."
  (let ((f gptel-scope-sandbox--empty-file))
    (unless (and f (gptel-scope-sandbox--empty-p f))
      (gptel-scope-sandbox--empty-clean)
      (setq f (with-file-modes #o600
                (make-temp-file (format "%s%d-" gptel-scope-sandbox--empty-prefix (emacs-pid)))))
      (set-file-modes f #o444)
      (setq gptel-scope-sandbox--empty-file f)
      (add-hook 'kill-emacs-hook #'gptel-scope-sandbox--empty-remove))
    f))

(defun gptel-scope-sandbox--under-p (path dir)
  "Return non-nil when PATH lies strictly under the directory DIR."
  (and (not (equal path dir)) (string-prefix-p (file-name-as-directory dir) path)))

(defun gptel-scope-sandbox--covers (mounts)
  "Return the covers of MOUNTS: a list of (PATH DIRP . ARGS), outermost first.
They are the hidden paths that exist inside the shown directories and
the masks, without any lying under a covered directory (the empty file
system over it is read-only, and covers them already)."
  (let* ((shown (append (plist-get mounts :read) (plist-get mounts :write) (plist-get mounts :tools)))
         (inside (lambda (p) (seq-some (lambda (d) (or (equal d "/") (equal p d)
                                                        (string-prefix-p (file-name-as-directory d) p)))
                                       shown)))
         (dir (lambda (p) (list p t "--tmpfs" p "--remount-ro" p)))
         (file (lambda (p) (list p nil "--ro-bind" (gptel-scope-sandbox--empty-file) p)))
         (covers
          (append
           (delq nil
                 (mapcar (lambda (p)
                           (cond ((not (funcall inside p)) nil)
                                 ((file-directory-p p) (funcall dir p))
                                 ((file-exists-p p) (funcall file p))))
                         (plist-get mounts :hide)))
           (mapcar (lambda (m)
                     (funcall (if (equal (plist-get m :kind) "dir") dir file) (plist-get m :path)))
                   (plist-get mounts :masks))))
         (dirs (mapcar #'car (seq-filter #'cadr covers)))
         (kept (seq-remove (lambda (c) (seq-some (lambda (d) (gptel-scope-sandbox--under-p (car c) d)) dirs))
                           (cl-remove-duplicates covers :key #'car :test #'equal :from-end t))))
    (cl-stable-sort kept #'< :key (lambda (c) (gptel-scope-sandbox--depth (car c))))))

(defun gptel-scope-sandbox--system-mounts ()
  "Return the system mounts, a list of (PATH . ARGS)."
  (append
   (mapcar (lambda (d) (cons d (list "--ro-bind-try" d d))) gptel-scope-sandbox--system-read-only)
   (delq nil
         (mapcar (lambda (d)
                   (let ((link (file-symlink-p d)))
                     (cond (link (cons d (list "--symlink" link d)))
                           ((file-directory-p d) (cons d (list "--ro-bind" d d))))))
                 gptel-scope-sandbox--system-links))
   (list (cons "/tmp" (list "--tmpfs" "/tmp"))
         (cons "/proc" (list "--proc" "/proc"))
         (cons "/dev" (list "--dev" "/dev")))))

(defun gptel-scope-sandbox--private-home (shown)
  "Return the mount of an empty private home, or nil if SHOWN has the home.
SHOWN is the list of directories bound; when none of them is the home
directory or above it, the home is an empty writable file system (the
scope's directories under it are bound over it), so that programs
writing their caches and settings there work and keep nothing."
  (let ((home (directory-file-name (expand-file-name "~"))))
    (unless (or (equal home "/")
                (seq-some (lambda (d) (or (equal d "/") (equal d home)
                                          (string-prefix-p (file-name-as-directory d) home)))
                          shown))
      (list (cons home (list "--tmpfs" home))))))

(defun gptel-scope-sandbox-argv (argv directory mounts)
  "Return the bwrap argv running ARGV in DIRECTORY with MOUNTS.
MOUNTS is a plist (:read DIRS :write DIRS :tools PATHS :hide PATHS
:masks MASKS :protect PATHS :network BOOL) of absolute paths (:tools
shown read-only: the toolchains of the call's programs, the user's git
configuration); each of MASKS a plist
\(:path PATH :kind \"file\" or \"dir\").  The network is shared only
when :network is t.  A mount of a path that does not exist is
skipped; a hidden path is covered only when it exists inside a read or
write mount; a protected one (a scope document, the profiles, the trust
list) is bound read-only over the writable directory holding it.
Mounts are made outermost first, so a writable directory inside a
read-only one stays writable; the covers of hidden and masked entries
come after every mount (a cover over a directory holding a writable
one covers that too), then the protected paths outside them."
  (let* ((shown (append (plist-get mounts :read) (plist-get mounts :write)))
         (inside (lambda (p) (seq-some (lambda (d) (or (equal d "/") (equal p d)
                                                        (string-prefix-p (file-name-as-directory d) p)))
                                       shown)))
         (binds
          (append
           (gptel-scope-sandbox--system-mounts)
           (gptel-scope-sandbox--private-home shown)
           (mapcar (lambda (d) (cons d (list "--ro-bind-try" d d))) (plist-get mounts :read))
           (mapcar (lambda (d) (cons d (list "--bind-try" d d))) (plist-get mounts :write))
           ;; The programs' toolchains and the user's git configuration, read-only.
           (mapcar (lambda (d) (cons d (list "--ro-bind-try" d d))) (plist-get mounts :tools))))
         (covers (gptel-scope-sandbox--covers mounts))
         (protect
          (seq-filter (lambda (p)
                        (and (funcall inside p) (file-exists-p p)
                             (not (seq-some (lambda (c) (or (equal (car c) p)
                                                            (and (cadr c) (gptel-scope-sandbox--under-p p (car c)))))
                                            covers))))
                      (plist-get mounts :protect))))
    (append (list gptel-scope-sandbox-program
                  "--die-with-parent" "--unshare-all" "--cap-drop" "ALL")
            (and (eq (plist-get mounts :network) t) (list "--share-net"))
            (apply #'append
                   (mapcar #'cdr (cl-stable-sort binds #'< :key (lambda (e) (gptel-scope-sandbox--depth (car e))))))
            (apply #'append (mapcar #'cddr covers))
            (apply #'append (mapcar (lambda (p) (list "--ro-bind" p p)) protect))
            ;; The command's TMPDIR, when it has one, is the private /tmp.
            (and (getenv "TMPDIR") (list "--setenv" "TMPDIR" "/tmp"))
            ;; bubblewrap sets PWD to this: without a trailing slash, as a shell would.
            (list "--remount-ro" "/" "--chdir" (directory-file-name directory) "--")
            argv)))

(defun gptel-scope-sandbox--probe ()
  "Return what `gptel-scope-run --probe' found here, a plist.
\(:landlock_abi N :bwrap (:works BOOL :cause CAUSE :reason TEXT :fix
TEXT)) for `gptel-scope-sandbox-program'; asked once per program and
session."
  (let ((known (assoc gptel-scope-sandbox-program gptel-scope-sandbox--works)))
    (if known
        (let ((v (cdr known)))
          ;; t or nil: whether bubblewrap works, said by the caller (tests); no Landlock.
          (if (booleanp v)
              (list :landlock_abi 0
                    :bwrap (list :works v :cause "other" :reason (format "`%s' was found not to work" gptel-scope-sandbox-program)
                                 :fix "see M-x gptel-scope-explain"))
            v))
      (let* ((run (gptel-scope-run-program))
             (found
              (or (and (file-executable-p run)
                       (ignore-errors
                         (with-temp-buffer
                           (let ((default-directory "/"))
                             (when (eql 0 (call-process run nil (list t nil) nil "--probe" gptel-scope-sandbox-program))
                               (json-parse-string (buffer-string) :object-type 'plist
                                                  :false-object nil :null-object nil))))))
                  (list :landlock_abi 0
                        :bwrap (list :works nil :cause "other"
                                     :reason (format "the supervisor %s is missing or failed" run)
                                     :fix "rebuild the module: M-x gptel-scope-build-module")))))
        (push (cons gptel-scope-sandbox-program found) gptel-scope-sandbox--works)
        found))))

(defun gptel-scope-sandbox-works-p ()
  "Return non-nil when `gptel-scope-sandbox-program' can run a command here.
It needs the program and, for an unprivileged user, user namespaces
that no AppArmor rule or container forbids.  Tried once per program
and session."
  (plist-get (plist-get (gptel-scope-sandbox--probe) :bwrap) :works))

(defun gptel-scope-sandbox-landlock-abi ()
  "Return the Landlock ABI this kernel has, 0 when it has none."
  (or (plist-get (gptel-scope-sandbox--probe) :landlock_abi) 0))

(defun gptel-scope-sandbox-wall ()
  "Return the wall commands run behind here: `bwrap', `landlock' or nil.
As `gptel-scope-sandbox' asks and this machine allows; nil also when
the setting requires a wall that cannot run (then nothing runs)."
  (let ((bwrap (lambda () (and (gptel-scope-sandbox-works-p) 'bwrap)))
        (landlock (lambda () (and (> (gptel-scope-sandbox-landlock-abi) 0) 'landlock))))
    (pcase gptel-scope-sandbox
      ('nil nil)
      ('bwrap (funcall bwrap))
      ('landlock (funcall landlock))
      (_ (or (funcall bwrap) (funcall landlock))))))

(defun gptel-scope-sandbox--call-json (call)
  "Return CALL, a decision's :sandbox plist, in the module's form."
  (list :read (vconcat (plist-get call :read))
        :write (vconcat (plist-get call :write))
        :write_in (vconcat (plist-get call :write-in))
        :programs (vconcat (plist-get call :programs))))

(defun gptel-scope-sandbox-mounts (&optional buffer directory call)
  "Return the sandbox mounts of BUFFER's scope.
That is (:read DIRS :write DIRS :tools PATHS :hide PATHS :protect PATHS
:masks MASKS :cannot_mask WHY), from the module.  With CALL, what a
call's decision says it needs (`gptel-scope-exec-call'), the mounts of
that call run in DIRECTORY: what its grants let it reach, the
toolchains its programs resolve to on the PATH of `process-environment'.
With DIRECTORY and no CALL (a terminal session), the toolchains of
every program the scope lists.  With DIRECTORY, the rules of the
repository it runs in are protected."
  (apply #'gptel-scope--sandbox-mounts (or buffer (current-buffer))
         (append (and directory (list :directory (directory-file-name (expand-file-name directory))
                                      :env (vconcat process-environment)))
                 (and call (list :call (gptel-scope-sandbox--call-json call))))))

(defvar gptel-scope-sandbox--warned nil
  "Non-nil once the user was told which wall commands run behind.")

(defun gptel-scope-sandbox--missing ()
  "Say why bubblewrap cannot run here, and how to fix it."
  (let ((b (plist-get (gptel-scope-sandbox--probe) :bwrap)))
    (format "bubblewrap (`%s') cannot run here: %s.  To fix it: %s"
            gptel-scope-sandbox-program (plist-get b :reason) (plist-get b :fix))))

(defun gptel-scope-sandbox--landlock-words ()
  "Say what the Landlock wall of this kernel stops."
  (let ((abi (gptel-scope-sandbox-landlock-abi)))
    (format "Landlock (ABI %d): commands read only the system's and the scope's directories and write only the write directories and a private TMPDIR%s%s; a denied entry inside a directory they see is not hidden (Landlock cannot), so every command the module sees reading one, a whole tree holding one included, is refused; file modes and times are not guarded"
            abi
            (if (>= abi 4) ", with no TCP unless the scope allows the network" ", with the network open (TCP rules need ABI 4, Linux 6.7)")
            (if (>= abi 6) ", no signal or abstract socket outside the sandbox" ""))))

(defun gptel-scope-sandbox-status ()
  "Describe the wall commands run behind, as one paragraph."
  (let ((wall (gptel-scope-sandbox-wall)))
    (cond
     ((null gptel-scope-sandbox)
      "none: gptel-scope-sandbox is nil, so commands run with the module's checks alone (under the supervisor: limits, nothing outlives its call)")
     ((eq wall 'bwrap)
      "bubblewrap: commands see only the scope's directories (read-only where only read), the system's, a private /tmp and home, no denied entry, and no network unless the scope allows it")
     ((eq wall 'landlock)
      (format "landlock: %s.  Landlock is used because %s" (gptel-scope-sandbox--landlock-words) (gptel-scope-sandbox--missing)))
     ((eq gptel-scope-sandbox 'auto)
      (format "none: %s; this kernel has no Landlock either; commands run with the module's checks alone, and a command those checks miss can read and write anywhere the user can"
              (gptel-scope-sandbox--missing)))
     (t (format "unavailable: gptel-scope-sandbox is `%s' but %s; no command runs"
                gptel-scope-sandbox
                (if (eq gptel-scope-sandbox 'landlock) "this kernel has no Landlock" (gptel-scope-sandbox--missing)))))))

(defun gptel-scope-sandbox--warn-once ()
  "Tell the user once per session when commands run without bubblewrap."
  (unless gptel-scope-sandbox--warned
    (setq gptel-scope-sandbox--warned t)
    (display-warning 'gptel-scope
                     (if (eq (gptel-scope-sandbox-wall) 'landlock)
                         (format "Commands run under %s.  %s.  Set gptel-scope-sandbox to landlock to silence this."
                                 (gptel-scope-sandbox--landlock-words) (gptel-scope-sandbox--missing))
                       (format "Commands run without a sandbox: %s; this kernel has no Landlock either.  Only the module's checks stand between the model and your files.  Set gptel-scope-sandbox to nil to silence this."
                               (gptel-scope-sandbox--missing)))
                     :warning)))

(defun gptel-scope-sandbox--limits (mounts)
  "Return the scope's limits of MOUNTS as the supervisor's spec takes them.
MOUNTS is the module's mounts of a call, or its summary of the scope
\(`gptel-scope--loaded-scope'): both carry them as :limits."
  (let ((l (plist-get mounts :limits)))
    (if (and l (consp l)) l (make-hash-table))))

(defun gptel-scope-sandbox--landlock-spec (mounts)
  "Return the supervisor's Landlock spec for MOUNTS.
Landlock cannot hide an entry inside a directory it shows, as
bubblewrap masks it: there the module's checks alone keep the model
from a denied entry (`gptel-scope-sandbox-masks-p' is nil, so a command
reading a tree that holds one is refused, as without a wall)."
  (list :wall "landlock"
        :read (vconcat (plist-get mounts :read) (plist-get mounts :tools))
        :write (vconcat (plist-get mounts :write))
        :network (if (eq (plist-get mounts :network) t) t :false)
        :limits (gptel-scope-sandbox--limits mounts)))

(defun gptel-scope-sandbox-wrap (argv directory)
  "Return the way to run ARGV in DIRECTORY as `gptel-scope-sandbox' asks.
A plist (:argv ARGV :wall WALL :spec SPEC) for `gptel-scope-exec-wrap'.
Called in the buffer whose scope applies.  Signal
`gptel-scope-sandbox-error' when the wall the setting requires cannot
run, or when the entries bubblewrap is to mask could not all be found."
  (let ((wall (gptel-scope-sandbox-wall)))
    (cond
     ((eq wall 'bwrap)
      (let ((mounts (gptel-scope-sandbox-mounts nil directory gptel-scope-exec-call)))
        ;; The denied entries could not all be found: run nothing rather than show them.
        (when (plist-get mounts :cannot_mask)
          (signal 'gptel-scope-sandbox-error (list (plist-get mounts :cannot_mask))))
        (list :argv (gptel-scope-sandbox-argv argv directory mounts) :wall 'bwrap
              :spec (list :wall "none" :limits (gptel-scope-sandbox--limits mounts)))))
     ((eq wall 'landlock)
      (unless (eq gptel-scope-sandbox 'landlock) (gptel-scope-sandbox--warn-once))
      (let ((mounts (gptel-scope-sandbox-mounts nil directory gptel-scope-exec-call)))
        (list :argv argv :wall 'landlock :spec (gptel-scope-sandbox--landlock-spec mounts))))
     ((memq gptel-scope-sandbox '(nil auto))
      (when gptel-scope-sandbox (gptel-scope-sandbox--warn-once))
      ;; No wall, so no mounts: the limits are the scope's own.
      (list :argv argv :wall nil
            :spec (list :wall "none" :limits (gptel-scope-sandbox--limits (gptel-scope--loaded-scope)))))
     (t (signal 'gptel-scope-sandbox-error
                (list (format "Nothing ran: %s (or set gptel-scope-sandbox to auto or nil)"
                              (gptel-scope-sandbox-status))))))))

(defun gptel-scope-sandbox-masks-p ()
  "Return non-nil when commands run in the sandbox with denied entries masked.
That is when `gptel-scope-sandbox' wraps commands here and
`gptel-scope-sandbox-denied-reads' is `mask'."
  (and (eq gptel-scope-sandbox-denied-reads 'mask)
       (eq (gptel-scope-sandbox-wall) 'bwrap)))

(defvar gptel-scope-masked-function #'gptel-scope-sandbox-masks-p
  "Function telling whether commands run where denied entries are masked.
Called with no argument when a command is judged; non-nil means the
command runs in a sandbox that masks every entry a deny pattern covers
under the scope's directories, so the module allows a command reading a
whole tree with a warning instead of refusing it.  By default the
sandbox's `gptel-scope-sandbox-masks-p'.")

(defun gptel-scope--masked ()
  "Return t when commands run with denied entries masked, else :false (JSON).
The decisions of commands say so to the module
\(`gptel-scope-masked-function')."
  (if (and gptel-scope-masked-function (funcall gptel-scope-masked-function)) t :false))

(defconst gptel-scope-sandbox--failures
  '((not-found . "\\(?:^\\|: \\)\\([^ :\n]+\\): \\(?:command not found\\|No such file or directory\\)$")
    (read-only . "\\(?:^\\|[ `'\"]\\)\\(/?[^ :`'\"\n]+\\)['\"]?: Read-only file system")
    (missing . "\\(?:^\\|[ `'\"]\\)\\(/?[^ :`'\"\n]+\\)['\"]?: No such file or directory"))
  "What a failure the sandbox may have caused looks like in an output.
Each (KIND . REGEXP), group 1 the program or path.")

(defun gptel-scope-sandbox--failure-match (kind output)
  "Return the program or path of the first failure of KIND in OUTPUT, or nil."
  (let ((case-fold-search nil))
    (and (string-match (alist-get kind gptel-scope-sandbox--failures) output)
         (match-string 1 output))))

(defun gptel-scope-sandbox-failure-note (output code directory)
  "Say why the sandboxed command that printed OUTPUT and exited CODE failed.
DIRECTORY is where it ran.  Return a sentence naming what the sandbox
did and what to do instead, or nil when nothing shows that the sandbox
caused the failure: a program found outside but not inside (exit 127),
a path the sandbox shows read-only, or one it does not show."
  (let ((output (or output "")))
    (or
     (let ((program (and (eql code 127) (gptel-scope-sandbox--failure-match 'not-found output))))
       (when program
         (let ((outside (if (string-search "/" program)
                            (let ((f (expand-file-name program directory))) (and (file-executable-p f) f))
                          (executable-find program))))
           (when outside
             (format "The sandbox caused this: `%s' is %s outside the sandbox but not inside it, which shows the system's directories, the scope's, and the toolchains found on PATH for the programs of the call.  Do not retry the same command; ask the user to add its directory to paths.read, or call request_scope_expansion with the path %s and your reason."
                     program outside (file-name-directory outside))))))
     (let ((path (gptel-scope-sandbox--failure-match 'read-only output)))
       (when path
         (let ((full (expand-file-name path directory)))
           (format "The sandbox caused this: %s is read-only inside it, because the scope does not let this call write there (paths.write), or it holds rules no tool may change (a scope document, git's configuration or hooks).  Write inside the write scope, or call request_scope_expansion with tool_name \"run_bash_command\", resource \"%s\" and your reason."
                   full (file-name-directory full)))))
     (let* ((path (gptel-scope-sandbox--failure-match 'missing output))
            (full (and path (expand-file-name path directory))))
       (when (and full (file-exists-p full))
         (format "The sandbox caused this: %s exists outside the sandbox but is not shown inside it: it is outside the scope's read paths, or a deny pattern hides it.  If the task needs it and no deny pattern covers it, call request_scope_expansion with the path and your reason."
                 full))))))

(provide 'gptel-scope-sandbox)
;;; gptel-scope-sandbox.el ends here
