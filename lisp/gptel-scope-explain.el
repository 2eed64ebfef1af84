;;; gptel-scope-explain.el --- Explain decisions and start a scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `gptel-scope-explain' asks for a command and shows, in a help buffer,
;; the decision the current buffer's scope gives it, with the evidence:
;; every simple command with its category and verdict, every path with
;; its access and verdict, the warnings, the grants, the scope sources.
;; `gptel-scope-print-decision' prints the same for `make check'.
;;
;; Both show the warnings of `gptel-scope-lint' on the scope.
;;
;; `gptel-scope-init' writes a scope.yml in a directory from one of the
;; profiles of `gptel-scope-profile-directory', and approves it.

;;; Code:

(require 'subr-x)
(require 'gptel-scope-core)
(require 'gptel-scope-session)
(require 'gptel-scope-call)
(require 'gptel-scope-env)
(require 'gptel-scope-lint)

(defun gptel-scope-print-decision (decision)
  "Print the module's DECISION readably with `princ'."
  (let ((allowed (plist-get decision :allowed)))
    (princ (format "command:    %s\n" (plist-get decision :command)))
    (princ (format "decision:   %s\n" (if allowed "ALLOWED"
                                        (format "DENIED (%s)" (plist-get decision :reason)))))
    (princ (format "message:    %s\n" (plist-get decision :message)))
    (princ (format "base:       %s   category: %s   required scope: %s\n"
                   (or (plist-get decision :base-command) "-")
                   (or (plist-get decision :category) "-")
                   (or (plist-get decision :required-scope) "-")))
    (princ (format "directory:  %s\n" (or (plist-get decision :directory) "-")))
    (unless allowed
      (when (plist-get decision :resource)
        (princ (format "resource:   %s (%s) - what request_scope_expansion would ask for\n"
                       (plist-get decision :resource) (plist-get decision :validation-type))))
      (when (plist-get decision :allowed-patterns)
        (princ (format "patterns:   %s\n" (string-join (plist-get decision :allowed-patterns) ", ")))))
    (when (plist-get decision :commands)
      (princ "commands:\n")
      (dolist (c (plist-get decision :commands))
        (princ (format "  %-32s %-10s %-8s %s%s\n"
                       (mapconcat #'identity (plist-get c :argv) " ")
                       (or (plist-get c :category) "-")
                       (plist-get c :verdict)
                       (or (plist-get c :rule) (plist-get c :reason) "")
                       (if (plist-get c :via)
                           (format "  (via %s)" (mapconcat #'identity (plist-get c :via) ", "))
                         "")))))
    (when (plist-get decision :paths)
      (princ "paths:\n")
      (dolist (p (plist-get decision :paths))
        (princ (format "  %-5s %s -> %s  %s%s\n"
                       (plist-get p :access) (plist-get p :path) (plist-get p :resolved)
                       (plist-get p :verdict)
                       (if (plist-get p :pattern) (format " (%s)" (plist-get p :pattern)) "")))))
    (when (plist-get decision :warnings)
      (princ "warnings:\n")
      (dolist (w (plist-get decision :warnings))
        (princ (format "  %s\n" w))))
    (when (plist-get decision :grants-used)
      (princ "grants used:\n")
      (dolist (g (plist-get decision :grants-used))
        (princ (format "  %s on %s (allow once)\n" (plist-get g :tool) (plist-get g :resource)))))))

(defun gptel-scope-print-lint (&optional file buffer)
  "Print the warnings on a scope with `princ', under a heading.
The scope is the document FILE when given, else BUFFER's.  Print
nothing when no scope applies or it does not load: what decides
says so already."
  (let ((warnings (condition-case nil
                      (gptel-scope-lint-warnings file buffer)
                    (gptel-scope-error :none))))
    (unless (eq warnings :none)
      (princ "scope warnings:\n")
      (if warnings
          (dolist (w warnings) (princ (format "  %s\n" (gptel-scope-lint-format w))))
        (princ "  none\n")))))

(defun gptel-scope--describe-source (source)
  "Return a description of the scope SOURCE, and whether it is approved."
  (cond ((plist-get source :file)
         (let ((status (gptel-scope-trust-status (plist-get source :file))))
           (format "%s (%s)" (plist-get source :file)
                   (cond ((plist-get status :approved) "approved")
                         ((plist-get status :approved-sha256)
                          "NOT APPROVED: changed since you approved it; M-x gptel-scope-trust")
                         (t "NOT APPROVED: M-x gptel-scope-trust")))))
        ((plist-get source :profile) (format "profile %s" (plist-get source :profile)))
        (t (format "inline scope (%s)" (plist-get source :name)))))

;;;###autoload
(defun gptel-scope-explain (command &optional directory)
  "Show the decision on COMMAND run in DIRECTORY under this buffer's scope.
DIRECTORY defaults to `default-directory'; with a prefix argument it
is asked for.  Nothing is run.  Return the decision plist."
  (interactive
   (list (read-string "Command to explain: ")
         (if current-prefix-arg (read-directory-name "Run in directory: ") default-directory)))
  (let* ((buffer (current-buffer))
         (decision (gptel-scope-check-bash-command command (or directory default-directory) buffer))
         (sources (gptel-scope-sources buffer))
         (grants (buffer-local-value 'gptel-scope--allow-once buffer)))
    (with-help-window "*gptel-scope-explain*"
      (gptel-scope-print-decision decision)
      (princ (format "\nscope sources: %s\n"
                     (if (zerop (length sources))
                         "none (every tool answers no_scope_config)"
                       (mapconcat #'gptel-scope--describe-source sources ", "))))
      (gptel-scope-print-lint nil buffer)
      (princ (format "timeout: %ss   output limit: %s characters\n"
                     (plist-get decision :timeout) (plist-get decision :max-output-chars)))
      (when grants
        (princ "allow-once grants of this buffer:\n")
        (dolist (g grants) (princ (format "  %s on %s\n" (car g) (cdr g)))))
      (gptel-scope-env-print buffer))
    decision))

;;;###autoload
(defun gptel-scope-init (directory profile)
  "Write DIRECTORY/scope.yml from the scope profile PROFILE.
PROFILE names a file of `gptel-scope-profile-directory' without its
.yml.  The new document is approved (`gptel-scope-trust'), and its
warnings (`gptel-scope-lint') shown when it has any.
Interactively, visit the new file.  Return its name."
  (interactive
   (list (read-directory-name "Write scope.yml in directory: ")
         (completing-read "Profile: "
                          (mapcar #'file-name-base
                                  (directory-files gptel-scope-profile-directory nil "\\.yml\\'"))
                          nil t)))
  (let ((target (expand-file-name "scope.yml" directory))
        (source (expand-file-name (concat profile ".yml") gptel-scope-profile-directory)))
    (unless (file-exists-p source)
      (user-error "No profile %s in %s" profile gptel-scope-profile-directory))
    (when (file-exists-p target)
      (user-error "%s exists already; edit it instead" target))
    (make-directory (file-name-directory target) t)
    (with-temp-file target
      (insert (format "# Scope of this project, from the gptel-scope profile `%s'.\n" profile))
      (insert-file-contents source))
    ;; Written by the user's command: approved as written.
    (gptel-scope-trust target)
    (let ((warnings (gptel-scope-lint-warnings target)))
      (when (called-interactively-p 'interactive)
        (find-file target))
      (when warnings
        (gptel-scope-lint-show warnings target))
      (message "Wrote %s%s" target
               (if warnings
                   (format " (%d scope warning%s: see %s)" (length warnings)
                           (if (cdr warnings) "s" "") gptel-scope-lint-buffer)
                 "")))
    target))

(provide 'gptel-scope-explain)
;;; gptel-scope-explain.el ends here
