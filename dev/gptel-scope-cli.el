;;; gptel-scope-cli.el --- Check commands against a scope from the shell  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `make check' runs `gptel-scope-cli-check' in batch Emacs:
;;
;;   make check SCOPE=scope.yml DIR=/some/dir CMD='ls | grep foo'
;;       prints the decision on one command, readably;
;;   make check SCOPE=scope.yml DIR=/some/dir < cmds.jsonl
;;       reads one JSON object {"command": "..."} per line (optionally with
;;       "directory") and prints one JSON decision per line on standard
;;       output, and nothing else.
;;
;; When SCOPE is empty the nearest scope.yml upward from DIR is used.
;; Nothing is run.  The warnings of `gptel-scope-lint' on the scope
;; follow the decision on one command; with JSON lines they go to
;; standard error, one line each.

;;; Code:

(require 'subr-x)
(require 'gptel-scope)
(require 'gptel-scope-explain)

(declare-function gptel-scope-module-open "gptel-scope-module" (envelope))
(declare-function gptel-scope-module-judge "gptel-scope-module" (session call))

(defconst gptel-scope-cli--envelope-keys
  '(:sources :grants :home :project_root :platform :check_trust :protect)
  "The keys of a request that belong to the session, not to one call.")

(defun gptel-scope-cli-judge-plist (tool request &rest keys)
  "Judge REQUEST, a plist of a whole request (scope and call), as a call of TOOL.
The scope's keys open a session (`gptel-scope-module-open'), the
others and KEYS are the call's (`gptel-scope-module-judge'); a :tool
of REQUEST becomes the call's :for_tool."
  (let ((envelope nil) (call nil))
    (while request
      (let ((k (pop request)) (v (pop request)))
        (cond ((memq k gptel-scope-cli--envelope-keys)
               (setq envelope (plist-put envelope k v)))
              ((eq k :tool) (setq call (plist-put call :for_tool v)))
              (t (setq call (plist-put call k v))))))
    (gptel-scope-module-judge (gptel-scope-module-open (json-serialize envelope))
                              (json-serialize (append (list :tool tool) call keys)))))

(defun gptel-scope-cli-judge (tool request &rest keys)
  "Judge REQUEST, the JSON of a whole request, as a call of TOOL with KEYS.
See `gptel-scope-cli-judge-plist'.  REQUEST that is not a JSON object
goes to the module as the call, for it to refuse."
  (let ((plist (condition-case nil
                   (json-parse-string request :object-type 'plist)
                 (json-error 'bad))))
    (if (eq plist 'bad)
        (gptel-scope-module-judge (gptel-scope-module-open "{}") request)
      (apply #'gptel-scope-cli-judge-plist tool plist keys))))

(defun gptel-scope-cli-check-command (request)
  "The decision, with its evidence, on the command of REQUEST (JSON)."
  (gptel-scope-cli-judge gptel-scope--tool-run-bash-command request :evidence t))

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

(defun gptel-scope-cli--read-line ()
  "Return the next line of standard input, or nil at its end."
  (condition-case nil
      (read-from-minibuffer "")
    (error nil)))

(defun gptel-scope-cli--judge-line (line scope dir)
  "Return the JSON decision for LINE, a JSON object, under SCOPE in DIR."
  (condition-case err
      (let* ((obj (json-parse-string line :object-type 'plist :null-object nil))
             (cmd (plist-get obj :command))
             (line-dir (plist-get obj :directory)))
        (unless (stringp cmd)
          (signal 'gptel-scope-invalid-argument (list "each line needs a string \"command\"")))
        (plist-get (gptel-scope-cli-judge
                    gptel-scope--tool-run-bash-command
                    (gptel-scope-cli--request cmd scope (if (stringp line-dir)
                                                            (directory-file-name (expand-file-name line-dir dir))
                                                          dir))
                    :evidence t :as_json t)
                   :json))
    (error (json-serialize
            (list :command :null :allowed :false :reason "invalid_input"
                  :message (error-message-string err))))))

(defun gptel-scope-cli-check ()
  "Entry point of `make check': SCOPE, DIR and CMD on the command line."
  (let* ((args command-line-args-left)
         (dir (directory-file-name
               (expand-file-name (if (string-empty-p (or (nth 1 args) "")) default-directory (nth 1 args)))))
         (scope (gptel-scope-cli--scope-file (nth 0 args) dir))
         (command (nth 2 args)))
    (setq command-line-args-left nil)
    (gptel-scope-load-module)
    (if (and command (not (string-empty-p command)))
        (progn
          (gptel-scope-print-decision
           (gptel-scope-cli-check-command (gptel-scope-cli--request command scope dir)))
          (princ (format "scope:      %s\n" (or scope "none (no scope.yml above the directory)")))
          (when scope (gptel-scope-print-lint scope)))
      (when scope
        (dolist (w (condition-case nil (gptel-scope-lint-warnings scope) (gptel-scope-error nil)))
          (message "%s" (gptel-scope-lint-format w))))
      (let (line)
        (while (setq line (gptel-scope-cli--read-line))
          (unless (string-empty-p (string-trim line))
            (princ (gptel-scope-cli--judge-line line scope dir))
            (princ "\n")))))))

(provide 'gptel-scope-cli)
;;; gptel-scope-cli.el ends here
