;;; gptel-scope-trust-test.el --- The scope protects itself  -*- lexical-binding: t; -*-

;;; Commentary:

;; Issue 21: no tool writes a scope document, whatever the scope says
;; (shell, run_command, apply_patch, terminal sessions; with the sandbox
;; off and on), and a scope document applies only with the content the
;; user approved (`gptel-scope-trust', an edit saved from Emacs, Add to
;; scope, `gptel-scope-init').  The suite's trust list is a temporary
;; file (test-helper.el).

;;; Code:

(require 'test-helper)
(require 'gptel-scope-trust)
(require 'gptel-scope-pty)

(defconst gptel-scope-test--trust-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [ls, cat, head]
    safe_write: [cp, mv, tee, sed, ln, echo, printf, rm, touch, mkdir, install, dd, rsync, tar, git, sh]
tool_commands:
  posix:
    allowed:
      cp: {}
      tee: {}
"
  "The issue's scope: the whole project writable, every command it tries listed.")

(defconst gptel-scope-test--trust-routes
  '("printf 'paths:\\n  read: [\"/**\"]\\n' > scope.yml"
    "echo 'x: 1' >> scope.yml"
    "sed -i s/cat/rm/ scope.yml"
    "tee scope.yml < a.txt"
    "cp a.txt scope.yml"
    "ln -sf a.txt scope.yml"
    "install a.txt scope.yml"
    "dd if=a.txt of=scope.yml"
    "cd sub && cp ../a.txt ../scope.yml"
    "cp a.txt sub/scope.yml"
    "cp scope.yml sub"
    "mv scope.yml old.yml"
    "rm scope.yml"
    "git checkout -- scope.yml"
    "ln scope.yml b.txt")
  "Shell routes to the scope document, each refused with scope_document.")

(defmacro gptel-scope-test-with-trust-project (var &rest body)
  "Run BODY in a chat buffer on an approved project bound to VAR.
It holds scope.yml (approved), a.txt and sub/."
  (declare (indent 1))
  `(gptel-scope-test-with-project ,var gptel-scope-test--trust-scope
     (make-directory (expand-file-name "sub" ,var))
     (with-temp-file (expand-file-name "a.txt" ,var) (insert "a\n"))
     (gptel-scope-test-in-chat ,var ,@body)))

(defun gptel-scope-test--trust-unchanged (dir)
  "Assert that DIR's scope.yml holds the issue's scope, byte for byte, and no other appeared."
  (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                 gptel-scope-test--trust-scope))
  (should-not (file-exists-p (expand-file-name "sub/scope.yml" dir)))
  (should-not (file-exists-p (expand-file-name "old.yml" dir)))
  (should (plist-get (gptel-scope-trust-status (expand-file-name "scope.yml" dir)) :approved)))

(defun gptel-scope-test--trust-write-routes (dir)
  "Try every write route on DIR's scope document; each must be refused."
  (dolist (command gptel-scope-test--trust-routes)
    (ert-info (command)
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command command dir)))
        (should (equal (plist-get r :reason) "scope_document"))
        (should (string-match-p "the scope is the user's to change" (plist-get r :message)))
        (should (string-match-p "request_scope_expansion" (plist-get r :message))))))
  (dolist (args '(("cp" ["a.txt" "scope.yml"]) ("tee" ["scope.yml"]) ("cp" ["a.txt" "sub/scope.yml"])))
    (ert-info ((format "run_command %S" args))
      (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-command (car args) (cadr args) dir)
                                :reason)
                     "scope_document"))))
  (dolist (patch '("--- a/scope.yml\n+++ b/scope.yml\n@@ -1,2 +1,2 @@\n paths:\n-  read: [\"${project_root}/**\"]\n+  read: [\"/**\"]\n"
                   "*** Begin Patch\n*** Add File: sub/scope.yml\n+paths: {}\n*** End Patch\n"
                   "*** Begin Patch\n*** Delete File: scope.yml\n*** End Patch\n"
                   "*** Begin Patch\n*** Update File: scope.yml\n*** Move to: old.yml\n@@\n paths:\n*** End Patch\n"))
    (ert-info (patch)
      (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-apply-patch patch) :reason)
                     "scope_document"))))
  (let ((gptel-scope-pty-max-sessions 8))
    (dolist (cmd '("echo x >> scope.yml" "cp a.txt sub/scope.yml"))
      (ert-info ((format "exec_command %s" cmd))
        (let ((r (gptel-scope-test-call #'gptel-scope-exec-command cmd dir)))
          (should (equal (plist-get r :reason) "scope_document"))
          (should-not (plist-get r :session_id))))))
  (gptel-scope-test--trust-unchanged dir))

(ert-deftest gptel-scope-test-trust-no-tool-writes-a-scope-document ()
  "Every write route of the issue is refused, and the document is unchanged."
  (gptel-scope-test-with-trust-project dir
    (let ((gptel-scope-sandbox nil))
      (gptel-scope-test--trust-write-routes dir))))

(ert-deftest gptel-scope-test-trust-no-tool-writes-a-scope-document-in-the-sandbox ()
  "The same under bubblewrap."
  (skip-unless (gptel-scope-test-bwrap-works-p))
  (gptel-scope-test-with-trust-project dir
    (let ((gptel-scope-sandbox 'bwrap) (gptel-scope-sandbox-program "bwrap"))
      (gptel-scope-test--trust-write-routes dir))))

(ert-deftest gptel-scope-test-trust-the-sandbox-binds-documents-read-only ()
  "A script the engine cannot see into still cannot change a scope document.
The sandbox binds the document read-only inside the writable project."
  (skip-unless (gptel-scope-test-bwrap-works-p))
  (gptel-scope-test-with-trust-project dir
    (with-temp-file (expand-file-name "sub/evil.sh" dir)
      (insert "echo 'x: 1' >> ../scope.yml; cp ../a.txt ../scope.yml; mv ../a.txt ../scope.yml; rm -f ../scope.yml; echo done > ../wrote.txt\n"))
    (let ((gptel-scope-sandbox 'bwrap) (gptel-scope-sandbox-program "bwrap"))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "sh evil.sh" (expand-file-name "sub" dir))))
        (should (string-match-p "Read-only file system\\|Device or resource busy" (plist-get r :output))))
      ;; The rest of the project was writable; the document was not.
      (should (equal (gptel-scope-test-file-string (expand-file-name "wrote.txt" dir)) "done\n"))
      (gptel-scope-test--trust-unchanged dir)
      (should (member (expand-file-name "scope.yml" dir)
                      (plist-get (gptel-scope-sandbox-mounts) :protect))))))

(ert-deftest gptel-scope-test-trust-a-terminal-session-cannot-write-a-document-in-the-sandbox ()
  "Input typed into a session is not judged: the sandbox is the wall there."
  (skip-unless (gptel-scope-test-bwrap-works-p))
  (gptel-scope-test-with-project dir (replace-regexp-in-string
                                      "safe_write: \\[" "safe_write: [bash, " gptel-scope-test--trust-scope t t)
    (gptel-scope-test-in-chat dir
      (let ((gptel-scope-sandbox 'bwrap) (gptel-scope-sandbox-program "bwrap")
            (gptel-scope-pty--sessions (make-hash-table)))
        (unwind-protect
            (let* ((r (gptel-scope-test-call #'gptel-scope-exec-command "bash --norc" dir))
                   (id (plist-get r :session_id))
                   (out ""))
              (should (integerp id))
              (gptel-scope-test-call #'gptel-scope-write-stdin id
                                     "echo 'x: 1' >> scope.yml; rm -f scope.yml; echo done > wrote.txt\n" 1000)
              (with-timeout (10 (error "The session wrote nothing"))
                (while (not (file-exists-p (expand-file-name "wrote.txt" dir)))
                  (setq out (concat out (plist-get (gptel-scope-test-call #'gptel-scope-write-stdin id "" 200)
                                                   :output)))))
              (gptel-scope-test-call #'gptel-scope-write-stdin id "" 300 nil t)
              (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                             (replace-regexp-in-string "safe_write: \\[" "safe_write: [bash, "
                                                       gptel-scope-test--trust-scope t t))))
          (gptel-scope-pty-close-all))))))

(ert-deftest gptel-scope-test-trust-guarded-tools-cannot-write-a-document ()
  "Other tools held to the scope (MCP file tools) cannot write one either."
  (gptel-scope-test-with-trust-project dir
    (let ((gptel-scope-guarded-tools '(("mcp_write" (:path . write)) ("mcp_read" (:path . read)))))
      (let* ((blocked (gptel-scope-guard-tool-call '(:name "mcp_write" :args (:path "scope.yml"))))
             (r (gptel-scope-test-parse (plist-get blocked :block))))
        (should (equal (plist-get r :reason) "scope_document")))
      (should-not (gptel-scope-guard-tool-call '(:name "mcp_write" :args (:path "a.txt"))))
      (should-not (gptel-scope-guard-tool-call '(:name "mcp_read" :args (:path "scope.yml")))))))

(ert-deftest gptel-scope-test-trust-a-vanished-document-does-not-fall-back-on-wider-rules ()
  "Removing the session's document (by any route) does not hand the chat to the one above."
  (gptel-scope-test-with-trust-project outer
    (let ((inner (expand-file-name "sub/" outer)))
      (gptel-scope-test-write-scope (expand-file-name "scope.yml" inner)
                                    "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls]\n")
      (gptel-scope-test-in-chat inner
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch x" inner) :reason)
                       "command_not_allowed"))
        ;; Gone, say through a program the engine could not see into.
        (delete-file (expand-file-name "scope.yml" inner))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch x" inner)))
          (should (equal (plist-get r :reason) "untrusted_scope"))
          (should (string-match-p "this chat ran under is gone" (plist-get r :message)))
          (should (string-match-p (regexp-quote (expand-file-name "scope.yml" outer)) (plist-get r :message))))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-read-file "a.txt") :reason)
                       "untrusted_scope"))
        (should-not (file-exists-p (expand-file-name "x" inner)))
        ;; The user reviews the rules that apply now and approves them.
        (gptel-scope-trust (expand-file-name "scope.yml" outer))
        (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch x" inner) :success) t))
        (should (file-exists-p (expand-file-name "x" inner)))))))

(ert-deftest gptel-scope-test-trust-reading-a-scope-document-is-allowed ()
  (gptel-scope-test-with-trust-project dir
    (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat scope.yml | head -1" dir)))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :output) "paths:\n")))
    (let ((r (gptel-scope-test-call #'gptel-scope-read-file "scope.yml" 0 1)))
      (should (eq (plist-get r :success) t))
      (should (equal (plist-get r :content) "paths:")))))

(ert-deftest gptel-scope-test-trust-an-unapproved-document-is-not-applied ()
  "A fresh clone, then an approval, then a change outside Emacs."
  (gptel-scope-test-with-project dir nil
    ;; Batch Emacs: the default asker asks nothing and approves nothing.
    (let ((file (expand-file-name "scope.yml" dir)))
      (with-temp-file file (insert gptel-scope-test--trust-scope))
      (gptel-scope-test-in-chat dir
        ;; Never approved: refused, naming the file and the command; nothing ran.
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch ran.txt" dir)))
          (should (equal (plist-get r :reason) "untrusted_scope"))
          (should (string-match-p (regexp-quote file) (plist-get r :message)))
          (should (string-match-p "M-x gptel-scope-trust" (plist-get r :message)))
          (should-not (file-exists-p (expand-file-name "ran.txt" dir))))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-read-file "scope.yml") :reason)
                       "untrusted_scope"))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-command "cp" ["scope.yml" "b"] dir)
                                  :reason)
                       "untrusted_scope"))
        (should (string-match-p "untrusted_scope" (gptel-scope-list-allowed-commands)))
        (let ((info (gptel-scope-test-parse (gptel-scope-system-info))))
          (should (equal (plist-get info :scope_document) file))
          (should (eq (plist-get info :scope_document_approved) nil)))
        ;; Approved: it applies.
        (should (equal (gptel-scope-trust file) (secure-hash 'sha256 gptel-scope-test--trust-scope)))
        (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "touch ran.txt" dir)
                               :success)
                    t))
        (should (file-exists-p (expand-file-name "ran.txt" dir)))
        (should (eq (plist-get (gptel-scope-test-parse (gptel-scope-system-info)) :scope_document_approved) t))
        ;; Changed by another program (a git pull): refused again.
        (let ((coding-system-for-write 'no-conversion))
          (write-region "bash_tools: {categories: {safe_write: [rm]}}\n" nil file t))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch again.txt" dir)))
          (should (equal (plist-get r :reason) "untrusted_scope"))
          (should (string-match-p "changed since the user approved it" (plist-get r :message)))
          (should-not (file-exists-p (expand-file-name "again.txt" dir))))
        ;; An older content put back is not approved either: only the latest approval counts.
        (gptel-scope-trust file)
        (with-temp-file file (insert gptel-scope-test--trust-scope))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :reason)
                       "untrusted_scope"))))))

(ert-deftest gptel-scope-test-trust-the-first-refused-call-asks ()
  "Interactively the first call under an unapproved document asks at once."
  (gptel-scope-test-with-project dir nil
    (let* ((file (expand-file-name "scope.yml" dir))
           (asked nil)
           (gptel-scope-trust-asker (lambda (f) (push f asked) (gptel-scope-trust f) t)))
      (with-temp-file file (insert gptel-scope-test--trust-scope))
      (gptel-scope-test-in-chat dir
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
          (should (eq (plist-get r :success) t))
          (should (equal (plist-get r :output) "hi\n")))
        (should (equal asked (list file)))
        ;; Declined: the refusal goes to the model.
        (with-temp-file file (insert gptel-scope-test--trust-scope "# changed\n"))
        (setq asked nil)
        (let ((gptel-scope-trust-asker (lambda (f) (push f asked) nil)))
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir) :reason)
                         "untrusted_scope"))
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-read-file "a.txt") :reason)
                         "untrusted_scope")))
        (should (equal asked (list file file)))
        ;; An asker that says yes without approving is asked once; the call is refused.
        (setq asked nil)
        (let ((gptel-scope-trust-asker (lambda (f) (push f asked) t)))
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir) :reason)
                         "untrusted_scope"))
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-read-file "a.txt") :reason)
                         "untrusted_scope")))
        (should (equal asked (list file file)))))))

(ert-deftest gptel-scope-test-trust-the-review-shows-what-changed ()
  "The question shows a new document whole, and a changed one as a diff."
  (gptel-scope-test-with-project dir nil
    (let ((file (expand-file-name "scope.yml" dir)))
      (with-temp-file file (insert gptel-scope-test--trust-scope))
      (with-current-buffer (gptel-scope--trust-review-buffer file (gptel-scope--file-bytes file))
        (should (string-match-p "is a scope document you have not approved" (buffer-string)))
        (should (string-match-p (regexp-quote gptel-scope-test--trust-scope) (buffer-string))))
      (gptel-scope-trust file)
      (with-temp-file file
        (insert (replace-regexp-in-string "read_only: \\[ls, cat, head\\]" "read_only: [ls, cat, head, rm]"
                                          gptel-scope-test--trust-scope)))
      (skip-unless (executable-find "diff"))
      (with-current-buffer (gptel-scope--trust-review-buffer file (gptel-scope--file-bytes file))
        (should (string-match-p "changed since you approved it" (buffer-string)))
        (should (string-match-p "^-    read_only: \\[ls, cat, head\\]$" (buffer-string)))
        (should (string-match-p "^\\+    read_only: \\[ls, cat, head, rm\\]$" (buffer-string)))))))

(ert-deftest gptel-scope-test-trust-batch-emacs-never-asks ()
  (gptel-scope-test-with-project dir nil
    (with-temp-file (expand-file-name "scope.yml" dir) (insert gptel-scope-test--trust-scope))
    (should-not (gptel-scope--trust-ask (expand-file-name "scope.yml" dir)))
    (should-not (plist-get (gptel-scope-trust-status (expand-file-name "scope.yml" dir)) :approved))
    (should-not (gptel-scope-trust-approved (expand-file-name "scope.yml" dir)))))

(ert-deftest gptel-scope-test-trust-saving-from-emacs-and-add-to-scope-keep-it-approved ()
  (gptel-scope-test-with-trust-project dir
    (let ((file (expand-file-name "scope.yml" dir)))
      ;; The user edits the document in Emacs and saves it.
      (let ((buffer (find-file-noselect file)))
        (unwind-protect
            (with-current-buffer buffer
              (goto-char (point-max))
              (insert "# reviewed\n")
              (save-buffer))
          (kill-buffer buffer)))
      (should (plist-get (gptel-scope-trust-status file) :approved))
      (should (equal (gptel-scope-trust-approved file)
                     (secure-hash 'sha256 (concat gptel-scope-test--trust-scope "# reviewed\n"))))
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :success) t))
      ;; Add to scope edits the approved document: still approved.
      (let ((result (gptel-scope-add-to-scope
                     (list :document file :validation-type "command" :resource "wc"
                           :tool "run_bash_command" :directory dir))))
        (should (equal (plist-get result :patterns-added) '("wc"))))
      (should (string-match-p "read_only: \\[ls, cat, head, wc\\]" (gptel-scope-test-file-string file)))
      (should (plist-get (gptel-scope-trust-status file) :approved))
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "wc -l a.txt" dir) :success) t))
      ;; An unapproved document stays unapproved when Add to scope edits it.
      (with-temp-file file (insert gptel-scope-test--trust-scope "# pulled\n"))
      (gptel-scope-add-to-scope (list :document file :validation-type "command" :resource "sort"
                                      :tool "run_bash_command" :directory dir))
      (should-not (plist-get (gptel-scope-trust-status file) :approved)))))

(ert-deftest gptel-scope-test-trust-init-approves-and-lisp-scope-needs-none ()
  (gptel-scope-test-with-project dir nil
    (let ((file (gptel-scope-init dir "coding")))
      (should (plist-get (gptel-scope-trust-status file) :approved))
      (delete-file file))
    ;; A profile named in Lisp is the user's own code.
    (gptel-scope-test-in-chat dir
      (setq gptel-scope-inline 'read-only)
      (should (eq (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :success) t)))))

(ert-deftest gptel-scope-test-trust-no-expansion-covers-a-scope-document ()
  (gptel-scope-test-with-trust-project dir
    (let ((shown nil))
      (gptel-scope-test-with-expansion
        (let ((gptel-scope-expansion-show-function (lambda (r) (push r shown))))
          (gptel-scope-test-call #'gptel-scope-run-bash-command "cp a.txt scope.yml" dir)
          (let ((r (gptel-scope-test-call #'gptel-scope-request-scope-expansion
                                          "run_bash_command" (expand-file-name "scope.yml" dir) "fix it")))
            (should (equal (plist-get r :reason) "scope_document"))
            (should-not (plist-get r :success)))
          ;; An allow-once grant of it lifts nothing.
          (setq gptel-scope--allow-once (list (cons "run_bash_command" (expand-file-name "scope.yml" dir))
                                              (cons "apply_patch" (expand-file-name "scope.yml" dir))))
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "cp a.txt scope.yml" dir)
                                    :reason)
                         "scope_document"))
          (should (equal (plist-get (gptel-scope-test-call
                                     #'gptel-scope-apply-patch
                                     "*** Begin Patch\n*** Delete File: scope.yml\n*** End Patch\n")
                                    :reason)
                         "scope_document"))))
      (should-not shown)
      (gptel-scope-test--trust-unchanged dir))))

(ert-deftest gptel-scope-test-trust-list-is-protected-and-private ()
  (gptel-scope-test-with-trust-project dir
    (let* ((trust (expand-file-name gptel-scope-trust-file))
           (wide (expand-file-name "wide.yml" dir)))
      (should (equal (file-modes trust) #o600))
      ;; A scope that makes the trust list's directory writable still cannot write it.
      (gptel-scope-test-write-scope
       wide (replace-regexp-in-string
             "write: \\[\"\\${project_root}/\\*\\*\"\\]"
             (format "write: [\"${project_root}/**\", \"%s**\"]" gptel-scope-test-trust-directory)
             gptel-scope-test--trust-scope t t))
      (setq gptel-scope-file wide)
      (let ((before (gptel-scope-test-file-string trust)))
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command
                                                         (format "echo '()' > %s" trust) dir)
                                  :reason)
                       "scope_document"))
        (should (equal (gptel-scope-test-file-string trust) before))))))

(ert-deftest gptel-scope-test-trust-a-broken-list-approves-nothing ()
  (gptel-scope-test-with-trust-project dir
    (let ((gptel-scope-trust-file (make-temp-file "gptel-scope-trust-broken")))
      (unwind-protect
          (progn
            (with-temp-file gptel-scope-trust-file (insert "(not a list of entries"))
            (should-not (gptel-scope-trust-approved (expand-file-name "scope.yml" dir)))
            (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :reason)
                           "untrusted_scope")))
        (delete-file gptel-scope-trust-file)))))

(ert-deftest gptel-scope-test-trust-events-name-the-document ()
  (gptel-scope-test-with-trust-project dir
    (let* ((events nil)
           (gptel-scope-event-functions (list (lambda (e) (push e events))))
           (file (expand-file-name "scope.yml" dir)))
      (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)
      (let ((start (seq-find (lambda (e) (eq (plist-get e :type) 'start)) events)))
        (should (equal (plist-get start :scope-document) file))
        (should (eq (plist-get start :approved) t)))
      (with-temp-file file (insert gptel-scope-test--trust-scope "# pulled\n"))
      (setq events nil)
      (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)
      (let ((denied (car events)))
        (should (eq (plist-get denied :type) 'denied))
        (should (equal (plist-get denied :reason) "untrusted_scope"))
        (should (equal (plist-get denied :scope-document) file))
        (should (eq (plist-get denied :approved) nil))))))

;;;; A trust list that cannot be read is never rewritten

(defmacro gptel-scope-test-with-trust-list (var &rest body)
  "Run BODY with a trust list of its own, in a private directory bound to VAR."
  (declare (indent 1))
  `(let* ((,var (file-name-as-directory (make-temp-file "gptel-scope-trust-own-" t)))
          (gptel-scope-trust-file (expand-file-name "trusted.eld" ,var))
          (gptel-scope--trust-cache nil))
     (unwind-protect (progn ,@body)
       (set-file-modes ,var #o700)
       (delete-directory ,var t))))

(defun gptel-scope-test--trust-doc (dir name)
  "Write a scope document NAME in DIR and return its name."
  (let ((f (expand-file-name name dir)))
    (make-directory (file-name-directory f) t)
    (with-temp-file f (insert "paths:\n  read: []\n# " name "\n"))
    f))

(ert-deftest gptel-scope-test-trust-an-unreadable-list-is-never-rewritten ()
  "Approving with an unreadable or unparsable trust list signals and keeps it."
  (gptel-scope-test-with-trust-list dir
    (let ((a (gptel-scope-test--trust-doc dir "a/scope.yml"))
          (b (gptel-scope-test--trust-doc dir "b/scope.yml")))
      (gptel-scope-trust a)
      (let ((before (gptel-scope-test-file-string gptel-scope-trust-file)))
        ;; Unparsable: cut short.
        (with-temp-file gptel-scope-trust-file (insert (substring before 0 (- (length before) 20))))
        (let ((cut (gptel-scope-test-file-string gptel-scope-trust-file))
              (err (should-error (gptel-scope-trust b) :type 'gptel-scope-trust-error)))
          (should (string-match-p (regexp-quote gptel-scope-trust-file) (cadr err)))
          (should (string-match-p "chmod 600" (cadr err)))
          (should (equal (gptel-scope-test-file-string gptel-scope-trust-file) cut))
          (should-error (gptel-scope-trust-untrust a) :type 'gptel-scope-trust-error)
          (should (equal (gptel-scope-test-file-string gptel-scope-trust-file) cut)))
        ;; Unreadable: mode 000 (root reads it anyway), or a directory in its place.
        (with-temp-file gptel-scope-trust-file (insert before))
        (set-file-modes gptel-scope-trust-file #o000)
        (unless (file-readable-p gptel-scope-trust-file)
          (should-error (gptel-scope-trust b) :type 'gptel-scope-trust-error)
          (set-file-modes gptel-scope-trust-file #o600)
          (should (equal (gptel-scope-test-file-string gptel-scope-trust-file) before)))
        (set-file-modes gptel-scope-trust-file #o600)
        (rename-file gptel-scope-trust-file (expand-file-name "saved" dir))
        (make-directory gptel-scope-trust-file)
        (should-error (gptel-scope-trust b) :type 'gptel-scope-trust-error)
        (should (file-directory-p gptel-scope-trust-file))
        (should (null (directory-files gptel-scope-trust-file nil "\\`[^.]")))
        (delete-directory gptel-scope-trust-file)
        (rename-file (expand-file-name "saved" dir) gptel-scope-trust-file)
        ;; Readable again: both approvals.
        (gptel-scope-trust b)
        (should (plist-get (gptel-scope-trust-status a) :approved))
        (should (plist-get (gptel-scope-trust-status b) :approved))))))

;;;; The trust list's lock

(ert-deftest gptel-scope-test-trust-a-dead-emacs-lock-and-temporary-files-are-removed ()
  "A lock and a temporary file of a dead Emacs are removed by the next approval."
  (gptel-scope-test-with-trust-list dir
    (let* ((a (gptel-scope-test--trust-doc dir "a/scope.yml"))
           (dead 4194305)
           (lock (expand-file-name ".#trusted.eld" dir))
           (temp (expand-file-name (format ".trusted.eld.%d-abc123" dead) dir))
           (live (expand-file-name (format ".trusted.eld.%d-abc123" (emacs-pid)) dir))
           (other (expand-file-name (format ".other.eld.%d-abc123" dead) dir)))
      (make-symbolic-link (format "%s@%s.%d" (user-login-name) (system-name) dead) lock)
      (dolist (f (list temp live other)) (with-temp-file f (insert "half")))
      (gptel-scope-trust a)
      (should (plist-get (gptel-scope-trust-status a) :approved))
      (should-not (file-symlink-p lock))
      (should-not (file-exists-p temp))
      (should (file-exists-p live))
      (should (file-exists-p other)))))

(ert-deftest gptel-scope-test-trust-a-live-lock-is-waited-for ()
  "A lock held by a live Emacs makes an approval wait, then fail without writing."
  (gptel-scope-test-with-trust-list dir
    (let* ((a (gptel-scope-test--trust-doc dir "a/scope.yml"))
           (ppid (alist-get 'ppid (process-attributes (emacs-pid))))
           (lock (expand-file-name ".#trusted.eld" dir))
           (gptel-scope--trust-lock-wait 0.3))
      (make-symbolic-link (format "%s@%s.%d" (user-login-name) (system-name) ppid) lock)
      (should-error (gptel-scope-trust a) :type 'gptel-scope-trust-error)
      (should-not (file-exists-p gptel-scope-trust-file))
      (should (file-symlink-p lock))
      (delete-file lock)
      (gptel-scope-trust a)
      (should (plist-get (gptel-scope-trust-status a) :approved))
      (should-not (file-symlink-p lock)))))

(provide 'gptel-scope-trust-test)
;;; gptel-scope-trust-test.el ends here
