;;; test-helper.el --- Shared setup of the gptel-scope ERT suite  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded first by `make test-elisp' (and by ert-runner): puts lisp/ on the
;; load path and loads the module built by `make module'.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defconst gptel-scope-test-root
  (file-name-directory (directory-file-name (file-name-directory (or load-file-name buffer-file-name))))
  "The repository root.")

(add-to-list 'load-path (expand-file-name "lisp" gptel-scope-test-root))
(require 'gptel-scope-module)

(defmacro gptel-scope-test-with-project (var scope &rest body)
  "Bind VAR to a fresh project directory holding scope.yml with SCOPE, run BODY."
  (declare (indent 2))
  `(let ((,var (file-name-as-directory (file-truename (make-temp-file "gptel-scope-test-" t)))))
     (unwind-protect
         (progn
           (with-temp-file (expand-file-name "scope.yml" ,var) (insert ,scope))
           ,@body)
       (delete-directory ,var t))))

(defun gptel-scope-test-check (dir command &optional grants)
  "Judge COMMAND in DIR under the nearest scope.yml with GRANTS; return the plist."
  (gptel-scope-module-check-command
   (json-serialize (list :command command :directory (directory-file-name dir)
                         :sources (vector (list :file (expand-file-name
                                                       "scope.yml" (locate-dominating-file dir "scope.yml"))))
                         :grants (or grants [])))))

(provide 'test-helper)
;;; test-helper.el ends here
