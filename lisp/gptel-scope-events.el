;;; gptel-scope-events.el --- Tool events, log buffer and audit file  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Every tool call tells what happened through `gptel-scope--emit':
;;
;;   (gptel-scope--emit TYPE TOOL ARGS &rest PROPS)
;;
;; TYPE is `start', `end', `denied', `error' or `truncated'; TOOL the
;; tool's name; ARGS its arguments; PROPS any of :reason, :message,
;; :bytes, :lines, :duration-ms, :exit-code, :session-id and :id (one
;; id per call, linking its start and its end; see
;; `gptel-scope--event-id').  The event is the plist
;;
;;   (:time FLOAT :type TYPE :tool TOOL :args ARGS . PROPS)
;;
;; and it goes to:
;;
;; - the abnormal hook `gptel-scope-event-functions' (an error in one of
;;   its functions is reported with `message' and never reaches the tool);
;; - a ring of the last `gptel-scope-log-size' events, listed newest
;;   first by \\[gptel-scope-log];
;; - when `gptel-scope-audit-file' is set, one JSON line appended to it.
;;   Any Lisp data is written: invalid UTF-8 becomes U+FFFD, symbols
;;   become strings, plists objects, other lists arrays, and what JSON
;;   cannot hold its printed representation.

;;; Code:

(require 'cl-lib)
(require 'ring)
(require 'seq)
(require 'subr-x)
(require 'tabulated-list)
(require 'gptel-scope-core)
(require 'gptel-scope-trust)
(require 'gptel-scope-session)

;;;; Options

(defcustom gptel-scope-event-functions nil
  "Functions called with each event of a gptel-scope tool, a plist.
The plist is (:time FLOAT :type TYPE :tool TOOL :args ARGS . PROPS),
TYPE one of `start', `end', `denied', `error' and `truncated'; see
`gptel-scope--emit' for PROPS.  An error in a function is reported
with `message' and does not stop the tool or the other functions.
Events of processes are emitted from timers and sentinels, in no
particular buffer: set this hook globally."
  :type 'hook
  :group 'gptel-scope)

(defcustom gptel-scope-log-size 1000
  "How many recent events \\[gptel-scope-log] can show.
Zero keeps none."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-audit-file nil
  "File receiving every event as one line of JSON, or nil for none.
Lines are appended; the file is created with mode 0600, and its
directory when missing."
  :type '(choice (const :tag "No audit file" nil) file)
  :group 'gptel-scope)

;;;; Emitting

(defconst gptel-scope-event-types '(start end denied error truncated)
  "The types of event `gptel-scope--emit' accepts.")

(defvar gptel-scope--event-ring nil
  "The recent events, newest first, a ring of `gptel-scope-log-size'.")

(defvar gptel-scope--event-counter 0
  "Events ids handed out in this session.")

(defun gptel-scope--event-id ()
  "Return a fresh id for the events of one call, a string."
  (format "%x-%x-%d" (emacs-pid) (floor (float-time)) (cl-incf gptel-scope--event-counter)))

(defun gptel-scope--event-ring ()
  "Return the event ring, sized to `gptel-scope-log-size'."
  (let ((size (max 0 (if (natnump gptel-scope-log-size) gptel-scope-log-size 0))))
    (cond ((null gptel-scope--event-ring)
           (setq gptel-scope--event-ring (make-ring (max 1 size))))
          ((and (> size 0) (/= size (ring-size gptel-scope--event-ring)))
           (ring-resize gptel-scope--event-ring size)))
    gptel-scope--event-ring))

(defun gptel-scope--record-event (event)
  "Keep EVENT in the ring of recent events."
  (if (and (natnump gptel-scope-log-size) (> gptel-scope-log-size 0))
      (ring-insert (gptel-scope--event-ring) event)
    (setq gptel-scope--event-ring nil)))

(defun gptel-scope--run-event-functions (event)
  "Call each function of `gptel-scope-event-functions' with EVENT.
An error of a function is reported and does not stop the others."
  (run-hook-wrapped
   'gptel-scope-event-functions
   (lambda (fn ev)
     (condition-case err
         (funcall fn ev)
       (error (message "gptel-scope: event function %s failed: %s"
                       (if (symbolp fn) fn "(a lambda)") (error-message-string err))))
     nil)
   event))

(defun gptel-scope--event-scope (event)
  "Return the scope document of EVENT's call and whether it is approved.
A call that started ran under its document's approved content (the
module checked it); one refused with untrusted_scope did not."
  (let ((doc (ignore-errors (gptel-scope-document))))
    (and doc
         (list :scope-document doc
               :approved (if (equal (plist-get event :reason) gptel-scope--reason-untrusted-scope)
                             nil
                           (and (gptel-scope-trust-approved doc) t))))))


(defun gptel-scope--emit (type tool args &rest props)
  "Emit an event of TYPE for the call of TOOL with ARGS and PROPS.
TYPE is one of `gptel-scope-event-types'; TOOL a string; ARGS the
tool's arguments, a plist or list; PROPS a plist of any of :reason
\(a string), :message, :bytes, :lines, :duration-ms, :exit-code,
:session-id and :id (a `gptel-scope--event-id' shared by the start
and end of one call).  The event, the plist
  (:time FLOAT :type TYPE :tool TOOL :args ARGS . PROPS)
goes to `gptel-scope-event-functions', to the log of
\\[gptel-scope-log] and to `gptel-scope-audit-file'.  Never signals;
return the event."
  (let ((event (nconc (list :time (float-time) :type type :tool tool :args args) props)))
    (condition-case err
        (progn
          ;; Which document the call ran under, and whether it was approved.
          (when (memq type '(start denied))
            (nconc event (gptel-scope--event-scope event)))
          (unless (memq type gptel-scope-event-types)
            (message "gptel-scope: unknown event type %S from %s" type tool))
          (gptel-scope--record-event event)
          (gptel-scope--run-event-functions event)
          (when gptel-scope-audit-file
            (gptel-scope--audit event)))
      (error (message "gptel-scope: event not recorded: %s" (error-message-string err))))
    event))

;;;; Errors

(defmacro gptel-scope--with-error-event (tool args &rest body)
  "Run BODY; on an error emit an `error' event of TOOL with ARGS and re-signal.
The event's :reason is the reason code of the error, its :message the
error's message."
  (declare (indent 2) (debug t))
  (let ((err (make-symbol "err")))
    `(condition-case ,err
         (progn ,@body)
       (error
        (gptel-scope--emit 'error ,tool ,args
                           :reason (if (fboundp 'gptel-scope--error-reason)
                                       (gptel-scope--error-reason ,err)
                                     "error")
                           :message (if (fboundp 'gptel-scope--error-message)
                                        (gptel-scope--error-message ,err)
                                      (error-message-string ,err)))
        (signal (car ,err) (cdr ,err))))))

(defun gptel-scope--event-json (event)
  "Return EVENT as one line of JSON; never signal."
  (condition-case nil
      (json-serialize (gptel-scope--json-value event))
    (error
     ;; What the conversion missed is still recorded, as its printed form.
     (json-serialize (list :time (float-time)
                           :type (format "%s" (plist-get event :type))
                           :tool (gptel-scope--json-string (format "%s" (plist-get event :tool)))
                           :unserializable (gptel-scope--json-string (format "%S" event)))))))

(defvar gptel-scope--audit-failure nil
  "The first failure to write the audit file: (FILE MESSAGE TIME), or nil.
A failure is reported once per audit file and session.")

(defun gptel-scope--audit-failed (file text)
  "Report once that FILE could not be written, because of TEXT.
The report is a warning, made once per audit file and session: a full
disk fails every event, and one warning says it."
  (unless (equal (car gptel-scope--audit-failure) file)
    (setq gptel-scope--audit-failure (list file text (float-time)))
    (display-warning 'gptel-scope
                     (format "Cannot write the audit file %s: %s.  Events are not logged there until it can be written (a full disk, the permissions of the file); tool calls go on"
                             file text)
                     :warning)))

(defun gptel-scope--audit-size (file)
  "Return the size of FILE, or nil when it is missing."
  (file-attribute-size (file-attributes file 'integer)))

(defun gptel-scope--audit-ends-line-p (file size)
  "Return non-nil when FILE, of SIZE bytes, is empty or ends with a newline."
  (or (null size) (zerop size)
      (with-temp-buffer
        (set-buffer-multibyte nil)
        (insert-file-contents-literally file nil (1- size) size)
        (equal (buffer-string) "\n"))))

(defun gptel-scope--audit-cut (file size)
  "Cut FILE back to SIZE bytes, the part of a line a failed write left.
Uses truncate(1); return non-nil when FILE has SIZE bytes after it."
  (let ((now (gptel-scope--audit-size file))
        (truncate (executable-find "truncate")))
    (cond ((or (null now) (<= now size)) t)
          (truncate
           (and (eql 0 (call-process truncate nil nil nil "-s" (number-to-string size)
                                     "--" file))
                (eql (gptel-scope--audit-size file) size))))))

(defun gptel-scope--audit (event)
  "Append EVENT as a JSON line to `gptel-scope-audit-file'.
A whole line or nothing: the line is encoded first and written by one
`write-region' of a string (one write of all its bytes, repeated only
when the system writes part of it); when that fails midway (a full
disk) the file is cut back to its size before, so the next line does
not join a fragment.  A line is also started on a new line when the
file does not end with one (a fragment that could not be cut).  A
failure is reported once with `display-warning' (see
`gptel-scope--audit-failed') and not signaled."
  (condition-case err
      (let* ((file (expand-file-name gptel-scope-audit-file))
             (dir (file-name-directory file))
             (size nil)
             (line (encode-coding-string (concat (gptel-scope--event-json event) "\n")
                                         'utf-8-unix)))
        (with-file-modes #o700
          (unless (file-directory-p dir) (make-directory dir t)))
        (setq size (gptel-scope--audit-size file))
        (unless (gptel-scope--audit-ends-line-p file size)
          (setq line (concat "\n" line)))
        (let ((coding-system-for-write 'no-conversion)
              (create-lockfiles nil)
              (write-region-inhibit-fsync t))
          (condition-case werr
              (with-file-modes #o600
                (write-region line nil file t 'silent))
            (error
             (gptel-scope--audit-cut file (or size 0))
             (signal (car werr) (cdr werr))))))
    (error (gptel-scope--audit-failed gptel-scope-audit-file (error-message-string err)))))

;;;; The log buffer

(defun gptel-scope-events ()
  "Return the recent events, newest first."
  (if gptel-scope--event-ring (ring-elements gptel-scope--event-ring) nil))

(defun gptel-scope--log-args (args)
  "Return a one-line summary of the tool arguments ARGS."
  (let ((text (cond ((gptel-scope--plist-p args)
                     (mapconcat (lambda (pair)
                                  (format "%s=%s" (substring (symbol-name (car pair)) 1)
                                          (if (stringp (cadr pair)) (cadr pair) (format "%S" (cadr pair)))))
                                (seq-filter #'cadr (seq-partition args 2))
                                " "))
                    ((null args) "")
                    (t (format "%S" args)))))
    (truncate-string-to-width (replace-regexp-in-string "[\n\r\t]+" " " text) 120 nil nil "…")))

(defun gptel-scope--log-cell (value)
  "Return VALUE as the text of a log cell: empty when nil."
  (cond ((null value) "")
        ((stringp value) (replace-regexp-in-string "[\n\r\t]+" " " value))
        (t (format "%s" value))))

(defun gptel-scope--log-entries ()
  "Return the rows of the log buffer, newest first."
  (mapcar (lambda (e)
            (list e
                  (vector (format-time-string "%F %T" (plist-get e :time))
                          (gptel-scope--log-cell (plist-get e :type))
                          (gptel-scope--log-cell (plist-get e :tool))
                          (gptel-scope--log-cell (plist-get e :reason))
                          (gptel-scope--log-cell (plist-get e :bytes))
                          (gptel-scope--log-cell (plist-get e :lines))
                          (gptel-scope--log-cell (plist-get e :duration-ms))
                          (gptel-scope--log-args (plist-get e :args)))))
          (gptel-scope-events)))

(defun gptel-scope--log-refresh ()
  "Read the events again into the log buffer."
  (setq tabulated-list-entries (gptel-scope--log-entries)))

(defun gptel-scope-log-show-event (event)
  "Show all of EVENT, the event of the row at point interactively."
  (interactive (list (or (tabulated-list-get-id) (user-error "No event on this line"))))
  (with-help-window "*gptel-scope-event*"
    (princ (format-time-string "%F %T.%3N\n\n" (plist-get event :time)))
    (princ (pp-to-string event))
    (princ "\nAs in the audit file:\n\n")
    (princ (gptel-scope--event-json event))
    (princ "\n")))

(defvar gptel-scope-log-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map tabulated-list-mode-map)
    (define-key map (kbd "RET") #'gptel-scope-log-show-event)
    map)
  "Keymap of `gptel-scope-log-mode'.")

(define-derived-mode gptel-scope-log-mode tabulated-list-mode "gptel-scope log"
  "The events of gptel-scope's tools, newest first.
\\<gptel-scope-log-mode-map>\\[revert-buffer] reads them again, \\[gptel-scope-log-show-event] shows an event in full."
  (setq tabulated-list-format
        [("Time" 19 nil)
         ("Type" 9 t)
         ("Tool" 17 t)
         ("Reason" 22 t)
         ("Bytes" 8 nil :right-align t)
         ("Lines" 6 nil :right-align t)
         ("ms" 7 nil :right-align t)
         ("Args" 0 nil)])
  (setq tabulated-list-padding 1)
  (setq tabulated-list-sort-key nil)
  (add-hook 'tabulated-list-revert-hook #'gptel-scope--log-refresh nil t)
  (tabulated-list-init-header))

;;;###autoload
(defun gptel-scope-log ()
  "List the recent events of gptel-scope's tools, newest first."
  (interactive)
  (let ((buffer (get-buffer-create "*gptel-scope-log*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'gptel-scope-log-mode) (gptel-scope-log-mode))
      (gptel-scope--log-refresh)
      (tabulated-list-print))
    (pop-to-buffer buffer)
    buffer))

(provide 'gptel-scope-events)
;;; gptel-scope-events.el ends here
