;;; gptel-scope-lint.el --- Warn where a scope defeats itself  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `gptel-scope-lint' shows where the scope that applies defeats
;; itself: a listed script the model may rewrite, a listed interpreter
;; or shell, a read scope of the home directory that leaves keys and
;; credentials readable, a deny pattern that cannot match, a write
;; scope wider than the read scope, an entry in two lists.  Each
;; warning names the line of the scope document and what to write
;; instead, in a `compilation-mode' buffer: `next-error' visits them.
;; `gptel-scope-explain', `gptel-scope-init' and `make check' show the
;; same warnings.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-session)

(declare-function gptel-scope-module-lint "gptel-scope-module" (request))

(defconst gptel-scope-lint-buffer "*gptel-scope-lint*"
  "The name of the buffer `gptel-scope-lint' shows its warnings in.")

(defun gptel-scope-lint-warnings (&optional file buffer)
  "Return the warnings on a scope, a list of plists.
The scope is the document FILE when given, else the one that applies
to BUFFER (the current buffer by default).  Each warning has :code,
:file, :line, :message and :suggestion.  Signal
`gptel-scope-no-scope-config' when no scope applies."
  (gptel-scope-load-module)
  (let ((sources (if file
                     (vector (list :file (expand-file-name file)))
                   (gptel-scope-sources buffer))))
    (when (zerop (length sources))
      (signal 'gptel-scope-no-scope-config
              (list "no scope document applies here: create a scope.yml (M-x gptel-scope-init)")))
    (gptel-scope-module-lint
     (json-serialize
      (nconc (list :sources sources :home (expand-file-name "~"))
             (unless (cl-loop for s across sources thereis (plist-get s :file))
               (with-current-buffer (or buffer (current-buffer))
                 (list :project_root (gptel-scope--project-root)))))))))

(defun gptel-scope-lint-format (warning)
  "Return WARNING as a line of compiler output: file, line, message, fix."
  (format "%s:%d: warning: %s  Fix: %s"
          (plist-get warning :file) (plist-get warning :line)
          (plist-get warning :message) (plist-get warning :suggestion)))

(defun gptel-scope-lint-insert (warnings)
  "Insert WARNINGS, one line each, or a line saying there is none."
  (if warnings
      (dolist (w warnings)
        (insert (gptel-scope-lint-format w) "\n"))
    (insert "No warnings: the scope does not defeat itself in any way the linter knows.\n")))

(defun gptel-scope-lint-show (warnings &optional what)
  "Show WARNINGS in `gptel-scope-lint-buffer', in `compilation-mode'.
WHAT describes the scope linted, for the first line.  Return the buffer."
  (let ((buffer (get-buffer-create gptel-scope-lint-buffer)))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "Scope warnings for %s.\n\n" (or what "the scope that applies here")))
        (gptel-scope-lint-insert warnings))
      (compilation-mode)
      (goto-char (point-min)))
    (display-buffer buffer)
    buffer))

;;;###autoload
(defun gptel-scope-lint (&optional file)
  "List the ways the scope in effect here defeats itself.
With FILE (asked for with a prefix argument), lint that scope document
instead.  The warnings go to a `compilation-mode' buffer, where
`next-error' visits the line of each.  Return the warnings."
  (interactive
   (list (and current-prefix-arg (read-file-name "Lint scope document: " nil nil t))))
  (let* ((file (and file (expand-file-name file)))
         (warnings (gptel-scope-lint-warnings file))
         (doc (or file (gptel-scope-document))))
    (gptel-scope-lint-show warnings doc)
    (message "%s" (if warnings
                      (format "%d scope warning%s" (length warnings) (if (cdr warnings) "s" ""))
                    "No scope warnings"))
    warnings))

(provide 'gptel-scope-lint)
;;; gptel-scope-lint.el ends here
