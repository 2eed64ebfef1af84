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

(require 'seq)

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

(defun gptel-scope--root ()
  "The directory holding Cargo.toml: the elisp's own (a package) or its parent."
  (seq-find (lambda (dir) (file-exists-p (expand-file-name "Cargo.toml" dir)))
            (list gptel-scope--directory
                  (file-name-directory (directory-file-name gptel-scope--directory)))))

(defun gptel-scope--build-command ()
  "The shell command that builds the module and puts it next to the elisp."
  (let ((lib (concat "libgptel_scope" (if (equal module-file-suffix ".dylib") ".dylib" ".so"))))
    (format "cargo build --release --lib && cp target/release/%s %s"
            lib (shell-quote-argument (gptel-scope--module-file)))))

;;;###autoload
(defun gptel-scope-build-module ()
  "Build the module with cargo: in a compilation buffer, or synchronously in batch."
  (interactive)
  (let ((root (or (gptel-scope--root)
                  (signal 'gptel-scope-module-error
                          (list "Cannot build the module: Cargo.toml is not installed with the elisp (add it to the recipe's :files)")))))
    (unless (executable-find "cargo")
      (signal 'gptel-scope-module-error
              (list "Cannot build the module: cargo is not installed (https://rustup.rs), or put a built module next to the elisp")))
    (let ((default-directory root))
      (if noninteractive
          (unless (zerop (call-process-shell-command (gptel-scope--build-command) nil nil))
            (signal 'gptel-scope-module-error (list "Cargo build failed; run `make module' to see why")))
        (compile (gptel-scope--build-command))))))

(defun gptel-scope-load-module ()
  "Load the policy module, building it first when it is missing.
Signal `gptel-scope-module-error' when it cannot be had."
  (unless (featurep 'gptel-scope-module)
    (unless module-file-suffix
      (signal 'gptel-scope-module-error '("This Emacs has no dynamic module support")))
    (let ((file (gptel-scope--module-file)))
      (unless (file-exists-p file)
        (cond (noninteractive (gptel-scope-build-module))
              ((y-or-n-p "The gptel-scope module is missing; build it with cargo now (about a minute)? ")
               (gptel-scope-build-module)
               (signal 'gptel-scope-module-error '("Building the module; try again when the compilation ends")))
              (t (signal 'gptel-scope-module-error
                         (list (format "The module %s is missing: M-x gptel-scope-build-module" file))))))
      (module-load file)))
  (let ((v (funcall (intern "gptel-scope-module-version"))))
    (unless (equal v gptel-scope-version)
      (signal 'gptel-scope-module-error
              (list (format "The loaded module is version %s, the elisp %s: M-x gptel-scope-build-module, then restart Emacs"
                            v gptel-scope-version))))))

(provide 'gptel-scope)

(require 'gptel-scope-tools)
(require 'gptel-scope-expand)
(require 'gptel-scope-explain)

;;; gptel-scope.el ends here
