;;; gptel-scope-env.el --- The environment of commands, and redaction of secrets  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Emacs's environment holds the user's API keys, tokens and
;; passwords.  A command run for the model gets the environment the
;; scope's `environment:' key makes (by default the core variables a
;; command needs: PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM,
;; TZ, TMPDIR), never Emacs's whole environment; names that look like
;; secrets are left out unless the scope includes them by exact name.
;; The module plans it (src/scope/env.rs), from `process-environment' at the
;; time of the call.
;;
;; The values of the secrets are then hidden from the model: the
;; variables left out whose names look like secrets, those the scope's
;; `environment.redact' names (passed or not), and gptel's own API key
;; when it is a string.  Every tool result is searched for them (one
;; Aho-Corasick automaton in the module) and each occurrence becomes
;; [redacted: NAME].  Another variable left out is not passed, and its
;; value is shown where it appears (COLORTERM=truecolor is no secret).  Output that is cut (the
;; truncation of a command's output, a terminal session shown piece by
;; piece, a long line of read_file) is redacted before the cut or has
;; the beginning of a secret held back, so that no prefix shows.
;;
;; gptel-scope-exec gives every command and terminal session the
;; environment of `gptel-scope-env-for-command' (with or without the
;; sandbox: bwrap is started with this environment and passes it on),
;; and gptel-scope-call redacts every tool result with
;; `gptel-scope-env-redact-result'.

;;; Code:

