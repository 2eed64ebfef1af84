;;; gptel-scope-env-test.el --- Tests of the scoped environment and redaction  -*- lexical-binding: t; -*-

;;; Commentary:

;; Issue 22: the API keys, tokens and passwords of Emacs's environment
;; never reach the model.  Every row of the issue's table, through
;; run_bash_command, run_command and a terminal session, with the
;; sandbox off and on; read_file and grep_files of a file holding a
;; secret's value; a secret cut by truncation or shown in pieces; the
;; ordinary variables a command still gets; env:NAME from the menu.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-tools)
(require 'gptel-scope-fs)
(require 'gptel-scope-pty)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-env)
(require 'gptel-scope-explain)

(defvar gptel-api-key)

(defconst gptel-scope-test--secrets
  '(("OPENAI_API_KEY" . "sk-openai-Zq8w7e6r5t4y")
    ("ANTHROPIC_API_KEY" . "sk-ant-api03-Xk29dj38fh")
    ("AWS_SECRET_ACCESS_KEY" . "wJalrXUtnFEMI/K7MDENG/bPxRfiCY")
    ("GITHUB_TOKEN" . "ghp_R8fj2k4LmQp0Zx7Yw")
    ("DATABASE_PASSWORD" . "hunter2-but-longer")
    ("MY_SERVICE_CREDS" . "creds-value-998877"))
  "Variables of Emacs's environment the model must never see, with their values.
The last one has a name that does not look like a secret: the scope's
default leaves it out all the same, and the scope marks it as one
\(`redact'), so its value is hidden.")

(defconst gptel-scope-test--env-scope
  "paths:
  read: [\"${project_root}/**\"]
  write: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [echo, printenv, env, sort, jq, cat, grep, sleep]
  timeout: 10
tool_commands:
  posix:
    allowed:
      printenv: {description: \"Print the environment\"}
      env: {description: \"Print the environment\"}
      echo: {description: \"Print its arguments\"}
      jq: {description: \"JSON processor\"}
environment:
  redact: [MY_SERVICE_CREDS]
  include: [PROJECT_NOTE]
"
  "A scope like the coding profile's, with the commands of the issue's table.")

(defmacro gptel-scope-test--with-secrets (&rest body)
  "Run BODY with the secrets, LANG and an included variable in the environment."
  (declare (indent 0))
  `(let ((process-environment
          (append (mapcar (lambda (s) (concat (car s) "=" (cdr s))) gptel-scope-test--secrets)
                  (list "PROJECT_NOTE=ordinary-note-1" "LANG=C.UTF-8")
                  (copy-sequence process-environment))))
     ,@body))

(defun gptel-scope-test--no-secret (json)
  "Assert that the tool result JSON holds no secret value."
  (dolist (s gptel-scope-test--secrets)
    (should-not (string-search (cdr s) json))
    ;; Nor a recognisable beginning of one.
    (should-not (string-search (substring (cdr s) 0 8) json))))

(defun gptel-scope-test--secret-project (dir)
  "Write DIR/config.txt, holding two secrets' values."
  (with-temp-file (expand-file-name "config.txt" dir)
    (insert "aws_secret_access_key = " (cdr (assoc "AWS_SECRET_ACCESS_KEY" gptel-scope-test--secrets)) "\n"
            "service = " (cdr (assoc "MY_SERVICE_CREDS" gptel-scope-test--secrets)) "\n")))

(defconst gptel-scope-test--redacted-config
  "aws_secret_access_key = [redacted: AWS_SECRET_ACCESS_KEY]\nservice = [redacted: MY_SERVICE_CREDS]\n"
  "config.txt as the model may see it.")

(defun gptel-scope-test--env-output-ok (output)
  "Assert that OUTPUT, a printed environment, has PATH, LANG and PROJECT_NOTE only."
  (should (string-match-p "^PATH=/" output))
  (should (string-match-p "^LANG=C.UTF-8$" output))
  (should (string-match-p "^PROJECT_NOTE=ordinary-note-1$" output))
  (dolist (s gptel-scope-test--secrets)
    (should-not (string-search (car s) output))))

(defun gptel-scope-test--table-rows (dir)
  "Return the rows of the issue's table: (TOOL ARGS CHECK), CHECK on the output."
  (let ((empty-line (lambda (o) (should (equal o "\n"))))
        (nothing (lambda (o) (should (equal o ""))))
        (config (lambda (o) (should (equal o gptel-scope-test--redacted-config))))
        (grep (lambda (o) (should (equal o (concat "./config.txt:aws_secret_access_key = [redacted: AWS_SECRET_ACCESS_KEY]\n")))))
        (env #'gptel-scope-test--env-output-ok)
        (jq (lambda (o)
              (should (string-match-p "\"PROJECT_NOTE\": \"ordinary-note-1\"" o))
              (should (string-match-p "\"LANG\": \"C.UTF-8\"" o))
              (dolist (s gptel-scope-test--secrets) (should-not (string-search (car s) o))))))
    `((run_bash_command ("echo $OPENAI_API_KEY $ANTHROPIC_API_KEY" ,dir) ,empty-line)
      (run_bash_command ("printenv" ,dir) ,env)
      (run_bash_command ("env | sort" ,dir) ,env)
      (run_bash_command ("jq -n env" ,dir) ,jq)
      (run_bash_command ("echo ${GITHUB_TOKEN}" ,dir) ,empty-line)
      (run_bash_command ("printenv DATABASE_PASSWORD" ,dir) ,nothing)
      (run_bash_command ("cat config.txt" ,dir) ,config)
      (run_bash_command ("grep -r aws ." ,dir) ,grep)
      (run_command ("printenv" nil ,dir) ,env)
      (run_command ("env" nil ,dir) ,env)
      (run_command ("jq" ["-n" "env"] ,dir) ,jq)
      (run_command ("printenv" ["GITHUB_TOKEN"] ,dir) ,nothing)
      (run_command ("cat" ["config.txt"] ,dir) ,config)
      (run_command ("grep" ["-r" "aws" "."] ,dir) ,grep)
      (exec_command ("env" ,dir 5000) ,env)
      (exec_command ("printenv" ,dir 5000) ,env)
      (exec_command ("echo $OPENAI_API_KEY $ANTHROPIC_API_KEY" ,dir 5000) ,empty-line)
      (exec_command ("cat config.txt" ,dir 5000) ,config))))

(defun gptel-scope-test--run-table (sandbox)
  "Run every row of the issue's table with `gptel-scope-sandbox' SANDBOX."
  (gptel-scope-test-with-project dir gptel-scope-test--env-scope
    (gptel-scope-test--secret-project dir)
    (gptel-scope-test--with-secrets
      (let ((gptel-scope-sandbox sandbox)
            (gptel-scope-sandbox--works nil)
            (gptel-scope-pty--sessions (make-hash-table)))
        (unwind-protect
            (gptel-scope-test-in-chat dir
              (pcase-dolist (`(,tool ,args ,check) (gptel-scope-test--table-rows dir))
                (let* ((fn (pcase tool
                             ('run_bash_command #'gptel-scope-run-bash-command)
                             ('run_command #'gptel-scope-run-command)
                             ('exec_command #'gptel-scope-exec-command)))
                       (json (apply #'gptel-scope-test-call-raw fn args))
                       (r (gptel-scope-test-parse json))
                       (output (if (eq tool 'exec_command)
                                   (replace-regexp-in-string "\r" "" (plist-get r :output))
                                 (plist-get r :output))))
                  (ert-info ((format "%s %S sandbox %s: %s" tool args sandbox json))
                    (gptel-scope-test--no-secret json)
                    (should (stringp output))
                    (funcall check output)))))
          (gptel-scope-pty-close-all))))))

(ert-deftest gptel-scope-test-env-table-without-sandbox ()
  "Each row of the issue's table returns no secret value, without the sandbox."
  (gptel-scope-test--run-table nil))

(ert-deftest gptel-scope-test-env-table-in-sandbox ()
  "Each row of the issue's table returns no secret value, in the sandbox."
  (let ((gptel-scope-sandbox-program "bwrap") (gptel-scope-sandbox--works nil))
    (unless (gptel-scope-sandbox-works-p) (ert-skip "bubblewrap does not work here")))
  (gptel-scope-test--run-table 'bwrap))

(ert-deftest gptel-scope-test-env-file-tools-redact ()
  "read_file and grep_files of a file holding a secret's value show [redacted: NAME];
so does an error that echoes a secret back, and list_dir of a file named like one."
  (gptel-scope-test-with-project dir gptel-scope-test--env-scope
    (gptel-scope-test--secret-project dir)
    (gptel-scope-test--with-secrets
      (gptel-scope-test-in-chat dir
        (let ((json (gptel-scope-test-call-raw #'gptel-scope-read-file "config.txt")))
          (gptel-scope-test--no-secret json)
          (should (equal (plist-get (gptel-scope-test-parse json) :content)
                         (string-trim-right gptel-scope-test--redacted-config))))
        (let ((json (gptel-scope-test-call-raw #'gptel-scope-grep-files "aws_secret")))
          (gptel-scope-test--no-secret json)
          (should (equal (plist-get (gptel-scope-test-parse json) :content)
                         "config.txt:1:aws_secret_access_key = [redacted: AWS_SECRET_ACCESS_KEY]")))
        (let* ((secret (cdr (assoc "GITHUB_TOKEN" gptel-scope-test--secrets)))
               (json (gptel-scope-test-call-raw #'gptel-scope-read-file (concat secret ".txt"))))
          (gptel-scope-test--no-secret json)
          (should (string-search "[redacted: GITHUB_TOKEN].txt" json)))
        (let ((name (expand-file-name (concat (cdr (assoc "DATABASE_PASSWORD" gptel-scope-test--secrets)) ".db") dir)))
          (with-temp-file name (insert "x"))
          (let ((json (gptel-scope-test-call-raw #'gptel-scope-list-dir ".")))
            (gptel-scope-test--no-secret json)
            (should (string-search "[redacted: DATABASE_PASSWORD].db" json))))))))

(ert-deftest gptel-scope-test-env-long-lines-and-truncation-show-no-prefix ()
  "A secret cut by the output limit or a cut line shows no beginning."
  (gptel-scope-test-with-project dir (replace-regexp-in-string "timeout: 10" "timeout: 10\n  max_output_chars: 200"
                                                                gptel-scope-test--env-scope)
    (let ((secret (cdr (assoc "OPENAI_API_KEY" gptel-scope-test--secrets))))
      ;; The first 100 of the 200 characters shown end inside the secret; the line of 400 too.
      (with-temp-file (expand-file-name "long.txt" dir)
        (insert (make-string 90 ?x) secret "\n" (make-string 395 ?y) secret "\n"))
      (gptel-scope-test--with-secrets
        (gptel-scope-test-in-chat dir
          (let ((json (gptel-scope-test-call-raw #'gptel-scope-run-bash-command "cat long.txt" dir)))
            (gptel-scope-test--no-secret json)
            ;; Redacted before the cut, which falls in the replacement.
            (should (equal (plist-get (gptel-scope-test-parse json) :output)
                           (concat (make-string 90 ?x) "[redacted:\n\n[Output truncated: showing 200 characters of 531 bytes (2 of 2 lines), the first 100 above and the last 100 below. Narrow the output with filters such as 'head', 'grep' or 'tail'.]\n\n"
                                   (make-string 73 ?y) "[redacted: OPENAI_API_KEY]\n")))
            (should (eq (plist-get (gptel-scope-test-parse json) :truncated) t)))
          (let* ((json (gptel-scope-test-call-raw #'gptel-scope-read-file "long.txt"))
                 (lines (split-string (plist-get (gptel-scope-test-parse json) :content) "\n")))
            (gptel-scope-test--no-secret json)
            (should (equal (nth 0 lines) (concat (make-string 90 ?x) "[redacted: OPENAI_API_KEY]")))
            (should (equal (nth 1 lines) (concat (make-string 395 ?y) "[redacted: OPENAI_API_KEY]… [truncated line]")))))))))

(ert-deftest gptel-scope-test-env-session-holds-back-a-secret-in-pieces ()
  "A terminal session that prints a secret in two pieces shows neither piece."
  (gptel-scope-test-with-project dir gptel-scope-test--env-scope
    (let ((secret (cdr (assoc "OPENAI_API_KEY" gptel-scope-test--secrets))))
      (with-temp-file (expand-file-name "a" dir) (insert "key: " (substring secret 0 12)))
      (with-temp-file (expand-file-name "b" dir) (insert (substring secret 12) " done\n"))
      (gptel-scope-test--with-secrets
        (let ((gptel-scope-pty--sessions (make-hash-table)))
          (unwind-protect
              (gptel-scope-test-in-chat dir
                (let* ((first (gptel-scope-test-call-raw #'gptel-scope-exec-command "cat a; sleep 1; cat b" dir 400))
                       (id (plist-get (gptel-scope-test-parse first) :session_id)))
                  (gptel-scope-test--no-secret first)
                  (should (equal (plist-get (gptel-scope-test-parse first) :output) "key: "))
                  (let ((rest (gptel-scope-test-call-raw #'gptel-scope-write-stdin id "" 3000)))
                    (gptel-scope-test--no-secret rest)
                    (should (equal (replace-regexp-in-string "\r" "" (plist-get (gptel-scope-test-parse rest) :output))
                                   "[redacted: OPENAI_API_KEY] done\n")))))
            (gptel-scope-pty-close-all)))))))

(ert-deftest gptel-scope-test-env-gptel-api-key-is-hidden ()
  "gptel's own key, a string, is hidden wherever it shows."
  (gptel-scope-test-with-project dir gptel-scope-test--env-scope
    (with-temp-file (expand-file-name "k.txt" dir) (insert "key sk-gptel-own-key-0042\n"))
    (let ((gptel-api-key "sk-gptel-own-key-0042"))
      (gptel-scope-test-in-chat dir
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command "cat k.txt" dir) :output)
                       "key [redacted: gptel-api-key]\n"))))))

(ert-deftest gptel-scope-test-env-set-exclude-and-inherit ()
  "set gives a value, exclude and inherit none take variables away; PATH and LANG stay by default."
  (gptel-scope-test-with-project dir (concat gptel-scope-test--env-scope
                                             "  set: {RUST_BACKTRACE: \"1\"}\n  exclude: [LANG]\n")
    (gptel-scope-test--with-secrets
      (gptel-scope-test-in-chat dir
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-bash-command
                                                         "echo \"[$RUST_BACKTRACE][$LANG][$PROJECT_NOTE][${PATH:+path}]\"" dir)
                                  :output)
                       "[1][][ordinary-note-1][path]\n")))))
  (gptel-scope-test-with-project dir (concat gptel-scope-test--env-scope "  inherit: none\n")
    (gptel-scope-test--with-secrets
      (gptel-scope-test-in-chat dir
        (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-run-command "printenv" nil dir) :output)
                       ;; What every command gets from the runner, and the one included;
                       ;; bubblewrap, on by default where it works, adds the working directory.
                       (concat "PAGER=cat\nGIT_PAGER=cat\nMANPAGER=cat\nSYSTEMD_PAGER=cat\nGIT_TERMINAL_PROMPT=0\nGIT_EDITOR=true\nEDITOR=true\nVISUAL=true\nTERM=dumb\n"
                               ;; git's settings that put its own programs back (GIT_CONFIG_*).
                               (mapconcat (lambda (e) (concat e "\n"))
                                          (seq-filter (lambda (e) (string-prefix-p "GIT_CONFIG_" e))
                                                      gptel-scope-exec--set)
                                          "")
                               "PROJECT_NOTE=ordinary-note-1\n"
                               (if (and gptel-scope-sandbox (gptel-scope-sandbox-works-p))
                                   (format "PWD=%s\n" (directory-file-name dir))
                                 ""))))))))

(ert-deftest gptel-scope-test-env-unknown-key-fails-closed ()
  "An unknown key under environment: is invalid_config naming it; nothing runs."
  (gptel-scope-test-with-project dir (concat gptel-scope-test--env-scope "  inherits: all\n")
    (gptel-scope-test-in-chat dir
      (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command "echo hi" dir)))
        (should (equal (plist-get r :reason) "invalid_config"))
        (should (string-match-p "unknown field `inherits`" (plist-get r :message)))))))

(ert-deftest gptel-scope-test-env-explain-and-system-info-name-only ()
  "explain and get_system_info say each variable's fate, by name, never its value;
and warn about inherit: all without exclude and about an included secret."
  (gptel-scope-test-with-project dir (concat gptel-scope-test--env-scope "  inherit: all\n")
    ;; Rewritten and approved, as the user would.
    (gptel-scope-test-write-scope
     (expand-file-name "scope.yml" dir)
     (replace-regexp-in-string "include: \\[PROJECT_NOTE\\]" "include: [PROJECT_NOTE, GITHUB_TOKEN]"
                               (concat gptel-scope-test--env-scope "  inherit: all\n")))
    (gptel-scope-test--with-secrets
      (gptel-scope-test-in-chat dir
        (let* ((json (gptel-scope-system-info))
               (env (plist-get (gptel-scope-test-parse json) :environment)))
          ;; GITHUB_TOKEN is included by name: passed, so its value is not hidden from
          ;; the command, and the answer names it only.
          (dolist (s gptel-scope-test--secrets)
            (unless (equal (car s) "GITHUB_TOKEN") (should-not (string-search (cdr s) json))))
          (should-not (string-search (cdr (assoc "GITHUB_TOKEN" gptel-scope-test--secrets)) json))
          (should (seq-contains-p (plist-get env :passed) "PROJECT_NOTE"))
          (should (seq-contains-p (plist-get env :passed) "GITHUB_TOKEN"))
          (should (seq-contains-p (plist-get env :left_out) "OPENAI_API_KEY"))
          (should (seq-contains-p (plist-get env :redacted) "AWS_SECRET_ACCESS_KEY"))
          (should-not (seq-contains-p (plist-get env :left_out) "MY_SERVICE_CREDS"))
          (should (equal (length (plist-get env :warnings)) 2)))
        (gptel-scope-explain "printenv" dir)
        (let ((text (with-current-buffer "*gptel-scope-explain*" (buffer-string))))
          (should (string-match-p "^  OPENAI_API_KEY +secret +\\*KEY\\*  (value redacted in results)$" text))
          (should (string-match-p "^  PROJECT_NOTE +included +PROJECT_NOTE$" text))
          (should (string-match-p "^  warning: environment: `inherit: all` with no `exclude`" text))
          (should (string-match-p "^  warning: environment: `include` passes GITHUB_TOKEN" text))
          (dolist (s gptel-scope-test--secrets) (should-not (string-search (cdr s) text))))))))

(ert-deftest gptel-scope-test-env-allow-once-and-add-to-scope ()
  "A variable asked for as env:NAME: Allow once passes it for one call, Add to
scope writes it to environment.include; the menu shows the name, not the value.
Passed once, its value is shown: it is no secret (its name does not
look like one, and the scope does not mark it).  Included by the scope,
it is not hidden either."
  (gptel-scope-test-with-project dir gptel-scope-test--env-scope
    (let ((process-environment (cons "PROJECT_STAGE=staging-4242" (copy-sequence process-environment)))
          (run (lambda () (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                                          "printenv PROJECT_STAGE" dir)))
                            (list (plist-get r :exit_code) (plist-get r :output))))))
      (gptel-scope-test-in-chat dir
        (gptel-scope-test-with-expansion
          (should (equal (funcall run) '(1 "")))
          (let ((menu nil)
                (answers nil))
            (gptel-scope-test-press
             "" (lambda ()
                  (gptel-scope-request-scope-expansion (lambda (a) (push a answers))
                                                       "run_bash_command" "env:PROJECT_STAGE" "the build reads it")
                  (setq menu (gptel-scope-test-menu-text))))
            (should (string-search "env:PROJECT_STAGE" menu))
            (should (string-search "environment.include" menu))
            (should-not (string-search "staging-4242" menu))
            (gptel-scope-test-press "o")
            (should (eq (plist-get (gptel-scope-test-parse (car answers)) :allowed_once) t)))
          (should (equal (funcall run) '(0 "staging-4242\n")))
          ;; Used up by that call.
          (should (equal (funcall run) '(1 "")))
          (let ((answers (gptel-scope-test-ask "a" "run_bash_command" "env:PROJECT_STAGE")))
            (should (equal (plist-get (car (funcall answers)) :patterns_added) '["PROJECT_STAGE"])))
          (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                         (replace-regexp-in-string "include: \\[PROJECT_NOTE\\]" "include: [PROJECT_NOTE, PROJECT_STAGE]"
                                                   gptel-scope-test--env-scope)))
          (should (equal (funcall run) '(0 "staging-4242\n"))))))))

;;;; Secrets, not every variable left out

(ert-deftest gptel-scope-test-env-only-secrets-are-redacted ()
  "A variable left out that is no secret is not passed, and its value is shown.
COLORTERM=truecolor and EDITOR=emacsclient once hid every \"truecolor\"
and \"emacsclient\" of every result.  What the scope marks (`redact')
is hidden, passed or not; the listing says which values are."
  (gptel-scope-test-with-project dir (replace-regexp-in-string
                                      "redact: \\[MY_SERVICE_CREDS\\]" "redact: [\"EDIT*\", PROJECT_NOTE]"
                                      gptel-scope-test--env-scope)
    (with-temp-file (expand-file-name "theme.txt" dir)
      (insert "truecolor emacsclient ordinary-note-1 sk-openai-Zq8w7e6r5t4y\n"))
    (gptel-scope-test--with-secrets
      (let ((process-environment (append '("COLORTERM=truecolor" "EDITOR=emacsclient") process-environment))
            (shown "truecolor [redacted: EDITOR] [redacted: PROJECT_NOTE] [redacted: OPENAI_API_KEY]"))
        (gptel-scope-test-in-chat dir
          (should (equal (plist-get (gptel-scope-test-call #'gptel-scope-read-file "theme.txt") :content)
                         shown))
          (let ((r (gptel-scope-test-call #'gptel-scope-run-bash-command
                                          "cat theme.txt; printenv COLORTERM PROJECT_NOTE" dir)))
            ;; COLORTERM is not passed; PROJECT_NOTE is, and hidden all the same.
            (should (equal (list (plist-get r :exit_code) (plist-get r :output))
                           (list 1 (concat shown "\n[redacted: PROJECT_NOTE]\n")))))
          (let ((env (plist-get (gptel-scope-test-parse (gptel-scope-system-info)) :environment)))
            (should (equal (list (seq-contains-p (plist-get env :left_out) "COLORTERM")
                                 (seq-contains-p (plist-get env :redacted) "COLORTERM")
                                 (seq-contains-p (plist-get env :redacted) "EDITOR")
                                 (seq-contains-p (plist-get env :redacted) "PROJECT_NOTE")
                                 (seq-contains-p (plist-get env :redacted) "OPENAI_API_KEY"))
                           '(t nil t t t))))
          (gptel-scope-explain "printenv" dir)
          (let ((text (with-current-buffer "*gptel-scope-explain*" (buffer-string))))
            (should (string-match-p "^  COLORTERM +not_inherited +$" text))
            (should (string-match-p "^  EDITOR +not_inherited +  (value redacted in results)$" text))))))))

(provide 'gptel-scope-env-test)
;;; gptel-scope-env-test.el ends here
