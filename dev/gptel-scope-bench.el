;;; gptel-scope-bench.el --- Benchmarks of gptel-scope through Emacs  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Keywords: tools, processes
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `make bench' runs `gptel-scope-bench-run' in batch Emacs.  Every figure
;; is measured from Lisp through the module, side by side with its
;; reference, and printed as a row (tab-separated: figure, ours,
;; reference, ratio, target, pass) that the Makefile gathers with the
;; rows of the Rust benchmarks into one table:
;;
;; - a decision on each command of the real corpus against the bare
;;   brush-parser parse of the same command, and against spawning
;;   `bash -c true' with `make-process';
;; - a cached scope document: bytes the process reads while deciding
;;   (from /proc/self/io), an edited document picked up at once, and
;;   loading a scope of 1,000 path patterns;
;; - truncating 100 MB of output in the module;
;; - run_bash_command on `true' against a bare `make-process', both
;;   without the sandbox, and the same bare spawn through the output
;;   redirect; the sandbox's cost per command;
;; - 300 MB of output through run_bash_command against the command
;;   alone (both without the sandbox; in it as an info row), with how
;;   much Emacs grows and how late a 10 ms timer fires;
;; - what redaction adds: end to end, and its own work alone;
;; - `yes' for 10 seconds through run_bash_command: how much the Emacs
;;   process grows.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'gptel-scope)
(require 'gptel-scope-tools)
(require 'gptel-scope-env)
(require 'gptel-scope-cli)

(declare-function gptel-scope-module-measure "gptel-scope-module" (command))
(declare-function gptel-scope-module-judge "gptel-scope-module" (session call))
(declare-function gptel-scope-module-truncate "gptel-scope-module" (chunks max-chars))
(declare-function gptel-scope-module-capture-new "gptel-scope-module" (cap-bytes))
(declare-function gptel-scope-module-capture-push "gptel-scope-module" (capture bytes))
(declare-function gptel-scope-module-capture-finish "gptel-scope-module"
                  (capture max-chars redactor wait-ms))

(defvar gptel-scope-bench-passes 9
  "Passes over the corpus; the median pass is reported.")

(defvar gptel-scope-bench-rounds 31
  "Rounds of the decision figure: a pass of the parse, then one of the decision.")

(defvar gptel-scope-bench-spawns 31
  "Processes started for each process figure; the median is reported.")

(defvar gptel-scope-bench-flood-seconds 10
  "How long `yes' runs in the flood figure.")

(defvar gptel-scope-bench-root
  (file-name-directory (directory-file-name gptel-scope--directory))
  "The repository root (the parent of lisp/ and dev/).")

(defvar gptel-scope-bench-compiled nil
  "Non-nil in the Emacs that runs the figures on byte-compiled code.")

(defun gptel-scope-bench--corpus ()
  "Return the commands of the real corpus, a list of strings."
  (let ((file (expand-file-name "tests/corpus/real-commands.jsonl" gptel-scope-bench-root)))
    (with-temp-buffer
      (insert-file-contents file)
      (let (out)
        (dolist (line (split-string (buffer-string) "\n" t))
          (push (gethash "command" (json-parse-string line)) out))
        (nreverse out)))))

