;;; gptel-scope-concurrency-test.el --- Approvals under concurrency and kills  -*- lexical-binding: t; -*-

;;; Commentary:

;; Several Emacs processes approve documents and add to one scope.yml at
;; once, and an Emacs is killed (SIGKILL) in the middle of Add to scope:
;; no approval is lost, an edit of the approved document stays approved,
;; and what a killed Emacs left (temporary files, the trust list's lock)
;; is removed by the next.  Each child is a batch Emacs loading the
;; elisp this suite loaded, with the suite's trust list.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-trust)
(require 'gptel-scope-expand)

(defconst gptel-scope-test--conc-scope
  "# The scope of the concurrency tests.
paths:
  read: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [ls, cat]   # viewing
  timeout: 5
"
  "A scope for the concurrency tests.")

(defun gptel-scope-test--conc-lisp ()
  "Return the directory of the elisp this suite loaded."
  (file-name-directory (locate-library "gptel-scope-trust")))

(defun gptel-scope-test--conc-child (name forms)
  "Start a batch Emacs called NAME running FORMS after loading gptel-scope.
It uses the suite's trust list; its output goes to its buffer."
  (let ((all `(progn
                (setq gptel-scope-build-module nil)
                (require 'gptel-scope)
                (setq gptel-scope-trust-file ,(expand-file-name gptel-scope-trust-file))
                ,@forms)))
    (make-process :name name
                  :buffer (generate-new-buffer (format " *%s*" name))
                  :command (list (expand-file-name invocation-name invocation-directory)
                                 "-Q" "--batch" "-L" (gptel-scope-test--conc-lisp)
                                 "--eval" (prin1-to-string all))
                  :connection-type 'pipe
                  :noquery t)))

(defun gptel-scope-test--conc-wait (procs seconds)
  "Wait at most SECONDS until every process of PROCS ended and was reaped.
Return their outputs."
  (with-timeout (seconds (error "The child Emacs processes did not finish"))
    (while (seq-some (lambda (p) (memq (process-status p) '(run open stop))) procs)
      (accept-process-output nil 0.05)))
  ;; Output still in a pipe is read before the sentinel runs.
  (dolist (p procs)
    (with-timeout (10 (error "No end noted for %s" p))
      (while (not (with-current-buffer (process-buffer p)
                    (save-excursion (goto-char (point-min))
                                    (re-search-forward "^Process .* \\(finished\\|killed\\|exited\\)" nil t))))
        (accept-process-output p 0.05))))
  (mapcar (lambda (p) (with-current-buffer (process-buffer p) (buffer-string))) procs))

(defun gptel-scope-test--conc-cleanup (procs)
  "Kill what is left of PROCS and their buffers."
  (dolist (p procs)
    (when (process-live-p p) (delete-process p))
    (when (buffer-live-p (process-buffer p)) (kill-buffer (process-buffer p)))))

(defun gptel-scope-test--conc-litter (dir)
  "Return the names in DIR a writer may leave behind: temporary files and lock links."
  (directory-files dir nil "\\`\\(\\.#\\|\\.scope\\.yml\\.\\|\\.trusted\\)"))

(defconst gptel-scope-test--conc-approvals 25
  "Documents each Emacs approves in the approval test.")

(ert-deftest gptel-scope-test-concurrency-two-emacs-approve-at-once ()
  "Two Emacs processes approve 25 documents each at once: all 50 stay approved."
  (let* ((dir (file-name-as-directory (make-temp-file "gptel-scope-conc-" t)))
         (files (lambda (tag) (mapcar (lambda (i) (expand-file-name (format "%s%d/scope.yml" tag i) dir))
                                      (number-sequence 1 gptel-scope-test--conc-approvals))))
         (start (+ (float-time) 1.0))
         procs)
    (unwind-protect
        (progn
          (dolist (tag '("a" "b"))
            (dolist (f (funcall files tag))
              (make-directory (file-name-directory f) t)
              (with-temp-file f (insert gptel-scope-test--conc-scope "# " f "\n"))))
          (setq procs
                (mapcar (lambda (tag)
                          (gptel-scope-test--conc-child
                           (format "approver-%s" tag)
                           ;; Starting together makes the overlap likely; the
                           ;; assertions hold however the two interleave.
                           `((while (< (float-time) ,start) (sleep-for 0.01))
                             (dolist (f ',(funcall files tag))
                               (condition-case err
                                   (progn (gptel-scope-trust f) (princ "OK\n"))
                                 (error (princ (format "ERR %S\n" err))))))))
                        '("a" "b")))
          (let ((outs (gptel-scope-test--conc-wait procs 60)))
            (dolist (out outs)
              (should-not (string-match-p "^ERR" out))))
          (let ((approved (seq-count (lambda (f) (plist-get (gptel-scope-trust-status f) :approved))
                                     (append (funcall files "a") (funcall files "b")))))
            (message "two-emacs approvals: %d of %d kept" approved (* 2 gptel-scope-test--conc-approvals))
            (should (= approved (* 2 gptel-scope-test--conc-approvals))))
          (should-not (gptel-scope-test--conc-litter gptel-scope-test-trust-directory)))
      (gptel-scope-test--conc-cleanup procs)
      (delete-directory dir t))))

(defconst gptel-scope-test--conc-adds 12
  "Additions each Emacs makes in the Add to scope test.")

(defun gptel-scope-test--conc-adder-forms (file tag start &optional forever)
  "Forms adding commands tagged TAG to FILE from time START, one OK line each.
With FOREVER, add until killed."
  `((while (< (float-time) ,start) (sleep-for 0.01))
    (let ((i 0))
      (while (or ,forever (< i ,gptel-scope-test--conc-adds))
        (condition-case err
            (let ((r (gptel-scope-add-to-scope
                      (list :document ,file :validation-type "command" :tool "run_bash_command"
                            :resource (format "cmd_%s_%d --flag" ,tag i)
                            :directory ,(file-name-directory file)))))
              (princ (format "OK %S\n" (car (plist-get r :patterns-added)))))
          (error (princ (format "ERR %S\n" err))))
        (setq i (1+ i))))))

(ert-deftest gptel-scope-test-concurrency-two-emacs-add-keep-the-document-approved ()
  "Two Emacs processes add to one approved scope.yml at once: it stays approved."
  (gptel-scope-test-with-project dir gptel-scope-test--conc-scope
    (let* ((file (expand-file-name "scope.yml" dir))
           (start (+ (float-time) 1.0))
           (procs (mapcar (lambda (tag)
                            (gptel-scope-test--conc-child
                             (format "adder-%s" tag)
                             (gptel-scope-test--conc-adder-forms file tag start)))
                          '("a" "b"))))
      (unwind-protect
          (let ((outs (gptel-scope-test--conc-wait procs 60))
                (text nil))
            (dolist (out outs) (should-not (string-match-p "^ERR" out)))
            (setq text (gptel-scope-test-file-string file))
            (dolist (tag '("a" "b"))
              (dotimes (i gptel-scope-test--conc-adds)
                (should (string-match-p (format "[ ,]cmd_%s_%d[],]" tag i) text))))
            (should (string-prefix-p "# The scope of the concurrency tests.\n" text))
            (should (string-match-p "\\]   # viewing\n" text))
            (should (plist-get (gptel-scope-trust-status file) :approved))
            (should (equal (directory-files dir nil "\\`[^.]\\|\\`\\.[^.]") '("scope.yml")))
            (should-not (gptel-scope-test--conc-litter gptel-scope-test-trust-directory)))
        (gptel-scope-test--conc-cleanup procs)))))

(defconst gptel-scope-test--conc-kill-rounds 4
  "Rounds of the kill test.")

(ert-deftest gptel-scope-test-concurrency-kill-during-add-to-scope ()
  "An Emacs killed during Add to scope loses nothing, and the next cleans up.
Each round starts an Emacs adding commands until it is killed, kills it
with SIGKILL right after its Nth answer (N random), so the kill lands
somewhere in the next addition, then checks the document and adds once
more from this Emacs."
  (gptel-scope-test-with-project dir gptel-scope-test--conc-scope
    (let ((file (expand-file-name "scope.yml" dir))
          (unapproved 0)
          (seen nil))
      (dotimes (round gptel-scope-test--conc-kill-rounds)
        (let* ((tag (format "r%d" round))
               (after (1+ (random 3)))
               (p (gptel-scope-test--conc-child
                   (format "killed-%s" tag)
                   (gptel-scope-test--conc-adder-forms file tag 0 t))))
          (unwind-protect
              (progn
                (with-timeout (120 (error "Round %d: the child never answered" round))
                  (while (< (with-current-buffer (process-buffer p)
                              (how-many "^OK " (point-min) (point-max)))
                            after)
                    (accept-process-output p 0.01)))
                (signal-process p 'SIGKILL)
                (gptel-scope-test--conc-wait (list p) 30)
                (let* ((out (with-current-buffer (process-buffer p) (buffer-string)))
                       (text (gptel-scope-test-file-string file))
                       (status (gptel-scope-trust-status file)))
                  (should-not (string-match-p "^ERR" out))
                  ;; Whole, comments kept, every answered addition there.
                  (should (string-prefix-p "# The scope of the concurrency tests.\n" text))
                  (should (string-suffix-p "  timeout: 5\n" text))
                  (should (string-match-p "\\]   # viewing\n" text))
                  (with-temp-buffer
                    (insert out)
                    (goto-char (point-min))
                    (while (re-search-forward "^OK \"\\([^\"]+\\)\"" nil t)
                      (push (match-string 1) seen)))
                  (dolist (v seen)
                    (should (string-match-p (format "[ ,]%s[],]" (regexp-quote v)) text)))
                  ;; Approved, unless the kill fell between the rename of the new
                  ;; content and its approval; then the next Emacs to take the lock
                  ;; approves it (the edit it noted, made again on the approved content).
                  (unless (plist-get status :approved)
                    (setq unapproved (1+ unapproved)))
                  (gptel-scope--trust-with-lock nil)
                  (should (plist-get (gptel-scope-trust-status file) :approved))
                  ;; The next Emacs (this one) adds, and removes what the killed one left.
                  (gptel-scope-add-to-scope
                   (list :document file :validation-type "command" :tool "run_bash_command"
                         :resource (format "next_%s" tag) :directory dir))
                  (should (plist-get (gptel-scope-trust-status file) :approved))
                  (should (equal (directory-files dir nil "\\`[^.]\\|\\`\\.[^.]") '("scope.yml")))
                  (should-not (gptel-scope-test--conc-litter gptel-scope-test-trust-directory))))
            (gptel-scope-test--conc-cleanup (list p)))))
      (message "kill during Add to scope: %d rounds, %d left the new content unapproved until the next lock"
               gptel-scope-test--conc-kill-rounds unapproved))))

;;;; An edit interrupted between its write and its approval

(defun gptel-scope-test--conc-interrupted (file resource)
  "Do what an Emacs killed after the write of Add to scope of RESOURCE did to FILE.
The edit is noted in the trust list and written, and not approved."
  (let* ((request (list :document file :validation-type "command" :tool "run_bash_command"
                        :resource resource :directory (file-name-directory file)))
         (json (gptel-scope--add-request-json request)))
    (gptel-scope--trust-with-lock
      (gptel-scope--trust-journal file (gptel-scope-trust-approved file) json))
    (gptel-scope-module-add-to-scope json)))

(ert-deftest gptel-scope-test-concurrency-an-interrupted-add-is-approved-by-the-next-emacs ()
  "An Add to scope killed between its write and its approval is approved by the next lock.
Only when the content on disk is what the noted edit makes of the
approved content: a document changed otherwise stays unapproved."
  (gptel-scope-test-with-project dir gptel-scope-test--conc-scope
    (let ((file (expand-file-name "scope.yml" dir)))
      (gptel-scope-test--conc-interrupted file "cmd_one --flag")
      (should-not (plist-get (gptel-scope-trust-status file) :approved))
      (gptel-scope--trust-with-lock nil)
      (should (plist-get (gptel-scope-trust-status file) :approved))
      (should-not (plist-get (cdr (assoc file (gptel-scope--trust-entries))) :editing))
      (should (string-match-p "cmd_one" (plist-get (cdr (assoc file (gptel-scope--trust-entries))) :content)))
      ;; Noted, written, then changed by another program: not approved, the note gone.
      (gptel-scope-test--conc-interrupted file "cmd_two")
      (with-temp-file file (insert (gptel-scope-test-file-string file) "# and more\n"))
      (gptel-scope--trust-with-lock nil)
      (should-not (plist-get (gptel-scope-trust-status file) :approved))
      (should-not (plist-get (cdr (assoc file (gptel-scope--trust-entries))) :editing))
      ;; Noted and killed before the write: the old content keeps its approval.
      (gptel-scope-trust file)
      (gptel-scope--trust-with-lock
        (gptel-scope--trust-journal file (gptel-scope-trust-approved file) "{}"))
      (gptel-scope--trust-with-lock nil)
      (should (plist-get (gptel-scope-trust-status file) :approved))
      (should-not (plist-get (cdr (assoc file (gptel-scope--trust-entries))) :editing))
      (should-not (directory-files temporary-file-directory nil "\\`gptel-scope-redo-")))))

(provide 'gptel-scope-concurrency-test)
;;; gptel-scope-concurrency-test.el ends here
