;;; test-helper.el --- Shared setup of the gptel-scope ERT suite  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded first by `make test-elisp' (and by ert-runner): puts lisp/ (the
;; package) and dev/ (make check and make demo, which tests load) on the
;; load path, loads gptel-scope and its module (batch Emacs builds it with
;; cargo when it is missing), and gives the tests their helpers: temporary
;; projects, tool calls that wait for their one answer, and keys typed
;; into the real transient menu.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'seq)

(defconst gptel-scope-test-root
  (file-name-directory (directory-file-name (file-name-directory (or load-file-name buffer-file-name))))
  "The repository root.")

(add-to-list 'load-path (expand-file-name "dev" gptel-scope-test-root))
(add-to-list 'load-path (expand-file-name "lisp" gptel-scope-test-root))

(defconst gptel-scope-test-cli
  (expand-file-name "dev/gptel-scope-cli" gptel-scope-test-root)
  "The file of `make check' (dev/, not part of the package), for `load'.
A fresh Emacs of `gptel-scope-test--emacs' has only lisp/ on its load
path, as an installed package would.")

;;;; gptel: loaded before gptel-scope when it is on the load path

(defconst gptel-scope-test-require-gptel
  (not (member (getenv "GPTEL_SCOPE_REQUIRE_GPTEL") '(nil "" "0")))
  "Non-nil when the run must have gptel: GPTEL_SCOPE_REQUIRE_GPTEL is set.
Then gptel must load, and a skipped test that depends on gptel (by its
name, its tags or what it skipped on) fails instead (`make test-elisp-gptel').")

