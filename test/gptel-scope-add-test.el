;;; gptel-scope-add-test.el --- Tests of Add to scope  -*- lexical-binding: t; -*-

;;; Commentary:

;; "Add to scope" from the real menu suffix: the document is edited in place,
;; every comment kept byte for byte.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-expand)

(defconst gptel-scope-test--commented
  "# My project's scope.  Keep this comment!
paths:
  read:
    - \"${project_root}/**\"   # the project
  # write nothing yet
  write: []
bash_tools:
  categories:
    read_only: [ls, cat]   # viewing
    safe_write: []
    dangerous: [rm]
# trailing comment
"
  "A commented scope document.")

(defun gptel-scope-test--file-string (file)
  "Return FILE's contents."
  (with-temp-buffer (insert-file-contents-literally file) (buffer-string)))

(defun gptel-scope-test--add (dir tool resource)
  "Answer an expansion request for TOOL on RESOURCE in DIR with Add; return the answer."
  (let (answer)
    (with-temp-buffer
      (setq default-directory dir)
      (let ((gptel-scope--expansion-queue nil) (gptel-scope--expansion-current nil)
            (gptel-scope-expansion-show-function (lambda (_req) (call-interactively #'gptel-scope-expansion-add))))
        (gptel-scope-request-scope-expansion (lambda (a) (setq answer a)) tool resource "needed")))
    (json-parse-string answer :object-type 'plist :false-object nil)))

(ert-deftest gptel-scope-test-e07-e13-e16-e23-e41-e47-add-keeps-every-comment ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let* ((file (expand-file-name "scope.yml" dir))
           (a (gptel-scope-test--add dir "run_bash_command" "grep -rn TODO src")))
      (should (eq (plist-get a :success) t))
      (should (equal (plist-get a :patterns_added) ["grep"]))
      (let ((after (gptel-scope-test--file-string file)))
        (dolist (line (split-string gptel-scope-test--commented "\n"))
          (when (string-match-p "#" line)
            (should (string-match-p (regexp-quote (substring line (string-match "#" line))) after))))
        (should (string-prefix-p "# My project's scope.  Keep this comment!\npaths:\n  read:\n    - \"${project_root}/**\"   # the project\n  # write nothing yet\n" after))
        (should (string-suffix-p "# trailing comment\n" after)))
      (with-temp-buffer
        (setq default-directory dir)
        (should (eq t (plist-get (gptel-scope-test-check dir "grep -rn x .") :allowed)))))))

(ert-deftest gptel-scope-test-e14-duplicate-not-added ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let ((before (gptel-scope-test--file-string (expand-file-name "scope.yml" dir)))
          (a (gptel-scope-test--add dir "run_bash_command" "cat README.md")))
      (should (equal (plist-get a :patterns_added) []))
      (should (equal before (gptel-scope-test--file-string (expand-file-name "scope.yml" dir)))))))

(ert-deftest gptel-scope-test-e11-e15-e30-e35-e44-path-added-to-the-right-section ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let ((a (gptel-scope-test--add dir "write_file" "out/")))
      (should (equal (plist-get a :patterns_added) (vector (concat dir "out/**"))))
      (with-temp-buffer
        (setq default-directory dir)
        (make-directory (expand-file-name "out" dir))
        (let ((s (gptel-scope-module-load-scope
                  (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
          (should (member (concat dir "out/**") (plist-get s :write))))))))

(ert-deftest gptel-scope-test-b43-e32-e46-command-added-to-the-category-it-needs ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let ((a (gptel-scope-test--add dir "run_bash_command" "touch notes.md")))
      (should (equal (plist-get a :patterns_added) ["touch"]))
      (should (string-match-p "safe_write: \\[touch\\]" (gptel-scope-test--file-string (expand-file-name "scope.yml" dir)))))))

(ert-deftest gptel-scope-test-e33-unknown-validation-type-errors ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (should-error (gptel-scope-module-add-to-scope
                   (json-serialize (list :file (expand-file-name "scope.yml" dir) :validation_type "frob"
                                         :resource "x" :tool "t")))
                  :type 'gptel-scope-invalid-argument)))

(ert-deftest gptel-scope-test-e36-unparsable-document-left-untouched ()
  (gptel-scope-test-with-project dir "paths: [\nbroken\n"
    (let ((file (expand-file-name "scope.yml" dir)))
      (should-error (gptel-scope-module-add-to-scope
                     (json-serialize (list :file file :validation_type "command" :resource "ls" :tool "run_bash_command"
                                           :category "read_only")))
                    :type 'gptel-scope-error)
      (should (equal (gptel-scope-test--file-string file) "paths: [\nbroken\n")))))

(ert-deftest gptel-scope-test-e12-e31-e45-pattern-added-to-org-roam-section ()
  (gptel-scope-test-with-project dir "org_roam_patterns:\n  subdirectory: []\n"
    (let ((r (gptel-scope-module-add-to-scope
              (json-serialize (list :file (expand-file-name "scope.yml" dir) :validation_type "pattern"
                                    :resource "subdirectory:gptel/**" :tool "read_file")))))
      (should (equal (plist-get r :patterns-added) '("gptel/**")))
      (should (equal (plist-get r :section) "org_roam_patterns.subdirectory")))))

(provide 'gptel-scope-add-test)
;;; gptel-scope-add-test.el ends here
