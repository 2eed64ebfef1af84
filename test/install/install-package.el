;;; install-package.el --- Install gptel-scope with package.el from the dist tarball  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by test/install/run.sh in a fresh HOME, with nothing on the
;; load path.  No package archive is reachable offline, so gptel and the
;; packages it needs (transient 0.13.7, compat, cond-let, llama, seq) are
;; installed first from the pinned sources with package.el, as an archive
;; would give them.  (On Emacs 28 package.el needs transient installed:
;; it knows no version of the built-in one.)  Then M-x
;; package-install-file on target/dist/gptel-scope-VERSION.tar.  A second
;; Emacs starts as a user's would, with `package-initialize'.

;;; Code:

(require 'package)
(setq package-archives nil)
(package-initialize)
(let ((deps (getenv "GPTEL_SCOPE_DEPS_DIR")))
  (dolist (dep '("seq" "compat" "cond-let/cond-let.el" "llama/llama.el" "transient/lisp" "gptel"))
    (package-install-file (expand-file-name dep deps))))
(package-install-file (getenv "GPTEL_SCOPE_TAR"))
(unless (package-installed-p 'gptel-scope)
  (error "package.el did not install gptel-scope"))

;;; install-package.el ends here
