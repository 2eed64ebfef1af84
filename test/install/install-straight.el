;;; install-straight.el --- Install gptel-scope with straight.el, offline  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by test/install/run.sh in a fresh HOME whose
;; ~/.emacs.d/straight/repos/straight.el is straight.el's repository.
;; The recipe is the README's with a local clone for the GitHub repository
;; and :inherit nil, so that no recipe repository is cloned; transient is
;; Emacs's own.  gptel and its dependencies are on the load path.

;;; Code:

(defvar bootstrap-version)
(let ((bootstrap-file (expand-file-name "straight/repos/straight.el/bootstrap.el"
                                        user-emacs-directory))
      (bootstrap-version 7))
  (load bootstrap-file nil 'nomessage))

(straight-use-package '(transient :type built-in :inherit nil))
(straight-use-package
 `(gptel-scope :type git :repo ,(getenv "GPTEL_SCOPE_SRC")
               :files ,(car (read-from-string (getenv "GPTEL_SCOPE_FILES")))
               :inherit nil))

;;; install-straight.el ends here