;; gptel is used when it is on the load path; its tests are skipped otherwise.
(condition-case err
    (unless (require 'gptel nil t)
      (when gptel-scope-test-require-gptel
        (error "GPTEL_SCOPE_REQUIRE_GPTEL is set but gptel is not on the load path"))
      (message "test-helper: gptel is not on the load path: the tests that need gptel are skipped \
(make test-elisp-gptel runs them with the pinned gptel and transient of ../shared/vendor)"))
  (error
   (if gptel-scope-test-require-gptel
       (signal (car err) (cdr err))
     (message "test-helper: gptel did not load (%s): the tests that need gptel are skipped"
              (error-message-string err)))))
(message "test-helper: Emacs %s; gptel %s; transient %s" emacs-version
         (if (featurep 'gptel)
             (format "%s (%s)" (bound-and-true-p gptel-version) (locate-library "gptel"))
           "absent")
         (or (locate-library "transient") "absent"))

(defun gptel-scope-test--about-gptel-p (test data)
  "Non-nil when TEST, skipped with DATA, depends on gptel.
That is when its name, a tag or DATA says gptel, not counting gptel-scope."
  (let ((says (lambda (x)
                (string-match-p "gptel" (replace-regexp-in-string
                                         "gptel-scope" "" (format "%S" x) t t)))))
    (or (funcall says (ert-test-name test))
        (seq-some says (ert-test-tags test))
        (funcall says data))))

(defun gptel-scope-test--no-gptel-skip (skip data)
  "Call SKIP with DATA, unless the running test depends on gptel: then fail.
Around `ert-skip' when `gptel-scope-test-require-gptel'."
  (let ((test (car (bound-and-true-p ert--running-tests))))
    (if (and test (gptel-scope-test--about-gptel-p test data))
        (ert-fail (list "Skipped although GPTEL_SCOPE_REQUIRE_GPTEL is set" data))
      (funcall skip data))))

(when gptel-scope-test-require-gptel
  (advice-add 'ert-skip :around #'gptel-scope-test--no-gptel-skip))

;; ert-runner's reporters count skipped tests as expected, and say no more:
;; the summary ERT's batch runner prints, and the skipped tests.
(when (and (boundp 'ert-runner-reporter-run-ended-functions) (fboundp 'ert-runner-message))
  (add-hook 'ert-runner-reporter-run-ended-functions
            (lambda (stats _aborted)
              (let ((skipped (seq-filter (lambda (test)
                                           (ert-test-skipped-p (ert-test-most-recent-result test)))
                                         (ert--stats-tests stats))))
                (ert-runner-message "Ran %d tests, %d results as expected, %d unexpected, %d skipped\n%s"
                                    (ert-stats-total stats) (ert-stats-completed-expected stats)
                                    (ert-stats-completed-unexpected stats) (length skipped)
                                    (mapconcat (lambda (test) (format "  SKIPPED  %s\n" (ert-test-name test)))
                                               skipped ""))))
            t))

(require 'gptel-scope)
(require 'gptel-scope-menu)
(gptel-scope-load-module)

;;;; Approvals: a trust list of the suite's own, never the user's

(defconst gptel-scope-test-trust-directory
  (file-name-as-directory (make-temp-file "gptel-scope-trust-" t))
  "The directory of the suite's trust list, removed when Emacs exits.")

(setq gptel-scope-trust-file (expand-file-name "trusted.eld" gptel-scope-test-trust-directory))
(add-hook 'kill-emacs-hook (lambda () (delete-directory gptel-scope-test-trust-directory t)))

(defun gptel-scope-test-bwrap-works-p ()
  "Return non-nil when bubblewrap runs a command here."
  (let ((gptel-scope-sandbox-program "bwrap")
        (gptel-scope-sandbox--works nil))
    (gptel-scope-sandbox-works-p)))

(defvar gptel-scope-test--apparmor-bwrap nil
  "The stand-in for bubblewrap that fails as AppArmor makes it fail, once made.")

(defun gptel-scope-test-apparmor-bwrap ()
  "Return a program that fails as bubblewrap does under Ubuntu's AppArmor rule.
It prints bwrap's message when AppArmor forbids its user namespace and
exits 1: with it as `gptel-scope-sandbox-program', `auto' picks Landlock."
  (let ((f gptel-scope-test--apparmor-bwrap))
    (unless (and f (file-executable-p f))
      (setq f (expand-file-name "bwrap" (make-temp-file "gptel-scope-apparmor-" t)))
      (with-temp-file f
        (insert "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"))
      (set-file-modes f #o755)
      (setq gptel-scope-test--apparmor-bwrap f))
    f))

(defun gptel-scope-test-landlock-works-p ()
  "Return non-nil when this kernel enforces Landlock."
  (let ((gptel-scope-sandbox-program (gptel-scope-test-apparmor-bwrap))
        (gptel-scope-sandbox--works nil))
    (> (gptel-scope-sandbox-landlock-abi) 0)))

(defun gptel-scope-test-write-scope (file text)
  "Write TEXT to the scope document FILE and approve it, as the user would."
  (with-temp-file file (insert text))
  (gptel-scope-trust file))

(defmacro gptel-scope-test-with-project (var scope &rest body)
  "Bind VAR to a fresh project directory holding scope.yml with SCOPE, run BODY.
The document is approved (`gptel-scope-trust').  With SCOPE nil the
directory has no scope.yml."
  (declare (indent 2))
  `(let ((,var (file-name-as-directory (file-truename (make-temp-file "gptel-scope-test-" t)))))
     (unwind-protect
         (progn
           (when ,scope
             (gptel-scope-test-write-scope (expand-file-name "scope.yml" ,var) ,scope))
           ,@body)
       (delete-directory ,var t))))

(defmacro gptel-scope-test-in-chat (dir &rest body)
  "Run BODY in a fresh chat buffer whose `default-directory' is DIR."
  (declare (indent 1))
  `(with-temp-buffer
     (setq default-directory (file-name-as-directory ,dir))
     ,@body))

(declare-function gptel-scope-cli-judge "gptel-scope-cli" (tool request &rest keys))

(defun gptel-scope-test-judge (tool request &rest keys)
  "Judge REQUEST, the JSON of a whole request, as a call of TOOL with KEYS.
See `gptel-scope-cli-judge'."
  (require 'gptel-scope-cli)
  (apply #'gptel-scope-cli-judge tool request keys))

(defun gptel-scope-test-check-command (request)
  "The decision on the command of REQUEST (scope and call, JSON), in full."
  (gptel-scope-test-judge "run_bash_command" request :evidence t))

(defun gptel-scope-test-decide (request)
  "The decision on the command of REQUEST (scope and call, JSON), in brief."
  (gptel-scope-test-judge "run_bash_command" request))

(defun gptel-scope-test-decide-command (command directory scope)
  "The brief decision on COMMAND in DIRECTORY under SCOPE, an envelope's JSON."
  (gptel-scope-module-judge (gptel-scope-module-open scope)
                            (json-serialize (list :tool "run_bash_command"
                                                  :command command :directory directory))))

(defun gptel-scope-test-check (dir command &optional grants)
  "Judge COMMAND in DIR under the nearest scope.yml with GRANTS; return the plist."
  (gptel-scope-test-check-command
   (json-serialize (list :command command :directory (directory-file-name dir)
                         :sources (vector (list :file (expand-file-name
                                                       "scope.yml" (locate-dominating-file dir "scope.yml"))))
                         :grants (or grants [])))))

(defun gptel-scope-test-parse (json)
  "Parse the tool result JSON into a plist, false and null as nil."
  (json-parse-string json :object-type 'plist :false-object nil :null-object nil))

(defun gptel-scope-test-settle ()
  "Let pending timers run."
  (dotimes (_ 4) (accept-process-output nil 0.01)))

(defun gptel-scope-test-call-raw (fn &rest args)
  "Call the async tool FN with ARGS; wait for its one result and return the JSON."
  (let ((results nil))
    (apply fn (lambda (r) (push r results)) args)
    (with-timeout (30 (error "No result from %s" fn))
      (while (not results) (accept-process-output nil 0.02)))
    (gptel-scope-test-settle)
    (should (= (length results) 1))
    (should (stringp (car results)))
    (car results)))

(defun gptel-scope-test-call (fn &rest args)
  "Call the async tool FN with ARGS; wait for its one result, parsed."
  (gptel-scope-test-parse (apply #'gptel-scope-test-call-raw fn args)))

(defun gptel-scope-test--session-reading-p (pid)
  "Return non-nil when the program below PID sleeps, as a program reading does.
That is a process below the supervisor and the sandbox with no child
of its own, in state S."
  (let* ((below (gptel-scope-exec--descendants pid))
         (attrs (mapcar (lambda (p) (cons p (process-attributes p))) below))
         (parents (delq nil (mapcar (lambda (a) (alist-get 'ppid (cdr a))) attrs))))
    (seq-some (lambda (a)
                (and (not (memq (car a) parents))
                     (not (member (alist-get 'comm (cdr a)) '("gptel-scope-run" "bwrap")))
                     (equal (alist-get 'state (cdr a)) "S")))
              attrs)))

(defun gptel-scope-test-await-session (id)
  "Wait, at most 30 s, until the program of terminal session ID waits.
A session's first answer comes after a fixed time; on a loaded machine
its program may not have started by then.  A test waits for it before
it writes, so the answer to the write holds the program's reply."
  (let* ((session (gethash id gptel-scope-pty--sessions))
         (proc (and session (gptel-scope-pty--session-process session))))
    (when (and proc (process-live-p proc))
      (with-timeout (30 (error "Session %s: its program did not start in 30 s" id))
        (while (not (gptel-scope-test--session-reading-p (process-id proc)))
          (accept-process-output nil 0.05))))))

(defun gptel-scope-test-press (keys &optional thunk)
  "Run THUNK as a command in the current buffer, then type KEYS into its menu."
  (gptel-scope-menu-press keys thunk)
  (gptel-scope-test-settle))

(defun gptel-scope-test-close-menus ()
  "Close any transient menu left open."
  (when (bound-and-true-p transient--prefix)
    (condition-case nil
        (execute-kbd-macro (kbd "C-g"))
      (quit nil)))
  (gptel-scope-test-settle))

(defmacro gptel-scope-test-with-expansion (&rest body)
  "Run BODY with an empty expansion state, closing any menu afterwards."
  (declare (indent 0))
  `(let ((gptel-scope--expansion-queue nil)
         (gptel-scope--expansion-current nil)
         (gptel-scope--expansion-pending nil))
     (unwind-protect (progn ,@body)
       (gptel-scope-test-close-menus))))

(defun gptel-scope-test-ask (keys tool resource &optional reason)
  "In the current buffer, let the model ask for TOOL on RESOURCE; type KEYS.
Return a function of no argument returning the parsed answers so far."
  (let ((answers nil))
    (gptel-scope-test-press
     keys (lambda ()
            (gptel-scope-request-scope-expansion (lambda (a) (push a answers))
                                                 tool resource (or reason "the task needs it"))))
    (lambda () (mapcar #'gptel-scope-test-parse (reverse answers)))))

(defun gptel-scope-test-file-string (file)
  "Return FILE's contents, byte for byte."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally file)
    (buffer-string)))

;;;; A fresh Emacs on a copy of the package (the loader and fault tests)

(defun gptel-scope-test--emacs (dir forms &optional infile)
  "Run FORMS in a fresh batch Emacs with DIR on `load-path'.
Return (EXIT-CODE STDOUT STDERR).  INFILE, if non-nil, is standard input."
  (let ((err (make-temp-file "gptel-scope-stderr")))
    (unwind-protect
        (with-temp-buffer
          (let* ((process-environment (cons "HOME=/nonexistent-home" process-environment))
                 (code (call-process (expand-file-name invocation-name invocation-directory)
                                     infile (list t err) nil
                                     "-Q" "--batch" "-L" dir
                                     "--eval" (prin1-to-string (cons 'progn forms)))))
            (list code (buffer-string) (gptel-scope-test-file-string err))))
      (delete-file err))))

(defmacro gptel-scope-test-with-package-copy (var files &rest body)
  "Bind VAR to a temp directory holding the elisp files and FILES, run BODY.
FILES are names of the repository root to copy beside the elisp, as a
package recipe's :files puts them.  No module is copied."
  (declare (indent 2))
  `(let ((,var (file-name-as-directory (make-temp-file "gptel-scope-pkg-" t))))
     (unwind-protect
         (progn
           (dolist (f (directory-files (expand-file-name "lisp" gptel-scope-test-root) t "\\.el\\'"))
             (copy-file f ,var))
           (dolist (f ,files)
             (copy-file (expand-file-name f gptel-scope-test-root) (expand-file-name f ,var)))
           ,@body)
       (delete-directory ,var t))))

(defun gptel-scope-test-menu-text ()
  "Return the text of the transient menu as shown."
  (let ((b (get-buffer " *transient*")))
    (and b (with-current-buffer b (buffer-string)))))

;;;; Running a command as exec runs it (the exec and capture tests)

(defun gptel-scope-test--run (command &rest keys)
  "Run COMMAND (a shell string, or an argv list) with KEYS; return the result.
While it runs, the pids of its process group and descendants are
collected into :pids.  It runs as exec runs it, without the sandbox
\(whose own tests are in gptel-scope-sandbox-test.el)."
  (let* ((gptel-scope-exec-argv-function nil)
         (result nil) (calls 0) (pids nil)
         (argv (if (stringp command) (gptel-scope-exec-shell-argv command) command))
         (proc (apply #'gptel-scope-exec-start argv temporary-file-directory
                      (lambda (r) (setq result r calls (1+ calls)))
                      keys)))
    (with-timeout (30 (error "No result for %S" command))
      (while (not result)
        (when (process-live-p proc)
          (dolist (p (gptel-scope-exec--descendants (gptel-scope-exec-pid proc)))
            (cl-pushnew p pids)))
        (accept-process-output nil 0.05)))
    (gptel-scope-test-settle)
    (should (= calls 1))
    (append (list :pids pids) result)))

(defun gptel-scope-test--alive-p (pid)
  "Return non-nil when PID runs (a zombie counts as dead)."
  (let ((attrs (process-attributes pid)))
    (and attrs (not (equal (alist-get 'state attrs) "Z")))))

(defun gptel-scope-test--wait-dead (pids)
  "Wait up to the kill grace and a bit for PIDS to die; return the living ones."
  (with-timeout ((+ gptel-scope-kill-grace 3) nil)
    (while (seq-some #'gptel-scope-test--alive-p pids)
      (accept-process-output nil 0.05)))
  (seq-filter #'gptel-scope-test--alive-p pids))

(provide 'test-helper)
;;; test-helper.el ends here
