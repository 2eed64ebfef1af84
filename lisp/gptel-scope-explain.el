;;; gptel-scope-explain.el --- Explain decisions and start a scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `gptel-scope-explain' shows the decision on a command, with its evidence,
;; for the current buffer's scope.  `gptel-scope-init' writes a scope.yml
;; from a profile.

;;; Code:

(require 'gptel-scope-tools)
(require 'gptel-scope-cli)

;;;###autoload
(defun gptel-scope-explain (command &optional directory)
  "Show the decision on COMMAND run in DIRECTORY under this buffer's scope."
  (interactive (list (read-string "Command to explain: ") default-directory))
  (gptel-scope-load-module)
  (let* ((dir (directory-file-name (expand-file-name (or directory default-directory))))
         (d (gptel-scope-module-check-command
             (gptel-scope--request (current-buffer) :command command :directory dir :tool "run_bash_command")))
         (sources (gptel-scope-sources)))
    (with-help-window "*gptel-scope-explain*"
      (gptel-scope-cli--print-decision d)
      (princ (format "\nscope sources: %s\n"
                     (if (zerop (length sources)) "none"
                       (mapconcat (lambda (s) (or (plist-get s :file) (plist-get s :profile) "inline scope"))
                                  sources ", ")))))
    d))

;;;###autoload
(defun gptel-scope-init (directory profile)
  "Write DIRECTORY/scope.yml from the scope profile PROFILE."
  (interactive
   (list (read-directory-name "Project directory: ")
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
    (with-temp-file target
      (insert (format "# Scope of this project, from the gptel-scope profile `%s'.\n" profile))
      (insert-file-contents source)
      (goto-char (point-max)))
    (message "Wrote %s" target)
    target))

(provide 'gptel-scope-explain)
;;; gptel-scope-explain.el ends here
