;;; gptel-scope-session-test.el --- Whole gptel sessions against a scripted LLM server  -*- lexical-binding: t; -*-

;;; Commentary:

;; What users run: `gptel-send' in a `gptel-mode' chat buffer whose
;; `gptel-tools' are the "scope" category, with gptel's default
;; `gptel-confirm-tool-calls' (auto: the tools' :confirm functions run),
;; through curl, against a local LLM server that speaks the wire format
;; of each of gptel's four backend families (OpenAI, Anthropic, Gemini,
;; Ollama), streamed and not.  The server (test/fake-llm/server.py,
;; Python's standard library only) answers from a script of turns: tool
;; calls to make, several at once where the scenario says so; checks on
;; the tool results gptel sends back, found by tool call id or, where
;; the format has none, by position; then a text answer.  It logs every
;; check, and the tests assert them all, with the state gptel's request
;; ends in, the reply in the chat buffer and the files left behind.
;;
;; Each test is one scenario through one backend in one mode, named
;; gptel-scope-test-session-BACKEND-MODE-SCENARIO (MODE: stream or
;; nostream).  The scenarios: an allowed command with non-ASCII output
;; (which on Emacs 30 catches tool results made of raw UTF-8 bytes);
;; parallel calls of four tools in one response; a chained `ls; rm -rf x'
;; refused; read_file inside and outside the project; a refusal lifted
;; from the real transient menu by Allow once and by Add to scope, the
;; retry, and the identical call after it; tool calls with bad arguments,
;; whose errors must reach the model as results; `args' null and false,
;; which mean no arguments.
;;
;; A turn that does not end fails its test with what gptel and the server
;; saw: an error signaled inside gptel's state machine or a process filter
;; or sentinel (interactively the request then hangs; in batch Emacs it is
;; fatal) at once, else after
;; `gptel-scope-test-session-idle-timeout' seconds without progress or
;; `gptel-scope-test-session-timeout' seconds in all.
;;
;; Without gptel on the load path the tests are skipped; with the
;; environment variable GPTEL_SCOPE_REQUIRE_GPTEL=1 they fail instead, as
;; they do when curl or python3 is missing.  GPTEL_SCOPE_DEPS, a
;; colon-separated list of directories, is added to `load-path' when gptel
;; was not loaded yet.
;;
;; Load order: the tests run in the order gptel and gptel-scope were
;; loaded in this Emacs, and `gptel-scope-test-session-other-load-order'
;; runs them all again in a child Emacs that loads the two the other way
;; round.  test/fake-llm/run-session-tests runs the file in both orders
;; from the shell and prints a table.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-expand)
(require 'json)
(require 'subr-x)

(let ((deps (getenv "GPTEL_SCOPE_DEPS")))
  (when (and deps (not (featurep 'gptel)))
    (dolist (dir (reverse (split-string deps ":" t)))
      (add-to-list 'load-path (expand-file-name dir)))
    (require 'gptel nil t)))

(declare-function gptel-make-openai "ext:gptel-openai")
(declare-function gptel-make-anthropic "ext:gptel-anthropic")
(declare-function gptel-make-gemini "ext:gptel-gemini")
(declare-function gptel-make-ollama "ext:gptel-ollama")
(declare-function gptel-send "ext:gptel")
(declare-function gptel-mode "ext:gptel")
(declare-function gptel-abort "ext:gptel-request")
(declare-function gptel-get-tool "ext:gptel-request")
(declare-function gptel-tool-name "ext:gptel-request")
(declare-function gptel-tool-include "ext:gptel-request")
(declare-function gptel-fsm-state "ext:gptel-request")
(declare-function gptel-fsm-info "ext:gptel-request")
(declare-function gptel--fsm-transition "ext:gptel-request")
(defvar gptel-backend)
(defvar gptel-model)
(defvar gptel-tools)
(defvar gptel-use-tools)
(defvar gptel-stream)
(defvar gptel-use-curl)
(defvar gptel-confirm-tool-calls)
(defvar gptel--request-alist)
(defvar gptel--known-backends)
(defvar gptel-scope--allow-once)

;;;; Settings

(defconst gptel-scope-test-session-file (or load-file-name buffer-file-name)
  "This file.")

(defconst gptel-scope-test-session-server
  (expand-file-name "test/fake-llm/server.py" gptel-scope-test-root)
  "The scripted LLM server.")

(defvar gptel-scope-test-session-timeout
  (string-to-number (or (getenv "GPTEL_SCOPE_TEST_SESSION_TIMEOUT") "30"))
  "Seconds a whole turn may take before its test fails.")

(defvar gptel-scope-test-session-idle-timeout 10
  "Seconds a turn may go on without progress before its test fails.
Progress is a change of gptel's state, a tool result or a request
the server answered.")

(defvar gptel-scope-test-session-require-gptel
  (or (bound-and-true-p gptel-scope-test-require-gptel)
      (not (member (getenv "GPTEL_SCOPE_REQUIRE_GPTEL") '(nil "" "0"))))
  "Non-nil means a missing gptel, curl or python3 fails the tests.
Else they are skipped.  Set from GPTEL_SCOPE_REQUIRE_GPTEL=1.")

(eval-and-compile
  (defconst gptel-scope-test-session-backends
    '((openai . "/v1/chat/completions")
      (anthropic . "/v1/messages")
      (gemini . "/v1beta/models")
      (ollama . "/api/chat"))
    "The backend families and their endpoints.")

  (defconst gptel-scope-test-session-scenarios
    '(nonascii parallel chained read-file allow-once add-to-scope bad-args absent-args)
    "The scenarios; each has a function gptel-scope-test-session--scenario-NAME."))

(defconst gptel-scope-test-session-scope
  "# The project of a session test.
paths:
  read: [\"${project_root}/**\"]
bash_tools:
  categories:
    read_only: [ls, echo, cat]
"
  "The scope of the session tests: reading commands, nothing dangerous.")

;;;; Preconditions

(defvar gptel-scope-test-session--python 'unknown
  "The python3 executable, found once, or nil.")

(defun gptel-scope-test-session--python ()
  "Return the python3 executable, or nil.
That is GPTEL_SCOPE_TEST_PYTHON, else python3 on the path: the program
it runs, so that a wrapper (pyenv's) is not started for each test."
  (when (eq gptel-scope-test-session--python 'unknown)
    (setq gptel-scope-test-session--python
          (let ((python (or (getenv "GPTEL_SCOPE_TEST_PYTHON") (executable-find "python3"))))
            (and python
                 (or (car (ignore-errors
                            (process-lines python "-c" "import sys; print(sys.executable)")))
                     python)))))
  gptel-scope-test-session--python)

(defun gptel-scope-test-session--missing ()
  "Return what a session test needs and does not have, a string, or nil."
  (cond ((not (featurep 'gptel))
         "gptel is not on the load path (no library `gptel'; set GPTEL_SCOPE_DEPS or use -L)")
        ((not (fboundp 'gptel-make-fsm)) "this gptel has no request state machine (gptel 0.9.8 or later)")
        ((not (executable-find "curl")) "curl is not installed")
        ((not (gptel-scope-test-session--python)) "python3 is not installed")))

(defun gptel-scope-test-session--require ()
  "Skip the test when something it needs is missing.
Under GPTEL_SCOPE_REQUIRE_GPTEL fail it instead."
  (let ((missing (gptel-scope-test-session--missing)))
    (when missing
      (if gptel-scope-test-session-require-gptel
          (ert-fail (list (concat missing " and GPTEL_SCOPE_REQUIRE_GPTEL is set")))
        (ert-skip missing)))))

;;;; JSON

(defun gptel-scope-test-session--json (object)
  "Return OBJECT as JSON text (a multibyte string on every Emacs)."
  (let ((s (json-serialize object :null-object :null :false-object :false)))
    (if (multibyte-string-p s) s (decode-coding-string s 'utf-8 t))))

(defun gptel-scope-test-session--read-json-file (file)
  "Return the JSON in FILE, UTF-8, as a plist; false and null as nil."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8))
      (insert-file-contents file))
    (json-parse-buffer :object-type 'plist :array-type 'list
                       :false-object nil :null-object nil)))

;;;; The server

(defun gptel-scope-test-session--start-server (script log)
  "Start the server answering from the SCRIPT file, logging to LOG.
Return (PROCESS . PORT)."
  (let* ((buffer (generate-new-buffer " *gptel-scope-fake-llm*"))
         (process (make-process
                   :name "gptel-scope-fake-llm" :buffer buffer :noquery t
                   :connection-type 'pipe
                   :coding 'utf-8
                   :command (list (gptel-scope-test-session--python) "-S" gptel-scope-test-session-server
                                  "--script" script "--log" log
                                  "--timeout" (number-to-string (+ 30 gptel-scope-test-session-timeout))
                                  "--exit-on-eof")))
         (deadline (+ (float-time) 15))
         port)
    (while (and (not port) (< (float-time) deadline) (process-live-p process))
      (accept-process-output process 0.05)
      (with-current-buffer buffer
        (goto-char (point-min))
        (when (re-search-forward "^PORT \\([0-9]+\\)$" nil t)
          (setq port (string-to-number (match-string 1))))))
    (unless port
      (let ((output (with-current-buffer buffer (buffer-string))))
        (gptel-scope-test-session--stop-server process)
        (error "The LLM server did not start: %s" output)))
    (cons process port)))

(defun gptel-scope-test-session--stop-server (process)
  "Kill the server PROCESS and its buffer."
  (when (process-live-p process)
    (delete-process process))
  (when (buffer-live-p (process-buffer process))
    (kill-buffer (process-buffer process))))

;;;; Backends

(defun gptel-scope-test-session--backend (family port stream)
  "Return a gptel backend of FAMILY for the server on PORT; STREAM or not."
  (let ((name (format "gptel-scope-test-%s" family))
        (host (format "127.0.0.1:%d" port))
        (endpoint (alist-get family gptel-scope-test-session-backends)))
    (require (intern (format "gptel-%s" family)))
    (pcase family
      ('openai (gptel-make-openai name :host host :protocol "http" :endpoint endpoint
                                  :stream stream :key "test-key" :models '(test-model)))
      ('anthropic (gptel-make-anthropic name :host host :protocol "http" :endpoint endpoint
                                        :stream stream :key "test-key" :models '(test-model)))
      ('gemini (gptel-make-gemini name :host host :protocol "http" :endpoint endpoint
                                  :stream stream :key "test-key" :models '(test-model)))
      ('ollama (gptel-make-ollama name :host host :protocol "http" :endpoint endpoint
                                  :stream stream :models '(test-model))))))

;;;; Scenarios
;; Each returns a plist: :turns (the script), :keys (typed into the
;; expansion menus, in order), :menu (regexps the first menu must show),
;; :reply (the final answer, which the chat buffer must show), :shown
;; (more text it must show), :setup and :cleanup (functions of no
;; argument) and :after (a function of the project directory, with
;; assertions).

(defun gptel-scope-test-session--call (id name &rest args)
  "Return the scripted tool call ID of NAME with ARGS, a plist."
  (list :id id :name name :args (or args (make-hash-table))))

(defun gptel-scope-test-session--scenario-nonascii (_dir)
  "Return the scenario: an allowed command's non-ASCII output reaches the model."
  (list :turns
        (vector
         (list :calls (vector (gptel-scope-test-session--call
                               "n1" "run_bash_command" :command "echo 'héllo ✓'; ls -1" :directory "d")))
         (list :checks (vector (list :call "n1"
                                     :json (list :success t :exit_code 0 :truncated :false
                                                 :output "héllo ✓\ncafé.txt\n")))
               :text "Fertig ✓: héllo, café."))
        :reply "Fertig ✓: héllo, café."
        ;; The chat buffer shows the result (the tools are :include t) as text.
        :shown '("\"output\":\"héllo ✓\\ncafé.txt\\n\"")))

(defun gptel-scope-test-session--scenario-parallel (_dir)
  "Return the scenario: four tools in one response, results matched by id."
  (list :turns
        (vector
         (list :text "Four things at once."
               :calls (vector
                       (gptel-scope-test-session--call "p1" "run_bash_command" :command "echo one" :directory "d")
                       (gptel-scope-test-session--call "p2" "run_command" :command "cat" :args ["café.txt"]
                                                       :directory "d")
                       (gptel-scope-test-session--call "p3" "list_allowed_commands")
                       (gptel-scope-test-session--call "p4" "read_file" :path "d/café.txt")))
         (list :checks (vector
                        (list :call "p1" :json (list :success t :exit_code 0 :output "one\n"))
                        (list :call "p2" :json (list :success t :exit_code 0 :output "crème brûlée\n"))
                        (list :call "p3" :contains "read_only (needs read scope): ls, echo, cat")
                        (list :call "p4" :json (list :success t :content "crème brûlée"
                                                     :path "d/café.txt" :total_lines 1)))
               :text "All four answered."))
        :reply "All four answered."))

(defun gptel-scope-test-session--scenario-chained (_dir)
  "Return the scenario: `ls; rm -rf x' is judged as two commands and refused."
  (list :turns
        (vector
         (list :calls (vector (gptel-scope-test-session--call
                               "x1" "run_bash_command" :command "ls; rm -rf x" :directory ".")))
         (list :checks (vector (list :call "x1"
                                     :json (list :success :false :allowed :false
                                                 :reason "command_not_allowed" :resource "rm"
                                                 :command "ls; rm -rf x")
                                     :json_contains (list :message "request_scope_expansion")))
               :text "rm is not allowed; x stays."))
        :reply "rm is not allowed; x stays."
        :after (lambda (dir)
                 (should (equal (gptel-scope-test-file-string (expand-file-name "x/keep" dir)) "kept\n")))))

(defun gptel-scope-test-session--scenario-read-file (dir)
  "Return the scenario: read_file in the project DIR, and outside, refused."
  (let ((outside (expand-file-name "../outside-secret.txt" dir)))
    (list :turns
          (vector
           (list :calls (vector (gptel-scope-test-session--call "r1" "read_file" :path "d/café.txt")))
           (list :checks (vector (list :call "r1" :json (list :success t :content "crème brûlée"
                                                              :path "d/café.txt")))
                 :calls (vector (gptel-scope-test-session--call "r2" "read_file" :path outside)))
           (list :checks (vector (list :call "r2" :json (list :success :false :reason "boundary_violation"
                                                              :path outside)
                                       :not_contains "secret ✗"))
                 :text "Read what I may."))
          :reply "Read what I may."
          :setup (lambda ()
                   (with-temp-file outside (insert "secret ✗\n")))
          :cleanup (lambda () (delete-file outside)))))

(defun gptel-scope-test-session--expansion-turns (allowed-again)
  "Return the script of a refusal lifted from the menu, then the call twice.
With ALLOWED-AGAIN the second identical call is allowed (the scope
was widened), else refused (the grant was used up)."
  (let ((head (list :command "head -n 1 café.txt" :directory "d"))
        (refused (list :success :false :reason "command_not_allowed" :resource "head"))
        (ran (list :success t :exit_code 0 :output "crème brûlée\n")))
    (vector
     (list :calls (vector (apply #'gptel-scope-test-session--call "a1" "run_bash_command" head)))
     (list :checks (vector (list :call "a1" :json refused))
           :calls (vector (gptel-scope-test-session--call
                           "a2" "request_scope_expansion" :tool_name "run_bash_command"
                           :resource "head" :reason "Read the first line of café.txt")))
     (list :checks nil             ; the answer's checks are the scenario's
           :calls (vector (apply #'gptel-scope-test-session--call "a3" "run_bash_command" head)))
     (list :checks (vector (list :call "a3" :json ran))
           :calls (vector (apply #'gptel-scope-test-session--call "a4" "run_bash_command" head)))
     (list :checks (vector (list :call "a4" :json (if allowed-again ran refused)))
           :text "Done with head."))))

(defconst gptel-scope-test-session--menu-text
  '("tool: +run_bash_command" "resource: +head" "reason: +Read the first line of café.txt"
    "refused: +command_not_allowed" "o Allow once" "a Add to scope")
  "What the expansion menu of the expansion scenarios must show.")

(defun gptel-scope-test-session--scenario-allow-once (dir)
  "Return the scenario: a refusal, Allow once from the menu, the call twice.
The retry runs, the same call after it is refused.  DIR is the project."
  (let ((turns (gptel-scope-test-session--expansion-turns nil))
        (scope (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))))
    (plist-put (aref turns 2) :checks
               (vector (list :call "a2" :json (list :success t :allowed_once t :tool "run_bash_command"
                                                    :resource "head"))))
    (list :turns turns :keys '("o") :menu gptel-scope-test-session--menu-text
          :reply "Done with head."
          :after (lambda (dir)
                   (should (equal (gptel-scope-test-file-string (expand-file-name "scope.yml" dir))
                                  scope))))))

(defun gptel-scope-test-session--scenario-add-to-scope (dir)
  "Return the scenario: a refusal, Add to scope from the menu, the call twice.
The retry runs, and so does the same call after it.  DIR is the project."
  (let ((turns (gptel-scope-test-session--expansion-turns t))
        (file (expand-file-name "scope.yml" dir)))
    (plist-put (aref turns 2) :checks
               (vector (list :call "a2" :json (list :success t :patterns_added ["head"]
                                                    :already_present [] :file file))))
    (list :turns turns :keys '("a") :menu gptel-scope-test-session--menu-text
          :reply "Done with head."
          :after (lambda (dir)
                   (should (string-match-p "^    read_only: \\[ls, echo, cat, head\\]$"
                                           (gptel-scope-test-file-string
                                            (expand-file-name "scope.yml" dir))))))))

(defun gptel-scope-test-session--scenario-bad-args (_dir)
  "Return the scenario: bad arguments, errors that must reach the model."
  (list :turns
        (vector
         (list :calls (vector
                       ;; `command' is required and missing.
                       (gptel-scope-test-session--call "b1" "run_bash_command" :directory "d")
                       ;; `args' is an array of strings, not a number.
                       (gptel-scope-test-session--call "b2" "run_command" :command "cat" :args 5
                                                       :directory "d")))
         (list :checks (vector (list :call "b1" :json (list :success :false :reason "invalid_argument"
                                                            :tool "run_bash_command")
                                     :json_contains (list :message "`command'"))
                               (list :call "b2" :json (list :success :false :reason "invalid_argument"
                                                            :tool "run_command")))
               :text "The errors were reported."))
        :reply "The errors were reported."))

(defun gptel-scope-test-session--scenario-absent-args (_dir)
  "Return the scenario: `args' null or false, as models send them, is no arguments."
  (list :turns
        (vector
         (list :calls (vector
                       (gptel-scope-test-session--call "z1" "run_command" :command "ls" :args :null
                                                       :directory "d")
                       (gptel-scope-test-session--call "z2" "run_command" :command "ls" :args :false
                                                       :directory "d")))
         (list :checks (vector (list :call "z1" :json (list :success t :exit_code 0 :output "café.txt\n"))
                               (list :call "z2" :json (list :success t :exit_code 0 :output "café.txt\n")))
               :text "Listed twice."))
        :reply "Listed twice."))

;;;; Running a session

(defvar gptel-scope-test-session--fsm-errors nil
  "Errors signaled inside gptel's state machine during the current session.")

(defconst gptel-scope-test-session--gptel-known-errors
  '((gemini t (error "No match data, because no search succeeded"))
    (gemini t (wrong-type-argument integer-or-marker-p nil)))
  "Errors of gptel in a process filter that do not end the turn.
Each is (FAMILY STREAM ERROR).  gptel 0.9.9.5's Gemini stream parser
\(`gptel-curl--parse-stream' of `gptel-gemini') moves back a character
when no \"{\" follows point; at the start of the buffer (curl wrote
only the headers so far) that signals, and its handler then reads the
match data of the search that failed, which signals again.
Interactively Emacs shows the error, pauses two seconds and reads on,
and the turn goes on; in batch Emacs it is fatal.  Such an error is
counted, not failed.")

(defvar gptel-scope-test-session--ignored nil
  "The errors of `gptel-scope-test-session--gptel-known-errors' seen.")

(defun gptel-scope-test-session--watch-fsm (transition machine &rest args)
  "Call TRANSITION on MACHINE with ARGS, recording any error it signals.
Around `gptel--fsm-transition': an error there is caught by the process
sentinel or filter that ran it, and the request then hangs."
  (condition-case err
      (apply transition machine args)
    (error
     (cl-pushnew (list (gptel-fsm-state machine) err) gptel-scope-test-session--fsm-errors
                 :test #'equal)
     (signal (car err) (cdr err)))))

(defun gptel-scope-test-session--find-fsm (buffer)
  "Return the state machine of the request from BUFFER in flight, or nil."
  (cl-loop for (_process fsm . _) in gptel--request-alist
           when (eq (plist-get (gptel-fsm-info fsm) :buffer) buffer)
           return fsm))

(defun gptel-scope-test-session--results (fsm)
  "Return how many tool results FSM has collected so far in this round."
  (cl-count-if (lambda (c) (plist-get c :result)) (plist-get (gptel-fsm-info fsm) :tool-use)))

(defun gptel-scope-test-session--log-failures (log)
  "Return what went wrong according to the server's LOG, a list of strings."
  (append
   (plist-get log :errors)
   (cl-loop for c in (plist-get log :checks)
            unless (plist-get c :pass)
            collect (format "turn %s, %s: %s; got %S" (plist-get c :turn) (plist-get c :call)
                            (plist-get c :check) (plist-get c :got)))
   (unless (plist-get log :finished)
     (list (format "the server answered %s of the script's %s turns"
                   (plist-get log :served) (plist-get log :turns))))
   (unless (= (length (plist-get log :checks)) (plist-get log :expected_checks))
     (list (format "%d of the %d checks ran" (length (plist-get log :checks))
                   (plist-get log :expected_checks))))))

(defun gptel-scope-test-session--report (what fsm log buffer)
  "Return a failure report: WHAT happened, FSM's state, the server LOG, BUFFER."
  (let ((info (and fsm (gptel-fsm-info fsm))))
    (format "%s\n  gptel state: %s (history %s)\n  status: %S\n  error: %S\n  errors in gptel's state machine: %S\n  known gptel errors: %S\n  server: %s\n  chat buffer:\n%s"
            what
            (and fsm (gptel-fsm-state fsm))
            (reverse (plist-get info :history))
            (plist-get info :status)
            (plist-get info :error)
            gptel-scope-test-session--fsm-errors
            gptel-scope-test-session--ignored
            (if log (string-join (or (gptel-scope-test-session--log-failures log) '("no failure")) "\n    ")
              "no log")
            (if (buffer-live-p buffer)
                (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max)))
              "(killed)"))))

(defun gptel-scope-test-session--drive (buffer fsm keys log-file family stream)
  "Wait for the turn of FSM, sent from BUFFER, to end; answer menus with KEYS.
Return (OUTCOME KEYS-LEFT MENU-TEXT) where OUTCOME is nil when the turn
ended, else a string saying why it did not.  LOG-FILE is the server's
log, read for progress.  FAMILY and STREAM say which of gptel's own
known errors to tolerate."
  (let* ((start (float-time))
         (last-progress start)
         (signature nil)
         (menu nil)
         outcome)
    (while (and (not outcome) (not (memq (gptel-fsm-state fsm) '(DONE ERRS ABRT))))
      ;; An error in a process filter, sentinel or timer: interactively Emacs
      ;; shows it and the request hangs; in batch Emacs it kills Emacs.
      ;; With `debug-on-error' it comes through to here instead.
      (condition-case err
          (let ((debug-on-error t))
            (accept-process-output nil 0.02))
        (error (if (member (list family stream err) gptel-scope-test-session--gptel-known-errors)
                   (push err gptel-scope-test-session--ignored)
                 (push (list 'process-filter-sentinel-or-timer err) gptel-scope-test-session--fsm-errors))))
      (let ((now (float-time))
            (sig (list (gptel-fsm-state fsm) (gptel-scope-test-session--results fsm)
                       (file-attribute-modification-time (file-attributes log-file)))))
        (unless (equal sig signature)
          (setq signature sig last-progress now))
        (cond
         (gptel-scope-test-session--fsm-errors
          (setq outcome "an error was signaled in gptel's state machine or a process filter (interactively the request hangs, in batch Emacs it kills Emacs)"))
         ((gptel-scope--expansion-menu-active-p)
          (setq last-progress now)
          (if (null keys)
              (setq outcome "the expansion menu opened and the scenario has no key for it")
            (unless menu (setq menu (gptel-scope-test-menu-text)))
            (with-current-buffer buffer
              (gptel-scope-test-press (pop keys)))))
         ((> (- now start) gptel-scope-test-session-timeout)
          (setq outcome (format "the turn did not end in %s s" gptel-scope-test-session-timeout)))
         ((> (- now last-progress) gptel-scope-test-session-idle-timeout)
          (setq outcome (format "the turn made no progress for %s s"
                                gptel-scope-test-session-idle-timeout))))))
    (gptel-scope-test-settle)
    (list outcome keys menu)))

(defun gptel-scope-test-session--run (family stream scenario)
  "Run SCENARIO through a gptel backend of FAMILY, streamed when STREAM."
  (gptel-scope-test-session--require)
  (should (eq (default-value 'gptel-confirm-tool-calls) 'auto))
  (gptel-scope-test-with-project dir gptel-scope-test-session-scope
    (when (fboundp 'gptel-scope-trust)
      (funcall 'gptel-scope-trust (expand-file-name "scope.yml" dir)))
    (make-directory (expand-file-name "d" dir))
    (with-temp-file (expand-file-name "d/café.txt" dir) (insert "crème brûlée\n"))
    (make-directory (expand-file-name "x" dir))
    (with-temp-file (expand-file-name "x/keep" dir) (insert "kept\n"))
    (let* ((spec (funcall (intern (format "gptel-scope-test-session--scenario-%s" scenario)) dir))
           (script (make-temp-file "gptel-scope-script-" nil ".json"))
           (log-file (make-temp-file "gptel-scope-log-" nil ".json"))
           (server nil) (buffer nil) (fsm nil) (log nil) (ended nil))
      (unwind-protect
          (gptel-scope-test-with-expansion
            (when (plist-get spec :setup) (funcall (plist-get spec :setup)))
            (let ((coding-system-for-write 'utf-8))
              (with-temp-file script
                (insert (gptel-scope-test-session--json (list :turns (plist-get spec :turns))))))
            (setq server (gptel-scope-test-session--start-server script log-file))
            (setq buffer (generate-new-buffer (format "*gptel-scope-session %s*" scenario)))
            (advice-add 'gptel--fsm-transition :around #'gptel-scope-test-session--watch-fsm)
            (let ((gptel-use-curl t)
                  (gptel-stream t)
                  (gptel-scope-test-session--fsm-errors nil)
                  (gptel-scope-test-session--ignored nil)
                  (inhibit-message t))
              (with-current-buffer buffer
                (text-mode)
                (setq default-directory (file-name-as-directory dir))
                (setq-local gptel-backend (gptel-scope-test-session--backend family (cdr server) stream))
                (setq-local gptel-model 'test-model)
                (setq-local gptel-use-tools t)
                (setq-local gptel-tools (gptel-get-tool "scope"))
                (gptel-mode 1)
                (insert "### Please look around the project.")
                (gptel-send)
                (setq fsm (gptel-scope-test-session--find-fsm buffer)))
              (unless fsm
                (ert-fail (list "gptel-send started no request" (with-current-buffer buffer (buffer-string)))))
              (pcase-let ((`(,outcome ,keys-left ,menu)
                           (gptel-scope-test-session--drive buffer fsm (plist-get spec :keys) log-file
                                                            family stream)))
                (setq ended (not outcome))
                (when gptel-scope-test-session--ignored
                  (let ((inhibit-message nil))
                    (message "gptel-scope-test-session: %s known gptel error(s) in a process filter: %S"
                             (length gptel-scope-test-session--ignored)
                             (car gptel-scope-test-session--ignored))))
                (setq log (gptel-scope-test-session--read-json-file log-file))
                (when outcome
                  (ert-fail (list (gptel-scope-test-session--report outcome fsm log buffer))))
                (unless (eq (gptel-fsm-state fsm) 'DONE)
                  (ert-fail (list (gptel-scope-test-session--report "the turn ended in an error" fsm log buffer))))
                ;; Every check the server ran passed, and all of them ran.
                (should (equal (gptel-scope-test-session--log-failures log) nil))
                ;; Every request went to this backend's endpoint, in this mode, with the scope's tools.
                (let ((tools (sort (mapcar #'gptel-tool-name (gptel-get-tool "scope")) #'string<)))
                  (dolist (r (plist-get log :requests))
                    (should (equal (list (plist-get r :format) (plist-get r :stream) (plist-get r :tools))
                                   (list (symbol-name family) (and stream t) tools)))))
                (should (= (length (plist-get log :requests)) (length (plist-get spec :turns))))
                ;; The menus were answered, and showed what the model asked.
                (should (equal keys-left nil))
                (dolist (re (plist-get spec :menu))
                  (should (string-match-p re (or menu ""))))
                ;; The reply is in the chat buffer as the model wrote it; the turn
                ;; ended (gptel-scope-end-of-turn cleared the grants).
                (with-current-buffer buffer
                  (should (string-search (plist-get spec :reply) (buffer-string)))
                  (when (gptel-tool-include (gptel-get-tool "run_bash_command"))
                    (dolist (text (plist-get spec :shown))
                      (should (string-search text (buffer-string)))))
                  (should (equal gptel-scope--allow-once nil)))
                (when (plist-get spec :after)
                  (funcall (plist-get spec :after) dir)))))
        (advice-remove 'gptel--fsm-transition #'gptel-scope-test-session--watch-fsm)
        (when (and (buffer-live-p buffer) (not ended))
          (ignore-errors (let ((inhibit-message t)) (gptel-abort buffer))))
        (when (buffer-live-p buffer)
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer))
        (when server (gptel-scope-test-session--stop-server (car server)))
        ;; The test backend points at a server now gone: no later code may pick it.
        (setq gptel--known-backends
              (cl-remove-if (lambda (b) (string-prefix-p "gptel-scope-test-" (car b)))
                            gptel--known-backends))
        (when (plist-get spec :cleanup) (ignore-errors (funcall (plist-get spec :cleanup))))
        (delete-file script)
        (delete-file log-file)))))

;;;; The tests

(defmacro gptel-scope-test-session--define-tests ()
  "Define a test for each backend family, mode and scenario."
  `(progn
     ,@(cl-loop
        for (family . _) in gptel-scope-test-session-backends
        append
        (cl-loop
         for stream in '(t nil)
         append
         (cl-loop
          for scenario in gptel-scope-test-session-scenarios
          collect
          `(ert-deftest ,(intern (format "gptel-scope-test-session-%s-%s-%s"
                                         family (if stream "stream" "nostream") scenario))
               ()
             ,(format "The %s scenario through gptel's %s backend, %s."
                      scenario family (if stream "streamed" "not streamed"))
             :tags '(gptel-scope-session)
             (gptel-scope-test-session--run ',family ,stream ',scenario)))))))

(gptel-scope-test-session--define-tests)

;;;; The other load order

(defun gptel-scope-test-session--loaded-first ()
  "Return the feature loaded first of gptel and gptel-scope, or nil."
  (let ((order (mapcar (lambda (entry) (cdr (assq 'provide (cdr entry)))) (reverse load-history))))
    (cl-loop for feature in order
             when (memq feature '(gptel gptel-scope)) return feature)))

(defun gptel-scope-test-session--child-summary ()
  "Return the summary of an ERT batch run in the current buffer.
That is its last line saying how many tests ran, each failed test
and the first lines of the first failure's condition; else the end
of the output."
  (goto-char (point-min))
  (let ((ran (and (re-search-forward "^Ran [0-9]+ tests.*$" nil t) (match-string 0)))
        (failed nil)
        (condition nil))
    (goto-char (point-min))
    (while (re-search-forward "^ +FAILED +[0-9]+/[0-9]+ +\\([^ \n]+\\)" nil t)
      (push (match-string 1) failed))
    (goto-char (point-min))
    (when (re-search-forward "^Test [^ \n]+ condition:\n" nil t)
      (let ((start (match-beginning 0)))
        (setq condition (buffer-substring-no-properties
                         start (min (point-max) (+ start 1500)
                                    (or (save-excursion (re-search-forward "^ +FAILED" nil t))
                                        (point-max)))))))
    (if ran
        (list :ran ran :failed (nreverse failed) :first-failure condition)
      (list :output (buffer-substring-no-properties (max (point-min) (- (point-max) 3000))
                                                    (point-max))))))

(ert-deftest gptel-scope-test-session-other-load-order ()
  "The session tests pass when gptel and gptel-scope load the other way round.
This Emacs loaded them in one order; a child Emacs loads them in the
other, then runs every session test (tag `gptel-scope-session')."
  (skip-unless (not (getenv "GPTEL_SCOPE_TEST_SESSION_CHILD")))
  (gptel-scope-test-session--require)
  (let* ((first (gptel-scope-test-session--loaded-first))
         (order (if (eq first 'gptel) '(gptel-scope gptel) '(gptel gptel-scope)))
         (forms `((setq load-path ',load-path)
                  ,@(mapcar (lambda (f) `(require ',f)) order)
                  (load ,(expand-file-name "test/test-helper.el" gptel-scope-test-root) nil t)
                  (load ,gptel-scope-test-session-file nil t)
                  (ert-run-tests-batch-and-exit '(tag gptel-scope-session))))
         (process-environment (cons "GPTEL_SCOPE_TEST_SESSION_CHILD=1" process-environment)))
    (should first)
    (with-temp-buffer
      (let ((code (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                                "-Q" "--batch" "--eval" (prin1-to-string (cons 'progn forms)))))
        (unless (and (eql code 0)
                     (progn (goto-char (point-min))
                            (re-search-forward "^Ran [0-9]+ tests, [0-9]+ results as expected, 0 unexpected"
                                               nil t)))
          (ert-fail (list (format "In a child Emacs loading %s, then %s (exit code %s)"
                                  (car order) (cadr order) code)
                          (gptel-scope-test-session--child-summary))))))))

(provide 'gptel-scope-session-test)
;;; gptel-scope-session-test.el ends here
