;;; gptel-scope-cli.el --- Check commands against a scope from the shell  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `make check' runs this in batch Emacs with the module loaded:
;;
;;   make check SCOPE=scope.yml DIR=/some/dir CMD='ls | grep foo'
;;       prints the decision on one command, readable;
;;   make check SCOPE=scope.yml DIR=/some/dir < cmds.jsonl
;;       reads one JSON object {"command": "..."} per line and prints one JSON
;;       decision per line on standard output, and nothing else.
;;
;; When SCOPE is empty the nearest scope.yml upward from DIR is used.

;;; Code:

(require 'subr-x)
(require 'gptel-scope-module)

(defun gptel-scope-cli--request (command scope dir)
  "Return the JSON request judging COMMAND in DIR under the SCOPE file."
  (json-serialize
   (list :command command
         :directory dir
         :sources (if scope (vector (list :file scope)) [])
         :home (expand-file-name "~"))))

(defun gptel-scope-cli--scope-file (scope dir)
  "Return the scope file: SCOPE when given, else the nearest scope.yml above DIR."
  (cond ((and scope (not (string-empty-p scope))) (expand-file-name scope))
        ((let ((found (locate-dominating-file dir "scope.yml")))
           (and found (expand-file-name "scope.yml" found))))))

(defun gptel-scope-cli--print-decision (d)
  "Print the decision plist D readably."
  (let ((allowed (plist-get d :allowed)))
    (princ (format "command:    %s\n" (plist-get d :command)))
    (princ (format "decision:   %s\n" (if allowed "ALLOWED"
                                        (format "DENIED (%s)" (plist-get d :reason)))))
    (princ (format "message:    %s\n" (plist-get d :message)))
    (princ (format "base:       %s   category: %s   required scope: %s\n"
                   (or (plist-get d :base-command) "-")
                   (or (plist-get d :category) "-")
                   (or (plist-get d :required-scope) "-")))
    (princ (format "directory:  %s\n" (plist-get d :directory)))
    (when (plist-get d :commands)
      (princ "commands:\n")
      (dolist (c (plist-get d :commands))
        (princ (format "  %-32s %-10s %-8s %s%s\n"
                       (mapconcat #'identity (plist-get c :argv) " ")
                       (or (plist-get c :category) "-")
                       (plist-get c :verdict)
                       (or (plist-get c :rule) (plist-get c :reason) "")
                       (if (plist-get c :via)
                           (format "  (via %s)" (mapconcat #'identity (plist-get c :via) ", "))
                         "")))))
    (when (plist-get d :paths)
      (princ "paths:\n")
      (dolist (p (plist-get d :paths))
        (princ (format "  %-5s %s -> %s  %s%s\n"
                       (plist-get p :access) (plist-get p :path) (plist-get p :resolved)
                       (plist-get p :verdict)
                       (if (plist-get p :pattern) (format " (%s)" (plist-get p :pattern)) "")))))
    (when (plist-get d :warnings)
      (princ "warnings:\n")
      (dolist (w (plist-get d :warnings))
        (princ (format "  %s\n" w))))))

(defun gptel-scope-cli--read-line ()
  "Return the next line of standard input, or nil at its end."
  (condition-case nil
      (read-from-minibuffer "")
    (error nil)))

(defun gptel-scope-cli-check ()
  "Entry point of `make check': arguments SCOPE DIR CMD on the command line."
  (let* ((args command-line-args-left)
         (dir (file-name-as-directory
               (expand-file-name (if (string-empty-p (or (nth 1 args) "")) default-directory (nth 1 args)))))
         (dir (directory-file-name dir))
         (scope (gptel-scope-cli--scope-file (nth 0 args) dir))
         (command (nth 2 args)))
    (setq command-line-args-left nil)
    (if (and command (not (string-empty-p command)))
        (gptel-scope-cli--print-decision
         (gptel-scope-module-check-command (gptel-scope-cli--request command scope dir)))
      (let (line)
        (while (setq line (gptel-scope-cli--read-line))
          (unless (string-empty-p (string-trim line))
            (princ
             (condition-case err
                 (let* ((obj (json-parse-string line :object-type 'plist))
                        (cmd (plist-get obj :command)))
                   (unless (stringp cmd)
                     (signal 'wrong-type-argument (list 'stringp cmd)))
                   (gptel-scope-module-check-command-json (gptel-scope-cli--request cmd scope dir)))
               (error (json-serialize
                       (list :command :null :allowed :false :reason "invalid_input"
                             :message (error-message-string err))))))
            (princ "\n")))))))

(provide 'gptel-scope-cli)
;;; gptel-scope-cli.el ends here
