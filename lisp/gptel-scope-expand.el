;;; gptel-scope-expand.el --- Widening the scope from a transient menu  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; What answers request_scope_expansion (the tool is defined in
;; gptel-scope-tools): after a refusal the model asks for a tool and a
;; resource, with a reason, and the user answers from a transient menu:
;;
;;   d  Deny (reject the tool call)      a  Add to scope (permanent)
;;   o  Allow once (this turn)           e  Edit the scope document
;;   q  Cancel (deny)                    r  Retry (after an edit)
;;
;; The menu shows the tool, the resource, the model's reason and what was
;; refused.  Requests queue: one menu at a time.  The answer goes to the
;; model as JSON, always with a message.  Quitting the menu (C-g) counts
;; as Cancel.  Add to scope edits the scope document in effect in place
;; (comments and layout kept) through the module; a failure is reported
;; and the menu comes back.  Edit opens the document and leaves the
;; request pending: saving or killing the document's buffer brings the
;; menu back, so does \\[gptel-scope-resume-expansion], and the end of
;; the turn (gptel's post-response hook, run on abort too) denies what is
;; still open.  Allow-once grants are buffer-local, used up by the call
;; they let through, and cleared when the response ends.
;;
;; The menu itself is in gptel-scope-menu, loaded (with transient) when
;; it is first shown.  The request travels to the suffix commands as the
;; transient's scope, read with the API of each transient version.
;;
;; With `gptel-scope-prompt-on-denial' the menu opens at the refusal
;; itself (gptel-scope-call asks), and the refused call runs when the
;; user lifts the refusal.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'eieio)
(require 'gptel-scope-core)
(require 'gptel-scope-session)

(declare-function gptel-scope-module-add-to-scope "gptel-scope-module" (request))
(declare-function transient-scope "transient")
(autoload 'gptel-scope--expansion-show-menu "gptel-scope-menu")
(autoload 'gptel-scope-expansion-menu "gptel-scope-menu" nil t)
(defvar gptel-post-response-functions)

;;;; Requests

(defvar gptel-scope--expansion-queue nil
  "Expansion requests waiting for the menu, oldest first.")

(defvar gptel-scope--expansion-current nil
  "The expansion request the menu shows or is about to show, or nil.")

(defvar gptel-scope--expansion-pending nil
  "Requests left open by Edit, oldest first.")

(defvar gptel-scope--expansion-counter 0
  "The number of expansion requests made so far.")

(defvar gptel-scope-expansion-show-function #'gptel-scope--expansion-show-menu
  "Function of one argument, a request plist, that puts it to the user.
The default opens `gptel-scope-expansion-menu'.")

(defconst gptel-scope-tool-validation
  `((,gptel-scope--tool-run-bash-command . "command")
    (,gptel-scope--tool-run-command . "command")
    (,gptel-scope--tool-list-allowed-commands . "meta")
    (,gptel-scope--tool-get-system-info . "meta")
    (,gptel-scope--tool-request-scope-expansion . "meta"))
  "How each tool's resources are validated; tools not listed validate paths.
A \"meta\" tool needs no scope: request_scope_expansion always runs.")

(defun gptel-scope--validation-type (tool resource)
  "Return how RESOURCE of TOOL is validated: path, pattern, command, env or meta.
A resource env:NAME asks for the variable NAME in commands' environment."
  (let ((strategy (or (cdr (assoc tool gptel-scope-tool-validation)) "path")))
    (cond ((string-match-p "\\`\\(subdirectory\\|tags\\):" resource) "pattern")
          ((and (string-prefix-p "env:" resource) (not (equal strategy "meta"))) "env")
          ((equal strategy "command")
           (if (string-match-p "\\`\\(/\\|~\\|\\./\\|\\.\\./\\)" resource) "path" "command"))
          (t strategy))))

