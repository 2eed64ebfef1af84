;;; gptel-scope-tools-test.el --- Tests of the gptel tool functions  -*- lexical-binding: t; -*-

;;; Commentary:

;; The tool functions as gptel calls them (callback first, in the chat
;; buffer), without gptel: real scope files, real processes, the module.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)

(defconst gptel-scope-test--tools-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/out/**\"]
bash_tools:
  categories:
    read_only: [ls, cat, echo, grep, sleep, head, printf, pwd]
    safe_write: [touch]
    dangerous: [rm]
  deny: [curl]
  timeout: 5
"
  "The scope of the tool tests.")

(defun gptel-scope-test--scope-with (&rest pairs)
  "Return the tools scope with each (FROM . TO) of PAIRS replaced."
  (let ((s gptel-scope-test--tools-scope))
    (dolist (p pairs s) (setq s (replace-regexp-in-string (regexp-quote (car p)) (cdr p) s t t)))))

(ert-deftest gptel-scope-test-s01-b12-run-bash-command-runs-allowed-command ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-file (expand-file-name "a.txt" dir) (insert "hello\n"))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat a.txt | grep hell" dir)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :exit_code) 0))
        (should (equal (plist-get r :output) "hello\n"))
        (should (eq (plist-get r :truncated) nil))
        (should (equal (plist-get r :warnings) []))
        (should (integerp (plist-get r :duration_ms)))))))

(ert-deftest gptel-scope-test-s04-b24-denied-command-never-runs ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                      (format "ls; chmod 000 %s" (expand-file-name "scope.yml" dir)) dir)))
        (should-not (plist-get r :success))
        (should (equal (plist-get r :reason) "command_not_allowed"))
        (should (file-readable-p (expand-file-name "scope.yml" dir)))))))

(ert-deftest gptel-scope-test-run-time-operand-is-refused-without-asking ()
  "An operand built at run time is `run_time_operand', which the user is not asked about.
A loop over a literal glob is judged with each file it matches instead."
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-file (expand-file-name "a.txt" dir) (insert "A\n"))
    (let ((d (gptel-scope-test-check dir "cat \"$x\"")))
      (should (equal (plist-get d :reason) "run_time_operand"))
      (should-not (gptel-scope--askable-p d)))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                      "for f in *.txt; do cat \"$f\"; done" dir)))
        (should (equal (plist-get r :output) "A\n"))))))

(ert-deftest gptel-scope-test-b13-b26-relative-directory-resolved-against-buffer ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (make-directory (expand-file-name "sub" dir))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "pwd" "sub")))
        (should (equal (plist-get r :output) (concat (expand-file-name "sub" dir) "\n")))))))

(ert-deftest gptel-scope-test-b14-b25-symlinked-directory-resolved ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (let ((outside (file-name-as-directory (file-truename (make-temp-file "gptel-scope-out-" t)))))
      (unwind-protect
          (progn
            (make-directory (expand-file-name "real" dir))
            ;; A link outside the scope to a directory inside it: allowed, run in the target.
            (make-symbolic-link (expand-file-name "real" dir) (expand-file-name "in-link" outside))
            ;; A link inside the scope to a directory outside it: refused.
            (make-symbolic-link outside (expand-file-name "out-link" dir))
            (gptel-scope-test-in-chat dir
              (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "pwd -P"
                                              (expand-file-name "in-link" outside))))
                (should (eq (plist-get r :success) t))
                (should (equal (plist-get r :output) (concat (expand-file-name "real" dir) "\n"))))
              (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" "out-link")))
                (should (equal (plist-get r :reason) "directory_not_in_scope"))
                (should (equal (plist-get r :directory) (directory-file-name outside))))))
        (delete-directory outside t)))))

(ert-deftest gptel-scope-test-s02-directory-is-validated ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" "no-such-dir")))
        (should-not (plist-get r :success))
        (should (equal (plist-get r :reason) "invalid_argument")))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" "")))
        (should (equal (plist-get r :reason) "invalid_argument"))
        (should (string-match-p "directory" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-b38-b41-denial-structure ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "sort a.txt" dir)))
        (should (eq (plist-get r :success) nil))
        (should (eq (plist-get r :allowed) nil))
        (should (equal (plist-get r :reason) "command_not_allowed"))
        (should (equal (plist-get r :tool) "run_bash_command"))
        (should (equal (plist-get r :command) "sort a.txt"))
        (should (equal (plist-get r :resource) "sort"))
        (should (string-match-p "request_scope_expansion" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-b39-denied-command-structure ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "curl https://example.com" dir)))
        (should (equal (plist-get r :reason) "denied"))
        (should (equal (plist-get r :tool) "run_bash_command"))
        (should (equal (plist-get r :command) "curl https://example.com"))
        (should (string-match-p "security" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-b40-b09-directory-not-in-scope-structure ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "touch new.txt" dir)))
        (should (equal (plist-get r :reason) "directory_not_in_scope"))
        (should (equal (plist-get r :directory) (directory-file-name dir)))
        (should (equal (plist-get r :required_scope) "write"))
        (should (equal (plist-get r :allowed_patterns) (vector (concat dir "out/**"))))
        (should (string-match-p "request_scope_expansion" (plist-get r :message)))
        (should-not (file-exists-p (expand-file-name "new.txt" dir)))))))

(ert-deftest gptel-scope-test-b33-b34-tool-output-truncated ()
  (gptel-scope-test-with-project dir (gptel-scope-test--scope-with '("timeout: 5" . "timeout: 5\n  max_output_chars: 100"))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "printf 'line %s\\n' {1..200}" dir)))
        (should (eq (plist-get r :success) t))
        (should (eq (plist-get r :truncated) t))
        (should (string-prefix-p "line 1\nline 2\n" (plist-get r :output)))
        (should (string-match-p "characters of [0-9]+ bytes" (plist-get r :output)))
        (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output)))))))

(ert-deftest gptel-scope-test-b35-b36-b37-path-argument-warnings ()
  (gptel-scope-test-with-project dir (gptel-scope-test--scope-with '("timeout: 5" . "timeout: 5\n  path_arguments: warn"))
    (make-directory (expand-file-name "src" dir))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "grep -r TODO ./src" dir)))
        (should (equal (plist-get r :warnings) [])))
      (let* ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "grep -r TODO /usr/share/doc/nonexistent-x" dir))
             (w (plist-get r :warnings)))
        (should (> (length w) 0))
        (should (string-match-p "relative" (aref w 0)))))))

(ert-deftest gptel-scope-test-b47-scope-without-bash-tools-allows-nothing ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\n"
    (gptel-scope-test-in-chat dir
      (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir) :reason)
                     "command_not_allowed")))))

(ert-deftest gptel-scope-test-b48-no-scope-anywhere ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (should (equal (gptel-scope-sources) []))
      (dolist (r (list (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)
                       (gptel-scope-test-call #'gptel-scope-run-command "ls" [] dir)))
        (should (equal (plist-get r :reason) "no_scope_config")))
      (should (string-match-p "no_scope_config" (gptel-scope-list-allowed-commands))))))

(ert-deftest gptel-scope-test-s05-privileges-never-raised ()
  (gptel-scope-test-with-project dir (gptel-scope-test--scope-with '("read_only: [ls," . "read_only: [sudo, doas, ls,"))
    (gptel-scope-test-in-chat dir
      (dolist (cmd '("sudo ls" "ls | sudo tee x" "doas ls" "pkexec ls" "su -c ls"))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command cmd dir)))
          (should-not (plist-get r :success))
          (should (member (plist-get r :reason) '("privilege_escalation" "denied"))))))))

(ert-deftest gptel-scope-test-s06-failure-and-timeout-are-explicit ()
  (gptel-scope-test-with-project dir (gptel-scope-test--scope-with '("timeout: 5" . "timeout: 1"))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat missing-file" dir)))
        (should (eq (plist-get r :success) nil))
        (should (equal (plist-get r :exit_code) 1))
        (should (string-match-p "missing-file" (plist-get r :output)))
        (should (string-match-p "exit code 1" (plist-get r :message))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo begun; sleep 30" dir)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (eq (plist-get r :timed_out) t))
        (should (equal (plist-get r :output) "begun\n"))
        (should (string-match-p "timed out after 1 seconds" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-s07-descriptions-teach-the-rules ()
  (dolist (needle '("directory is required" "relative" "read_file, list_dir, grep_files and get_system_info"
                    "list_allowed_commands" "request_scope_expansion" "head, grep or tail"))
    (should (string-match-p (regexp-quote needle) gptel-scope-run-bash-command-description)))
  (should (string-match-p "without a shell" gptel-scope-run-command-description)))

(ert-deftest gptel-scope-test-f14-non-zero-exit-keeps-its-output ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (with-temp-file (expand-file-name "a.txt" dir) (insert "one\ntwo\n"))
      ;; The first cat prints, the second fails: the output and the exit code both come back.
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat a.txt; cat missing.txt" dir)))
        (should (eq (plist-get r :success) nil))
        (should (equal (plist-get r :exit_code) 1))
        (should (equal (plist-get r :output)
                       "one\ntwo\ncat: missing.txt: No such file or directory\n"))
        (should (equal (plist-get r :message) "The command failed with exit code 1; its output is shown."))))))

(ert-deftest gptel-scope-test-s08-timeout-from-scope-and-per-call ()
  (gptel-scope-test-with-project dir (gptel-scope-test--scope-with '("timeout: 5" . "timeout: 1"))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "sleep 30" dir)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (< (plist-get r :duration_ms) 4000)))
      ;; The call's own timeout overrides the scope's...
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "sleep 1.5; echo done" dir 4)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :output) "done\n")))
      ;; ...up to `gptel-scope-max-timeout'.
      (let* ((gptel-scope-max-timeout 1)
             (r (gptel-scope-test-call #'gptel-scope-run-bash-command "sleep 30" dir 3600)))
        (should (equal (plist-get r :reason) "timeout"))
        (should (string-match-p "after 1 seconds" (plist-get r :message))))
      (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir "soon") :reason)
                     "invalid_argument")))))

(ert-deftest gptel-scope-test-s09-tool-results-are-always-json ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (with-temp-file (expand-file-name "bin" dir)
        (set-buffer-multibyte nil)
        (insert (apply #'unibyte-string (number-sequence 0 255))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "cat bin" dir)))
        (should (eq (plist-get r :success) t))
        (should (string-match-p "\uFFFD" (plist-get r :output)))))))

(ert-deftest gptel-scope-test-c11-list-allowed-commands ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((text (gptel-scope-list-allowed-commands)))
        (should (string-prefix-p "Platform: posix" text))
        (should (string-match-p "read_only (needs read scope): ls, cat, echo" text))
        (should (string-match-p "^ *git" text))))))

(ert-deftest gptel-scope-test-c12-run-command-without-shell ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (with-temp-file (expand-file-name "a;b" dir) (insert "semi\n"))
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-command "cat" ["a;b"] dir)))
        (should (eq (plist-get r :success) t))
        (should (equal (plist-get r :output) "semi\n")))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-command "git" ["push"] dir)))
        (should (equal (plist-get r :reason) "subcommand_denied")))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-command "rm" ["a;b"] dir)))
        (should-not (plist-get r :success))
        (should (file-exists-p (expand-file-name "a;b" dir))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-command "cat" [1 2] dir)))
        (should (equal (plist-get r :reason) "invalid_argument"))))))

(ert-deftest gptel-scope-test-e18-b44-allow-once-grant-is-used-up ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (make-directory (expand-file-name "out" dir))
    (with-temp-file (expand-file-name "out/x" dir) (insert "x"))
    (with-temp-file (expand-file-name "out/y" dir) (insert "y"))
    (gptel-scope-test-in-chat dir
      (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm x")))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "rm x" "out")))
        (should (eq (plist-get r :success) t))
        (should-not (file-exists-p (expand-file-name "out/x" dir)))
        (should (null gptel-scope--allow-once)))
      (with-temp-file (expand-file-name "out/x" dir) (insert "x"))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "rm x" "out")))
        (should (equal (plist-get r :reason) "dangerous_command"))
        (should (file-exists-p (expand-file-name "out/x" dir)))))))

(ert-deftest gptel-scope-test-e21-grant-survives-until-its-call ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (setq gptel-scope--allow-once (list (cons "run_bash_command" "rm nothing")))
      (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)
      (gptel-scope-test-call #'gptel-scope-run-bash-command "rm other" dir)
      (gptel-scope-test-call #'gptel-scope-run-command "rm" ["nothing"] dir)
      (should (equal gptel-scope--allow-once '(("run_bash_command" . "rm nothing")))))))

(ert-deftest gptel-scope-test-async-errors-reach-the-callback-once ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (dolist (args '((nil ".") ("ls" nil) (42 ".") ("ls" ["a"])))
        (let ((r (apply #'gptel-scope-test-call #'gptel-scope-run-bash-command args)))
          (should (equal (plist-get r :reason) "invalid_argument"))
          (should (equal (plist-get r :tool) "run_bash_command"))))
      ;; An unexpected error inside the module, and a program that is missing.
      (cl-letf (((symbol-function 'gptel-scope-module-judge)
                 (lambda (&rest _) (error "Boom"))))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "ls" dir)))
          (should (equal (plist-get r :reason) "error"))
          (should (equal (plist-get r :message) "Boom"))))
      (cl-letf (((symbol-function 'gptel-scope-load-module)
                 (lambda (&rest _) (signal 'gptel-scope-module-error '("no module")))))
        (let ((r (gptel-scope-test-call #'gptel-scope-run-command "ls" [] dir)))
          (should (equal (plist-get r :reason) "module_unavailable")))))))

(ert-deftest gptel-scope-test-failing-callback-is-not-called-twice ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (let ((calls 0))
        (ignore-errors
          (gptel-scope-run-bash-command (lambda (_) (cl-incf calls) (error "Callback failed"))
                                        "sort x" dir))
        (gptel-scope-test-settle)
        (should (= calls 1))))))

(ert-deftest gptel-scope-test-scope-sources-in-order ()
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (make-directory (expand-file-name "deep/er" dir) t)
    (gptel-scope-test-in-chat (expand-file-name "deep/er" dir)
      ;; The nearest scope.yml upward.
      (should (equal (gptel-scope-sources)
                     (vector (list :file (expand-file-name "scope.yml" dir)
                                   :sha256 (secure-hash 'sha256 gptel-scope-test--tools-scope)))))
      ;; A preset's :scope (a profile), then the buffer's inline plist, then the document.
      (let ((gptel-scope "coding"))
        (setq gptel-scope-inline '(:bash-tools (:categories (:safe-write (touch)) :commands (:apt-get (:allowed-flags ("-s"))))))
        (let ((s (gptel-scope-sources)))
          (should (= (length s) 3))
          (should (string-suffix-p "scope-profiles/coding.yml" (plist-get (aref s 0) :profile)))
          (should (equal (aref s 1)
                         (list :inline "{\"bash_tools\":{\"categories\":{\"safe_write\":[\"touch\"]},\"commands\":{\"apt-get\":{\"allowed_flags\":[\"-s\"]}}}}"
                               :name "gptel-scope-inline")))
          (should (equal (aref s 2) (list :file (expand-file-name "scope.yml" dir)
                                          :sha256 (secure-hash 'sha256 gptel-scope-test--tools-scope))))))
      ;; YAML text inline.
      (setq gptel-scope-inline "bash_tools: {timeout: 7}")
      (should (equal (plist-get (aref (gptel-scope-sources) 0) :inline) "bash_tools: {timeout: 7}"))
      (setq gptel-scope-inline nil)
      ;; `gptel-scope-directory' holding a preset.md wins over the search.
      (let ((session (file-name-as-directory (make-temp-file "gptel-scope-session-" t))))
        (unwind-protect
            (progn
              (with-temp-file (expand-file-name "preset.md" session) (insert "---\nbash_tools: {}\n---\nHi\n"))
              (setq gptel-scope-directory session)
              (should (equal (gptel-scope-document) (expand-file-name "preset.md" session)))
              ;; `gptel-scope-file' wins over everything.
              (setq gptel-scope-file (expand-file-name "scope.yml" dir))
              (should (equal (gptel-scope-document) (expand-file-name "scope.yml" dir))))
          (delete-directory session t))))))

(ert-deftest gptel-scope-test-inline-scope-alone-decides ()
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (setq gptel-scope-inline `(:paths (:read (,(concat dir "**")))
                                 :bash-tools (:categories (:read-only (ls echo)))))
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
        (should (eq (plist-get r :success) t)))
      ;; A preset's :scope naming a profile.
      (setq gptel-scope-inline nil)
      (let ((gptel-scope 'read-only))
        (should (string-suffix-p "read-only.yml" (plist-get (aref (gptel-scope-sources) 0) :profile)))))))

(ert-deftest gptel-scope-test-c02-scope-changes-apply-to-the-next-call ()
  "The scope part of a request is kept between calls, and made again when
anything it comes from changes, also in place (C02)."
  (gptel-scope-test-with-project dir nil
    (gptel-scope-test-in-chat dir
      (let ((read-only (list 'ls)))
        (setq gptel-scope-inline `(:paths (:read (,(concat dir "**")))
                                   :bash-tools (:categories (:read-only ,read-only))))
        (should (plist-get (gptel-scope-check-bash-command "ls" dir nil t) :allowed))
        (should-not (plist-get (gptel-scope-check-bash-command "wc x" dir nil t) :allowed))
        ;; The same list, changed in place.
        (setcdr read-only (list 'wc))
        (should (plist-get (gptel-scope-check-bash-command "wc x" dir nil t) :allowed))
        ;; A grant of this buffer.
        (should-not (plist-get (gptel-scope-check-bash-command "head x" dir nil t) :allowed))
        (push (cons "run_bash_command" "head") gptel-scope--allow-once)
        (should (plist-get (gptel-scope-check-bash-command "head x" dir nil t) :allowed))
        (setq gptel-scope--allow-once nil)
        ;; A scope document that appears takes over.
        (gptel-scope-test-write-scope
         (expand-file-name "scope.yml" dir)
         "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [head]}}\n")
        (should (plist-get (gptel-scope-check-bash-command "head x" dir nil t) :allowed))
        ;; Another home.
        (let ((process-environment (copy-sequence process-environment)))
          (setenv "HOME" "/tmp/gptel-scope-other-home")
          (should (string-match-p "\"home\":\"/tmp/gptel-scope-other-home\""
                                  (gptel-scope--scope-json (current-buffer)))))
        (should-not (string-match-p "gptel-scope-other-home" (gptel-scope--scope-json (current-buffer))))
        ;; The brief decision answers as the full one.
        (dolist (command '("ls" "head x" "rm -rf /"))
          (let ((brief (gptel-scope-check-bash-command command dir nil t))
                (full (gptel-scope-check-bash-command command dir)))
            (should (eq (plist-get brief :allowed) (plist-get full :allowed)))
            (should (equal (plist-get brief :reason) (plist-get full :reason)))
            (unless (plist-get full :allowed)
              (should (equal (gptel-scope--denial-json brief) (gptel-scope--denial-json full))))))))))

(ert-deftest gptel-scope-test-tools-registered-in-the-scope-category ()
  (let ((specs nil))
    (cl-letf (((symbol-function 'gptel-make-tool) (lambda (&rest spec) (push spec specs))))
      (gptel-scope-register-tools))
    (should (equal (sort (mapcar (lambda (s) (plist-get s :name)) specs) #'string<)
                   '("apply_patch" "exec_command" "get_system_info" "grep_files" "list_allowed_commands"
                     "list_dir" "read_file" "request_scope_expansion" "run_bash_command"
                     "run_command" "write_stdin")))
    (dolist (s specs)
      (should (equal (plist-get s :category) "scope"))
      (should (stringp (plist-get s :description)))
      ;; gptel calls the function with the callback first (async), then the args in order.
      (let* ((arity (func-arity (plist-get s :function)))
             (n (+ (length (plist-get s :args)) (if (plist-get s :async) 1 0)))
             (required (+ (length (seq-remove (lambda (a) (plist-get a :optional)) (plist-get s :args)))
                          (if (plist-get s :async) 1 0))))
        (should (<= (car arity) required))
        (should (or (eq (cdr arity) 'many) (>= (cdr arity) n)))))
    (should (plist-get (seq-find (lambda (s) (equal (plist-get s :name) "run_bash_command")) specs) :async))))

(ert-deftest gptel-scope-test-tools-register-with-real-gptel ()
  (skip-unless (featurep 'gptel))
  (gptel-scope-register-tools)
  (should (gptel-get-tool "run_bash_command")))

(ert-deftest gptel-scope-test-approval-policy-decides-confirmation ()
  (gptel-scope-test-with-project dir (concat gptel-scope-test--tools-scope "approval_policy: mutating\n")
    (make-directory (expand-file-name "out" dir))
    (gptel-scope-test-in-chat dir
      (should-not (gptel-scope--confirm-p "run_bash_command" "ls" dir))
      (should (gptel-scope--confirm-p "run_bash_command" "touch x" "out"))
      (should (gptel-scope--confirm-p "run_bash_command" "rm x" "out"))))
  (gptel-scope-test-with-project dir (concat gptel-scope-test--tools-scope "approval_policy: always\n")
    (gptel-scope-test-in-chat dir
      (should (gptel-scope--confirm-p "run_command" '("ls") dir))))
  (gptel-scope-test-with-project dir gptel-scope-test--tools-scope
    (gptel-scope-test-in-chat dir
      (should-not (gptel-scope--confirm-p "run_bash_command" "rm x" dir)))))

(provide 'gptel-scope-tools-test)
;;; gptel-scope-tools-test.el ends here
