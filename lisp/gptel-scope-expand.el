;;; gptel-scope-expand.el --- Widening the scope from a transient menu  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (transient "0.3.7"))
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The request_scope_expansion tool: the model asks for a tool and a
;; resource, with a reason, and the user answers from a transient menu:
;; d Deny, a Add to scope (permanent), o Allow once, e Edit the scope
;; document, q Cancel.  Requests queue: one menu at a time.  The answer goes
;; to the model as JSON.  Allow-once grants are buffer-local, used up by the
;; call they allow, and cleared when the response ends.

;;; Code:

(require 'cl-lib)
(require 'transient)
(require 'gptel-scope-tools)

(declare-function gptel-scope-module-add-to-scope "gptel-scope-module" (request))
(declare-function gptel-make-tool "ext:gptel")
(defvar gptel-post-response-functions)

(defvar gptel-scope--expansion-queue nil
  "Expansion requests waiting for the menu, oldest first.")

(defvar gptel-scope--expansion-current nil
  "The expansion request the menu shows, or nil.")

(defvar gptel-scope--expansion-pending nil
  "Requests left open by Edit, to be answered by `gptel-scope-resume-expansion'.")

(defvar gptel-scope-expansion-show-function #'gptel-scope--expansion-show-menu
  "Function of one argument, a request, that asks the user about it.")

(defun gptel-scope--validation-type (tool resource)
  "Return how RESOURCE of TOOL is validated: \"path\", \"pattern\" or \"command\"."
  (cond ((string-match-p "\\`\\(subdirectory\\|tags\\):" resource) "pattern")
        ((member tool '("run_bash_command" "run_command"))
         (if (string-match-p "\\`\\(/\\|~\\|\\./\\|\\.\\./\\)" resource) "path" "command"))
        (t "path")))

(defun gptel-scope-request-scope-expansion (callback tool-name resource reason)
  "Ask the user to widen the scope for TOOL-NAME on RESOURCE, for REASON.
CALLBACK receives the JSON answer.  The request waits in a queue when
another one is being answered."
  (let ((once (gptel-scope--once callback)))
    (gptel-scope--guard once
      (let ((req (list :tool tool-name :resource resource :reason reason
                       :validation-type (gptel-scope--validation-type tool-name resource)
                       :callback once :buffer (current-buffer)
                       :document (gptel-scope-document)
                       :directory default-directory)))
        (setq gptel-scope--expansion-queue (append gptel-scope--expansion-queue (list req)))
        (gptel-scope--expansion-next)))))

(defun gptel-scope--expansion-next ()
  "Show the next queued request when none is shown."
  (when (and (null gptel-scope--expansion-current) gptel-scope--expansion-queue)
    (setq gptel-scope--expansion-current (pop gptel-scope--expansion-queue))
    (funcall gptel-scope-expansion-show-function gptel-scope--expansion-current)))

(defun gptel-scope--expansion-show-menu (req)
  "Open the expansion menu on REQ."
  (transient-setup 'gptel-scope-expansion-menu nil nil :scope req))

(defun gptel-scope--transient-scope ()
  "The scope of the active transient prefix, or nil.
`transient-scope' from transient 0.7 on; the prefix object's slot on
older transient (0.3.x, built into Emacs 28)."
  (cond ((fboundp 'transient-scope) (ignore-errors (transient-scope)))
        ((or (bound-and-true-p transient--prefix) (bound-and-true-p transient-current-prefix))
         (ignore-errors (eieio-oref (or transient--prefix transient-current-prefix) 'scope)))))

(defun gptel-scope--expansion-request ()
  "The request the menu answers.
The request being shown is authoritative (the menu only ever shows it);
the transient scope serves when it is the only record left."
  (or gptel-scope--expansion-current
      (let ((s (gptel-scope--transient-scope)))
        (and (plist-get s :callback) s))
      (user-error "No scope expansion request is waiting")))

(defun gptel-scope--expansion-answer (req json)
  "Answer REQ with JSON and move on to the next request."
  (setq gptel-scope--expansion-pending (delq req gptel-scope--expansion-pending))
  (when (eq req gptel-scope--expansion-current)
    (setq gptel-scope--expansion-current nil))
  (funcall (plist-get req :callback) json)
  (run-at-time 0 nil #'gptel-scope--expansion-next))

(defun gptel-scope--expansion-description ()
  "The description of the expansion menu."
  (let ((req (ignore-errors (gptel-scope--expansion-request))))
    (if (not req)
        "Scope expansion"
      (format "The model asks to widen the scope\n  tool:     %s\n  resource: %s\n  reason:   %s\n  type:     %s%s"
              (plist-get req :tool) (plist-get req :resource) (plist-get req :reason)
              (plist-get req :validation-type)
              (if gptel-scope--expansion-queue
                  (format "\n  (%d more waiting)" (length gptel-scope--expansion-queue))
                "")))))

(defun gptel-scope-expansion-deny ()
  "Deny the request: the tool call fails."
  (interactive)
  (let ((req (gptel-scope--expansion-request)))
    (gptel-scope--expansion-answer
     req (gptel-scope--json :success nil :user_denied t
                            :message (format "The user denied %s on %s. Do not retry it; find another way or ask the user."
                                             (plist-get req :tool) (plist-get req :resource))))))

(defun gptel-scope-expansion-cancel ()
  "Cancel the menu: the request counts as denied."
  (interactive)
  (let ((req (gptel-scope--expansion-request)))
    (gptel-scope--expansion-answer
     req (gptel-scope--json :success nil :user_denied t
                            :message "The user closed the request without allowing it; treat it as denied."))))

(defun gptel-scope-expansion-allow-once ()
  "Allow the tool on the resource once, for this turn."
  (interactive)
  (let ((req (gptel-scope--expansion-request)))
    (when (buffer-live-p (plist-get req :buffer))
      (with-current-buffer (plist-get req :buffer)
        (push (cons (plist-get req :tool) (plist-get req :resource)) gptel-scope--allow-once)))
    (gptel-scope--expansion-answer
     req (gptel-scope--json :success t :allowed_once t
                            :message (format "The user allowed %s on %s once. Retry the call exactly as before; the permission is used up by it."
                                             (plist-get req :tool) (plist-get req :resource))))))

(defun gptel-scope-expansion-add ()
  "Add the resource to the scope document permanently."
  (interactive)
  (let* ((req (gptel-scope--expansion-request))
         (doc (plist-get req :document)))
    (unless (and doc (file-exists-p doc))
      (user-error "No scope document to add to: create a scope.yml first (M-x gptel-scope-init)"))
    (unless (fboundp 'gptel-scope-module-add-to-scope)
      (user-error "This module cannot edit scope documents yet; use Edit (e) instead"))
    (let ((r (gptel-scope-module-add-to-scope
              (json-serialize (list :file doc :validation_type (plist-get req :validation-type)
                                    :resource (plist-get req :resource) :tool (plist-get req :tool)
                                    :base_directory (expand-file-name (plist-get req :directory)))))))
      (gptel-scope--expansion-answer
       req (gptel-scope--json :success t :patterns_added (vconcat (plist-get r :patterns-added))
                              :message (format "The user added %s to %s of %s. Retry the call."
                                               (plist-get req :resource) (plist-get r :section) doc))))))

(defun gptel-scope-expansion-edit ()
  "Open the scope document; the request stays pending."
  (interactive)
  (let ((req (gptel-scope--expansion-request)))
    (setq gptel-scope--expansion-current nil)
    (add-to-list 'gptel-scope--expansion-pending req t)
    (when (plist-get req :document)
      (find-file (plist-get req :document)))
    (message "Edit the scope, then M-x gptel-scope-resume-expansion to answer the request")))

;;;###autoload
(defun gptel-scope-resume-expansion ()
  "Show the menu again for a request left open by Edit."
  (interactive)
  (let ((req (or (car gptel-scope--expansion-pending)
                 (user-error "No scope expansion request is pending"))))
    (setq gptel-scope--expansion-pending (cdr gptel-scope--expansion-pending))
    (setq gptel-scope--expansion-queue (cons req gptel-scope--expansion-queue))
    (gptel-scope--expansion-next)))

(defun gptel-scope--ask-on-denial (buffer decision retry callback)
  "Ask the user about the refusal DECISION in BUFFER.
Lifted: call RETRY.  Denied: give CALLBACK the refusal."
  (with-current-buffer (if (buffer-live-p buffer) buffer (current-buffer))
    (gptel-scope-request-scope-expansion
     (lambda (answer)
       (if (plist-get (json-parse-string answer :object-type 'plist :false-object nil) :success)
           (funcall retry)
         (funcall callback (plist-get decision :response))))
     (plist-get decision :tool) (plist-get decision :resource)
     (format "The model's call was refused (%s): %s" (plist-get decision :reason) (plist-get decision :command)))))

(setq gptel-scope--denial-handler #'gptel-scope--ask-on-denial)

(transient-define-prefix gptel-scope-expansion-menu ()
  "Answer the model's request to widen the scope."
  [:description gptel-scope--expansion-description
   ("d" "Deny (reject the tool call)" gptel-scope-expansion-deny)
   ("a" "Add to scope (permanent)" gptel-scope-expansion-add)
   ("o" "Allow once (this turn)" gptel-scope-expansion-allow-once)]
  [("e" "Edit the scope document" gptel-scope-expansion-edit)
   ("q" "Cancel (deny)" gptel-scope-expansion-cancel)])

(defun gptel-scope-end-of-turn (&rest _)
  "Clear allow-once grants and answer pending requests when a response ends."
  (setq gptel-scope--allow-once nil)
  (dolist (req (append gptel-scope--expansion-pending nil))
    (when (eq (plist-get req :buffer) (current-buffer))
      (gptel-scope--expansion-answer
       req (gptel-scope--json :success nil :user_denied t
                              :message "The turn ended before the user answered; treat it as denied.")))))

(with-eval-after-load 'gptel
  (add-hook 'gptel-post-response-functions #'gptel-scope-end-of-turn)
  (gptel-make-tool
   :name "request_scope_expansion" :category "scope" :async t
   :function #'gptel-scope-request-scope-expansion
   :description "Ask the user to widen the scope after a tool refused a command or path for scope reasons (the refusal message names it). The user may deny, allow once, or add it permanently; on success, retry the call."
   :args (list '(:name "tool_name" :type string :description "The tool that was refused, e.g. run_bash_command")
               '(:name "resource" :type string :description "What to allow: the command, path or pattern the refusal named")
               '(:name "reason" :type string :description "Why the task needs it"))))

(provide 'gptel-scope-expand)
;;; gptel-scope-expand.el ends here
