;;; gptel-scope-add-test.el --- Tests of Add to scope  -*- lexical-binding: t; -*-

;;; Commentary:

;; "Add to scope" typed into the real menu: the document in effect is
;; edited in place through the module, every other byte kept; the right
;; section for paths, commands and patterns; duplicates; errors.

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

(defun gptel-scope-test--add (tool resource)
  "In the current buffer, ask for TOOL on RESOURCE and press `a'; return the answer."
  (car (funcall (gptel-scope-test-ask "a" tool resource "needed"))))

(ert-deftest gptel-scope-test-e16-e07-e23-e41-b43-add-keeps-every-other-byte ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let* ((file (expand-file-name "scope.yml" dir))
               (a (gptel-scope-test--add "run_bash_command" "grep -rn TODO src")))
          (should (eq (plist-get a :success) t))
          (should (equal (plist-get a :patterns_added) ["grep"]))
          (should (equal (plist-get a :section) "bash_tools.categories.read_only"))
          ;; The whole file, byte for byte, is the old one with ", grep" added.
          (should (equal (gptel-scope-test-file-string file)
                         (replace-regexp-in-string "read_only: \\[ls, cat\\]" "read_only: [ls, cat, grep]"
                                                   gptel-scope-test--commented t t)))
          (should (eq t (plist-get (gptel-scope-test-check dir "grep -rn x .") :allowed))))))))

(ert-deftest gptel-scope-test-e07-e35-add-edits-the-preset-of-the-session ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let ((session (file-name-as-directory (file-truename (make-temp-file "gptel-scope-session-" t))))
          (preset "---\n# session preset\ndescription: a session   # kept\nbash_tools:\n  categories:\n    read_only: [ls]\n---\n# The prompt\n\nBody text, --- not front matter.\n"))
      (unwind-protect
          (gptel-scope-test-with-expansion
            (with-temp-file (expand-file-name "preset.md" session) (insert preset))
            (gptel-scope-test-in-chat dir
              ;; The session directory wins over the scope.yml around the chat (E35).
              (setq gptel-scope-directory session)
              (let ((a (gptel-scope-test--add "run_bash_command" "wc -l")))
                (should (equal (plist-get a :patterns_added) ["wc"]))
                (should (equal (plist-get a :file) (expand-file-name "preset.md" session))))
              (should (equal (gptel-scope-test-file-string (expand-file-name "preset.md" session))
                             (replace-regexp-in-string "read_only: \\[ls\\]" "read_only: [ls, wc]" preset t t)))
              (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                             gptel-scope-test--commented))))
        (delete-directory session t)))))

(ert-deftest gptel-scope-test-e14-duplicate-not-added ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let ((a (gptel-scope-test--add "run_bash_command" "cat README.md")))
          (should (eq (plist-get a :success) t))
          (should (equal (plist-get a :patterns_added) []))
          (should (equal (plist-get a :already_present) ["cat"]))
          (should (string-match-p "already" (plist-get a :message)))
          (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                         gptel-scope-test--commented)))))))

