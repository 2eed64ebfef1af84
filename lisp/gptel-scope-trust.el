;;; gptel-scope-trust.el --- Approval of scope documents  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; A scope document (scope.yml, a preset.md) applies only when the user
;; approved its exact content, as direnv does for an .envrc: the trust
;; list, `gptel-scope-trust-file' (outside every scope, in the user's
;; Emacs directory), holds for each approved document its truename, the
;; SHA-256 of its content and that content (to show what changed).
;; Only the latest approval of a document counts, so an older, wider
;; version put back by `git checkout' is not approved.
;;
;; What approves: `gptel-scope-init' (it wrote the document), Add to
;; scope (it edited an approved one), saving the document from an Emacs
;; buffer, and `gptel-scope-trust' (\\[gptel-scope-trust] shows the
;; document, or the diff against the approved content, and asks).
;;
;; The module is told the approved hash of each document and hashes the
;; very bytes it parses: a document whose content is not approved (a
;; fresh clone, a `git pull', another program's write) is not applied,
;; and every tool answers untrusted_scope.  Scope given as Lisp (a
;; profile name or a plist from the user's init) needs no approval.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'gptel-scope-core)

(declare-function gptel-scope-module-add-to-scope "gptel-scope-module" (request))
(declare-function diff-no-select "diff" (old new &optional switches no-async buf))

(defcustom gptel-scope-trust-file
  (locate-user-emacs-file "gptel-scope/trusted.eld")
  "The list of the scope documents you approved, with their content.
A scope document applies only while its content is the one approved
here.  Keep it outside every scope: tools may never write it, and
its directory is bound read-only in the sandbox."
  :type 'file
  :group 'gptel-scope)

(defcustom gptel-scope-trust-ask t
  "Non-nil means ask at once when a tool call meets an unapproved document.
The first call under a scope document whose content you have not
approved shows it (or what changed since you approved it) and asks;
approving it runs the call.  When nil, or in batch Emacs, the call is
refused with untrusted_scope and you approve with \\[gptel-scope-trust]."
  :type 'boolean
  :group 'gptel-scope)

(defvar gptel-scope--trust-cache nil
  "The trust list as last read: (FILE ATTRIBUTES . ENTRIES).
FILE is `gptel-scope-trust-file' then, ATTRIBUTES its modification
time, size and inode; ENTRIES a list of (TRUENAME :sha256 HASH
:content TEXT :time TIME).")

(defvar gptel-scope--trust-generation 0
  "Incremented each time the trust list is read or written in this session.")

(defvar gptel-scope--trust-declined nil
  "Documents the user declined to approve in this session: (TRUENAME . HASH).
A call under one of them is refused without asking again.")

(defvar gptel-scope-trust-functions nil
  "Functions called with no argument after the user approved a document.")

(defvar gptel-scope-trust-asker #'gptel-scope--trust-ask
  "Function (FILE) asking the user to approve FILE at a refused call.
It returns non-nil when FILE's content is approved now.  Tests bind it.")

(defun gptel-scope--trust-stamp (file)
  "Return the mtime, size and inode of FILE (nil when it is missing)."
  (let ((a (file-attributes file 'integer)))
    (and a (list (file-attribute-modification-time a) (file-attribute-size a)
                 (file-attribute-inode-number a)))))

(define-error 'gptel-scope-trust-error "Cannot update the list of approved scope documents"
  'gptel-scope-error)

(defun gptel-scope--trust-read-strict ()
  "Return the entries of `gptel-scope-trust-file', nil when it is missing.
Signal `gptel-scope-trust-error' when the file exists but cannot be
read or does not hold a list of entries: it is then never rewritten,
so the approvals it holds are not lost."
  (let ((file (expand-file-name gptel-scope-trust-file)))
    (when (or (file-exists-p file) (file-symlink-p file))
      (condition-case err
          (with-temp-buffer
            (insert-file-contents file)
            (let ((data (read (current-buffer))))
              (unless (and (listp data)
                           (seq-every-p (lambda (e) (and (consp e) (stringp (car e))
                                                         (stringp (plist-get (cdr e) :sha256))))
                                        data))
                (error "Not a list of (TRUENAME :sha256 HASH ...) entries"))
              data))
        (error
         (signal 'gptel-scope-trust-error
                 (list (format "The trust list %s cannot be read (%s); it is left as it is and nothing was approved.  Make it readable by you (chmod 600 %s) or move it away; approvals it holds are lost only if you delete it"
                               file (error-message-string err) (shell-quote-argument file)))))))))

(defun gptel-scope--trust-read ()
  "Return the entries of `gptel-scope-trust-file', nil when there are none.
A file that does not hold a list of entries approves nothing (it is
reported once)."
  (condition-case err
      (gptel-scope--trust-read-strict)
    (gptel-scope-trust-error
     (message "gptel-scope: %s" (cadr err))
     nil)))

(defconst gptel-scope--trust-lock-wait 10
  "Seconds a change of the trust list waits for another Emacs's lock.")

(defvar gptel-scope--trust-lock-held nil
  "Non-nil while this Emacs holds the lock of the trust list.")

(defun gptel-scope--trust-pid-dead-p (pid)
  "Return non-nil when this machine has no process PID."
  (and (integerp pid) (> pid 0) (/= pid (emacs-pid))
       (null (process-attributes pid))))

(defun gptel-scope--trust-temp-prefix (file)
  "Return the prefix of this Emacs's temporary files replacing FILE."
  (format ".%s.%d-" (file-name-nondirectory file) (emacs-pid)))

(defun gptel-scope--trust-clean (file)
  "Delete the temporary files a killed Emacs left beside FILE.
Only files named as `gptel-scope--trust-write' names them, whose
process is dead, are deleted."
  (let ((re (concat "\\`\\." (regexp-quote (file-name-nondirectory file))
                    "\\.\\([0-9]+\\)-[^/]+\\'")))
    (dolist (f (ignore-errors (directory-files (file-name-directory file) t re t)))
      (let ((pid (and (string-match re (file-name-nondirectory f))
                      (string-to-number (match-string 1 (file-name-nondirectory f))))))
        (when (and (gptel-scope--trust-pid-dead-p pid) (file-regular-p f)
                   (not (file-symlink-p f)))
          (ignore-errors (delete-file f)))))))

(define-error 'gptel-scope--trust-busy "Another Emacs holds the trust list's lock"
  'gptel-scope-trust-error)

(defun gptel-scope--trust-call-with-lock (fn)
  "Call FN with the lock of the trust list held; return its value.
The lock is Emacs's lock file of `gptel-scope-trust-file' (a symbolic
link naming this user, host and pid): another Emacs waits for it, and
one a killed Emacs left (its pid is dead) is removed by the next.
Nested calls take it once.  Waits `gptel-scope--trust-lock-wait'
seconds at most, then signals `gptel-scope-trust-error'."
  (if gptel-scope--trust-lock-held
      (funcall fn)
    (let* ((file (expand-file-name gptel-scope-trust-file))
           (deadline (+ (float-time) gptel-scope--trust-lock-wait))
           (create-lockfiles t)
           (lock-file-name-transforms nil)
           (locked nil))
      (with-file-modes #o700 (make-directory (file-name-directory file) t))
      (unwind-protect
          (progn
            (while (not locked)
              (condition-case nil
                  (cl-letf (((symbol-function 'ask-user-about-lock)
                             (lambda (f opponent) (signal 'gptel-scope--trust-busy (list f opponent)))))
                    (with-temp-buffer
                      (insert "lock")
                      (lock-file file))
                    (setq locked t))
                (gptel-scope--trust-busy
                 (when (> (float-time) deadline)
                   (signal 'gptel-scope-trust-error
                           (list (format "Another Emacs (%s) has held the lock of %s for %d seconds; nothing was approved, try again"
                                         (file-locked-p file) file gptel-scope--trust-lock-wait))))
                 (sleep-for 0.01))))
            (gptel-scope--trust-clean file)
            (let ((gptel-scope--trust-lock-held t))
              (gptel-scope--trust-recover)
              (funcall fn)))
        (when locked
          (let ((create-lockfiles t) (lock-file-name-transforms nil))
            (with-temp-buffer (unlock-file file))))))))

(defmacro gptel-scope--trust-with-lock (&rest body)
  "Run BODY with the lock of the trust list held."
  (declare (indent 0) (debug t))
  `(gptel-scope--trust-call-with-lock (lambda () ,@body)))

(defun gptel-scope--add-redo (content request)
  "Return the hash of CONTENT after the Add to scope REQUEST, or nil.
REQUEST is the module's JSON; the edit is made on a copy of CONTENT of
the same name in a private temporary directory, with REQUEST's base
directory, so the result is what the edit made of CONTENT."
  (let* ((req (json-parse-string request :object-type 'plist))
         (name (file-name-nondirectory (plist-get req :file)))
         (dir (make-temp-file "gptel-scope-redo-" t))
         (copy (expand-file-name name dir)))
    (unwind-protect
        (progn
          (let ((coding-system-for-write 'no-conversion))
            (write-region (encode-coding-string content 'utf-8) nil copy nil 'silent))
          (plist-get (gptel-scope-module-add-to-scope
                      (json-serialize (plist-put req :file copy)))
                     :sha256-after))
      (delete-directory dir t))))

(defun gptel-scope--trust-journal (file approved request)
  "Note in FILE's entry, approved as APPROVED, that Add to scope edits it.
REQUEST is the edit (the module's JSON).  Call it with the lock held.
When this Emacs is killed after the edit's write and before its
approval, the next Emacs that takes the lock finds the note and
approves the content on disk if it is exactly what REQUEST makes of the
approved content (`gptel-scope--trust-recover')."
  (let ((truename (gptel-scope--trust-truename file)))
    (gptel-scope--trust-update
     (lambda (entries)
       (mapcar (lambda (e)
                 (if (and (equal (car e) truename) (equal (plist-get (cdr e) :sha256) approved))
                     (cons (car e) (plist-put (copy-sequence (cdr e)) :editing request))
                   e))
               entries)))))

(defun gptel-scope--trust-journal-clear (file)
  "Remove the note of an edit from FILE's entry, if there is one."
  (let ((truename (gptel-scope--trust-truename file)))
    (when (plist-get (cdr (assoc truename (gptel-scope--trust-entries))) :editing)
      (gptel-scope--trust-update
       (lambda (entries)
         (mapcar (lambda (e)
                   (if (equal (car e) truename)
                       (cons (car e) (gptel-scope--trust-plist-without (cdr e) :editing))
                     e))
                 entries))))))

(defun gptel-scope--trust-plist-without (plist key)
  "Return PLIST without KEY and its value."
  (let (out)
    (while plist
      (unless (eq (car plist) key)
        (setq out (cons (cadr plist) (cons (car plist) out))))
      (setq plist (cddr plist)))
    (nreverse out)))

(defun gptel-scope--trust-recover ()
  "Complete the Add to scope edits a killed Emacs left noted in the trust list.
Called with the lock just taken, so no noted edit is still running.
A document whose content is still the approved one keeps its approval;
one whose content is what the noted edit makes of the approved content
\(`gptel-scope--add-redo') is approved; any other stays
unapproved.  The note is removed either way.  Errors are reported and
leave the list as it was."
  (condition-case err
      (let ((entries (gptel-scope--trust-read-strict)))
        (when (seq-some (lambda (e) (plist-get (cdr e) :editing)) entries)
          (gptel-scope--trust-write
           (mapcar
            (lambda (e)
              (let* ((props (cdr e))
                     (request (plist-get props :editing)))
                (if (not request)
                    e
                  (let* ((bytes (ignore-errors (gptel-scope--file-bytes (car e))))
                         (hash (and bytes (gptel-scope--sha256 bytes)))
                         (redo (and hash (not (equal hash (plist-get props :sha256)))
                                    (ignore-errors
                                      (gptel-scope--add-redo (plist-get props :content) request)))))
                    (if (and redo (equal redo hash))
                        (list (car e) :sha256 hash
                              :content (decode-coding-string bytes 'utf-8)
                              :time (format-time-string "%FT%T%z"))
                      (cons (car e) (gptel-scope--trust-plist-without props :editing)))))))
            entries))))
    ;; A list that cannot be read is reported by the change that needs it.
    (gptel-scope-trust-error nil)
    (error (message "gptel-scope: could not complete an interrupted Add to scope: %s"
                    (error-message-string err)))))

(defun gptel-scope--trust-update (fn)
  "Replace the trust list's entries by (FN ENTRIES), under its lock.
The list is read again under the lock, so a change another Emacs made
meanwhile is kept; a list that cannot be read is never rewritten
\(`gptel-scope-trust-error')."
  (gptel-scope--trust-with-lock
    (gptel-scope--trust-write (funcall fn (gptel-scope--trust-read-strict)))))

(defun gptel-scope--trust-entries ()
  "Return the trust list's entries, read again when the file changed."
  (let ((c gptel-scope--trust-cache)
        (stamp (gptel-scope--trust-stamp gptel-scope-trust-file)))
    (unless (and c (equal (car c) gptel-scope-trust-file) (equal (nth 1 c) stamp))
      (setq gptel-scope--trust-cache
            (cons gptel-scope-trust-file (cons stamp (gptel-scope--trust-read)))
            gptel-scope--trust-generation (1+ gptel-scope--trust-generation)))
    (nthcdr 2 gptel-scope--trust-cache)))

(defun gptel-scope-trust-generation ()
  "Return the generation of the approvals: a new number after any change."
  (gptel-scope--trust-entries)
  gptel-scope--trust-generation)

(defun gptel-scope--trust-truename (file)
  "Return the truename of FILE, the key of its approval."
  (file-truename (expand-file-name file)))

(defun gptel-scope-trust-approved (file)
  "Return the SHA-256 approved for the scope document FILE, or nil."
  (plist-get (cdr (assoc (gptel-scope--trust-truename file) (gptel-scope--trust-entries)))
             :sha256))

(defun gptel-scope--file-bytes (file)
  "Return the bytes of FILE, a unibyte string."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (let ((coding-system-for-read 'no-conversion))
      (insert-file-contents-literally file))
    (buffer-string)))

(defun gptel-scope--sha256 (bytes)
  "Return the SHA-256 of the unibyte string BYTES, in hex."
  (secure-hash 'sha256 bytes))

(defun gptel-scope-trust-status (file)
  "Return the approval of the scope document FILE as a plist.
\(:file TRUENAME :sha256 HASH :approved BOOL :approved-sha256 HASH), where
HASH is that of FILE's content now (nil when it cannot be read)."
  (let* ((truename (gptel-scope--trust-truename file))
         (hash (ignore-errors (gptel-scope--sha256 (gptel-scope--file-bytes truename))))
         (approved (gptel-scope-trust-approved truename)))
    (list :file truename :sha256 hash
          :approved (and hash approved (string= hash approved) t)
          :approved-sha256 approved)))

(defun gptel-scope--trust-write (entries)
  "Write ENTRIES as the trust list, atomically, readable by the user only.
Call it with the lock held (`gptel-scope--trust-update').  The
temporary file is named after this Emacs's pid, so one a killed Emacs
left is recognised and deleted by the next (`gptel-scope--trust-clean')."
  (let* ((file (expand-file-name gptel-scope-trust-file))
         (dir (file-name-directory file))
         ;; Writing a file takes its lock file too: a kill would leave that link behind.
         (create-lockfiles nil))
    (with-file-modes #o700 (make-directory dir t))
    (let ((tmp (with-file-modes #o600
                 (make-temp-file (expand-file-name (gptel-scope--trust-temp-prefix file) dir)))))
      (unwind-protect
          (progn
            (set-file-modes tmp #o600)
            (with-temp-file tmp
              (set-buffer-file-coding-system 'utf-8-unix)
              (insert ";; gptel-scope: the scope documents you approved (M-x gptel-scope-trust).\n"
                      ";; Each: (TRUENAME :sha256 HASH :content TEXT :time TIME).  Do not edit by hand.\n")
              (let ((print-length nil) (print-level nil) (print-escape-newlines nil))
                (prin1 entries (current-buffer)))
              (insert "\n"))
            (rename-file tmp file t)
            (setq tmp nil))
        (when (and tmp (file-exists-p tmp)) (delete-file tmp))))
    (setq gptel-scope--trust-cache nil)))

(defun gptel-scope--trust-record (file bytes)
  "Approve BYTES, the content of the scope document FILE.
The approval replaces any earlier one of FILE.  Return the hash."
  (let* ((truename (gptel-scope--trust-truename file))
         (hash (gptel-scope--sha256 bytes)))
    (gptel-scope--trust-update
     (lambda (entries)
       (append (seq-remove (lambda (e) (equal (car e) truename)) entries)
               (list (list truename :sha256 hash
                           :content (decode-coding-string bytes 'utf-8)
                           :time (format-time-string "%FT%T%z"))))))
    (setq gptel-scope--trust-declined
          (seq-remove (lambda (d) (equal (car d) truename)) gptel-scope--trust-declined))
    (run-hooks 'gptel-scope-trust-functions)
    hash))

(defun gptel-scope--trust-diff-text (buffer)
  "Return the unified diff of BUFFER, made by `diff-no-select', for reading.
The command line and the \"Diff finished\" line are left out, and the
two sides are labelled \"approved\" and \"now\"."
  (with-current-buffer buffer
    (let ((lines (split-string (buffer-substring-no-properties (point-min) (point-max)) "\n")))
      (mapconcat
       (lambda (line)
         (cond ((string-prefix-p "--- " line) "--- approved")
               ((string-prefix-p "+++ " line) "+++ now")
               (t line)))
       (seq-remove (lambda (line) (or (string-prefix-p "diff " line)
                                      (string-prefix-p "Diff finished" line)))
                   lines)
       "\n"))))

(defun gptel-scope--trust-review-buffer (file bytes)
  "Return a buffer showing BYTES, FILE's content, against its approved content."
  (let* ((truename (gptel-scope--trust-truename file))
         (entry (cdr (assoc truename (gptel-scope--trust-entries))))
         (old (plist-get entry :content))
         (new (decode-coding-string bytes 'utf-8))
         (buffer (get-buffer-create "*gptel-scope-trust*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (if old
                    (format "%s changed since you approved it (%s).\nThe rules below apply only if you approve them; the diff is against what you approved:\n\n"
                            truename (or (plist-get entry :time) "earlier"))
                  (format "%s is a scope document you have not approved.\nThe rules below apply to the tools gptel runs in this project only if you approve them:\n\n"
                          truename)))
        (if (and old (require 'diff nil t))
            (let ((a (generate-new-buffer " *gptel-scope-approved*"))
                  (b (generate-new-buffer " *gptel-scope-now*")))
              (unwind-protect
                  (progn
                    (with-current-buffer a (insert old))
                    (with-current-buffer b (insert new))
                    (let ((d (diff-no-select a b "-u" t)))
                      (insert (gptel-scope--trust-diff-text d))
                      (kill-buffer d)))
                (kill-buffer a)
                (kill-buffer b)))
          (insert new))
        (goto-char (point-min))
        (special-mode)))
    buffer))

(defun gptel-scope--trust-ask (file)
  "Show FILE's content (or what changed) and ask whether to approve it.
Return non-nil when the user approved it.  The bytes shown are the
bytes approved.  In batch Emacs, or with `gptel-scope-trust-ask' nil,
nothing is asked and nil is returned."
  (when (and gptel-scope-trust-ask (not noninteractive))
    (let* ((bytes (gptel-scope--file-bytes file))
           (key (cons (gptel-scope--trust-truename file) (gptel-scope--sha256 bytes))))
      (unless (member key gptel-scope--trust-declined)
        (save-window-excursion
          (or (gptel-scope--trust-review file bytes)
              (progn (push key gptel-scope--trust-declined) nil)))))))

(defun gptel-scope--trust-review (file bytes)
  "Show BYTES, FILE's content (or what changed), and ask to approve them.
Return the approved hash, or nil when the user declined."
  (pop-to-buffer (gptel-scope--trust-review-buffer file bytes))
  (and (y-or-n-p (format "Apply the rules of %s to gptel's tools? " file))
       (gptel-scope--trust-record file bytes)))

(defun gptel-scope-trust-offer (file)
  "Ask to approve the scope document FILE after a call was refused for it.
Return non-nil when FILE is approved now (the call may then run again).
Uses `gptel-scope-trust-asker'; an error in it approves nothing."
  (and file (file-exists-p file)
       (condition-case err
           (funcall gptel-scope-trust-asker file)
         ((debug error)
          (message "gptel-scope: approving %s failed: %s" file (error-message-string err))
          nil))))

;;;###autoload
(defun gptel-scope-trust (file &optional interactive)
  "Approve the content of the scope document FILE.
Interactively (INTERACTIVE non-nil), show it, or the diff against the
content approved last, and ask first; the default FILE is the scope
document of the current buffer.  From Lisp, approve FILE's content as
it is now.  Return the approved SHA-256, or nil when declined."
  (interactive
   (let ((doc (and (fboundp 'gptel-scope-document) (gptel-scope-document))))
     (list (read-file-name "Approve scope document: "
                           (and doc (file-name-directory doc)) doc t
                           (and doc (file-name-nondirectory doc)))
           t)))
  (let ((file (expand-file-name file)))
    (unless (file-regular-p file)
      (signal 'gptel-scope-io-error (list (format "%s is not a file" file))))
    (let ((bytes (gptel-scope--file-bytes file)))
      (if (not interactive)
          (gptel-scope--trust-record file bytes)
        (let ((hash (gptel-scope--trust-review file bytes)))
          (if hash
              (prog1 hash
                (quit-window nil (get-buffer-window "*gptel-scope-trust*"))
                (message "Approved %s" file))
            (message "Not approved: tools refuse to run under %s" file)
            nil))))))

(defun gptel-scope-trust-untrust (file)
  "Withdraw the approval of the scope document FILE."
  (interactive "fWithdraw the approval of: ")
  (let ((truename (gptel-scope--trust-truename file)))
    (gptel-scope--trust-update
     (lambda (entries) (seq-remove (lambda (e) (equal (car e) truename)) entries)))))

(defun gptel-scope--scope-document-name-p (file)
  "Return non-nil when FILE is named like a scope document."
  (member (file-name-nondirectory file) '("scope.yml" "preset.md")))

(defun gptel-scope--trust-after-save ()
  "Approve the scope document this buffer just saved.
A buffer visiting scope.yml, preset.md or a document already in the
trust list is the user's own edit: the bytes on disk are approved when
they are this buffer's text."
  (when (and buffer-file-name
             (not (file-remote-p buffer-file-name))
             (or (gptel-scope--scope-document-name-p buffer-file-name)
                 (assoc (gptel-scope--trust-truename buffer-file-name) (gptel-scope--trust-entries))))
    (condition-case err
        (let* ((bytes (gptel-scope--file-bytes buffer-file-name))
               (text (decode-coding-string bytes (or buffer-file-coding-system 'utf-8) t)))
          (when (string= (string-replace "\r\n" "\n" text)
                         (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))
            (gptel-scope--trust-record buffer-file-name bytes)))
      (error (message "gptel-scope: could not approve %s: %s" buffer-file-name
                      (error-message-string err))))))

(add-hook 'after-save-hook #'gptel-scope--trust-after-save)

(provide 'gptel-scope-trust)
;;; gptel-scope-trust.el ends here
