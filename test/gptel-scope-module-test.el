;;; gptel-scope-module-test.el --- Tests of the module through Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; The engine as elisp meets it: plists with keyword keys, error symbols with
;; data, the command-line check, truncation.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-cli)

(defconst gptel-scope-test--scope
  "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, grep, cat]\n    safe_write: [touch]\n    dangerous: [rm]\n  deny: [curl]\n"
  "A scope for the tests.")

(ert-deftest gptel-scope-test-version ()
  (should (equal (gptel-scope-module-version) "0.1.0")))

(ert-deftest gptel-scope-test-b15-plist-decision ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((d (gptel-scope-test-check dir "ls | grep foo")))
      (should (eq (plist-get d :allowed) t))
      (should (equal (plist-get d :base-command) "ls"))
      (should (equal (plist-get d :category) "read_only"))
      (should (equal (mapcar (lambda (c) (plist-get c :name)) (plist-get d :commands)) '("ls" "grep")))
      (should (null (plist-get d :response))))))

(ert-deftest gptel-scope-test-b38-denial-response-is-json ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let* ((d (gptel-scope-test-check dir "ls; frob"))
           (r (json-parse-string (plist-get d :response) :object-type 'plist)))
      (should (null (plist-get d :allowed)))
      (should (equal (plist-get d :reason) "command_not_allowed"))
      (should (eq (plist-get r :success) :false))
      (should (equal (plist-get r :reason) "command_not_allowed"))
      (should (string-match-p "request_scope_expansion" (plist-get r :message))))))

(ert-deftest gptel-scope-test-b44-grant-reported-as-used ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((out (expand-file-name "out" dir))
          (grant (list :tool "run_bash_command" :resource "rm x")))
      (make-directory out)
      (should (equal (plist-get (gptel-scope-test-check out "rm x") :reason) "dangerous_command"))
      (let ((d (gptel-scope-test-check out "rm x" (vector grant))))
        (should (eq (plist-get d :allowed) t))
        (should (equal (plist-get d :grants-used) '((:resource "rm x" :tool "run_bash_command"))))))))

(ert-deftest gptel-scope-test-b48-no-scope-config ()
  (let ((d (gptel-scope-test-check-command
            (json-serialize (list :command "ls" :directory "/tmp" :sources [])))))
    (should (equal (plist-get d :reason) "no_scope_config")))
  (should (equal (car (should-error (gptel-scope-test-judge "get_system_info" "{\"sources\":[]}")
                                    :type 'gptel-scope-no-scope-config))
                 'gptel-scope-no-scope-config)))

(ert-deftest gptel-scope-test-invalid-config-signal-data ()
  (gptel-scope-test-with-project dir "bash_tools:\n  categories:\n    read_onyl: [ls]\n"
    (let ((err (should-error
                (gptel-scope-test-judge "get_system_info"
                 (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
                :type 'gptel-scope-invalid-config)))
      (should (equal (plist-get (cddr err) :line) 3))
      (should (equal (plist-get (cddr err) :key) "bash_tools.categories.read_onyl"))
      (should (equal (plist-get (cddr err) :file) (expand-file-name "scope.yml" dir))))
    (let ((d (gptel-scope-test-check dir "ls")))
      (should (equal (plist-get d :reason) "invalid_config")))))

(ert-deftest gptel-scope-test-error-hierarchy ()
  (should (memq 'gptel-scope-error (get 'gptel-scope-invalid-config 'error-conditions)))
  (should-error (gptel-scope-test-check-command "not json") :type 'gptel-scope-invalid-argument))

(ert-deftest gptel-scope-test-b33-truncate ()
  (let ((r (gptel-scope-module-truncate (make-string 50 ?x) 10)))
    (should (eq (plist-get r :truncated) t))
    (should (equal (plist-get r :shown-chars) 10))
    (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output))))
  (should (null (plist-get (gptel-scope-module-truncate "short" 10) :truncated)))
  (should-error (gptel-scope-module-truncate "x" -1) :type 'gptel-scope-invalid-argument))

(ert-deftest gptel-scope-test-f07-truncate-stream ()
  (let ((r (gptel-scope-module-truncate-stream (apply #'concat (make-list 300 "line\n")) 8192 200)))
    (should (equal (plist-get r :shown-lines) 200))
    (should (string-suffix-p "[truncated] showing 1000 of 1500 bytes, 200 of 300 lines" (plist-get r :output)))))

(ert-deftest gptel-scope-test-c11-list-commands ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((text (plist-get (gptel-scope-test-judge "list_allowed_commands"
                            (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
                           :response)))
      (should (string-prefix-p "Platform: posix\n\nAvailable commands for run_command (a program and its arguments, no shell):\n" text))
      (should (string-match-p "read_only (needs read scope): ls, grep, cat" text)))))

(ert-deftest gptel-scope-test-c12-check-argv ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let ((ok (gptel-scope-test-judge "run_command"
               (json-serialize (list :command "grep" :args ["-n" "x" "scope.yml"] :directory (directory-file-name dir)
                                     :sources (vector (list :file (expand-file-name "scope.yml" dir)))))))
          (bad (gptel-scope-test-judge "run_command"
                (json-serialize (list :command "git" :args ["push"] :directory (directory-file-name dir)
                                      :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
      (should (eq (plist-get ok :allowed) t))
      (should (equal (plist-get bad :reason) "subcommand_denied")))))

(ert-deftest gptel-scope-test-check-path ()
  "A file tool's outcome is a plist: the result's fields, and the model's JSON."
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let* ((src (list :file (expand-file-name "scope.yml" dir)))
           (ok (gptel-scope-test-judge
                "check_path"
                (json-serialize (list :path "scope.yml" :directory (directory-file-name dir)
                                      :sources (vector src)))))
           (no (gptel-scope-test-judge
                "check_path"
                (json-serialize (list :path "x" :access "write" :directory (directory-file-name dir)
                                      :sources (vector src))))))
      (should (eq t (plist-get ok :success)))
      (should (eq t (plist-get ok :allowed)))
      (should (eq t (plist-get (gptel-scope-test-parse (plist-get ok :response)) :success)))
      (should (equal "path_not_in_scope" (plist-get no :reason)))
      (should-not (plist-get no :allowed))
      ;; What telling the user and asking take, from the engine.
      (should (eq t (plist-get no :grantable)))
      (should (eq t (plist-get no :askable)))
      (should (equal (plist-get no :required-scope) "write"))
      (should (equal (plist-get no :command) "x"))
      (should (equal (plist-get no :validation-type) "path"))
      (let ((sent (gptel-scope-test-parse (plist-get no :response))))
        (should (equal (plist-get sent :reason) "path_not_in_scope"))
        (should (equal (plist-get sent :message) (plist-get no :message)))
        (should-not (plist-member sent :response))
        (should-not (plist-member sent :askable))))))

(ert-deftest gptel-scope-test-cli-json-lines ()
  (gptel-scope-test-with-project dir gptel-scope-test--scope
    (let* ((lines (list "{\"command\": \"ls\"}" "{\"command\": \"curl x\"}" "oops"))
           (out (with-output-to-string
                  (cl-letf (((symbol-function 'gptel-scope-cli--read-line) (lambda () (pop lines))))
                    (let ((command-line-args-left (list (expand-file-name "scope.yml" dir) dir "")))
                      (gptel-scope-cli-check)))))
           (objs (mapcar (lambda (l) (json-parse-string l :object-type 'plist :false-object nil))
                         (split-string out "\n" t))))
      (should (equal (mapcar (lambda (o) (plist-get o :allowed)) objs) '(t nil nil)))
      (should (equal (mapcar (lambda (o) (plist-get o :reason)) objs) '(:null "denied" "invalid_input"))))))

(ert-deftest gptel-scope-test-brief-decision-for-the-tools ()
  "An allowed command comes back in brief, a refusal in brief with its answer."
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls]}, timeout: 7}\n"
    (let ((d (gptel-scope-test-decide
              (json-serialize (list :command "ls" :directory (directory-file-name dir)
                                    :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
      (should (equal d (list :allowed t :tool "run_bash_command" :directory (directory-file-name dir)
                             :timeout 7 :max-output-chars 20000 :warnings nil :grants-used nil
                             :required-scope "read" :category "read_only"
                             ;; What the sandbox shows the call beyond the scope: its program.
                             :sandbox '(:read nil :write nil :write-in nil :programs ("ls"))))))
    ;; A refusal: what answering the model and the expansion menu take, no evidence.
    (let* ((req (json-serialize (list :command "ls; rm x > /etc/y" :directory (directory-file-name dir)
                                      :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
           (d (gptel-scope-test-decide req))
           (full (gptel-scope-test-check-command req)))
      ;; A plist of what the event, the menu and the model's answer take.
      (should-not (plist-get d :allowed))
      (should (equal (gptel-scope-test--plist-keys d)
                     '(:allowed :tool :reason :grantable :askable :message :resource
                                :validation-type :required-scope :category :violations
                                :response)))
      (dolist (key '(:allowed :tool :reason :grantable :askable :message :resource
                              :validation-type :required-scope :category))
        (should (equal (plist-get d key) (plist-get full key))))
      ;; The model's answer: the full one's.
      (should (equal (plist-get d :response) (plist-get full :response)))
      (should (equal (gptel-scope--denial-json d) (plist-get full :response)))
      (should (equal (plist-get d :reason) "command_not_allowed"))
      (should (equal (plist-get d :violations)
                     (mapcar (lambda (v) (list :resource (plist-get v :resource)
                                               :validation-type (plist-get v :validation-type)
                                               :access (plist-get v :access)
                                               :reason (plist-get v :reason)))
                             (plist-get full :violations))))
      (should (= (length (plist-get d :violations)) 2))
      ;; A refusal for a bad directory comes in full.
      (let ((bad (gptel-scope-test-decide
                  (json-serialize (list :command "ls" :directory "relative"
                                        :sources (vector (list :file (expand-file-name "scope.yml" dir))))))))
        (should (equal (plist-get bad :reason) "invalid_argument"))
        (should (plist-member bad :commands))))))

;; A decision is a plist of its own, equal to one that says the same; the
;; tool's brief refusal carries the caller's own command string.
(ert-deftest gptel-scope-test-brief-decisions ()
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls, cat]}}\n"
    (let* ((dir (directory-file-name dir))
           (scope (json-serialize (list :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
           (a (gptel-scope-test-decide-command "ls" dir scope))
           (b (gptel-scope-test-decide-command "ls -la | ls" dir scope)))
      (should (eq (plist-get a :allowed) t))
      (should (equal a b))
      (should-not (eq a b))
      (should (equal (plist-get a :directory) dir))
      (should (equal (plist-get a :category) "read_only"))
      ;; A refusal is a plist of its own too, with the model's answer.
      (let* ((session (gptel-scope-module-open scope))
             (call (json-serialize (list :tool "run_bash_command" :command "frob" :directory dir)))
             (no (gptel-scope-module-judge session call)))
        (should (equal (plist-get no :reason) "command_not_allowed"))
        (should (equal (plist-get (gptel-scope-test-parse (plist-get no :response)) :command) "frob"))
        (should (equal no (gptel-scope-module-judge session call)))
        (should-not (eq no (gptel-scope-module-judge session call))))
      ;; Another directory, another plist.
      (make-directory (expand-file-name "sub" dir))
      (let ((other (gptel-scope-test-decide-command "ls" (expand-file-name "sub" dir) scope)))
        (should-not (eq other a))
        (should (equal (plist-get other :directory) (expand-file-name "sub" dir))))
      ;; The tool's brief refusal gives back the very command string it was given,
      ;; and the rest of the refusal.
      (with-temp-buffer
        (setq default-directory (file-name-as-directory dir))
        (let ((gptel-scope-file (expand-file-name "scope.yml" dir)))
          (let* ((command "frob")
                 (no (gptel-scope-check-bash-command command dir nil t)))
            (should-not (plist-get no :allowed))
            (should (eq (plist-get no :command) command))
            (should (equal (plist-get no :directory) dir))
            (should (equal (plist-get no :resource) "frob"))
            (should (equal (plist-get no :reason) "command_not_allowed"))
            (should (string-prefix-p "`frob` is not in any category of the scope" (plist-get no :message)))))))))

(defun gptel-scope-test--plist-keys (plist)
  "Return the keys of PLIST in order."
  (cl-loop for (k) on plist by #'cddr collect k))

(ert-deftest gptel-scope-test-b38-brief-refusal-carries-tool-command-and-message ()
  "B38 through the brief decision run_bash_command asks for: reason, tool,
command and message, in the plist and in the model's answer."
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls]}}\n"
    (with-temp-buffer
      (setq default-directory dir)
      (let* ((d (gptel-scope-check-bash-command "frobnicate --all" dir nil t))
             (r (json-parse-string (gptel-scope--denial-json d) :object-type 'plist)))
        (should-not (plist-get d :allowed))
        (should (equal (plist-get d :reason) "command_not_allowed"))
        (should (equal (plist-get d :tool) "run_bash_command"))
        (should (equal (plist-get d :command) "frobnicate --all"))
        (should (equal (plist-get d :directory) (directory-file-name dir)))
        (should (string-match-p "request_scope_expansion" (plist-get d :message)))
        (should (equal (plist-get r :command) "frobnicate --all"))
        (should (equal (plist-get r :reason) "command_not_allowed"))
        (should (equal (plist-get r :tool) "run_bash_command"))
        (should (equal (plist-get r :message) (plist-get d :message)))))))

(ert-deftest gptel-scope-test-decision-strings ()
  "A decision's strings are text equal to what the engine said, whole when not ASCII."
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls]}}\n"
    (let* ((req (json-serialize (list :command "ls; rm é" :directory (directory-file-name dir)
                                      :sources (vector (list :file (expand-file-name "scope.yml" dir))))))
           (d (gptel-scope-test-decide req)))
      (should (equal (plist-get d :tool) "run_bash_command"))
      (should (string= (plist-get d :reason) "command_not_allowed"))
      (let ((response (plist-get d :response)))
        (should (multibyte-string-p response))
        (should (string-match-p "rm é" (plist-get (json-parse-string response :object-type 'plist)
                                                 :command))))
      (should (equal (json-parse-string (json-serialize (list :r (plist-get d :reason))) :object-type 'plist)
                     '(:r "command_not_allowed"))))))

(ert-deftest gptel-scope-test-module-takes-strings-of-every-size ()
  "Arguments of every kind: empty, ASCII, multibyte, unibyte, large."
  (should (equal (plist-get (gptel-scope-module-truncate "" 10) :output) ""))
  (should (equal (plist-get (gptel-scope-module-truncate "héllo wörld ✓" 100) :output) "héllo wörld ✓"))
  (should (equal (plist-get (gptel-scope-module-truncate (unibyte-string ?a #xff ?b) 100) :output) "a\uFFFDb"))
  (let ((big (concat (make-string 300000 ?é) "\n" (make-string 300000 ?x))))
    (let ((r (gptel-scope-module-truncate big 10)))
      (should (plist-get r :truncated))
      (should (= (plist-get r :total-chars) 600001))
      (should (= (plist-get r :total-bytes) 900001))))
  (should (equal (plist-get (gptel-scope-module-measure "ls | grep é; echo ✓") :commands) 1))
  (should-error (gptel-scope-module-truncate 42 10) :type 'wrong-type-argument)
  (should (equal (gptel-scope-module-truename "/") "/"))
  (should-not (gptel-scope-module-truename "/no/such/directory/here")))

(ert-deftest gptel-scope-test-s09-output-chunks-decoded-and-truncated ()
  "The chunks a process filter keeps, newest first, decode as one text (S09, B33)."
  (let ((r (gptel-scope-module-truncate
            (list (unibyte-string #xa9 ?\n 0 ?z) (unibyte-string ?a #xc3) (unibyte-string #xff ?b ?\n))
            100)))
    ;; \303\251 across two chunks is é; \377 is not UTF-8; NUL is shown as U+2400.
    (should (equal (plist-get r :output) "\uFFFDb\naé\n\u2400z"))
    (should-not (plist-get r :truncated))
    (should (= (plist-get r :total-lines) 3)))
  (should (equal (plist-get (gptel-scope-module-truncate nil 10) :output) ""))
  (should (equal (plist-get (gptel-scope-module-truncate "abc" 10) :output) "abc"))
  (let ((r (gptel-scope-module-truncate (list (make-string 5000 ?x)) 100)))
    (should (plist-get r :truncated))
    (should (string-match-p "'head', 'grep' or 'tail'" (plist-get r :output))))
  (should-error (gptel-scope-module-truncate (list 1) 10) :type 'wrong-type-argument)
  (let ((circular (list "a" "b")))
    (setcdr (cdr circular) circular)
    (should-error (gptel-scope-module-truncate circular 10) :type 'circular-list)))

;; Each decision asks the file system: a directory swapped for a link between
;; two decisions is followed by the second, and so is an edited scope.
(ert-deftest gptel-scope-test-b14-change-between-two-decisions-is-seen ()
  (gptel-scope-test-with-project dir "paths: {read: [\"${project_root}/**\"]}\nbash_tools: {categories: {read_only: [ls, cat]}}\n"
    (let* ((dir (directory-file-name dir))
           (sub (expand-file-name "sub" dir))
           (outside (directory-file-name (file-truename (make-temp-file "gptel-scope-outside-" t))))
           (file (expand-file-name "scope.yml" dir))
           (scope (json-serialize (list :sources (vector (list :file file)) :home dir))))
      (unwind-protect
          (progn
            (make-directory sub)
            (dotimes (_ 3)
              (should (eq (plist-get (gptel-scope-test-decide-command "ls" sub scope) :allowed) t)))
            ;; Every decision asks the file system again.
            (let ((before (plist-get (gptel-scope-module-measure "") :lookups)))
              (gptel-scope-test-decide-command "ls" sub scope)
              (should (> (plist-get (gptel-scope-module-measure "") :lookups) before)))
            (delete-directory sub)
            (make-symbolic-link outside sub)
            (let ((d (gptel-scope-test-decide-command "ls" sub scope)))
              (should (equal (plist-get d :reason) "directory_not_in_scope"))
              (should (equal (plist-get d :resource) outside)))
            ;; The scope edited in place (same length): the next decision uses it.
            (should (eq (plist-get (gptel-scope-test-decide-command "cat x" dir scope) :allowed) t))
            (should-not (plist-get (gptel-scope-test-decide-command "wc x" dir scope) :allowed))
            (with-temp-file file
              (insert (format "paths: {read: [\"%s/**\"]}\nbash_tools: {categories: {read_only: [ls, wc]}}\n" dir)))
            (should (eq (plist-get (gptel-scope-test-decide-command "wc x" dir scope) :allowed) t))
            (should-not (plist-get (gptel-scope-test-decide-command "cat x" dir scope) :allowed)))
        (delete-directory outside t)))))

(provide 'gptel-scope-module-test)
;;; gptel-scope-module-test.el ends here
