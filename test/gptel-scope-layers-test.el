;;; gptel-scope-layers-test.el --- Which elisp file may do what  -*- lexical-binding: t; -*-

;;; Commentary:

;; The elisp of lisp/ read as code (each file's top-level forms, with
;; `read': comments and docstrings are not code), and checked for three
;; rules of its layering:
;;
;; - the module's functions (gptel-scope-module-*) are called only by
;;   the files of `gptel-scope-test-layers--module-callers' (the loader
;;   of gptel-scope-core, and gptel-scope-module-version, anywhere);
;; - a tool's name, the string the model calls it by, is written only
;;   in gptel-scope-core.el, as a `gptel-scope--tool-' constant;
;; - no file sets a function variable of another feature when it loads:
;;   no top-level (setq gptel-scope-...-function ...) nor
;;   (setq gptel-scope--...-handler ...); each feature requires what it
;;   calls.
;;
;; The checkers are tested on text made up to break each rule.

;;; Code:

(require 'test-helper)
(require 'ert)
(require 'cl-lib)
(require 'seq)

(defconst gptel-scope-test-layers--module-callers
  '(("gptel-scope-core.el"    . "the loader of the module")
    ("gptel-scope-session.el" . "the scope as the module loads it, and its sandbox mounts")
    ("gptel-scope-call.el"    . "the judgement of every call, and the answers to refusals")
    ("gptel-scope-exec.el"    . "commands spawned and their output captured and cut")
    ("gptel-scope-env.el"     . "the environment of commands and the redaction of results")
    ("gptel-scope-lint.el"    . "gptel-scope-lint")
    ("gptel-scope-expand.el"  . "Add to scope: its plan and its edit")
    ("gptel-scope-trust.el"   . "the redo of an Add to scope that a killed Emacs left half done"))
  "The files of lisp/ that may call the module's functions, and why.")

(defconst gptel-scope-test-layers--module-anywhere
  '(gptel-scope-module-version gptel-scope-module-error)
  "Names with the module's prefix any file may use.
The module's version (shown by get_system_info), and the error symbol
`gptel-scope-module-error' (a `condition-case' handler looks like a call).")

(defconst gptel-scope-test-layers--names-owner "gptel-scope-core.el"
  "The file that writes each tool's name, once.")

(defun gptel-scope-test-layers--forms (text)
  "Return the top-level forms of the elisp TEXT, a list."
  (with-temp-buffer
    (insert text)
    (goto-char (point-min))
    (let ((forms nil))
      (condition-case nil
          (while t (push (read (current-buffer)) forms))
        (end-of-file nil))
      (nreverse forms))))

(defun gptel-scope-test-layers--walk (form fn)
  "Call FN on FORM and on every cons, vector element and atom within it."
  (funcall fn form)
  (cond ((consp form)
         (let ((tail form))
           (while (consp tail)
             (gptel-scope-test-layers--walk (car tail) fn)
             (setq tail (cdr tail)))
           (when tail (gptel-scope-test-layers--walk tail fn))))
        ((and (vectorp form) (not (stringp form)))
         (mapc (lambda (x) (gptel-scope-test-layers--walk x fn)) form))))