(ert-deftest gptel-scope-test-e11-e15-e30-b45-refused-directory-added-for-writing ()
  (gptel-scope-test-with-project dir (replace-regexp-in-string "safe_write: \\[\\]" "safe_write: [touch]"
                                                               gptel-scope-test--commented t t)
    (make-directory (expand-file-name "out" dir))
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let* ((denial (gptel-scope-test-call #'gptel-scope-run-bash-command "touch made" "out"))
               (a (gptel-scope-test--add "run_bash_command" (plist-get denial :resource))))
          (should (equal (plist-get denial :reason) "directory_not_in_scope"))
          ;; Write access, from what was refused; the directory as dir/** (E15).
          (should (equal (plist-get a :section) "paths.write"))
          (should (equal (plist-get a :patterns_added) (vector (concat dir "out/**"))))
          (should (eq t (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch made" "out")
                                   :success))))))))

(ert-deftest gptel-scope-test-e11-e30-refused-file-added-for-reading ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let ((outside (file-name-as-directory (file-truename (make-temp-file "gptel-scope-outside-" t)))))
      (unwind-protect
          (progn
            (with-temp-file (expand-file-name "notes.txt" outside) (insert "hello\n"))
            (gptel-scope-test-with-expansion
              (gptel-scope-test-in-chat dir
                (let* ((file (expand-file-name "notes.txt" outside))
                       (denial (gptel-scope-test-call #'gptel-scope-run-bash-command (concat "cat " file) dir))
                       (a (gptel-scope-test--add "run_bash_command" (plist-get denial :resource))))
                  (should (equal (plist-get denial :reason) "path_not_in_scope"))
                  (should (equal (plist-get a :section) "paths.read"))
                  (should (equal (plist-get a :patterns_added) (vector file)))
                  (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command
                                                                   (concat "cat " file) dir)
                                            :output)
                                 "hello\n"))))))
        (delete-directory outside t)))))

(ert-deftest gptel-scope-test-e44-e15-relative-path-made-absolute ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (make-directory (expand-file-name "notes" dir))
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let ((a (gptel-scope-test--add "read_file" "notes/")))
          (should (equal (plist-get a :section) "paths.read"))
          (should (equal (plist-get a :patterns_added) (vector (concat dir "notes/**")))))
        ;; An existing directory named without its slash is a directory too.
        (make-directory (expand-file-name "more" dir))
        (let ((a (gptel-scope-test--add "write_file" "more")))
          (should (equal (plist-get a :section) "paths.write"))
          (should (equal (plist-get a :patterns_added) (vector (concat dir "more/**")))))))))

(ert-deftest gptel-scope-test-b43-e13-e32-e46-command-base-name-added ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let ((a (gptel-scope-test--add "run_bash_command" "git status -s")))
          (should (equal (plist-get a :patterns_added) ["git"])))
        ;; A command that writes goes where writing commands go.
        (let ((a (gptel-scope-test--add "run_bash_command" "mkdir -p out")))
          (should (equal (plist-get a :patterns_added) ["mkdir"]))
          (should (equal (plist-get a :section) "bash_tools.categories.safe_write")))
        (should (string-match-p "safe_write: \\[mkdir\\]"
                                (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))))))))

(ert-deftest gptel-scope-test-e13-menu-says-where-add-puts-it ()
  ;; The menu shows the section and the value before `a' is pressed: a command the
  ;; semantics know to write goes to safe_write even when named alone.
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (let* ((doc (expand-file-name "scope.yml" dir))
           (before (gptel-scope-test-file-string doc))
           (ask (lambda (resource)
                  (list :document doc :validation-type "command" :resource resource
                        :tool "run_bash_command" :directory dir)))
           (touch (funcall ask "touch")))
      (should (equal (gptel-scope--add-section touch) "bash_tools.categories.safe_write: touch"))
      (should (equal (plist-get touch :add-plan) "bash_tools.categories.safe_write: touch"))
      (should (equal (gptel-scope--add-section (funcall ask "wc -l notes.txt"))
                     "bash_tools.categories.read_only: wc"))
      (should (equal (gptel-scope-test-file-string doc) before))
      ;; Without a document there is nothing to add to: the sections it could be.
      (should (equal (gptel-scope--add-section (plist-put (funcall ask "touch") :document nil))
                     "bash_tools.categories (read_only or safe_write)")))))

(ert-deftest gptel-scope-test-e12-e31-e45-pattern-added-to-org-roam-section ()
  (gptel-scope-test-with-project dir "# notes\norg_roam_patterns:\n  subdirectory: []   # none yet\n  tags: [work]\n"
    (gptel-scope-test-with-expansion
      (gptel-scope-test-in-chat dir
        (let ((a (gptel-scope-test--add "read_file" "subdirectory:gptel/**")))
          (should (equal (plist-get a :patterns_added) ["gptel/**"]))
          (should (equal (plist-get a :section) "org_roam_patterns.subdirectory")))
        (let ((a (gptel-scope-test--add "read_file" "tags:work")))
          (should (equal (plist-get a :patterns_added) [])))
        (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                       "# notes\norg_roam_patterns:\n  subdirectory: [gptel/**]   # none yet\n  tags: [work]\n"))))))

(ert-deftest gptel-scope-test-e33-unknown-validation-type-errors ()
  (gptel-scope-test-with-project dir gptel-scope-test--commented
    (gptel-scope-test-in-chat dir
      (let ((request (list :validation-type "frob" :resource "x" :tool "t"
                           :document (expand-file-name "scope.yml" dir) :directory dir)))
        (should-error (gptel-scope-add-to-scope request) :type 'gptel-scope-invalid-argument))
      (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                     gptel-scope-test--commented)))))

(ert-deftest gptel-scope-test-e36-unparsable-preset-left-untouched ()
  (gptel-scope-test-with-project dir nil
    (let ((file (expand-file-name "preset.md" dir))
          (text "---\nbash_tools: [oops\n---\nBody\n"))
      (with-temp-file file (insert text))
      (gptel-scope-test-in-chat dir
        (setq gptel-scope-directory dir)
        (let ((err (should-error (gptel-scope-add-to-scope
                                  (list :validation-type "command" :resource "ls" :tool "run_bash_command"
                                        :document file :directory dir))
                                 :type 'gptel-scope-error)))
          (should (memq (car err) '(gptel-scope-edit-error gptel-scope-invalid-config))))
        (should (equal (gptel-scope-test-file-string file) text))))))

(provide 'gptel-scope-add-test)
;;; gptel-scope-add-test.el ends here
