;;; gptel-scope-loader-test.el --- Tests of module loading, make check and make demo  -*- lexical-binding: t; -*-

;;; Commentary:

;; The first load of the package in a fresh batch Emacs: with no module
;; and no cargo (a clear `gptel-scope-module-error'), and with a cargo
;; that builds (the module is built, installed next to the elisp and
;; loaded, both synchronously and in a compilation buffer).  A module of
;; another version.  `make check' in both modes, and `make demo'.

;;; Code:

(require 'test-helper)
(require 'gptel-scope-cli)
(require 'gptel-scope-demo)

(defconst gptel-scope-test--probe
  '((condition-case err
        (progn (gptel-scope-load-module) (princ "LOADED\n"))
      (gptel-scope-module-error (princ (format "MODULE-ERROR %s\n" (cadr err)))))
    (princ (format "HIERARCHY %S\n" (and (memq 'gptel-scope-error (get 'gptel-scope-edit-error 'error-conditions)) t)))
    (with-temp-buffer
      (setq default-directory temporary-file-directory)
      (gptel-scope-run-bash-command (lambda (r) (princ (format "TOOL %s\n" r))) "ls" ".")))
  "Forms run after requiring gptel-scope in a fresh Emacs.")

(ert-deftest gptel-scope-test-first-load-without-module-nor-sources ()
  (gptel-scope-test-with-package-copy dir nil
    (pcase-let ((`(,code ,out ,err)
                 (gptel-scope-test--emacs dir (cons '(require 'gptel-scope) gptel-scope-test--probe))))
      (should (eq code 0))
      (should (string-match-p "MODULE-ERROR Cannot build the gptel-scope module: Cargo.toml was not installed" out))
      (should (string-match-p "HIERARCHY t" out))
      (should (string-match-p "TOOL {\"success\":false,\"reason\":\"module_unavailable\"" out))
      ;; The load itself only warned.
      (should (string-match-p "Warning (gptel-scope)" err)))))

(ert-deftest gptel-scope-test-first-load-without-cargo ()
  (gptel-scope-test-with-package-copy dir '("Cargo.toml")
    (pcase-let ((`(,_ ,out ,_)
                 (gptel-scope-test--emacs
                  dir (append '((setq gptel-scope-cargo-program "no-such-cargo-here")
                                (require 'gptel-scope))
                              gptel-scope-test--probe))))
      (should (string-match-p "MODULE-ERROR Cannot build the gptel-scope module: .no-such-cargo-here. is not installed.*rustup" out)))))

(defun gptel-scope-test--fake-cargo (dir)
  "Write in DIR a cargo that \"builds\" by copying the real module; return it."
  (let ((cargo (expand-file-name "fake-cargo" dir)))
    (with-temp-file cargo
      (insert "#!/bin/sh\n"
              "echo \"fake cargo $@ in $PWD\"\n"
              "mkdir -p \"$CARGO_TARGET_DIR/release\"\n"
              (format "cp %s \"$CARGO_TARGET_DIR/release/libgptel_scope.so\"\n"
                      (shell-quote-argument (gptel-scope--module-file)))
              (format "cp %s \"$CARGO_TARGET_DIR/release/gptel-scope-run\"\n"
                      (shell-quote-argument (gptel-scope-run-program)))))
    (set-file-modes cargo #o755)
    cargo))

(ert-deftest gptel-scope-test-first-load-builds-the-module ()
  (skip-unless (eq system-type 'gnu/linux))
  (gptel-scope-test-with-package-copy dir '("Cargo.toml")
    (let ((cargo (gptel-scope-test--fake-cargo dir)))
      (pcase-let ((`(,code ,out ,err)
                   (gptel-scope-test--emacs
                    dir (append `((setq gptel-scope-cargo-program ,cargo)
                                  (require 'gptel-scope))
                                gptel-scope-test--probe))))
        (should (eq code 0))
        (should (string-match-p "building the module with cargo" err))
        (should (string-match-p "LOADED" out))
        (should (string-match-p "TOOL {.*\"reason\":\"no_scope_config\"" out))
        (should (file-exists-p (expand-file-name (concat "gptel-scope-module" module-file-suffix) dir)))
        (should (file-exists-p (expand-file-name "target/release/libgptel_scope.so" dir)))))))

(ert-deftest gptel-scope-test-interactive-build-runs-in-a-compilation-buffer ()
  (skip-unless (eq system-type 'gnu/linux))
  (gptel-scope-test-with-package-copy dir '("Cargo.toml")
    (let ((cargo (gptel-scope-test--fake-cargo dir)))
      (pcase-let ((`(,code ,out ,_)
                   (gptel-scope-test--emacs
                    dir `((setq gptel-scope-cargo-program ,cargo gptel-scope-build-module nil)
                          (require 'gptel-scope)
                          (condition-case err (gptel-scope-load-module)
                            (gptel-scope-module-error (princ (format "MISSING %s\n" (cadr err)))))
                          (let* ((noninteractive nil)
                                 (buffer (gptel-scope-build-module)))
                            (princ (format "BUFFER %s\n" (buffer-name buffer)))
                            (with-timeout (60 (princ "TIMEOUT\n"))
                              (while gptel-scope--build-buffer (accept-process-output nil 0.1)))
                            (princ (format "OUTPUT %s\n" (with-current-buffer buffer (buffer-string)))))
                          (princ (format "FEATURE %s\n" (featurep 'gptel-scope-module)))
                          (princ (format "VERSION %s\n" (gptel-scope-module-version)))))))
        (should (eq code 0))
        (should (string-match-p "MISSING The gptel-scope module .* is missing or outdated: run M-x gptel-scope-build-module" out))
        (should (string-match-p "BUFFER \\*gptel-scope-build\\*" out))
        (should (string-match-p "fake cargo build --release --lib" out))
        (should (string-match-p "FEATURE t" out))
        (should (string-match-p (concat "VERSION " (regexp-quote gptel-scope-version)) out))))))

(ert-deftest gptel-scope-test-module-of-another-version-asks-for-a-restart ()
  (let ((gptel-scope-build-module nil))
    (cl-letf (((symbol-function 'gptel-scope-module-version) (lambda () "0.0.1")))
      (let ((err (should-error (gptel-scope-load-module t) :type 'gptel-scope-module-error)))
        (should (string-match-p "version 0.0.1, the elisp 0.1.0.*restart Emacs" (cadr err))))
      (should-not (gptel-scope--module-available-p))))
  (should (gptel-scope--module-available-p)))

(ert-deftest gptel-scope-test-make-check-one-command-readably ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, grep]\n"
    (pcase-let ((`(,code ,out ,_)
                 (gptel-scope-test--emacs
                  (expand-file-name "lisp" gptel-scope-test-root)
                  `((load ,gptel-scope-test-cli)
                    (setq command-line-args-left (list "" ,dir "ls | grep foo"))
                    (gptel-scope-cli-check)))))
      (should (eq code 0))
      (should (string-match-p "^decision:   ALLOWED$" out))
      (should (string-match-p "^  grep foo +read_only +allowed" out))
      (should (string-match-p (concat "^scope: +" (regexp-quote dir) "scope.yml") out)))))

(ert-deftest gptel-scope-test-make-check-json-lines-and-nothing-else ()
  (gptel-scope-test-with-project dir "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls]\n  deny: [curl]\n"
    (let ((input (make-temp-file "gptel-scope-in" nil ".jsonl"
                                 "{\"command\": \"ls\"}\n{\"command\": \"curl x | sh\"}\n\nnot json\n{\"command\": \"ls\", \"directory\": \"/\"}\n")))
      (unwind-protect
          (pcase-let ((`(,code ,out ,_)
                       (gptel-scope-test--emacs
                        (expand-file-name "lisp" gptel-scope-test-root)
                        `((load ,gptel-scope-test-cli)
                          (setq command-line-args-left (list ,(expand-file-name "scope.yml" dir) ,dir ""))
                          (gptel-scope-cli-check))
                        input)))
            (should (eq code 0))
            (let ((objs (mapcar #'gptel-scope-test-parse (split-string out "\n" t))))
              (should (= (length objs) 4))
              (should (equal (mapcar (lambda (o) (plist-get o :allowed)) objs) '(t nil nil nil)))
              (should (equal (mapcar (lambda (o) (plist-get o :reason)) objs)
                             '(nil "denied" "invalid_input" "directory_not_in_scope")))))
        (delete-file input)))))

(ert-deftest gptel-scope-test-make-demo-replays-the-session ()
  (let ((out (with-output-to-string (gptel-scope-demo-run))))
    (dolist (re '("success: true   exit code: 0"
                  "| src/main.c:1:int main"
                  "< refused: dangerous_command"
                  "the menu the user sees"
                  "o Allow once"
                  "the user presses o"
                  "\"allowed_once\":true"
                  "grants of the chat buffer: ((\"run_bash_command\" . \"rm build/out/stamp\"))"
                  "grants of the chat buffer: nil (used up)"
                  "the user presses a"
                  "\"patterns_added\":\\[\"sort\"\\]"
                  "^    \\+    read_only: \\[.*sort\\]"
                  "^    -    read_only: "
                  "DENIED path_denied"
                  "| src/main.c\n  | src/util.c"
                  "| util.c:1:/\\* TODO: free the buffer \\*/"
                  "< refused: boundary_violation"
                  "< refused: path_not_in_scope"
                  "Applied to 2 file(s): add build/TODO.md (\\+1 -0), add build/out/stamp (\\+1 -0)"))
      (should (string-match-p re out)))
    (should-not (string-match-p "no_scope_config" out))))

(provide 'gptel-scope-loader-test)
;;; gptel-scope-loader-test.el ends here
