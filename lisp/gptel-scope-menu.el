;;; gptel-scope-menu.el --- The transient menu of scope expansion requests  -*- lexical-binding: t; -*-

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

;; The transient menu that answers a request_scope_expansion call (see
;; gptel-scope-expand for the requests, the choices and allow-once).  It
;; is the only file that loads transient, and it is loaded when the menu
;; is first shown, so `(require \'gptel-scope)' costs no transient.
;;
;; `gptel-scope-menu-press' types keys into an open menu as a user
;; would: the demo (`make demo') and the test suite answer menus with it.

;;; Code:

(require 'transient)
(require 'gptel-scope-expand)

(defun gptel-scope--expansion-show-menu (request)
  "Open the expansion menu on REQUEST.
While the minibuffer or another transient is active, wait for it."
  (when (eq request gptel-scope--expansion-current)
    (if (or (> (minibuffer-depth) 0) (bound-and-true-p transient--prefix))
        (progn
          (unless (eq (plist-get request :state) 'deferred)
            (plist-put request :state 'deferred)
            (message "gptel-scope: the model asks to widen the scope; its menu opens when the current prompt or menu closes"))
          (run-with-timer 0.5 nil #'gptel-scope--expansion-show-menu request))
      (transient-setup 'gptel-scope-expansion-menu nil nil :scope request)
      (plist-put request :state 'shown))))

(defun gptel-scope--expansion-description (&rest _)
  "Return the description of the expansion menu."
  (let ((request (or (let ((s (gptel-scope--transient-scope))) (and (gptel-scope--request-p s) s))
                     gptel-scope--expansion-current)))
    (if (not request)
        "Scope expansion"
      (concat
       (propertize "The model asks to widen the scope" 'face 'transient-heading)
       (if gptel-scope--expansion-queue
           (format "  (%d more waiting)" (length gptel-scope--expansion-queue))
         "")
       (format "\n  tool:      %s\n  resource:  %s\n  reason:    %s"
               (plist-get request :tool)
               ;; A huge resource is shown cut, with how much more there is.
               (gptel-scope--shown (plist-get request :resource))
               (gptel-scope--shown (plist-get request :reason)))
       (if (plist-get request :denial-reason)
           (format "\n  refused:   %s%s" (plist-get request :denial-reason)
                   (if (plist-get request :command)
                       (format " (%s)" (gptel-scope--shown (plist-get request :command)))
                     ""))
         "")
       (if (plist-get request :denial-message)
           (format "\n  why:       %s" (gptel-scope--first-sentence (plist-get request :denial-message)))
         "")
       (format "\n  type:      %s; Add puts it in %s" (plist-get request :validation-type)
               (gptel-scope--add-section request))
       (format "\n  document:  %s"
               (or (plist-get request :document) "none (Add needs one: Edit creates scope.yml)"))
       (if (plist-get request :edited)
           "\n  The document was edited and saved: r asks the model to retry."
         "")))))

(transient-define-prefix gptel-scope-expansion-menu (request)
  "Answer the model's request REQUEST to widen the scope."
  [:description gptel-scope--expansion-description
   ("d" "Deny (reject the tool call)" gptel-scope-expansion-deny)
   ("a" "Add to scope (permanent)" gptel-scope-expansion-add)
   ("o" "Allow once (this turn)" gptel-scope-expansion-allow-once)]
  [("e" "Edit the scope document" gptel-scope-expansion-edit)
   ("r" "Retry: the scope document was edited" gptel-scope-expansion-retry
    :if gptel-scope--expansion-edited-p)
   ("q" "Cancel (deny)" gptel-scope-expansion-cancel)]
  (interactive
   (list (or gptel-scope--expansion-current
             (user-error "No scope expansion request is waiting (M-x gptel-scope-resume-expansion re-opens one left for editing)"))))
  (transient-setup 'gptel-scope-expansion-menu nil nil :scope request)
  (plist-put request :state 'shown))

(defun gptel-scope-menu-press (keys &optional thunk)
  "Run THUNK as a command in the current buffer, then type KEYS.
KEYS, a string for `kbd', goes to the transient menu open then (opened
by THUNK, or before): the real keymap and the real suffix commands.  The
demo and the test suite answer menus with it."
  (let ((key [f35])
        (old (lookup-key global-map [f35]))
        (buffer (current-buffer)))
    (save-current-buffer
      (unwind-protect
          (progn
            (define-key global-map key (lambda ()
                                         (interactive)
                                         (with-current-buffer buffer
                                           (when thunk (funcall thunk)))))
            ;; The command loop of a keyboard macro starts by running
            ;; `post-command-hook'; with `this-command' nil transient would
            ;; take that for a quit of a menu opened outside a command (from
            ;; a timer, as menus are in real use).  An error in a suffix ends
            ;; the macro and reaches the caller.
            (let ((this-command 'gptel-scope-menu-press))
              (condition-case err
                  (execute-kbd-macro (if thunk (vconcat key (kbd keys)) (kbd keys)))
                (error
                 ;; The command loop runs `post-command-hook' after a command
                 ;; that signaled; a keyboard macro does not.
                 (run-hooks 'post-command-hook)
                 (signal (car err) (cdr err))))))
        (define-key global-map key old)))
    (dotimes (_ 4) (accept-process-output nil 0.01))))

(provide 'gptel-scope-menu)
;;; gptel-scope-menu.el ends here