(defun gptel-scope--make-request (callback tool resource reason known)
  "Return a new request of TOOL on RESOURCE for REASON, answered to CALLBACK.
KNOWN, what the current buffer recorded of the refusal
\(`gptel-scope-denial'), fills in the details."
  (list :id (cl-incf gptel-scope--expansion-counter)
        :tool tool
        :resource resource
        :reason reason
        :validation-type (or (plist-get known :validation-type)
                             (gptel-scope--validation-type tool resource))
        :access (plist-get known :access)
        :denial-reason (plist-get known :reason)
        :denial-message (plist-get known :message)
        :command (plist-get known :command)
        :callback callback
        :buffer (current-buffer)
        :document (gptel-scope-document)
        :directory default-directory
        :state 'queued
        :edited nil))

(defun gptel-scope--request-p (object)
  "Return non-nil when OBJECT is an expansion request."
  (and (consp object) (plist-get object :id) (functionp (plist-get object :callback))))

(defun gptel-scope--enqueue (request)
  "Queue REQUEST and show it when no other one is shown."
  (setq gptel-scope--expansion-queue (append gptel-scope--expansion-queue (list request)))
  (gptel-scope--expansion-next))

(defun gptel-scope--rules-resource-p (resource)
  "Return non-nil when RESOURCE is a file holding rules.
A path named scope.yml, the document in effect, or one of
`gptel-scope-protected-paths': no expansion may cover writing it."
  (let ((file (directory-file-name (expand-file-name resource))))
    (or (string= (downcase (file-name-nondirectory file)) "scope.yml")
        (member file (append (gptel-scope-protected-paths)
                             (delq nil (list (gptel-scope-document))))))))

(defun gptel-scope--expansion-answer (request json)
  "Answer REQUEST with JSON, once, and move on to the next request."
  (unless (eq (plist-get request :state) 'answered)
    (plist-put request :state 'answered)
    (setq gptel-scope--expansion-pending (delq request gptel-scope--expansion-pending))
    (setq gptel-scope--expansion-queue (delq request gptel-scope--expansion-queue))
    (when (eq request gptel-scope--expansion-current)
      (setq gptel-scope--expansion-current nil))
    (condition-case err
        (funcall (plist-get request :callback) json)
      (error (message "gptel-scope: answering the request failed: %s" (error-message-string err))))
    (run-at-time 0 nil #'gptel-scope--expansion-next)))

(defun gptel-scope--shown (text)
  "Return TEXT cut for an answer or a message when it is huge.
That is its first 200 characters and how many more; what is granted
is the resource whole."
  (if (and (stringp text) (> (length text) 200))
      (format "%s… (%d more characters)" (substring text 0 200) (- (length text) 200))
    text))

(defun gptel-scope--denied-json (request message)
  "Return the JSON answer denying REQUEST with MESSAGE."
  (gptel-scope--json :success nil :user_denied t
                     :tool (plist-get request :tool) :resource (gptel-scope--shown (plist-get request :resource))
                     :message message))

(defun gptel-scope--expansion-next ()
  "Show the next queued request when none is shown."
  (unless gptel-scope--expansion-current
    (let (request)
      (while (and (setq request (pop gptel-scope--expansion-queue))
                  (not (buffer-live-p (plist-get request :buffer))))
        (plist-put request :state 'answered)
        (funcall (plist-get request :callback)
                 (gptel-scope--denied-json request "The chat buffer was closed before the user answered.")))
      (when request
        (setq gptel-scope--expansion-current request)
        (plist-put request :state 'waiting)
        (funcall gptel-scope-expansion-show-function request)))))

;;;; The menu

(defun gptel-scope--prefix-slot (prefix slot)
  "Return the SLOT of PREFIX, a transient prefix object.
The slot is named at run time: transient, whose class declares it, is
loaded only with the menu, and the compiler would not know the slot."
  (eieio-oref prefix slot))

(defun gptel-scope--prefix-command (prefix)
  "Return the command of PREFIX, a transient prefix object or stack entry."
  (cond ((null prefix) nil)
        ((consp prefix) (car prefix))
        (t (ignore-errors (gptel-scope--prefix-slot prefix 'command)))))

(defun gptel-scope--expansion-menu-active-p ()
  "Return non-nil when the expansion menu is up or suspended."
  (seq-some (lambda (p) (eq (gptel-scope--prefix-command p) 'gptel-scope-expansion-menu))
            (cons (bound-and-true-p transient--prefix) (bound-and-true-p transient--stack))))

(defun gptel-scope--transient-scope ()
  "Return the scope of the expansion menu when it is active, or nil.
Each transient version has its own way to read it: `transient-scope'
with the prefix as argument from 0.8 on, `transient-scope' without
arguments on 0.7 (Emacs 30's own is 0.7.2), and the prefix object's
slot before 0.7 (0.3.7 is Emacs 28's)."
  (when (featurep 'transient)
    (let ((prefix (or (bound-and-true-p transient--prefix)
                      (bound-and-true-p transient-current-prefix))))
      (when (eq (gptel-scope--prefix-command prefix) 'gptel-scope-expansion-menu)
        (cond ((not (fboundp 'transient-scope)) (gptel-scope--prefix-slot prefix 'scope))
              ((eql (cdr (func-arity 'transient-scope)) 0) (transient-scope))
              (t (transient-scope 'gptel-scope-expansion-menu)))))))

(defun gptel-scope--expansion-request ()
  "Return the request the menu answers.
That is the transient scope of the menu; called outside the menu,
the request being shown."
  (let ((scope (gptel-scope--transient-scope)))
    (cond ((gptel-scope--request-p scope)
           (when (eq (plist-get scope :state) 'answered)
             (user-error "This scope expansion request was answered already"))
           scope)
          (gptel-scope--expansion-current)
          (t (user-error "No scope expansion request is waiting")))))

(defun gptel-scope--expansion-edited-p ()
  "Return non-nil when the request in the menu had its document edited."
  (let ((scope (gptel-scope--transient-scope)))
    (and (gptel-scope--request-p scope) (plist-get scope :edited))))

(defun gptel-scope--add-section (request)
  "Describe where Add to scope would put REQUEST's resource.
With a scope document, the module says exactly (the section and the
value, asked once per request); without one, the sections it could be."
  (let ((plan (plist-get request :add-plan)))
    (unless plan
      (setq plan (or (ignore-errors
                       (let ((doc (plist-get request :document)))
                         (when (and doc (file-exists-p doc))
                           (gptel-scope-load-module)
                           (let ((p (gptel-scope-module-add-to-scope (gptel-scope--add-request-json request t))))
                             (format "%s: %s" (plist-get p :section) (plist-get p :value))))))
                     'none))
      (plist-put request :add-plan plan))
    (if (stringp plan) plan (gptel-scope--add-sections request))))

(defun gptel-scope--add-sections (request)
  "Describe the sections Add to scope could put REQUEST's resource in."
  (pcase (plist-get request :validation-type)
    ("command" "bash_tools.categories (read_only or safe_write)")
    ("path" (if (equal (plist-get request :access) "write") "paths.write" "paths.read, or paths.write for writing tools"))
    ("pattern" "org_roam_patterns")
    ("env" "environment.include (the variable, by name; its value is never shown)")
    (other (format "nowhere: unknown validation type %s" other))))

(defun gptel-scope--first-sentence (text)
  "Return the first sentence of TEXT."
  (if (string-match "\\.\\( \\|\\'\\)" text)
      (substring text 0 (1+ (match-beginning 0)))
    text))

(defun gptel-scope--expansion-menu-exited ()
  "Count the menu closed without a choice (\\[transient-quit-one]) as Cancel."
  (let ((request gptel-scope--expansion-current))
    (when (and request (eq (plist-get request :state) 'shown)
               (not (gptel-scope--expansion-menu-active-p)))
      (gptel-scope--expansion-answer
       request (gptel-scope--denied-json
                request "The user closed the request without allowing it; treat it as denied and do not retry it.")))))

(add-hook 'transient-exit-hook #'gptel-scope--expansion-menu-exited)

;;;; The choices

(defun gptel-scope-expansion-deny ()
  "Deny the request: the refused tool call stays refused."
  (interactive)
  (let ((request (gptel-scope--expansion-request)))
    (gptel-scope--expansion-answer
     request (gptel-scope--denied-json
              request (format "The user denied %s on %s. Do not retry it or work around it; continue without it, or ask the user."
                              (plist-get request :tool) (gptel-scope--shown (plist-get request :resource)))))))

(defun gptel-scope-expansion-cancel ()
  "Close the menu without allowing anything: the request counts as denied."
  (interactive)
  (let ((request (gptel-scope--expansion-request)))
    (gptel-scope--expansion-answer
     request (gptel-scope--denied-json
              request "The user cancelled the request without allowing it; treat it as denied and do not retry it."))))

(defun gptel-scope-expansion-allow-once ()
  "Allow the tool on the resource once, for this turn."
  (interactive)
  (let* ((request (gptel-scope--expansion-request))
         (buffer (plist-get request :buffer)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (push (cons (plist-get request :tool) (plist-get request :resource)) gptel-scope--allow-once)))
    (gptel-scope--expansion-answer
     request (gptel-scope--json
              :success t :allowed_once t
              :tool (plist-get request :tool) :resource (gptel-scope--shown (plist-get request :resource))
              :message (format "The user allowed %s on %s once, for this turn. Retry the same call now; the permission is used up by that call."
                               (plist-get request :tool) (gptel-scope--shown (plist-get request :resource)))))))

(defun gptel-scope--add-resource (request)
  "Return the resource of REQUEST as Add to scope should write it.
An existing directory gets a trailing slash, which the module turns
into dir/** (E15)."
  (let ((resource (plist-get request :resource)))
    (if (and (equal (plist-get request :validation-type) "path")
             (not (string-suffix-p "/" resource))
             (not (string-match-p "[*?[]" resource))
             (file-directory-p (expand-file-name resource (plist-get request :directory))))
        (concat resource "/")
      resource)))

(defun gptel-scope--add-request-json (request &optional plan)
  "The JSON `gptel-scope-module-add-to-scope' takes for REQUEST.
With PLAN, it asks only where the resource would go."
  (json-serialize
   (append (and plan (list :plan t))
           (list :file (plist-get request :document)
                 :validation_type (plist-get request :validation-type)
                 :resource (gptel-scope--add-resource request)
                 :tool (plist-get request :tool)
                 :base_directory (directory-file-name (expand-file-name (plist-get request :directory))))
           (and (plist-get request :access) (list :access (plist-get request :access))))))

(defun gptel-scope-add-to-scope (request)
  "Add the resource of REQUEST to its scope document; return the module's result.
Signal `user-error' when there is no document (E34), and the module's
errors when it cannot edit it (E33, E36)."
  (let ((doc (plist-get request :document)))
    (unless (and doc (file-exists-p doc))
      (user-error "No scope document to add to%s: create one with M-x gptel-scope-init, or choose Edit"
                  (if doc (format " (%s does not exist)" doc) "")))
    (gptel-scope-load-module)
    ;; One transaction under the trust list's lock: the approved hash is read, the
    ;; edit noted in the document's entry, the module edits (under the document's own
    ;; lock) and the new content is approved, with no other Emacs's edit or approval
    ;; in between.  The approval is recorded after the write it approves, never of
    ;; content not on disk.  A kill before the write leaves the old content, still
    ;; approved; a kill between the write and the approval leaves the note, and the
    ;; next Emacs to take the lock approves the content on disk when it is exactly
    ;; what the noted edit makes of the approved content (`gptel-scope--trust-recover').
    (gptel-scope--trust-with-lock
      (let* ((approved (gptel-scope-trust-approved doc))
             (json (gptel-scope--add-request-json request)))
        (unwind-protect
            (progn
              (when approved (gptel-scope--trust-journal doc approved json))
              (let ((result (gptel-scope-module-add-to-scope json)))
                (gptel-scope--approve-edit doc approved result)
                result))
          (when approved (gptel-scope--trust-journal-clear doc)))))))

(defun gptel-scope--approve-edit (doc approved result)
  "Keep the scope document DOC approved after Add to scope edited it.
APPROVED is the hash approved before the edit, RESULT the module's
answer with the hashes of the content before and after.  Only an edit
of the approved content is approved (the user saw the rest); the bytes
approved are read again and must be the ones the edit wrote."
  (let ((before (plist-get result :sha256-before))
        (after (plist-get result :sha256-after)))
    (when (and approved before after (string= approved before))
      (let ((bytes (gptel-scope--file-bytes doc)))
        (when (string= (gptel-scope--sha256 bytes) after)
          (gptel-scope--trust-record doc bytes))))))

(defun gptel-scope--expansion-show-again (request)
  "Put REQUEST back on the menu after a choice that failed."
  (plist-put request :state 'retry)
  (run-at-time 0 nil (lambda ()
                       (when (eq request gptel-scope--expansion-current)
                         (plist-put request :state 'waiting)
                         (funcall gptel-scope-expansion-show-function request)))))

(defun gptel-scope-expansion-add ()
  "Add the resource to the scope document, permanently.
When that fails the reason is shown and the menu comes back."
  (interactive)
  (let* ((request (gptel-scope--expansion-request))
         (result (condition-case err
                     (gptel-scope-add-to-scope request)
                   (error
                    (gptel-scope--expansion-show-again request)
                    (user-error "Add to scope failed: %s" (error-message-string err)))))
         (added (plist-get result :patterns-added))
         (present (plist-get result :already-present))
         (section (plist-get result :section))
         (file (or (plist-get result :file) (plist-get request :document))))
    (gptel-scope--expansion-answer
     request (gptel-scope--json
              :success t
              :patterns_added (vconcat added)
              :already_present (vconcat present)
              :section (or section :null)
              :file file
              :message (if added
                           (format "The user added %s to %s in %s, permanently. Retry the call."
                                   (string-join added ", ") section file)
                         (format "%s is already in %s of %s; nothing was added. Retry the call."
                                 (string-join present ", ") section file))))))

(defun gptel-scope--same-file-p (a b)
  "Return non-nil when A and B name the same file."
  (and a b (string= (file-truename a) (file-truename b))))

(defun gptel-scope--expansion-document-done (&optional saved)
  "Bring back the requests pending on the document of the current buffer.
SAVED non-nil means the document was just saved: the requests are
marked edited, and their menu offers Retry."
  (let ((file buffer-file-name))
    (dolist (request (reverse gptel-scope--expansion-pending))
      (when (gptel-scope--same-file-p (plist-get request :document) file)
        (when saved (plist-put request :edited t))
        (run-at-time 0 nil #'gptel-scope--expansion-resume request)))))

(defun gptel-scope--expansion-document-saved ()
  "Bring back, marked edited, the requests pending on the saved document."
  (gptel-scope--expansion-document-done t))

(defun gptel-scope--expansion-resume (request)
  "Put the pending REQUEST first in the queue and show it when possible."
  (when (memq request gptel-scope--expansion-pending)
    (setq gptel-scope--expansion-pending (delq request gptel-scope--expansion-pending))
    (plist-put request :state 'queued)
    (push request gptel-scope--expansion-queue)
    (gptel-scope--expansion-next)))

(defun gptel-scope-expansion-edit ()
  "Open the scope document; the request stays pending until it is answered.
Saving or killing the document's buffer brings the menu back, and so
does \\[gptel-scope-resume-expansion]; the end of the turn denies it."
  (interactive)
  (let* ((request (gptel-scope--expansion-request))
         (buffer (plist-get request :buffer))
         (doc (or (plist-get request :document)
                  (expand-file-name "scope.yml"
                                    (or (and (buffer-live-p buffer)
                                             (buffer-local-value 'gptel-scope-directory buffer))
                                        (plist-get request :directory))))))
    (plist-put request :document doc)
    (plist-put request :state 'pending)
    (when (eq request gptel-scope--expansion-current)
      (setq gptel-scope--expansion-current nil))
    (setq gptel-scope--expansion-pending
          (append (delq request gptel-scope--expansion-pending) (list request)))
    (let ((doc-buffer (find-file-noselect doc)))
      (with-current-buffer doc-buffer
        (add-hook 'after-save-hook #'gptel-scope--expansion-document-saved nil t)
        (add-hook 'kill-buffer-hook #'gptel-scope--expansion-document-done nil t))
      (pop-to-buffer doc-buffer))
    (run-at-time 0 nil #'gptel-scope--expansion-next)
    (message "Edit the scope and save it: the request comes back to be answered (or M-x gptel-scope-resume-expansion)")))

(defun gptel-scope-expansion-retry ()
  "Tell the model the scope document was edited, so it retries the call."
  (interactive)
  (let ((request (gptel-scope--expansion-request)))
    (gptel-scope--expansion-answer
     request (gptel-scope--json
              :success t :scope_edited t
              :tool (plist-get request :tool) :resource (gptel-scope--shown (plist-get request :resource))
              :message (format "The user edited the scope document %s by hand. Retry the call; if it is refused again, the user did not allow it."
                               (plist-get request :document))))))

;;;###autoload
(defun gptel-scope-resume-expansion (&optional request)
  "Show the menu again for REQUEST, a request left open by Edit.
Interactively, choose among the pending requests when there are several."
  (interactive
   (list (let ((pending gptel-scope--expansion-pending))
           (cond ((null pending) (user-error "No scope expansion request is pending"))
                 ((null (cdr pending)) (car pending))
                 (t (let* ((names (mapcar (lambda (r)
                                            (cons (format "%d: %s on %s" (plist-get r :id)
                                                          (plist-get r :tool) (plist-get r :resource))
                                                  r))
                                          pending))
                           (choice (completing-read "Resume request: " names nil t)))
                      (cdr (assoc choice names))))))))
  (gptel-scope--expansion-resume (or request (car gptel-scope--expansion-pending)
                                     (user-error "No scope expansion request is pending"))))

;;;; The end of the turn

(defun gptel-scope-end-of-turn (&rest _)
  "Clear allow-once grants and answer open requests when a response ends.
Run from `gptel-post-response-functions' in the chat buffer: at the end
of a turn, and when it fails or is aborted."
  (let ((buffer (current-buffer)))
    (setq gptel-scope--allow-once nil
          gptel-scope--denials nil)
    (dolist (request (append (and gptel-scope--expansion-current (list gptel-scope--expansion-current))
                             gptel-scope--expansion-queue
                             gptel-scope--expansion-pending))
      (when (eq (plist-get request :buffer) buffer)
        (gptel-scope--expansion-answer
         request (gptel-scope--denied-json
                  request "The turn ended before the user answered; treat the request as denied."))))))

(provide 'gptel-scope-expand)
;;; gptel-scope-expand.el ends here