(require 'cl-lib)
(require 'gptel-scope-core)
(require 'gptel-scope-session)
(require 'gptel-scope-sandbox)

(declare-function gptel-scope-module-environment "gptel-scope-module" (request entries api-key names-only))
(declare-function gptel-scope-module-redact "gptel-scope-module" (redactor text))
(declare-function gptel-scope-module-partial-tail "gptel-scope-module" (redactor text))
(declare-function gptel-backend-key "ext:gptel-openai" (backend))

(defvar gptel-api-key)
(defvar gptel-backend)

(defconst gptel-scope-exec--core
  "\\`\\(PATH\\|HOME\\|USER\\|LOGNAME\\|SHELL\\|LANG\\|LC_[^=]*\\|TERM\\|TZ\\|TMPDIR\\)="
  "The entries of the core variables, when no scope makes the environment.")

(defun gptel-scope-env--keys ()
  "Return gptel's API keys that are strings: `gptel-api-key', the backend's."
  (let ((keys nil))
    (when (and (boundp 'gptel-api-key) (stringp gptel-api-key))
      (push gptel-api-key keys))
    (when (and (boundp 'gptel-backend) gptel-backend (fboundp 'gptel-backend-key))
      (let ((k (ignore-errors (gptel-backend-key gptel-backend))))
        (when (stringp k) (push k keys))))
    keys))

(defun gptel-scope-env--scope (buffer)
  "Return the scope JSON of BUFFER; nil without a scope, or for a remote one."
  (and (buffer-live-p buffer)
       (condition-case nil
           (progn
             ;; Nothing is looked up for a remote chat directory.
             (with-current-buffer buffer (gptel-scope--check-local))
             (gptel-scope--scope-json buffer))
         (error nil))))

(defun gptel-scope-env--call (names-only buffer)
  "Ask the module for the environment of commands under BUFFER's scope.
With NAMES-ONLY, what becomes of each variable instead.
From `process-environment' and gptel's keys (see
`gptel-scope-module-environment').  Without a scope that loads, the
built-in defaults apply."
  (let ((scope (gptel-scope-env--scope buffer))
        (keys (if (buffer-live-p buffer)
                  (with-current-buffer buffer (gptel-scope-env--keys))
                (gptel-scope-env--keys))))
    (gptel-scope-load-module)
    (condition-case nil
        (gptel-scope-module-environment scope process-environment keys names-only)
      (gptel-scope-error (gptel-scope-module-environment nil process-environment keys names-only)))))

(defun gptel-scope-env (&optional buffer)
  "Return the environment of a command under BUFFER's scope, now.
A plist: :env (the NAME=VALUE entries a command gets), :redactor (for
`gptel-scope-env-redact', nil when nothing is hidden) and :secrets (how
many values it hides).  Made from `process-environment' and gptel's
keys at each call; the module keeps the scope and the redactor while
they do not change."
  (gptel-scope-env--call nil (or buffer (current-buffer))))

(defun gptel-scope-env-fates (&optional buffer)
  "Return what becomes of each variable in BUFFER's commands, names only.
A plist: :variables, each (:name :fate :pattern :redacted), and
:warnings about the scope's `environment:'."
  (gptel-scope-env--call t (or buffer (current-buffer))))

(defun gptel-scope-env--use-grants (buffer)
  "Use up BUFFER's allow-once grants of variables (resources env:NAME)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (cl-some (lambda (g) (string-prefix-p "env:" (cdr g))) gptel-scope--allow-once)
        (setq gptel-scope--allow-once
              (cl-remove-if (lambda (g) (string-prefix-p "env:" (cdr g)))
                            gptel-scope--allow-once))))))

(defun gptel-scope-env-for-command ()
  "Return (ENV . REDACTOR) for a command started in the current buffer.
ENV is the scope's environment of the command, REDACTOR what hides the
values left out.  An allow-once grant of a variable is used up."
  (let ((plan (gptel-scope-env)))
    (gptel-scope-env--use-grants (current-buffer))
    (cons (plist-get plan :env) (plist-get plan :redactor))))

(defun gptel-scope-env-redact (text redactor)
  "Return TEXT with the values REDACTOR hides replaced by [redacted: NAME]."
  (if (and redactor (stringp text))
      (gptel-scope-module-redact redactor text)
    text))

(defun gptel-scope-env-hold-back (text redactor)
  "Return the index in TEXT of the end of it that begins a hidden value.
That is the length of TEXT when no end of it begins one: output shown
up to there shows no secret's beginning.  REDACTOR as for
`gptel-scope-env-redact'."
  (if redactor (gptel-scope-module-partial-tail redactor text) (length text)))

(defun gptel-scope-env--redact-in-lisp (text)
  "Return TEXT with secret values replaced, without the module.
The values (8 characters or more) of every variable of
`process-environment' but the core ones and the names of existing
files, and gptel's keys: more than the scope hides, never less.  For
results made when the module is unavailable (error messages)."
  (let ((case-fold-search nil) (file-name-handler-alist nil) (seen nil))
    (dolist (e process-environment)
      (let* ((i (string-search "=" e))
             (name (and i (substring e 0 i)))
             (value (and i (substring e (1+ i)))))
        (when (and name (not (member name seen)) (>= (length value) 8)
                   (not (string-match-p gptel-scope-exec--core e))
                   (not (and (string-prefix-p "/" value) (file-exists-p value))))
          (push name seen)
          (setq text (string-replace value (format "[redacted: %s]" name) text)))))
    (dolist (k (gptel-scope-env--keys))
      (when (>= (length k) 8)
        (setq text (string-replace k "[redacted: gptel-api-key]" text))))
    text))

(defun gptel-scope-env-redact-result (buffer text)
  "Return TEXT, a tool's result, with BUFFER's hidden values redacted.
Without the module, `gptel-scope-env--redact-in-lisp' hides them."
  (condition-case nil
      (gptel-scope-env-redact text (plist-get (gptel-scope-env buffer) :redactor))
    (error (gptel-scope-env--redact-in-lisp text))))

(defun gptel-scope-env-summary (&optional buffer)
  "Return the environment of BUFFER's commands for the model, names only.
A plist: :inherited (names a command gets), :left_out (names it does
not get), :redacted (names whose values are hidden in results) and
:warnings."
  (let ((plan (gptel-scope-env-fates buffer)) passed out hidden)
    (dolist (v (plist-get plan :variables))
      (if (member (plist-get v :fate) '("set" "core" "included" "inherited"))
          (push (plist-get v :name) passed)
        (push (plist-get v :name) out))
      (when (plist-get v :redacted) (push (plist-get v :name) hidden)))
    (list :passed (vconcat (nreverse passed)) :left_out (vconcat (nreverse out))
          :redacted (vconcat (nreverse hidden))
          :warnings (vconcat (plist-get plan :warnings)))))

(defun gptel-scope-env-print (&optional buffer)
  "Print with `princ' each variable's fate in BUFFER's commands, names only."
  (let ((plan (gptel-scope-env-fates buffer)))
    (princ "\nenvironment of commands (names only; values are never shown):\n")
    (dolist (v (plist-get plan :variables))
      (princ (format "  %-32s %-13s %s%s\n"
                     (plist-get v :name)
                     (plist-get v :fate)
                     (or (plist-get v :pattern) "")
                     (if (plist-get v :redacted) "  (value redacted in results)" ""))))
    (dolist (w (plist-get plan :warnings))
      (princ (format "  warning: %s\n" w)))))

(provide 'gptel-scope-env)
;;; gptel-scope-env.el ends here
