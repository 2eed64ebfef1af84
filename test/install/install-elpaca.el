;;; install-elpaca.el --- Install gptel-scope with elpaca, offline  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by test/install/run.sh in a fresh HOME whose
;; ~/.emacs.d/elpaca/sources/elpaca is elpaca's repository (where
;; elpaca's installer would have cloned it).  The rest is the installer's
;; own steps once the clone exists.  The recipe is the README's with a
;; local clone for the GitHub repository; no menu is consulted (offline),
;; and transient is Emacs's own (an ignored dependency).  gptel and its
;; dependencies are on the load path.

;;; Code:

(defvar elpaca-installer-version 0.12)
(defvar elpaca-directory (expand-file-name "elpaca/" user-emacs-directory))
(defvar elpaca-builds-directory (expand-file-name "builds/" elpaca-directory))
(defvar elpaca-sources-directory (expand-file-name "sources/" elpaca-directory))
(let ((repo (expand-file-name "elpaca/" elpaca-sources-directory)))
  (add-to-list 'load-path repo)
  (require 'elpaca)
  (elpaca-generate-autoloads "elpaca" repo)
  (let ((load-source-file-function nil)) (load (expand-file-name "elpaca-autoloads" repo))))

(setq elpaca-menu-functions nil)
(elpaca `(gptel-scope :repo ,(getenv "GPTEL_SCOPE_SRC")
                      :files ,(car (read-from-string (getenv "GPTEL_SCOPE_FILES")))))
;; Batch Emacs runs no after-init-hook: process the queue and wait for it.
(elpaca-wait)

(let ((e (elpaca-get 'gptel-scope)))
  (unless (and e (eq (elpaca<-status e) 'finished))
    (error "elpaca did not install gptel-scope: %S" (and e (elpaca<-status e)))))

;;; install-elpaca.el ends here
