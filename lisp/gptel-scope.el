;;; gptel-scope.el --- Scoped shell and file tools for gptel  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes, convenience
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; gptel-scope gives gptel tools that run shell commands and touch files only
;; inside a scope the user wrote down (scope.yml, a preset's front matter, a
;; profile).  The policy engine is a Rust dynamic module,
;; gptel-scope-module, built by `make module' next to this file.
;;
;; This file holds the customization group and loads the module.

;;; Code:

(defgroup gptel-scope nil
  "Scoped shell and file tools for gptel."
  :group 'tools
  :prefix "gptel-scope-")

(defconst gptel-scope-version "0.1.0"
  "The version of gptel-scope; the module must be of the same version.")

(define-error 'gptel-scope-error "gptel-scope error")
(define-error 'gptel-scope-module-error "gptel-scope module unavailable" 'gptel-scope-error)

(defconst gptel-scope--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "The directory of the gptel-scope elisp files.")

(defun gptel-scope--module-file ()
  "Return the path of the module next to the elisp files."
  (expand-file-name (concat "gptel-scope-module" module-file-suffix) gptel-scope--directory))

(defun gptel-scope-load-module ()
  "Load the policy module.
Signal `gptel-scope-module-error' saying how to build it when missing."
  (unless (featurep 'gptel-scope-module)
    (unless module-file-suffix
      (signal 'gptel-scope-module-error '("This Emacs has no dynamic module support")))
    (let ((file (gptel-scope--module-file)))
      (unless (file-exists-p file)
        (signal 'gptel-scope-module-error
                (list (format "The module %s is missing: run `make module' in %s (needs cargo)"
                              file (file-name-directory (directory-file-name gptel-scope--directory))))))
      (module-load file)))
  (let ((v (funcall (intern "gptel-scope-module-version"))))
    (unless (equal v gptel-scope-version)
      (signal 'gptel-scope-module-error
              (list (format "The loaded module is version %s, the elisp %s: rebuild with `make module' and restart Emacs"
                            v gptel-scope-version))))))

(provide 'gptel-scope)
;;; gptel-scope.el ends here