(defun gptel-scope-bench--median (values)
  "Return the median of the numbers VALUES."
  (let ((v (sort (copy-sequence values) #'<)))
    (nth (/ (length v) 2) v)))

(defun gptel-scope-bench--row (figure ours reference ratio target pass)
  "Print one row: FIGURE, OURS, REFERENCE, RATIO (a number or nil), TARGET, PASS.
PASS is t, nil, or `info' for a figure with no target."
  (princ (format "row\t%s\t%s\t%s\t%s\t%s\t%s\n" figure ours reference
                 (if ratio (format "%.3f" ratio) "-") target
                 (pcase pass ('info "-") ('nil "MISS") (_ "pass")))))

(defun gptel-scope-bench--write (file text)
  "Write TEXT to FILE; a scope.yml is approved as the user's own."
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region text nil file nil 'silent))
  (when (equal (file-name-nondirectory file) "scope.yml")
    (gptel-scope-trust file)))

(defun gptel-scope-bench--scope-text (dir)
  "Return the scope document of the benchmarks for the project DIR."
  (format "paths: {read: [\"%s/**\"], write: [\"%s/out/**\"], deny: [\"**/.env\"]}
bash_tools: {categories: {read_only: [ls, cat, grep, find, head, tail, wc, git, sed, awk, yes], safe_write: [mkdir, touch, echo]}}
" dir dir))

(defun gptel-scope-bench--request (dir command)
  "Return the JSON request deciding COMMAND in DIR under DIR's scope.yml."
  (json-serialize (list :command command :directory dir :home dir
                        :tool "run_bash_command"
                        :sources (vector (list :file (expand-file-name "scope.yml" dir))))))

(defun gptel-scope-bench--pass (items fn)
  "Return the seconds of one call of FN on each of ITEMS."
  (let ((start (float-time)))
    (dolist (i items) (funcall fn i))
    (- (float-time) start)))

(defun gptel-scope-bench--passes (items fn)
  "Return the seconds of a pass of FN over ITEMS, garbage collection included.
That is the mean of `gptel-scope-bench-passes' passes run back to
back after one collection: each pays the collections its garbage
causes, as a session does."
  (garbage-collect)
  (let ((times (cl-loop repeat gptel-scope-bench-passes collect (gptel-scope-bench--pass items fn))))
    (/ (apply #'+ times) (length times))))

(defun gptel-scope-bench--each (items fn &optional calls)
  "Return the median over ITEMS of the seconds of one call of FN on one.
Each item's time is that of CALLS (default 10) calls back to back,
divided by CALLS."
  (let ((calls (or calls 10)))
    (garbage-collect)
    (gptel-scope-bench--median
     (mapcar (lambda (i)
               (let ((start (float-time)))
                 (dotimes (_ calls) (funcall fn i))
                 (/ (- (float-time) start) calls)))
             items))))

(defun gptel-scope-bench--side-by-side (items fns)
  "Time FNS on each of ITEMS, a pass of each in turn, in rounds.
After one collection, `gptel-scope-bench-rounds' rounds run one pass
of each function of FNS over ITEMS, in turn, so that the machine's
changing load falls on all of them alike.  Return, for each function,
\(WITH-GC . WITHOUT-GC): WITHOUT-GC is the median seconds of its
passes less the time each spent collecting garbage, WITH-GC that plus
the mean time its passes spent collecting, so that each pays for the
garbage it makes while a pass slowed by the machine does not weigh."
  (garbage-collect)
  (let ((times (make-list (length fns) nil)))
    (dotimes (_ gptel-scope-bench-rounds)
      (cl-loop for fn in fns
               for cell on times
               do (let ((start (float-time))
                        (gc gc-elapsed))
                    (dolist (i items) (funcall fn i))
                    (push (cons (- (float-time) start) (- gc-elapsed gc)) (car cell)))))
    (mapcar (lambda (ts)
              (let ((median (gptel-scope-bench--median (mapcar (lambda (x) (- (car x) (cdr x))) ts))))
                (cons (+ median (/ (apply #'+ (mapcar #'cdr ts)) (length ts))) median)))
            times)))

(defun gptel-scope-bench--bytes (counts0 counts1)
  "Return the bytes of Lisp data made between COUNTS0 and COUNTS1.
Both are values of `memory-use-counts'."
  (cl-destructuring-bind (conses floats cells symbols chars intervals strings)
      (cl-mapcar #'- counts1 counts0)
    (+ (* 16 conses) (* 16 floats) (* 8 cells) (* 48 symbols) chars (* 56 intervals) (* 32 strings))))

(defun gptel-scope-bench--wait (flag-fn &optional limit)
  "Wait at most LIMIT seconds (default 60) for FLAG-FN to give non-nil."
  (let ((end (+ (float-time) (or limit 60))))
    (while (and (not (funcall flag-fn)) (< (float-time) end))
      (accept-process-output nil 0.001))))

(defun gptel-scope-bench--spawn-bare (&optional argv)
  "Return the seconds to start ARGV with `make-process' and see it end.
ARGV defaults to `bash -c true', as run_bash_command runs `true'
without the sandbox."
  (let* ((done nil)
         (start (float-time)))
    (make-process :name "bench-bare" :command (or argv '("bash" "--noprofile" "--norc" "-c" "true"))
                  :connection-type 'pipe :noquery t
                  :filter #'ignore
                  :sentinel (lambda (p _e) (unless (process-live-p p) (setq done t))))
    (gptel-scope-bench--wait (lambda () done))
    (- (float-time) start)))

(defun gptel-scope-bench--spawn-tool (command &optional timeout)
  "Return (SECONDS . RESULT) of run_bash_command on COMMAND with TIMEOUT."
  (let* ((result nil)
         (start (float-time)))
    (gptel-scope-run-bash-command (lambda (r) (setq result r)) command default-directory timeout)
    (gptel-scope-bench--wait (lambda () result) (+ 60 (or timeout 0)))
    (cons (- (float-time) start) result)))

(defun gptel-scope-bench--io ()
  "Return (RCHAR SYSCR) of this process from /proc/self/io."
  (with-temp-buffer
    (insert-file-contents "/proc/self/io")
    (list (progn (goto-char (point-min)) (re-search-forward "^rchar: \\([0-9]+\\)") (string-to-number (match-string 1)))
          (progn (goto-char (point-min)) (re-search-forward "^syscr: \\([0-9]+\\)") (string-to-number (match-string 1))))))

(defun gptel-scope-bench--rss ()
  "Return the resident set size of this process in kB (VmRSS)."
  (with-temp-buffer
    (insert-file-contents "/proc/self/status")
    (goto-char (point-min))
    (re-search-forward "^VmRSS:[ \t]+\\([0-9]+\\)")
    (string-to-number (match-string 1))))

(defun gptel-scope-bench--decisions (dir)
  "Measure decisions on the corpus against the bare parse and a spawn, in DIR.
The decision is `gptel-scope-module-judge', what run_bash_command
calls, with what it sends (the buffer's session and the call: the
command and its directory); the full evidence
\(`gptel-scope-cli-check-command', what explain shows) and the
tool's whole judging step (`gptel-scope-check-bash-command', the
request made from the buffer's scope) are info rows.  The decision
and the bare parse are measured side by side
\(`gptel-scope-bench--side-by-side'); every time includes the garbage
collections its passes cause, amortized, and the decision is also
given without them."
  (let* ((commands (gptel-scope-bench--corpus))
         (n (length commands))
         ;; What run_bash_command sends: its buffer's session, the command and the directory.
         (session (gptel-scope--session (current-buffer)))
         (decide-fn (lambda (c)
                      (gptel-scope-module-judge
                       session (json-serialize (list :tool gptel-scope--tool-run-bash-command
                                                     :command c :directory dir :masked :false)))))
         (requests (mapcar (lambda (c) (gptel-scope-bench--request dir c)) commands))
         (allowed (cl-count-if (lambda (c) (plist-get (funcall decide-fn c) :allowed)) commands)))
    ;; Warm up: load the scope, fill every cache once.
    (dolist (r requests) (gptel-scope-cli-check-command r))
    (dolist (c commands) (funcall decide-fn c))
    (dolist (c commands) (gptel-scope-module-measure c))
    (let* ((side (gptel-scope-bench--side-by-side commands (list #'gptel-scope-module-measure decide-fn)))
           (parse (car (nth 0 side)))
           (decide (car (nth 1 side)))
           (evidence (gptel-scope-bench--passes requests #'gptel-scope-cli-check-command))
           (full (gptel-scope-bench--passes
                  commands (lambda (c) (gptel-scope-check-bash-command c dir nil t))))
           (fs (let ((before (gptel-scope-module-measure "")))
                 (dolist (c commands) (funcall decide-fn c))
                 (list before (gptel-scope-module-measure ""))))
           (bytes (let ((counts (memory-use-counts)))
                    (dolist (c commands) (funcall decide-fn c))
                    (/ (gptel-scope-bench--bytes counts (memory-use-counts)) n)))
           (each (gptel-scope-bench--each commands decide-fn))
           (spawn (gptel-scope-bench--median
                   (cl-loop repeat gptel-scope-bench-spawns collect (gptel-scope-bench--spawn-bare))))
           (per (/ decide n)))
      (gptel-scope-bench--row (format "Emacs: decision / bare parse, corpus (%d of %d allowed)" allowed n)
                              (format "%.2f ms" (* 1e3 decide)) (format "%.2f ms" (* 1e3 parse))
                              (/ decide parse) "(info)" 'info)
      (let ((parse (cdr (nth 0 side)))
            (decide (cdr (nth 1 side))))
        (gptel-scope-bench--row "Emacs: the same, GC time left out"
                                (format "%.2f ms" (* 1e3 decide)) (format "%.2f ms" (* 1e3 parse))
                                (/ decide parse) "(info)" 'info))
      (gptel-scope-bench--row "Emacs: decision with full evidence / bare parse"
                              (format "%.2f ms" (* 1e3 evidence)) (format "%.2f ms" (* 1e3 parse))
                              (/ evidence parse) "(info)" 'info)
      (gptel-scope-bench--row "Emacs: run_bash_command's judging (request+decision) / parse"
                              (format "%.2f ms" (* 1e3 full)) (format "%.2f ms" (* 1e3 parse))
                              (/ full parse) "(info)" 'info)
      (let ((before (car fs)) (after (cadr fs)))
        (gptel-scope-bench--row "Emacs: paths looked up (lstat) per decision, mean"
                                (format "%.2f" (/ (float (- (plist-get after :lookups) (plist-get before :lookups))) n))
                                "-" nil "(info)" 'info))
      (gptel-scope-bench--row "Emacs: Lisp data made per decision (mean)"
                              (format "%d B" bytes) "-" nil "(info)" 'info)
      (gptel-scope-bench--row "Emacs: decision (median over the corpus) / spawn bash -c true"
                              (format "%.1f us" (* 1e6 each)) (format "%.0f us" (* 1e6 spawn))
                              (/ each spawn) "< 0.02" (< (/ each spawn) 0.02))
      (gptel-scope-bench--row "Emacs: decision (mean over the corpus) / spawn bash -c true"
                              (format "%.1f us" (* 1e6 per)) (format "%.0f us" (* 1e6 spawn))
                              (/ per spawn) "(info)" 'info)
      spawn)))

(defun gptel-scope-bench--scope-cache (dir)
  "Measure the scope cache and a 1,000-pattern scope through the module, in DIR."
  (let* ((req (gptel-scope-bench--request dir "ls"))
         (count 1000))
    (gptel-scope-cli-check-command req)
    (let* ((io0 (gptel-scope-bench--io))
           (io1 (gptel-scope-bench--io))
           (_ (dotimes (_ count) (gptel-scope-cli-check-command req)))
           (io2 (gptel-scope-bench--io))
           ;; What reading /proc/self/io itself costs is taken out.
           (bytes (- (- (car io2) (car io1)) (- (car io1) (car io0))))
           (calls (- (- (cadr io2) (cadr io1)) (- (cadr io1) (cadr io0)))))
      (gptel-scope-bench--row (format "Emacs: bytes read in %d cached decisions" count)
                              (format "%d B, %d reads" bytes calls) "0" nil "= 0" (<= bytes 0))))
  (let ((before (plist-get (gptel-scope-cli-check-command (gptel-scope-bench--request dir "ls")) :allowed)))
    (gptel-scope-bench--write (expand-file-name "scope.yml" dir)
                              (replace-regexp-in-string "read_only: \\[ls, " "read_only: ["
                                                        (gptel-scope-bench--scope-text dir)))
    (let* ((after (plist-get (gptel-scope-cli-check-command (gptel-scope-bench--request dir "ls")) :allowed))
           (ok (and before (not after))))
      (gptel-scope-bench--row "Emacs: edited scope picked up on next call"
                              (if ok "yes" "no") "yes" nil "yes" ok))
    (gptel-scope-bench--write (expand-file-name "scope.yml" dir) (gptel-scope-bench--scope-text dir)))
  (let ((times nil))
    (dotimes (i gptel-scope-bench-passes)
      (let ((file (expand-file-name (format "big%d.yml" i) dir))
            (text (concat (format "# %d\npaths:\n  read:\n" i)
                          (mapconcat (lambda (k) (format "    - \"%s/src/module%d/**\"\n" dir k)) (number-sequence 0 499) "")
                          "  write:\n"
                          (mapconcat (lambda (k) (format "    - \"%s/out/part%d/*.txt\"\n" dir k)) (number-sequence 0 249) "")
                          "  deny:\n"
                          (mapconcat (lambda (k) (format "    - \"**/secret%d/**\"\n" k)) (number-sequence 0 249) ""))))
        (gptel-scope-bench--write file text)
        ;; A decision under the new document: read, validated, compiled, then used.
        (let* ((req (json-serialize (list :command "ls" :directory dir :home dir
                                          :sources (vector (list :file file)))))
               (start (float-time)))
          (gptel-scope-cli-check-command req)
          (push (- (float-time) start) times))))
    (let ((ms (* 1e3 (gptel-scope-bench--median times))))
      (gptel-scope-bench--row "Emacs: 1,000-pattern scope, first decision"
                              (format "%.3f ms" ms) "1 ms" ms "(info)" 'info))))

(defun gptel-scope-bench--truncate ()
  "Measure truncating 100 MB of text in the module, called from Lisp."
  (let* ((lines ["2024-05-01T12:00:00Z INFO  request handled in 12ms path=/api/v1/items status=200\n"
                 "src/main.rs:42:    let résumé = parse(&input)?; // naïve café déjà vu\n"
                 "warning: unused variable `x` → consider prefixing with an underscore: `_x`\n"
                 "日本語のテキスト、中文文本、한국어 텍스트 🦀🦀\n"
                 "drwxr-xr-x  5 user staff   160 May  1 12:00 target\n"])
         (size (* 100 1024 1024))
         (text (let ((parts nil) (len 0) (i 0))
                 (while (< len size)
                   (let ((l (aref lines (% i 5))))
                     (push l parts)
                     (setq len (+ len (string-bytes l)) i (1+ i))))
                 (apply #'concat (nreverse parts))))
         (mb (/ (string-bytes text) 1048576.0))
         (times (cl-loop repeat 5
                         collect (progn (garbage-collect)
                                        (let ((start (float-time)))
                                          (gptel-scope-module-truncate text 20000)
                                          (- (float-time) start)))))
         (gbs (/ mb 1024 (gptel-scope-bench--median times))))
    ;; One 100 MB Lisp string: Emacs's own copy of it out to the module
    ;; (`copy_string_contents' encodes it) is most of the time.
    (gptel-scope-bench--row "Emacs: truncate one 100 MB string in the module"
                            (format "%.2f GB/s" gbs) "1 GB/s" gbs "(info)" 'info)
    ;; Output as the unibyte chunks a process filter receives, handed to the module
    ;; as a list, which decodes and truncates it (`gptel-scope-module-truncate';
    ;; the tools' output goes to the module's capture instead, timed below).
    (let* ((bytes (encode-coding-string text 'utf-8-unix t))
           (chunks (let (out (i 0) (n (length bytes)))
                     (while (< i n)
                       (push (substring bytes i (min n (+ i 4096))) out)
                       (setq i (+ i 4096)))
                     out))
           (times (cl-loop repeat 5
                           collect (progn (garbage-collect)
                                          (let ((start (float-time)))
                                            (gptel-scope-module-truncate chunks 20000)
                                            (- (float-time) start)))))
           (gbs (/ mb 1024 (gptel-scope-bench--median times)))
           (cap (* gptel-scope-capture-factor 20000))
           (kept (nthcdr (- (length chunks) (/ cap 4096)) chunks))
           (kept-bytes (apply #'+ (mapcar #'length kept)))
           (seconds (gptel-scope-bench--median
                     (cl-loop repeat 21
                              collect (let ((start (float-time)))
                                        (gptel-scope-module-truncate kept 20000)
                                        (- (float-time) start)))))
           (kept-gbs (/ kept-bytes 1073741824.0 seconds)))
      (gptel-scope-bench--row "Emacs: truncate 100 MB of output in the module (4 KB chunks)"
                              (format "%.2f GB/s" gbs) "1 GB/s" gbs ">= 1" (>= gbs 1.0))
      (gptel-scope-bench--row (format "Emacs: decode+truncate %d KB of output in 4 KB chunks"
                                      (/ kept-bytes 1000))
                              (format "%.2f GB/s, %.3f ms" kept-gbs (* 1e3 seconds)) "1 GB/s" kept-gbs
                              "(info)" 'info))))

(defun gptel-scope-bench--spawn-exec ()
  "Return the seconds `gptel-scope-exec-start' takes to run `true' and answer.
The command starts as the tool starts it once judged, without the
sandbox: the scope's environment, the output captured, the result made."
  (let ((result nil) (start (float-time)) (gptel-scope-exec-argv-function nil))
    (gptel-scope-exec-start (gptel-scope-exec-shell-argv "true") default-directory
                            (lambda (r) (setq result r)))
    (gptel-scope-bench--wait (lambda () result))
    (- (float-time) start)))

(defun gptel-scope-bench--run-bash (spawn)
  "Measure running `true' against SPAWN, the bare spawn's seconds.
Like for like: without the sandbox (whose cost is a row of its own),
the reference is `bash -c true' started by `make-process'.  Interleaved:
the command started and its output captured as the tool does once it
judged it (`gptel-scope-exec-start'), and the whole tool call
\(judging, events, the result's redaction included); also the
processor time Emacs itself spends on each (its own work, less noisy
than the wall clock on a busy machine)."
  (let ((gptel-scope-sandbox nil))
    (gptel-scope-bench--spawn-tool "true")
    (gptel-scope-bench--spawn-exec))
  (let (bares tools execs bare-cpu tool-cpu)
    ;; Interleaved, so that all see the same state of the machine.
    (dotimes (_ gptel-scope-bench-spawns)
      (let ((cpu (float-time (get-internal-run-time))))
        (push (gptel-scope-bench--spawn-bare) bares)
        (push (- (float-time (get-internal-run-time)) cpu) bare-cpu))
      (let ((gptel-scope-sandbox nil))
        (push (gptel-scope-bench--spawn-exec) execs))
      (let ((cpu (float-time (get-internal-run-time)))
            (gptel-scope-sandbox nil))
        (push (car (gptel-scope-bench--spawn-tool "true")) tools)
        (push (- (float-time (get-internal-run-time)) cpu) tool-cpu)))
    (let ((bare (gptel-scope-bench--median (cons spawn bares)))
          (tool (gptel-scope-bench--median tools))
          (exec (gptel-scope-bench--median execs)))
      (gptel-scope-bench--row "Emacs: true started, output captured, answered / make-process"
                              (format "%.2f ms" (* 1e3 exec)) (format "%.2f ms" (* 1e3 bare))
                              (/ exec bare) "<= 1.2" (<= (/ exec bare) 1.2))
      (gptel-scope-bench--row "Emacs: run_bash_command true, judging included / make-process"
                              (format "%.2f ms" (* 1e3 tool)) (format "%.2f ms" (* 1e3 bare))
                              (/ tool bare) "(info)" 'info)
      (gptel-scope-bench--row "Emacs: the same, Emacs's own processor time"
                              (format "%.3f ms" (* 1e3 (gptel-scope-bench--median tool-cpu)))
                              (format "%.3f ms" (* 1e3 (gptel-scope-bench--median bare-cpu)))
                              nil "(info)" 'info))))

(defun gptel-scope-bench--sandbox-cost (command &optional program)
  "Return (WITH WITHOUT) median seconds of run_bash_command on COMMAND.
With the sandbox (its default, `auto', with PROGRAM as bubblewrap when
given) interleaved with the same call without."
  (let ((gptel-scope-sandbox-program (or program gptel-scope-sandbox-program))
        (gptel-scope-sandbox--warned t)
        with without)
    (let ((gptel-scope-sandbox 'auto)) (gptel-scope-bench--spawn-tool command))
    (dotimes (_ gptel-scope-bench-spawns)
      (let ((gptel-scope-sandbox nil))
        (push (car (gptel-scope-bench--spawn-tool command)) without))
      (let ((gptel-scope-sandbox 'auto))
        (push (car (gptel-scope-bench--spawn-tool command)) with)))
    (list (gptel-scope-bench--median with) (gptel-scope-bench--median without))))

(defun gptel-scope-bench--apparmor-bwrap ()
  "Return a program that fails as bubblewrap does under Ubuntu's AppArmor rule."
  (let ((f (expand-file-name "bwrap-apparmor/bwrap" default-directory)))
    (make-directory (file-name-directory f) t)
    (with-temp-file f
      (insert "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"))
    (set-file-modes f #o755)
    f))

(defun gptel-scope-bench--walls ()
  "Measure each wall's cost per command, and the supervisor's.
The supervisor: `bash -c true' under `gptel-scope-run' against the same
started alone, both by `make-process', interleaved.  Landlock: where
bubblewrap fails (a stand-in failing as AppArmor makes it fail),
run_bash_command on `true' under Landlock against the same without a
wall."
  (let ((argv '("bash" "--noprofile" "--norc" "-c" "true"))
        alone supervised)
    (dotimes (_ gptel-scope-bench-spawns)
      (push (gptel-scope-bench--spawn-bare argv) alone)
      (push (gptel-scope-bench--spawn-bare (append (list (gptel-scope-run-program) "{}" "--") argv)) supervised))
    (let ((a (gptel-scope-bench--median alone)) (s (gptel-scope-bench--median supervised)))
      (gptel-scope-bench--row "Emacs: the supervisor's cost per command (bash -c true)"
                              (format "%.2f ms" (* 1e3 (- s a)))
                              (format "%.2f ms under it, %.2f ms alone" (* 1e3 s) (* 1e3 a))
                              (/ s a) "(info)" 'info)))
  (let ((gptel-scope-sandbox-program (gptel-scope-bench--apparmor-bwrap))
        (gptel-scope-sandbox--works nil))
    (if (not (> (gptel-scope-sandbox-landlock-abi) 0))
        (gptel-scope-bench--row "Emacs: Landlock's cost per command" "no Landlock" "-" nil "(info)" 'info)
      (pcase-let ((`(,w ,wo) (gptel-scope-bench--sandbox-cost "true" gptel-scope-sandbox-program)))
        (let ((cost (* 1e3 (- w wo))))
          (gptel-scope-bench--row "Emacs: Landlock's cost per command (run_bash_command true)"
                                  (format "%.2f ms" cost)
                                  (format "%.2f ms with, %.2f ms without" (* 1e3 w) (* 1e3 wo))
                                  (/ cost 10.0) "<= 10 ms" (<= cost 10.0)))))))

(defun gptel-scope-bench--sandbox ()
  "Measure the sandbox's cost per command: run_bash_command on `true'.
With the sandbox (its default) interleaved with the same call without;
the difference of the medians is the cost (the mounts asked of the
module, the walk for denied entries, starting bubblewrap).  Then the
same for `git status' in a repository: a program looked up on PATH,
git's rules protected and the user's git configuration shown."
  (if (not (let ((gptel-scope-sandbox 'auto)) (gptel-scope-sandbox-works-p)))
      (gptel-scope-bench--row "Emacs: the sandbox's cost per command" "no bwrap" "-" nil "(info)" 'info)
    (pcase-let ((`(,w ,wo) (gptel-scope-bench--sandbox-cost "true")))
      (let ((cost (* 1e3 (- w wo))))
        (gptel-scope-bench--row "Emacs: the sandbox's cost per command (run_bash_command true)"
                                (format "%.2f ms" cost)
                                (format "%.2f ms with, %.2f ms without" (* 1e3 w) (* 1e3 wo))
                                (/ cost 10.0) "<= 10 ms" (<= cost 10.0))))
    (when (executable-find "git")
      (let ((repo (expand-file-name "repo" default-directory)))
        (make-directory repo t)
        (let ((default-directory (file-name-as-directory repo)))
          (call-process "git" nil nil nil "init" "-q")
          (with-temp-file "a.txt" (insert "a\n"))
          (call-process "git" nil nil nil "add" "a.txt")
          (call-process "git" nil nil nil "-c" "user.name=b" "-c" "user.email=b@b" "commit" "-qm" "one")
          (pcase-let ((`(,w ,wo) (gptel-scope-bench--sandbox-cost "git status --short")))
            (let ((cost (* 1e3 (- w wo))))
              (gptel-scope-bench--row "Emacs: the sandbox's cost per command (run_bash_command git status)"
                                      (format "%.2f ms" cost)
                                      (format "%.2f ms with, %.2f ms without" (* 1e3 w) (* 1e3 wo))
                                      (/ cost 10.0) "<= 10 ms" (<= cost 10.0)))))))))

(defvar gptel-scope-bench-big-output "yes | head -c 300000000"
  "The command of the big output figures: 300 MB of output.")

(defun gptel-scope-bench--bare-big-output ()
  "Return the seconds of `gptel-scope-bench-big-output' alone.
Started with `make-process' as the tool starts it, the shell sending
the output to /dev/null: the time of the command itself."
  (gptel-scope-bench--bare-shell (concat gptel-scope-bench-big-output " >/dev/null")))

(defun gptel-scope-bench--bare-shell (command)
  "Return the seconds of the shell COMMAND started by `make-process'."
  (let ((done nil) (start (float-time)))
    (make-process :name "bench-big-bare"
                  :command (list "bash" "--noprofile" "--norc" "-c" command)
                  :connection-type 'pipe :noquery t :filter #'ignore
                  :sentinel (lambda (p _e) (unless (process-live-p p) (setq done t))))
    (gptel-scope-bench--wait (lambda () done))
    (- (float-time) start)))

(defun gptel-scope-bench--big-output ()
  "Run `gptel-scope-bench-big-output' through run_bash_command and alone.
Five runs of each, interleaved; the median of each is reported.  Like
for like, the ratio's runs are without the sandbox, as the command
alone is; the same runs in the sandbox (its default) are an info row.
During the tool's runs a 10 ms repeating timer records how late it
fires and samples the resident memory (VmRSS) of Emacs.  Also, as a
floor, the command with its output read by `wc -c' instead: what any
reader of the output through a pipe costs on this machine."
  (garbage-collect)
  (let ((rss0 (gptel-scope-bench--rss)) (peak 0) (late 0.0)
        (bares nil) (tools nil) (sandboxed nil) (bytes nil) (cpus nil) (piped nil))
    (dotimes (_ 5)
      (push (gptel-scope-bench--bare-big-output) bares)
      (push (gptel-scope-bench--bare-shell (concat gptel-scope-bench-big-output " | wc -c >/dev/null"))
            piped)
      (dolist (sandbox '(nil auto))
        (garbage-collect)
        (let* ((last (float-time))
               (timer (run-at-time 0.01 0.01
                                   (lambda ()
                                     (let ((now (float-time)))
                                       (setq late (max late (- now last 0.01))
                                             last now
                                             peak (max peak (gptel-scope-bench--rss)))))))
               (cpu (float-time (get-internal-run-time)))
               (run (unwind-protect (let ((gptel-scope-sandbox sandbox))
                                      (gptel-scope-bench--spawn-tool gptel-scope-bench-big-output))
                      (cancel-timer timer)))
               (result (json-parse-string (cdr run) :object-type 'plist)))
          (setq peak (max peak (gptel-scope-bench--rss)))
          (if sandbox
              (push (car run) sandboxed)
            (push (car run) tools)
            (push (- (float-time (get-internal-run-time)) cpu) cpus))
          (push (and (string-match "characters of \\([0-9]+\\) bytes" (plist-get result :output))
                     (string-to-number (match-string 1 (plist-get result :output))))
                bytes))))
    (let ((bare (gptel-scope-bench--median bares))
          (tool (gptel-scope-bench--median tools))
          (in-sandbox (gptel-scope-bench--median sandboxed))
          (grow (/ (max 0 (- peak rss0)) 1024.0))
          (filter (gptel-scope-bench--big-output-filtered)))
      (gptel-scope-bench--row (format "Emacs: run_bash_command %s (%s bytes, no sandbox) / alone"
                                      gptel-scope-bench-big-output (car bytes))
                              (format "%.2f s" tool) (format "%.2f s" bare)
                              (/ tool bare) "<= 2" (<= (/ tool bare) 2))
      (gptel-scope-bench--row "Emacs: the same command piped into wc -c / alone"
                              (format "%.2f s" (gptel-scope-bench--median piped)) (format "%.2f s" bare)
                              (/ (gptel-scope-bench--median piped) bare) "(info)" 'info)
      (gptel-scope-bench--row "Emacs: the same, Emacs's processor time (the reader thread's included)"
                              (format "%.3f s" (gptel-scope-bench--median cpus)) "-" nil "(info)" 'info)
      (gptel-scope-bench--row "Emacs: the same in the sandbox / alone"
                              (format "%.2f s" in-sandbox) (format "%.2f s" bare)
                              (/ in-sandbox bare) "(info)" 'info)
      (gptel-scope-bench--row "Emacs: the same, RSS peak growth of Emacs"
                              (format "%.1f MB" grow) "20 MB" (/ grow 20.0) "<= 20 MB" (<= grow 20))
      (gptel-scope-bench--row "Emacs: the same, worst delay of a 10 ms timer"
                              (format "%.1f ms" (* 1e3 late)) "50 ms" (/ late 0.05) "<= 50 ms"
                              (<= late 0.05))
      (gptel-scope-bench--row "Emacs: the same started by make-process, through a process filter / alone"
                              (format "%.2f s" filter) (format "%.2f s" bare) (/ filter bare)
                              "(info)" 'info))))

(defun gptel-scope-bench--big-output-filtered ()
  "Return the seconds of `gptel-scope-bench-big-output' read by Emacs.
Started by `make-process', as where the module cannot start commands:
the output passes through a process filter to the module."
  (let ((done nil)
        (start (float-time))
        (gptel-scope-exec--spawn nil))
    (gptel-scope-exec-start (gptel-scope-exec-shell-argv gptel-scope-bench-big-output)
                            default-directory (lambda (r) (setq done r)))
    (gptel-scope-bench--wait (lambda () done) 120)
    (- (float-time) start)))

(defun gptel-scope-bench--argv-output (dir)
  "Run `cat' of a 300 MB file in DIR through run_command and alone.
The file is `gptel-scope-bench-big-output' written once (no shell runs
the tool's command).  Three runs of each, interleaved, without the
sandbox; the medians are reported.  The reference is the cheapest
reader of a pipe, `wc -c'; the same argv with its output to /dev/null,
where no byte is copied, is an info row."
  (let* ((file (expand-file-name "big-output.txt" dir))
         (gptel-scope-sandbox nil) (bares nil) (tools nil) (piped nil) (result nil))
    (call-process "bash" nil nil nil "--noprofile" "--norc" "-c"
                  (format "%s > %s" gptel-scope-bench-big-output (shell-quote-argument file)))
    (unwind-protect
        (dotimes (_ 3)
          (push (gptel-scope-bench--bare-shell (format "cat %s >/dev/null" (shell-quote-argument file)))
                bares)
          (push (gptel-scope-bench--bare-shell (format "cat %s | wc -c >/dev/null" (shell-quote-argument file)))
                piped)
          (let ((start (float-time)))
            (setq result nil)
            (gptel-scope-run-command (lambda (r) (setq result r)) "cat" (vector file) dir)
            (gptel-scope-bench--wait (lambda () result) 120)
            (push (- (float-time) start) tools)))
      (delete-file file))
    (let* ((bare (gptel-scope-bench--median bares))
           (tool (gptel-scope-bench--median tools))
           (output (or (plist-get (json-parse-string result :object-type 'plist) :output) ""))
           (bytes (and (string-match "characters of \\([0-9]+\\) bytes" output)
                       (match-string 1 output))))
      (gptel-scope-bench--row (format "Emacs: run_command cat FILE (%s bytes, no sandbox) / cat FILE | wc -c"
                                      (or bytes "no output:"))
                              (format "%.2f s" tool) (format "%.2f s" (gptel-scope-bench--median piped))
                              (/ tool (gptel-scope-bench--median piped)) "<= 1"
                              (and bytes (<= tool (gptel-scope-bench--median piped))))
      (gptel-scope-bench--row "Emacs: the same / cat FILE >/dev/null"
                              (format "%.2f s" tool) (format "%.2f s" bare)
                              (/ tool bare) "(info)" 'info))))

(defun gptel-scope-bench--flood ()
  "Run `yes' through run_bash_command for 10 s; report how much Emacs grows."
  (garbage-collect)
  (let* ((rss0 (gptel-scope-bench--rss))
         (peak rss0)
         (counts0 (memory-use-counts))
         (timer (run-at-time 0.2 0.2 (lambda () (setq peak (max peak (gptel-scope-bench--rss))))))
         (run (unwind-protect (gptel-scope-bench--spawn-tool "yes" gptel-scope-bench-flood-seconds)
                (cancel-timer timer)))
         (result (json-parse-string (cdr run) :object-type 'plist))
         (peak (max peak (gptel-scope-bench--rss)))
         (conses (- (car (memory-use-counts)) (car counts0)))
         (_ (garbage-collect))
         (rss1 (gptel-scope-bench--rss))
         (grow (/ (- peak rss0) 1024.0)))
    (gptel-scope-bench--row (format "Emacs: yes for %ds via run_bash_command, RSS peak growth"
                                    gptel-scope-bench-flood-seconds)
                            (format "%.1f MB" grow) "20 MB" (/ grow 20.0) "< 20 MB" (< grow 20))
    (gptel-scope-bench--row "Emacs: yes flood, RSS growth after GC / conses"
                            (format "%.1f MB" (/ (- rss1 rss0) 1024.0))
                            (format "%d conses" conses) nil
                            (format "timed out: %s" (plist-get result :timed_out)) 'info)))

;;;; Redaction

(defvar gptel-scope-bench-redaction-rounds 9
  "Rounds of the 300 MB output run, with and without redaction in turn.")

(defconst gptel-scope-bench--secrets
  '("OPENAI_API_KEY=sk-proj-bench-0123456789abcdefghijklmnop"
    "ANTHROPIC_API_KEY=sk-ant-api03-bench-0123456789abcdef"
    "AWS_ACCESS_KEY_ID=AKIABENCH0123456789"
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYBENCHKEY"
    "GITHUB_TOKEN=ghp_bench0123456789abcdefghijklmnopqrst"
    "DATABASE_PASSWORD=correct-horse-battery-staple")
  "The secrets of a user's environment, for the redaction figures.")

(defun gptel-scope-bench--without-redaction (thunk)
  "Call THUNK with the scope's environment but no redaction."
  (let ((gptel-scope--redact-function nil)
        (gptel-scope-exec-environment-function
         (lambda () (cons (plist-get (gptel-scope-env) :env) nil))))
    (funcall thunk)))

(defun gptel-scope-bench--redaction (dir)
  "Measure what redaction costs, against the same work without it.
A run printing 300 MB through run_bash_command, and a 20,000-character
result (the default output limit) in DIR, with six secrets in the
environment.  Each with redaction and without in turn, so that the
machine's load falls on both alike; wall time and Emacs's own
processor time (what redaction adds to: most of a short call is
waiting for the child), medians."
  (let* ((process-environment (append gptel-scope-bench--secrets process-environment))
         (file (expand-file-name "result-20k.txt" dir))
         (cpu (lambda () (float-time (get-internal-run-time))))
         (on (lambda (command) (car (gptel-scope-bench--spawn-tool command))))
         (off (lambda (command)
                (gptel-scope-bench--without-redaction (lambda () (funcall on command)))))
         (measure
          (lambda (command rounds)
            (let (w wc o oc)
              (dotimes (_ rounds)
                (let ((c (funcall cpu)))
                  (push (funcall on command) w)
                  (push (- (funcall cpu) c) wc))
                (let ((c (funcall cpu)))
                  (push (funcall off command) o)
                  (push (- (funcall cpu) c) oc)))
              (mapcar #'gptel-scope-bench--median (list w o wc oc)))))
         (rows
          (lambda (name m target)
            (cl-destructuring-bind (w o wc oc) m
              (gptel-scope-bench--row (format "Emacs: %s, redacted / not" name)
                                      (format "%.2f ms" (* 1e3 w)) (format "%.2f ms" (* 1e3 o)) (/ w o)
                                      "(info)" 'info)
              ;; A target of nil: the difference is below what the row can resolve (the
              ;; redaction's own work has the row with the target).
              (gptel-scope-bench--row (format "Emacs: the same, Emacs's processor time")
                                      (format "%.2f ms" (* 1e3 wc)) (format "%.2f ms" (* 1e3 oc)) (/ wc oc)
                                      (if target (format "+ < %.1f ms" target) "(info)")
                                      (if target (< (- wc oc) (/ target 1e3)) 'info))))))
    (gptel-scope-bench--write file (mapconcat (lambda (i) (format "%05d %s\n" i (make-string 93 ?x)))
                                              (number-sequence 1 200) ""))
    (funcall rows "300 MB output run"
             (funcall measure "yes 'a line of output, then the next' | head -c 300000000"
                      gptel-scope-bench-redaction-rounds)
             nil)
    (funcall rows "20,000-character result"
             (funcall measure (format "cat %s" file) gptel-scope-bench-spawns)
             nil)
    (let ((line "a line of output, then the next\n"))
      (gptel-scope-bench--redaction-work
       "300 MB output run" (apply #'concat (make-list (/ 65536 (length line)) line))
       (* 2 gptel-scope-capture-factor 20000) 1.0))
    (gptel-scope-bench--redaction-work
     "20,000-character result"
     (with-temp-buffer (set-buffer-multibyte nil) (insert-file-contents-literally file) (buffer-string))
     1 0.2)
    ;; The redaction of one result alone: the environment planned and the text searched.
    (let* ((text (cdr (gptel-scope-bench--spawn-tool (format "cat %s" file))))
           (buffer (current-buffer))
           (times (cl-loop repeat 201
                           collect (let ((start (float-time)))
                                     (gptel-scope--redact buffer text)
                                     (- (float-time) start)))))
      (gptel-scope-bench--row (format "Emacs: redact one %d-character result (plan + search)" (length text))
                              (format "%.1f us" (* 1e6 (gptel-scope-bench--median times))) "-" nil
                              "(info)" 'info))))

;; The end-to-end rows above take the difference of two medians of
;; Emacs's processor time (some 50 ms on the 300 MB run, mostly the
;; capture's reader thread; some 2 ms on a short one, mostly starting the
;; process): it moves by more than the targets from run to run.  What
;; redaction adds is its own work, timed here alone: the kept output
;; redacted at the end of the run, and the result redacted again on its
;; way out.

(defun gptel-scope-bench--redaction-work (name chunk bytes target)
  "Time redaction's own processor time on the run NAME, against TARGET ms.
A capture holding what that run keeps (CHUNK, a unibyte string, given
until at least BYTES bytes are in: its first and last bytes are kept)
is finished with the scope's redactor and without, interleaved, then
the result is redacted as every tool result is (`gptel-scope--redact',
which plans the environment first).  Call with the secrets in the
environment, in the bench's buffer."
  (let* ((redactor (cdr (gptel-scope-exec--scoped)))
         (cap (* gptel-scope-capture-factor 20000))
         (fill (lambda ()
                 (let ((c (gptel-scope-module-capture-new cap)))
                   (dotimes (_ (max 1 (ceiling bytes (length chunk))))
                     (gptel-scope-module-capture-push c chunk))
                   c)))
         (result nil) on off results)
    (dotimes (_ 101)
      (let ((c (funcall fill)) (start (float-time)))
        (setq result (plist-get (gptel-scope-module-capture-finish c 20000 redactor 0) :output))
        (push (- (float-time) start) on))
      (let ((c (funcall fill)) (start (float-time)))
        (gptel-scope-module-capture-finish c 20000 nil 0)
        (push (- (float-time) start) off))
      (let ((start (float-time)))
        (gptel-scope--redact (current-buffer) result)
        (push (- (float-time) start) results)))
    (let* ((kept (- (gptel-scope-bench--median on) (gptel-scope-bench--median off)))
           (out (gptel-scope-bench--median results))
           (ms (* 1e3 (+ kept out))))
      (gptel-scope-bench--row (format "Emacs: redaction's own work, %s (%d secrets)"
                                      name (length gptel-scope-bench--secrets))
                              (format "%.3f ms" ms)
                              (format "%.3f kept + %.3f result" (* 1e3 kept) (* 1e3 out))
                              (/ ms target) (format "+ < %.1f ms" target) (< ms target)))))

;;;; Loading

(defvar gptel-scope-bench-loads 10
  "Fresh Emacs processes for the load-time figure; the median is reported.")

(defun gptel-scope-bench--load-ms (feature &optional after collect)
  "Return the milliseconds a fresh Emacs takes to require FEATURE.
AFTER, a feature, is required first.  With COLLECT, garbage is then
collected, so that a collection owed to AFTER's garbage is not
counted; without it, a collection may fall inside, as it does for a
user."
  (let ((emacs (expand-file-name invocation-name invocation-directory))
        (args (list "-Q" "--batch" "--eval" (format "(setq load-path '%S)" load-path))))
    (with-temp-buffer
      (unless (eql 0 (apply #'call-process emacs nil t nil
                            (append args
                                    (list "--eval"
                                          (format "(progn %s %s (let ((t0 (float-time))) (require '%s) (princ (format \"\\n%%f\" (* 1000 (- (float-time) t0))))))"
                                                  (if after (format "(require '%s)" after) "")
                                                  (if collect "(garbage-collect)" "")
                                                  feature)))))
        (error "Loading %s failed:\n%s" feature (buffer-string)))
      (goto-char (point-max))
      (forward-line 0)
      (string-to-number (buffer-substring (point) (point-max))))))

(defun gptel-scope-bench--load ()
  "Time `(require \='gptel-scope)' in fresh Emacs processes, after gptel.
The reference is `(require \='gptel)' in the same kind of process.
Without gptel on the load path, gptel-scope alone is timed (info)."
  (let ((gptel (and (locate-library "gptel") 'gptel))
        ours with-gc ref)
    (dotimes (_ gptel-scope-bench-loads)
      (push (gptel-scope-bench--load-ms 'gptel-scope gptel t) ours)
      (push (gptel-scope-bench--load-ms 'gptel-scope gptel nil) with-gc)
      (when gptel
        (push (gptel-scope-bench--load-ms 'gptel nil t) ref)))
    (let ((ms (gptel-scope-bench--median ours))
          (ref-ms (and ref (gptel-scope-bench--median ref))))
      (if gptel
          (gptel-scope-bench--row "Emacs: (require 'gptel-scope) after gptel, fresh Emacs"
                                  (format "%.1f ms" ms) (format "%.1f ms gptel" ref-ms)
                                  (/ ms ref-ms) "<= 10 ms" (<= ms 10))
        (gptel-scope-bench--row "Emacs: (require 'gptel-scope), no gptel on the load path"
                                (format "%.1f ms" ms) "-" nil "(info)" 'info))
      (gptel-scope-bench--row "Emacs: the same, a collection may fall inside"
                              (format "%.1f ms" (gptel-scope-bench--median with-gc))
                              (if ref-ms (format "%.1f ms gptel" ref-ms) "-")
                              (and ref-ms (/ (gptel-scope-bench--median with-gc) ref-ms))
                              "(info)" 'info))))

(defun gptel-scope-bench--menu-ms ()
  "Return the milliseconds the expansion menu takes to open the first time.
In a fresh Emacs with gptel-scope loaded (after gptel when it is on the
load path): the menu's feature and transient are loaded then, as a user
meets them at the model's first request."
  (let ((emacs (expand-file-name invocation-name invocation-directory)))
    (with-temp-buffer
      (unless (eql 0 (call-process
                      emacs nil t nil "-Q" "--batch"
                      "--eval" (format "(setq load-path '%S)" load-path)
                      "--eval"
                      (concat "(progn (when (locate-library \"gptel\") (require 'gptel)) (require 'gptel-scope)"
                              " (garbage-collect)"
                              " (let ((request (list :tool \"run_bash_command\" :resource \"touch x\" :reason \"bench\""
                              " :validation-type \"command\" :directory default-directory :state 'queued)))"
                              " (setq gptel-scope--expansion-current request)"
                              " (let ((t0 (float-time))) (gptel-scope--expansion-show-menu request)"
                              " (unless (eq (plist-get request :state) 'shown) (error \"not shown\"))"
                              " (princ (format \"\\n%f\" (* 1000 (- (float-time) t0)))))))")))
        (error "Opening the menu failed:\n%s" (buffer-string)))
      (goto-char (point-max))
      (forward-line 0)
      (string-to-number (buffer-substring (point) (point-max))))))

(defun gptel-scope-bench--menu ()
  "Time the expansion menu's first opening, transient's loading included."
  (let (ms)
    (dotimes (_ gptel-scope-bench-loads)
      (push (gptel-scope-bench--menu-ms) ms))
    (let ((m (gptel-scope-bench--median ms)))
      (gptel-scope-bench--row (format "Emacs: the menu's first opening, loading transient %s"
                                      (if (locate-library "transient") "(on the load path)" ""))
                              (format "%.1f ms" m) "150 ms" (/ m 150.0) "<= 150 ms" (<= m 150)))))

(defun gptel-scope-bench--run-here ()
  "Run every benchmark in this Emacs and print its rows."
  (gptel-scope-load-module)
  (let* ((dir (directory-file-name (file-truename (make-temp-file "gptel-scope-bench-" t))))
         (default-directory (file-name-as-directory dir))
         ;; The bench's approvals go to a trust list of its own, never the user's.
         (gptel-scope-trust-file (expand-file-name "trusted.eld" (make-temp-file "gptel-scope-bench-trust-" t)))
         ;; The project is home too, so that `~' in the corpus means the same in every run.
         (process-environment (cons (concat "HOME=" dir) process-environment)))
    (unwind-protect
        (with-temp-buffer
          (setq default-directory (file-name-as-directory dir))
          (make-directory (expand-file-name "out" dir) t)
          (gptel-scope-bench--write (expand-file-name "scope.yml" dir) (gptel-scope-bench--scope-text dir))
          ;; Backdated, as a scope.yml in use is: a document written in the last two
          ;; seconds is read again on every call (as the engine's bench does too).
          (set-file-times (expand-file-name "scope.yml" dir) (time-subtract nil 60))
          (setq gptel-scope-file (expand-file-name "scope.yml" dir))
          (gptel-scope-bench--row "Emacs: gptel-scope's Lisp byte-compiled, as installed"
                                  (if gptel-scope-bench-compiled "yes" "no") "yes" nil "(info)" 'info)
          (gptel-scope-bench--load)
          (gptel-scope-bench--menu)
          (let ((spawn (gptel-scope-bench--decisions dir)))
            (gptel-scope-bench--scope-cache dir)
            (gptel-scope-bench--truncate)
            (gptel-scope-bench--run-bash spawn)
            (gptel-scope-bench--sandbox)
            (gptel-scope-bench--walls)
            (gptel-scope-bench--redaction dir)
            (gptel-scope-bench--big-output)
            (gptel-scope-bench--argv-output dir)
            (gptel-scope-bench--flood)))
      (delete-directory dir t)
      (delete-directory (file-name-directory gptel-scope-trust-file) t))))

(defun gptel-scope-bench--compiled-deps (tmp emacs)
  "Copy the directories of GPTEL_SCOPE_DEPS under TMP, byte-compiled.
EMACS compiles them.  Return the copies, for the load path: gptel is
timed as a package manager installs it, compiled, like gptel-scope."
  (let* ((dirs (split-string (or (getenv "GPTEL_SCOPE_DEPS") "") ":" t))
         (copies (mapcar (lambda (d)
                           (let ((copy (expand-file-name
                                        (concat "deps/" (file-name-nondirectory (directory-file-name d)))
                                        tmp)))
                             (copy-directory d copy nil t t)
                             copy))
                         dirs)))
    (dolist (copy copies)
      ;; A file that cannot be compiled (an optional integration) stays source.
      (apply #'call-process emacs nil nil nil "-Q" "--batch"
             (append (mapcan (lambda (d) (list "-L" d)) copies)
                     (list "-f" "batch-byte-compile")
                     (directory-files copy t "\\.el\\'"))))
    copies))

(defun gptel-scope-bench-run ()
  "Run every benchmark and print its rows; for batch Emacs (`make bench').
The figures are taken in a second Emacs on gptel-scope's Lisp and
this file (of dev/) byte-compiled into a temporary directory, as a
package manager installs it (run from the sources, Lisp is
interpreted, several times slower and making more garbage).
GPTEL_SCOPE_BENCH_SOURCE=1 in the environment runs them on the
sources, in this Emacs."
  (if (or gptel-scope-bench-compiled (getenv "GPTEL_SCOPE_BENCH_SOURCE"))
      (gptel-scope-bench--run-here)
    (let ((tmp (make-temp-file "gptel-scope-bench-elc-" t))
          (emacs (expand-file-name invocation-name invocation-directory)))
      (unwind-protect
          ;; The package's files and the development tools of dev/ the bench uses.
          (let ((files (append (directory-files (expand-file-name "dev" gptel-scope-bench-root)
                                                t "\\`gptel-scope.*\\.el\\'")
                               (directory-files gptel-scope--directory t "\\`gptel-scope.*\\.el\\'"))))
            (dolist (f files)
              (copy-file f (expand-file-name (file-name-nondirectory f) tmp)))
            ;; The module and the supervisor every command runs under, as installed.
            (dolist (f (list (gptel-scope--module-file) (gptel-scope-run-program)))
              (make-symbolic-link f (expand-file-name (file-name-nondirectory f) tmp)))
            (with-temp-buffer
              (unless (eql 0 (apply #'call-process emacs nil t nil "-Q" "--batch" "-L" tmp
                                    "-f" "batch-byte-compile"
                                    (directory-files tmp t "\\.el\\'")))
                (error "Byte-compiling for the bench failed:\n%s" (buffer-string))))
            (with-temp-buffer
              (let ((status (apply #'call-process emacs nil t nil "-Q" "--batch" "-L" tmp
                                   (append
                                    ;; gptel and its dependencies, for the load-time figure.
                                    (mapcan (lambda (d) (list "-L" d))
                                            (gptel-scope-bench--compiled-deps tmp emacs))
                                    (list
                                          "--eval" (format "(setq gptel-scope-bench-root %S gptel-scope-bench-compiled t)"
                                                           gptel-scope-bench-root)
                                          "-l" "gptel-scope-bench" "-f" "gptel-scope-bench-run")))))
                (princ (buffer-string))
                (unless (eql 0 status)
                  (error "The bench failed (exit status %s)" status)))))
        (delete-directory tmp t)))))

(provide 'gptel-scope-bench)
;;; gptel-scope-bench.el ends here