(defun gptel-scope-test-layers--module-calls (text)
  "Return the module functions the elisp TEXT calls, or names with #\\='."
  (let ((found nil))
    (dolist (form (gptel-scope-test-layers--forms text))
      (gptel-scope-test-layers--walk
       form
       (lambda (f)
         (when (consp f)
           (let ((sym (if (and (eq (car f) 'function) (consp (cdr f))) (cadr f) (car f))))
             (when (and (symbolp sym)
                        (string-prefix-p "gptel-scope-module-" (symbol-name sym))
                        (not (memq sym gptel-scope-test-layers--module-anywhere))
                        ;; A declaration names a function; it does not call it.
                        (not (eq (car f) 'declare-function)))
               (cl-pushnew sym found)))))))
    (nreverse found)))

(defun gptel-scope-test-layers--module-violations (file text)
  "Return the module calls of TEXT, the elisp of FILE, that FILE may not make."
  (unless (assoc file gptel-scope-test-layers--module-callers)
    (mapcar (lambda (sym) (format "%s calls %s" file sym))
            (gptel-scope-test-layers--module-calls text))))

(defun gptel-scope-test-layers--tool-names (core-text)
  "Return the tool names CORE-TEXT, gptel-scope-core.el, defines: an alist.
Each (NAME . CONSTANT), from its (defconst gptel-scope--tool-... NAME)."
  (let ((names nil))
    (dolist (form (gptel-scope-test-layers--forms core-text))
      (when (and (eq (car-safe form) 'defconst)
                 (string-prefix-p "gptel-scope--tool-" (symbol-name (nth 1 form)))
                 (stringp (nth 2 form)))
        (push (cons (nth 2 form) (nth 1 form)) names)))
    (nreverse names)))

(defun gptel-scope-test-layers--name-violations (file text names)
  "Return the tool names of NAMES, an alist, that TEXT, FILE's elisp, writes.
A string literal that is a tool's name, outside the owner file; a
docstring or a description that mentions one is not the name."
  (unless (equal file gptel-scope-test-layers--names-owner)
    (let ((found nil))
      (dolist (form (gptel-scope-test-layers--forms text))
        (gptel-scope-test-layers--walk
         form
         (lambda (f)
           (when (and (stringp f) (assoc f names))
             (cl-pushnew (format "%s writes \"%s\" (use %s)" file f (cdr (assoc f names)))
                         found :test #'equal)))))
      (nreverse found))))

(defconst gptel-scope-test-layers--definers
  '(defun defmacro cl-defun cl-defmacro cl-defmethod defsubst define-inline
    define-derived-mode define-minor-mode transient-define-prefix
    transient-define-suffix transient-define-infix)
  "Forms whose body runs when called, not when the file loads.")

(defun gptel-scope-test-layers--hook-variable-p (sym)
  "Return non-nil when SYM names a function variable or a handler."
  (and (symbolp sym)
       (let ((name (symbol-name sym)))
         (or (string-match-p "\\`gptel-scope-.*-function\\'" name)
             (string-match-p "\\`gptel-scope--.*-handler\\'" name)))))

(defun gptel-scope-test-layers--load-time-setqs (file text)
  "Return the function variables TEXT, FILE's elisp, sets when it loads."
  (let ((found nil))
    (dolist (form (gptel-scope-test-layers--forms text))
      (unless (memq (car-safe form) gptel-scope-test-layers--definers)
        (gptel-scope-test-layers--walk
         form
         (lambda (f)
           (when (and (consp f) (memq (car f) '(setq setq-default)))
             (let ((args (cdr f)))
               (while (consp args)
                 (when (gptel-scope-test-layers--hook-variable-p (car args))
                   (push (format "%s sets %s when it loads" file (car args)) found))
                 (setq args (cddr args)))))))))
    (nreverse found)))

(defun gptel-scope-test-layers--lisp-files ()
  "Return the elisp files of lisp/: a list of (NAME . TEXT)."
  (mapcar (lambda (f)
            (cons (file-name-nondirectory f)
                  (with-temp-buffer (insert-file-contents f) (buffer-string))))
          (directory-files (expand-file-name "lisp" gptel-scope-test-root) t "\\.el\\'")))

;;;; The package

(ert-deftest gptel-scope-test-layers-module-called-only-where-allowed ()
  "Only the files of the table call the module's functions."
  (let ((files (gptel-scope-test-layers--lisp-files)))
    (should (> (length files) 10))
    (should (equal (cl-mapcan (lambda (f) (gptel-scope-test-layers--module-violations (car f) (cdr f)))
                              files)
                   nil))
    ;; Every file of the table is there and calls the module: none is listed for nothing.
    (dolist (entry gptel-scope-test-layers--module-callers)
      (let ((text (cdr (assoc (car entry) files))))
        (should text)
        (should (or (equal (car entry) "gptel-scope-core.el")
                    (gptel-scope-test-layers--module-calls text)))))))

(ert-deftest gptel-scope-test-layers-tool-names-written-once ()
  "Each tool's name is written in gptel-scope-core.el only."
  (let* ((files (gptel-scope-test-layers--lisp-files))
         (names (gptel-scope-test-layers--tool-names
                 (cdr (assoc gptel-scope-test-layers--names-owner files)))))
    ;; Every tool gptel-scope registers has its constant.
    (dolist (name '("run_bash_command" "run_command" "list_allowed_commands" "request_scope_expansion"
                    "read_file" "list_dir" "grep_files" "apply_patch" "get_system_info"
                    "exec_command" "write_stdin"))
      (should (assoc name names)))
    (should (equal (cl-mapcan (lambda (f) (gptel-scope-test-layers--name-violations (car f) (cdr f) names))
                              files)
                   nil))))

(ert-deftest gptel-scope-test-layers-no-function-variable-set-at-load ()
  "No file sets a function variable or a handler when it loads."
  (should (equal (cl-mapcan (lambda (f) (gptel-scope-test-layers--load-time-setqs (car f) (cdr f)))
                            (gptel-scope-test-layers--lisp-files))
                 nil)))

;;;; The checkers

(ert-deftest gptel-scope-test-layers-checkers-see-strays ()
  "A stray module call, tool name or load-time setq makes its checker fail."
  (let ((names '(("run_bash_command" . gptel-scope--tool-run-bash-command))))
    ;; A module call, by name or as #'.
    (should (equal (gptel-scope-test-layers--module-violations
                    "gptel-scope-fs.el" "(defun f (r) (gptel-scope-module-check-command r))")
                   '("gptel-scope-fs.el calls gptel-scope-module-check-command")))
    (should (gptel-scope-test-layers--module-violations
             "gptel-scope-pty.el" "(defun f (r) (apply #'gptel-scope-module-decide r))"))
    ;; Allowed where the table says, and the exceptions anywhere.
    (should-not (gptel-scope-test-layers--module-violations
                 "gptel-scope-call.el" "(defun f (r) (gptel-scope-module-check-command r))"))
    (should-not (gptel-scope-test-layers--module-violations
                 "gptel-scope-fs.el"
                 ";; (gptel-scope-module-lint r) in a comment\n(declare-function gptel-scope-module-lint \"m\" (r))\n(defun f () \"Call (gptel-scope-module-lint).\" (condition-case nil (gptel-scope-module-version) (gptel-scope-module-error nil)))"))
    ;; A tool name as a string literal; not in a docstring, nor in the owner file.
    (should (equal (gptel-scope-test-layers--name-violations
                    "gptel-scope-fs.el" "(defun f (tool) (equal tool \"run_bash_command\"))" names)
                   '("gptel-scope-fs.el writes \"run_bash_command\" (use gptel-scope--tool-run-bash-command)")))
    (should (gptel-scope-test-layers--name-violations
             "gptel-scope-tools.el" "(defconst x '((\"run_bash_command\" . \"command\")))" names))
    (should-not (gptel-scope-test-layers--name-violations
                 "gptel-scope-fs.el" "(defun f () \"Like run_bash_command, call \\\"run_bash_command\\\".\" 1)" names))
    (should-not (gptel-scope-test-layers--name-violations
                 "gptel-scope-core.el" "(defconst gptel-scope--tool-run-bash-command \"run_bash_command\")" names))
    (should (equal (gptel-scope-test-layers--tool-names
                    "(defconst gptel-scope--tool-run-bash-command \"run_bash_command\" \"Doc.\")\n(defconst gptel-scope--other \"x\")")
                   names))
    ;; A function variable set when the file loads, alone or inside another form.
    (should (equal (gptel-scope-test-layers--load-time-setqs
                    "gptel-scope-env.el" "(setq gptel-scope-exec-environment-function #'ignore)")
                   '("gptel-scope-env.el sets gptel-scope-exec-environment-function when it loads")))
    (should (gptel-scope-test-layers--load-time-setqs
             "gptel-scope-sandbox.el"
             "(unless gptel-scope-exec-argv-function\n  (setq gptel-scope-exec-argv-function #'ignore))"))
    (should (gptel-scope-test-layers--load-time-setqs
             "gptel-scope-expand.el" "(setq gptel-scope--denial-handler #'ignore)"))
    (should (gptel-scope-test-layers--load-time-setqs
             "gptel-scope-x.el" "(setq a 1 gptel-scope--redact-function #'ignore)"))
    ;; Set by a function when it runs, or another variable: not a load-time setq.
    (should-not (gptel-scope-test-layers--load-time-setqs
                 "gptel-scope-x.el"
                 "(defun f () (setq gptel-scope-exec-argv-function nil))\n(setq gptel-scope--log-size 3)\n(defvar gptel-scope-x-function #'ignore)"))))

(provide 'gptel-scope-layers-test)
;;; gptel-scope-layers-test.el ends here
