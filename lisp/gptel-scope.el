;;; gptel-scope.el --- Scoped shell tools for gptel, widened from a menu  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The gptel-scope authors

;; Author: The gptel-scope authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (transient "0.3.7"))
;; Keywords: tools, processes, convenience
;; URL: https://github.com/gptel-scope/gptel-scope

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; gptel-scope gives the gptel LLM client tools that run shell commands
;; only inside a scope the user wrote down (a scope.yml, the front matter
;; of a preset.md, a profile, an inline plist), and lets the user widen
;; that scope from a transient menu when the model asks for it.
;;
;; The policy engine is a Rust dynamic module, gptel-scope-module, that
;; lives next to this file.  When it is missing, or of another version
;; than this elisp, it is built with cargo from the sources installed with
;; the package: in a compilation buffer after asking, or synchronously in
;; batch Emacs.
;;
;; This file is the entry point.  It loads the features, each of which
;; requires gptel-scope-core and only features below it:
;;
;;   gptel-scope-core     options, error symbols, reason codes, tool
;;                        names, JSON for the model, the module loader
;;   gptel-scope-trust    approval of scope documents (`gptel-scope-trust')
;;   gptel-scope-session  the scope of a chat buffer: sources, document,
;;                        protected paths, the envelope of every module
;;                        request, allow-once grants, remembered refusals
;;   gptel-scope-events   the audit log and event hooks
;;   gptel-scope-sandbox  the wall of a command: bubblewrap, Landlock, none
;;   gptel-scope-env      the environment of commands, redaction of secrets
;;   gptel-scope-exec     running a judged command (sandboxed, in the
;;                        scope's environment)
;;   gptel-scope-lint     `gptel-scope-lint': where the scope defeats itself
;;   gptel-scope-expand   answering request_scope_expansion, allow-once,
;;                        Add to scope
;;   gptel-scope-menu     its transient menu (loaded when first shown)
;;   gptel-scope-call     the one path of every tool call: arguments,
;;                        judgement, refusal, asking, events, redaction
;;   gptel-scope-tools    the command tools and request_scope_expansion
;;   gptel-scope-fs       the file tools
;;   gptel-scope-pty      terminal sessions
;;   gptel-scope-explain  `gptel-scope-explain', `gptel-scope-init'
;;
;; and then registers the tools with gptel: at once when gptel is
;; loaded already, else when it loads.  transient and project are loaded
;; only when first needed.
;;
;; Set-up: (require 'gptel-scope), before or after gptel, then give a
;; gptel preset the tools of the category "scope", e.g.
;; (gptel-make-preset 'scoped :tools '("scope")).

;;; Code:

(require 'gptel-scope-core)
(require 'gptel-scope-trust)
(require 'gptel-scope-session)
(require 'gptel-scope-events)
(require 'gptel-scope-sandbox)
(require 'gptel-scope-env)
(require 'gptel-scope-exec)
(require 'gptel-scope-lint)
(require 'gptel-scope-expand)
(require 'gptel-scope-call)
(require 'gptel-scope-tools)
(require 'gptel-scope-fs)
(require 'gptel-scope-pty)
(require 'gptel-scope-explain)

(defvar gptel-post-response-functions)

(defun gptel-scope-register-tools ()
  "Register every gptel-scope tool with gptel, in the category \"scope\".
The command tools, the file tools, the terminal sessions and
request_scope_expansion; and the end-of-turn hook that clears
allow-once grants.  Run when gptel is loaded; safe to run again."
  (gptel-scope-tools-register-tools)
  (gptel-scope-pty-register-tools)
  (gptel-scope-fs-register-tools)
  (gptel-scope-register-expansion-tool)
  (add-hook 'gptel-post-response-functions #'gptel-scope-end-of-turn))

(gptel-scope--load-module-at-startup)

(provide 'gptel-scope)

;; Last, once every feature is provided: at once when gptel is loaded
;; already, else when it loads.
(with-eval-after-load 'gptel
  (gptel-scope-register-tools))

;;; gptel-scope.el ends here
