;;; gptel-scope-fs-test.el --- Tests of the file tools  -*- lexical-binding: t; -*-

;;; Commentary:

;; read_file, list_dir, grep_files, apply_patch and get_system_info as
;; gptel calls them (callback first, in the chat buffer), on real trees;
;; their registration; the approval policy; the guard of other tools.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-fs)

(defconst gptel-scope-test--fs-scope
  "# the project
paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/src/**\"]
  deny: [\"**/.env\"]
"
  "The scope of the file tool tests.")

(defmacro gptel-scope-test-with-tree (var &rest body)
  "Run BODY in a chat buffer on a project tree bound to VAR.
The tree has src/a.txt, src/b.txt, docs/readme.md, .env and, beside the
project, ../outside.txt."
  (declare (indent 1))
  `(let* ((base (file-name-as-directory (file-truename (make-temp-file "gptel-scope-fs-" t))))
          (,var (expand-file-name "proj/" base)))
     (unwind-protect
         (progn
           (dolist (f '(("proj/scope.yml" . nil) ("proj/src/a.txt" . "one\ntwo\nthree\n")
                        ("proj/src/b.txt" . "alpha\nbeta\n") ("proj/docs/readme.md" . "# Title\nsee two\n")
                        ("proj/.env" . "TOKEN=two\n") ("outside.txt" . "secret two\n")))
             (let ((file (expand-file-name (car f) base)))
               (make-directory (file-name-directory file) t)
               (with-temp-file file (insert (or (cdr f) gptel-scope-test--fs-scope)))))
           (gptel-scope-trust (expand-file-name "proj/scope.yml" base))
           (gptel-scope-test-in-chat ,var ,@body))
       (delete-directory base t))))

(ert-deftest gptel-scope-test-f03-read-file-tool ()
  (gptel-scope-test-with-tree dir
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file "src/a.txt" 1 1)))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :content) "two"))
      (should (equal (list (plist-get r :start_line) (plist-get r :end_line) (plist-get r :total_lines))
                     '(2 2 3)))
      (should (eq (plist-get r :has_more) t)))
    ;; gptel may pass numbers as strings, and nothing for optional arguments.
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file "src/a.txt" "2" :null nil)))
      (should (equal (plist-get r :content) "three")))
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file "src/a.txt" "x")))
      (should (equal (plist-get r :reason) "invalid_argument")))))

(ert-deftest gptel-scope-test-f01-boundary-violation-through-symlink ()
  (gptel-scope-test-with-tree dir
    (make-symbolic-link (expand-file-name "../outside.txt" dir) (expand-file-name "src/link" dir))
    (dolist (path '("../outside.txt" "src/link" "src/../../outside.txt"))
      (let ((r (gptel-scope-test-call #'gptel-scope-read-file path)))
        (should (equal (plist-get r :reason) "boundary_violation"))
        (should-not (plist-get r :content))))
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file ".env")))
      (should (equal (plist-get r :reason) "path_denied")))))

(ert-deftest gptel-scope-test-f02-f04-list-and-grep-tools ()
  (gptel-scope-test-with-tree dir
    (let ((r (gptel-scope-test-call #'gptel-scope-list-dir)))
      (should (equal (plist-get r :content)
                     "docs/\nscope.yml\nsrc/\ndocs/readme.md\nsrc/a.txt\nsrc/b.txt"))
      (should (equal (plist-get r :hidden) 1)))
    (let ((r (gptel-scope-test-call #'gptel-scope-grep-files "two" nil ["*.txt" "*.md"])))
      (should (equal (plist-get r :content) "docs/readme.md:2:see two\nsrc/a.txt:2:two")))
    (let ((r (gptel-scope-test-call #'gptel-scope-grep-files "two" "src" "" 1)))
      (should (equal (plist-get r :content) "a.txt:2:two"))
      (should (eq (plist-get r :truncated) nil)))))

(ert-deftest gptel-scope-test-f05-apply-patch-all-or-nothing ()
  (gptel-scope-test-with-tree dir
    (let* ((good "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2 +2 @@\n-two\n+TWO\n--- a/src/b.txt\n+++ b/src/b.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n")
           (bad (concat good "--- a/docs/readme.md\n+++ b/docs/readme.md\n@@ -1 +1 @@\n-# Title\n+# T\n"))
           (r (gptel-scope-test-call #'gptel-scope-apply-patch bad)))
      ;; The third file is outside the write scope: nothing is written.
      (should (equal (plist-get r :reason) "path_not_in_scope"))
      (should (equal (plist-get r :resource) (expand-file-name "docs/readme.md" dir)))
      (should (equal (gptel-scope-test-file-string (expand-file-name "src/a.txt" dir)) "one\ntwo\nthree\n"))
      (should (equal (gptel-scope-test-file-string (expand-file-name "src/b.txt" dir)) "alpha\nbeta\n"))
      ;; The refusal is remembered for request_scope_expansion, as a write.
      (should (equal (plist-get (gptel-scope-denial "apply_patch" (expand-file-name "docs/readme.md" dir)) :access)
                     "write"))
      (setq r (gptel-scope-test-call #'gptel-scope-apply-patch good))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :message) "Applied to 2 file(s): update src/a.txt (+1 -1), update src/b.txt (+1 -1)"))
      (should (equal (gptel-scope-test-file-string (expand-file-name "src/a.txt" dir)) "one\nTWO\nthree\n")))))

(ert-deftest gptel-scope-test-f06-envelope-and-allow-once-grant ()
  (gptel-scope-test-with-tree dir
    (let* ((target (expand-file-name "docs/new.md" dir))
           (patch "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** End Patch\n"))
      (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-apply-patch patch) :reason)
                     "path_not_in_scope"))
      ;; Allow once: the grant lets this call through and is used up by it.
      (setq gptel-scope--allow-once (list (cons "apply_patch" target)))
      (let ((r (gptel-scope-test-call #'gptel-scope-apply-patch patch)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :format) "envelope")))
      (should (equal (gptel-scope-test-file-string target) "hello\n"))
      (should-not gptel-scope--allow-once))))

(ert-deftest gptel-scope-test-f13-errors-are-results ()
  (gptel-scope-test-with-tree dir
    (dolist (case `((gptel-scope-apply-patch ("not a patch") "patch_parse_error")
                    (gptel-scope-apply-patch ("--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-zzz\n+y\n") "patch_apply_error")
                    (gptel-scope-apply-patch (nil) "invalid_argument")
                    (gptel-scope-read-file ("src/a.txt" 0 0) "invalid_argument")
                    (gptel-scope-list-dir ("src/a.txt") "not_found")
                    (gptel-scope-grep-files ("(") "invalid_argument")))
      (let ((r (apply #'gptel-scope-test-call (car case) (cadr case))))
        (should (eq (plist-get r :success) nil))
        (should (equal (plist-get r :reason) (nth 2 case)))
        (should (stringp (plist-get r :message)))))))

