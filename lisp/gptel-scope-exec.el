;;; gptel-scope-exec.el --- Running commands for gptel-scope  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Runs an already judged command asynchronously with `make-process': a
;; sanitized environment, its own process group (Emacs makes every child a
;; session leader), a timeout that kills the whole group, output captured up
;; to a hard cap and counted beyond it, decoded as UTF-8 with invalid bytes
;; replaced, and truncated for the model by the module.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'gptel-scope)

(declare-function gptel-scope-module-truncate "gptel-scope-module" (text max-chars))

(defcustom gptel-scope-exec-capture-factor 10
  "Output kept in memory, as a multiple of the output limit.
Past this many times `max_output_chars' bytes the rest of the output
is counted, not kept, so a command that never stops printing cannot
fill memory."
  :type 'natnum
  :group 'gptel-scope)

(defcustom gptel-scope-exec-kill-grace 1.0
  "Seconds between SIGTERM and SIGKILL when a command times out."
  :type 'number
  :group 'gptel-scope)

(defconst gptel-scope-exec--environment
  '("PAGER=cat" "GIT_PAGER=cat" "MANPAGER=cat" "GIT_TERMINAL_PROMPT=0" "TERM=dumb")
  "Variables set for every command.")

(defconst gptel-scope-exec--unset '("BASH_ENV" "ENV" "PROMPT_COMMAND")
  "Variables removed from the environment of every command.")

(defun gptel-scope-exec--environment ()
  "Return `process-environment' sanitized for a command."
  (append gptel-scope-exec--environment
          (seq-remove (lambda (e)
                        (let ((name (car (split-string e "="))))
                          (or (member name gptel-scope-exec--unset)
                              (assoc name (mapcar (lambda (x) (list (car (split-string x "="))))
                                                  gptel-scope-exec--environment)))))
                      process-environment)))

(defun gptel-scope-exec-decode (bytes)
  "Decode BYTES as UTF-8, replacing invalid bytes with U+FFFD.
The result is always accepted by `json-serialize'."
  (let ((s (replace-regexp-in-string "[\200-\377]" "\uFFFD" (decode-coding-string bytes 'utf-8-unix) t t)))
    (if (ignore-errors (json-serialize (vector s)))
        s
      ;; Sequences Emacs decodes to surrogates or to characters beyond Unicode.
      (apply #'string (mapcar (lambda (c) (if (or (> c #x10FFFF) (<= #xD800 c #xDFFF)) #xFFFD c))
                              (string-to-list s))))))

(defun gptel-scope-exec-shell-argv (command)
  "Return the argv running the shell COMMAND with bash and no startup files."
  (list "bash" "--noprofile" "--norc" "-c" command))

(cl-defun gptel-scope-exec-start (argv directory callback &key (timeout 30) (max-chars 20000))
  "Run ARGV in DIRECTORY; call CALLBACK once with a result plist.
TIMEOUT is in seconds; MAX-CHARS bounds the output returned.  The plist
has :success, :exit-code, :output, :truncated, :timed-out,
:duration-ms, :total-bytes.  Return the process."
  (let* ((start (float-time))
         (cap (* (max 1 gptel-scope-exec-capture-factor) (max 1 max-chars)))
         (chunks nil) (kept 0) (total 0) (timed-out nil) (done nil) (timer nil)
         (default-directory (file-name-as-directory directory))
         (process-environment (gptel-scope-exec--environment))
         (proc nil))
    (setq proc
          (make-process
           :name "gptel-scope"
           :command argv
           :connection-type 'pipe
           :coding 'binary
           :noquery t
           :filter (lambda (_p s)
                     (setq total (+ total (length s)))
                     (when (< kept cap)
                       (let ((piece (if (> (+ kept (length s)) cap) (substring s 0 (- cap kept)) s)))
                         (push piece chunks)
                         (setq kept (+ kept (length piece))))))
           :sentinel
           (lambda (p _event)
             (unless (or done (process-live-p p))
               (setq done t)
               (when timer (cancel-timer timer))
               ;; Nothing the command started may outlive it.
               (gptel-scope-exec-kill-group p)
               (let* ((text (gptel-scope-exec-decode (apply #'concat (nreverse chunks))))
                      (cut (gptel-scope-module-truncate text max-chars))
                      (code (process-exit-status p)))
                 (funcall callback
                          (list :success (and (not timed-out) (eq (process-status p) 'exit) (zerop code))
                                :exit-code code
                                :output (plist-get cut :output)
                                :truncated (or (plist-get cut :truncated) (> total kept))
                                :timed-out timed-out
                                :total-bytes total
                                :duration-ms (round (* 1000 (- (float-time) start))))))))))
    (setq timer
          (run-at-time timeout nil
                       (lambda ()
                         (when (process-live-p proc)
                           (setq timed-out t)
                           (gptel-scope-exec-kill-group proc)))))
    proc))

(defun gptel-scope-exec-kill-group (proc)
  "Kill the process group of PROC: SIGTERM, then SIGKILL after a grace period."
  (let ((pid (process-id proc)))
    (when pid
      (ignore-errors (signal-process (- pid) 'SIGTERM))
      (run-at-time gptel-scope-exec-kill-grace nil
                   (lambda () (ignore-errors (signal-process (- pid) 'SIGKILL)))))))

(provide 'gptel-scope-exec)
;;; gptel-scope-exec.el ends here