(ert-deftest gptel-scope-test-s07-system-info ()
  (gptel-scope-test-with-tree dir
    (let ((r (gptel-scope-test-parse (gptel-scope-system-info))))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :emacs_version) emacs-version))
      (should (equal (plist-get r :module_version) (gptel-scope-module-version)))
      (should (equal (plist-get r :scope_files) (vector (expand-file-name "scope.yml" dir))))
      (should (equal (plist-get r :fs_mode) "restricted"))
      (should (equal (plist-get r :approval_policy) "never")))))

(ert-deftest gptel-scope-test-system-info-says-what-history-holds ()
  "A denied file committed once and removed: get_system_info says history holds it."
  (skip-unless (executable-find "git"))
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n  deny: [\"**/.env\"]\n"
    (let ((default-directory dir))
      (dolist (args '(("init" "-q") ("config" "user.name" "T") ("config" "user.email" "t@t")))
        (apply #'call-process "git" nil nil nil args))
      (with-temp-file ".env" (insert "TOKEN=abc\n"))
      (call-process "git" nil nil nil "add" ".env")
      (call-process "git" nil nil nil "commit" "-qm" "add env")
      (call-process "git" nil nil nil "rm" "-q" ".env")
      (call-process "git" nil nil nil "commit" "-qm" "remove env"))
    (gptel-scope-test-in-chat dir
      (let ((said (plist-get (gptel-scope-test-parse (gptel-scope-system-info)) :denied_in_history)))
        (should (= (length said) 1))
        (should (string-match-p (regexp-quote (format "The deny pattern \"**/.env\" matches %s.env, which is in history" dir))
                                (aref said 0)))))
    ;; Nothing in history: nothing said.
    (gptel-scope-test-in-chat dir
      (let ((default-directory dir))
        (delete-directory (expand-file-name ".git" dir) t))
      (should (equal (plist-get (gptel-scope-test-parse (gptel-scope-system-info)) :denied_in_history) [])))))

(ert-deftest gptel-scope-test-f11-approval-policy-for-file-tools ()
  (gptel-scope-test-with-tree dir
    (dolist (case '(("never" nil nil) ("mutating" nil t) ("always" t t)))
      (gptel-scope-test-write-scope (expand-file-name "scope.yml" dir)
                                    (concat gptel-scope-test--fs-scope "approval_policy: " (car case) "\n"))
      (should (equal (and (gptel-scope-fs--confirm-p "read_file") t) (nth 1 case)))
      (should (equal (and (gptel-scope-fs--confirm-p "apply_patch") t) (nth 2 case))))))

(ert-deftest gptel-scope-test-f16-tools-registered-with-schemas ()
  (let ((specs nil))
    (cl-letf (((symbol-function 'gptel-make-tool) (lambda (&rest spec) (push spec specs))))
      (gptel-scope-fs-register-tools))
    (should (equal (mapcar (lambda (s) (plist-get s :name)) (reverse specs))
                   '("read_file" "list_dir" "grep_files" "apply_patch" "get_system_info")))
    (dolist (s specs)
      (should (equal (plist-get s :category) "scope"))
      (should (stringp (plist-get s :description)))
      (should (functionp (plist-get s :function)))
      (dolist (a (plist-get s :args))
        (should (stringp (plist-get a :name)))
        (should (memq (plist-get a :type) '(string integer array)))))
    ;; The arguments are in the order the functions take them.
    (should (equal (mapcar (lambda (a) (plist-get a :name))
                           (plist-get (seq-find (lambda (s) (equal (plist-get s :name) "get_system_info")) specs) :args))
                   nil))
    (should (equal (mapcar (lambda (a) (plist-get a :name))
                           (plist-get (seq-find (lambda (s) (equal (plist-get s :name) "read_file")) specs) :args))
                   '("path" "offset" "limit" "mode")))))

(ert-deftest gptel-scope-test-guard-other-tools ()
  (gptel-scope-test-with-tree dir
    (let ((gptel-scope-guarded-tools '(("mcp_.*_file" (:path . read)) ("mcp_write" (:path . write)))))
      (should-not (gptel-scope-guard-tool-call '(:name "mcp_read_file" :args (:path "src/a.txt"))))
      (should-not (gptel-scope-guard-tool-call '(:name "unlisted" :args (:path "/etc/passwd"))))
      (let* ((blocked (gptel-scope-guard-tool-call '(:name "mcp_read_file" :args (:path "../outside.txt"))))
             (r (gptel-scope-test-parse (plist-get blocked :block))))
        (should (equal (plist-get r :reason) "boundary_violation"))
        (should (equal (plist-get r :tool) "mcp_read_file")))
      (let* ((blocked (gptel-scope-guard-tool-call '(:name "mcp_write" :args (:path "docs/readme.md"))))
             (r (gptel-scope-test-parse (plist-get blocked :block))))
        (should (equal (plist-get r :reason) "path_not_in_scope"))
        (should (plist-get (gptel-scope-denial "mcp_write" (expand-file-name "docs/readme.md" dir)) :message))
        ;; Remembered as a write, and an allow-once grant for that tool lets it through.
        (should (equal (plist-get (gptel-scope-denial "mcp_write" (expand-file-name "docs/readme.md" dir)) :access)
                       "write"))
        (setq gptel-scope--allow-once (list (cons "mcp_write" (expand-file-name "docs/readme.md" dir))))
        (should-not (gptel-scope-guard-tool-call '(:name "mcp_write" :args (:path "docs/readme.md"))))
        (should-not gptel-scope--allow-once)))))

(ert-deftest gptel-scope-test-f12-file-tools-emit-events ()
  (gptel-scope-test-with-tree dir
    (let* ((events nil)
           (gptel-scope-event-functions (list (lambda (e) (push e events)))))
      (gptel-scope-test-call #'gptel-scope-read-file "src/a.txt" 0 1)
      (gptel-scope-test-call #'gptel-scope-read-file "../outside.txt")
      (setq events (nreverse events))
      (should (equal (mapcar (lambda (e) (list (plist-get e :type) (plist-get e :tool))) events)
                     '((start "read_file") (end "read_file") (truncated "read_file")
                       (start "read_file") (denied "read_file"))))
      (let ((end (nth 1 events)))
        (should (equal (plist-get end :bytes) 3))
        (should (equal (plist-get end :lines) 1))
        (should (equal (plist-get end :id) (plist-get (car events) :id)))
        (should (equal (plist-get (plist-get end :args) :path) "src/a.txt")))
      (should (equal (plist-get (nth 4 events) :reason) "boundary_violation")))))

(ert-deftest gptel-scope-test-json-false-is-an-absent-argument ()
  ;; gptel reads JSON false as :json-false.
  (gptel-scope-test-with-tree dir
    (let ((r (gptel-scope-test-call #'gptel-scope-grep-files "two" :json-false :json-false :json-false)))
      (should (equal (plist-get r :content) "docs/readme.md:2:see two\nsrc/a.txt:2:two")))
    (should (equal (gptel-scope--timeout-arg :json-false '(:timeout 7)) 7))))

(provide 'gptel-scope-fs-test)
;;; gptel-scope-fs-test.el ends here
