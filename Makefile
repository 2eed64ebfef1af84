# gptel-scope: build, test, lint, demo, benchmarks.
EMACS   ?= emacs
CARGO   ?= cargo
SCOPE   ?=
DIR     ?= $(CURDIR)
CMD     ?=

MODULE_SUFFIX := $(shell $(EMACS) -Q --batch --eval '(princ module-file-suffix)' 2>/dev/null || echo .so)
MODULE  := lisp/gptel-scope-module$(MODULE_SUFFIX)
LIB     := target/release/libgptel_scope$(if $(filter .dylib,$(MODULE_SUFFIX)),.dylib,$(if $(filter .dll,$(MODULE_SUFFIX)),.dll,.so))
# The package's elisp (what the recipes' :files and `make dist' install), and the development
# tools of dev/ (make check, demo, bench), which need the repository and are not installed.
ELISP   := $(filter-out lisp/gptel-scope-module%,$(wildcard lisp/*.el))
DEV_ELISP := $(wildcard dev/*.el)
BATCH   := $(EMACS) -Q --batch -L lisp -L dev -L test

.PHONY: all module test test-rust test-elisp test-fuzz lint check demo bench bench-engine clean fuzz fuzz-smoke fuzz-seeds

all: module

module: $(MODULE) lisp/gptel-scope-run

# The supervisor every command runs under (src/wall/), built with the module.
lisp/gptel-scope-run: $(MODULE)
	@test -x $@ || { $(CARGO) build --release --bin gptel-scope-run && cp target/release/gptel-scope-run $@; }

$(MODULE): Cargo.toml $(wildcard src/*.rs src/*/*.rs src/*/*/*.rs data/*.yml)
	$(CARGO) build --release --lib --bin gptel-scope-run
	cp target/release/gptel-scope-run lisp/gptel-scope-run.new && mv -f lisp/gptel-scope-run.new lisp/gptel-scope-run
	cp $(LIB) $(MODULE).new && mv -f $(MODULE).new $(MODULE)

# `make test`: cargo test, the ERT suite every way on every Emacs there is, the fuzz smoke run.
test: test-rust test-elisp-all test-executed-attacks test-fuzz

test-rust:
	$(CARGO) test --quiet

# The ERT suite runs three ways:
#   make test-elisp        plain: what is on EMACS's load path (in a fresh clone no gptel, and the
#                          transient of Emacs; the tests that need gptel skip, saying so)
#   make test-elisp-gptel  the pinned gptel 0.9.9.5 and transient 0.13.7 of $(VENDOR) on the load
#                          path, gptel loaded before gptel-scope; a skipped test that needs gptel
#                          fails instead (GPTEL_SCOPE_REQUIRE_GPTEL=1)
#   make test-ert-runner   the real ert-runner (its bin/ert-runner, reading .ert-runner; the load
#                          path Cask would give it comes in EMACSLOADPATH)
# The pinned dependencies are unpacked into $(DEPS). Without $(VENDOR) the last two say they are
# skipped and succeed (with REQUIRE_DEPS=1 they fail). EMACS picks the Emacs, e.g.
# make test-elisp-gptel EMACS="$$(.ci/emacs30)" on Emacs 30.1 (which .ci/emacs30 sets up).
# make test-elisp-all runs them all, each to its end, on EMACS and on EMACS30 (the Emacs 30.1 of
# target/emacs-30 when it is there; ert-runner on EMACS only), then prints their counts.
VENDOR       ?= ../shared/vendor
DEPS         := target/deps
ELPA         ?= /usr/share/emacs/site-lisp/elpa
EMACS30      ?= $(wildcard $(CURDIR)/target/emacs-30/emacs)
REQUIRE_DEPS ?=
ERT_FILES     = test/test-helper.el $(sort $(wildcard test/*-test.el))
ERT_BATCH     = -L lisp -L dev -L test $(patsubst %,-l %,$(ERT_FILES)) -f ert-run-tests-batch-and-exit
# Shell: say that this run is skipped and why ($$why); succeed, or fail with REQUIRE_DEPS=1.
SKIP          = { echo "$@ skipped: $$why"; [ -z "$(REQUIRE_DEPS)" ]; }
# Shell: unpack the pinned set $(1) (new or runner) and export GPTEL_SCOPE_DEPS, or skip.
UNPACK        = if [ ! -x $(VENDOR)/unpack ]; then \
                  why="$(VENDOR) (the pinned elisp dependencies) is not there"; $(SKIP); exit $$?; fi; \
                eval "$$($(VENDOR)/unpack $(DEPS) $(1))" || exit 1
# Shell: -L for each directory of GPTEL_SCOPE_DEPS.
DEPS_L        = $$(echo "$$GPTEL_SCOPE_DEPS" | tr : '\n' | sed 's/^/-L /')

.PHONY: test-elisp-gptel test-ert-runner test-elisp-all lint-rust lint-elisp lint-package

test-elisp: module
	$(EMACS) -Q --batch $(ERT_BATCH)

test-elisp-gptel: module
	@$(call UNPACK,new); set -x; \
	GPTEL_SCOPE_REQUIRE_GPTEL=1 $(EMACS) -Q --batch $(DEPS_L) --eval '(require (quote gptel))' $(ERT_BATCH)

test-ert-runner: module
	@$(call UNPACK,runner); path=$$GPTEL_SCOPE_DEPS; \
	for p in s dash f shut-up; do d=$$(ls -d $(ELPA)/$$p-[0-9]* 2>/dev/null | tail -n 1); \
	  if [ -z "$$d" ]; then why="ert-runner needs Debian's elpa-s elpa-dash elpa-f elpa-shut-up (no $(ELPA)/$$p-*)"; \
	    $(SKIP); exit $$?; fi; \
	  path=$$path:$$d; done; set -x; \
	EMACSLOADPATH=$$path: EMACS="$(EMACS)" $(DEPS)/ert-runner/bin/ert-runner

ERT_RUNS = $(EMACS)@test-elisp $(EMACS)@test-elisp-gptel $(EMACS)@test-ert-runner \
           $(if $(EMACS30),$(EMACS30)@test-elisp $(EMACS30)@test-elisp-gptel)

test-elisp-all: module
	@mkdir -p target/ert; rm -f target/ert/*; i=0; \
	for run in $(ERT_RUNS); do \
	  i=$$((i + 1)); emacs=$${run%@*}; target=$${run##*@}; log=target/ert/$$i-$$target.log; \
	  version=$$($$emacs -Q --batch --eval '(princ emacs-version)' 2>/dev/null); \
	  echo; echo "=== Emacs $$version: make $$target (log: $$log)"; start=$$(date +%s); \
	  { $(MAKE) --no-print-directory $$target EMACS="$$emacs"; echo $$? > $$log.status; } 2>&1 | tee $$log; \
	  status=$$(cat $$log.status); result=ok; grep -q "^$$target skipped: " $$log && result=skipped; \
	  [ "$$status" = 0 ] || result="FAILED($$status)"; \
	  counts=$$(grep -E '^(Aborted: )?Ran [0-9]+ tests|^[a-z-]+ skipped: ' $$log | tail -n 1 | sed 's/ ([0-9]\{4\}-[^)]*)$$//'); \
	  printf 'Emacs %-5s %-17s %-10s %4ss  %s\n' "$$version" "$$target" "$$result" "$$(( $$(date +%s) - start ))" \
	    "$${counts:-no summary line: see $$log}" >> target/ert/summary; \
	  grep -E '^ *(FAILED|ABORTED|PASSED|QUIT)  [^ /]+$$' $$log | sed 's/^ */    /' | sort -u >> target/ert/summary; \
	done; \
	if [ -z "$(EMACS30)" ]; then echo "Emacs 30.1 runs skipped: no target/emacs-30/emacs (.ci/emacs30 sets it up)" >> target/ert/summary; fi; \
	echo; echo "=== ERT runs"; cat target/ert/summary; ! grep -q FAILED target/ert/summary

# make test-executed-attacks: every attack case of the corpora (deny, gap, scope_document) run
# for real through run_bash_command, in a fresh fixture each, without a sandbox and under
# bubblewrap; prints a table per mode (test/gptel-scope-executed-attacks-test.el). `make
# test-elisp' runs a subset of it.
.PHONY: test-executed-attacks
test-executed-attacks: module
	GPTEL_SCOPE_EXECUTED_ATTACKS=full $(EMACS) -Q --batch -L lisp -L test -l test/test-helper.el \
	  -l test/gptel-scope-executed-attacks-test.el --eval '(ert-run-tests-batch-and-exit "^gptel-scope-test-xa-")'

# make lint: byte-compile (warnings are errors) and checkdoc the package's elisp (lisp/, compiled
# without dev/ on the load path) and dev/'s with what is on the load path, and again with the
# pinned gptel and transient 0.13.7 on it, on EMACS and on EMACS30 when it is there, and
# package-lint (Debian's elpa-package-lint) of lisp/ only on each. Each runs to its end.
lint: module
	@status=0; $(MAKE) --no-print-directory lint-rust || status=1; \
	for emacs in $(EMACS) $(EMACS30); do \
	  for deps in "" new; do $(MAKE) --no-print-directory lint-elisp EMACS="$$emacs" LINT_DEPS=$$deps || status=1; \
	  done; $(MAKE) --no-print-directory lint-package EMACS="$$emacs" || status=1; \
	done; exit $$status

# Rust: formatted as rustfmt formats it, and clippy without one warning.
lint-rust:
	@if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then \
	  why="rustfmt or clippy is not installed (rustup component add rustfmt clippy)"; $(SKIP); exit $$?; fi; \
	cargo fmt --check >/dev/null || { cargo fmt --check | head -40; echo "rustfmt: run cargo fmt"; exit 1; }; \
	echo "rustfmt: clean"; \
	cargo clippy --quiet --release --all-targets -- -D warnings && echo "clippy: clean"

LINT_DEPS ?=
lint-elisp:
	@L=; if [ -n "$(LINT_DEPS)" ]; then $(call UNPACK,$(LINT_DEPS)); L="$(DEPS_L)"; fi; \
	echo "lint: Emacs $$($(EMACS) -Q --batch --eval '(princ emacs-version)'), $(if $(LINT_DEPS),with gptel and transient 0.13.7,plain)"; \
	mkdir -p target/lint; rm -f lisp/*.elc dev/*.elc; \
	$(EMACS) -Q --batch $$L -L lisp -L test --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile $(ELISP) && \
	$(EMACS) -Q --batch $$L -L lisp -L dev --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile $(DEV_ELISP); \
	  status=$$?; rm -f lisp/*.elc dev/*.elc; [ $$status = 0 ] || exit $$status; \
	$(EMACS) -Q --batch $$L -L lisp -L dev -L test --eval '(progn (require (quote checkdoc)) (setq checkdoc-spellcheck-documentation-flag nil) (dolist (f command-line-args-left) (checkdoc-file f)))' $(ELISP) $(DEV_ELISP) > target/lint/checkdoc.log 2>&1; \
	  if grep -E '^[^ ]+\.el:[0-9]+: ' target/lint/checkdoc.log; then exit 1; else echo "checkdoc: clean"; fi

# package-lint sees one package whose main file is gptel-scope.el. Offline it has no archive
# listing: it is given GNU ELPA's transient (0.13.7, the pinned one), so that a dependency on
# transient is judged by its version instead of reported as not installable.
PACKAGE_LINT = (progn (require (quote package-lint)) \
  (setq package-lint-main-file "lisp/gptel-scope.el" package-archives nil \
        package-user-dir (expand-file-name "target/lint/elpa")) \
  (advice-add (quote package-initialize) :after \
    (lambda (&rest _) (push (list (quote transient) (package-desc-create :name (quote transient) \
                                   :version (quote (0 13 7)) :archive "gnu" :kind (quote tar))) \
                            package-archive-contents))))

# Two warnings are accepted, both on the main file, and nothing else:
# - (emacs "28.1") "makes the package uninstallable in all released Emacs versions": Debian's
#   package-lint 0.16 predates the release of Emacs 28; gptel-scope needs 28.1 (and is tested on
#   28.2 and 30.1).
# - with-eval-after-load "should rarely be used in packages": it is the one form that registers
#   the tools when gptel loads, whether that is before gptel-scope, after it or never.
PACKAGE_LINT_ACCEPTED = ^gptel-scope\.el:[0-9]+:[0-9]+: warning: (This makes the package uninstallable in all released Emacs versions\.|`with-eval-after-load. is for use in configurations, and should rarely be used in packages\.)$$

lint-package:
	@pl=$$(ls -d $(ELPA)/package-lint-[0-9]* 2>/dev/null | tail -n 1); \
	if [ -z "$$pl" ]; then why="package-lint is not installed (apt-get install elpa-package-lint)"; $(SKIP); exit $$?; fi; \
	echo "package-lint: $$pl, Emacs $$($(EMACS) -Q --batch --eval '(princ emacs-version)')"; \
	mkdir -p target/lint; \
	$(EMACS) -Q --batch -L $$pl -L lisp --eval '$(PACKAGE_LINT)' -f package-lint-batch-and-exit $(ELISP) \
	  > target/lint/package-lint.log 2>&1; \
	if grep -E ':[0-9]+:[0-9]+: ' target/lint/package-lint.log | grep -v -E '$(PACKAGE_LINT_ACCEPTED)'; then exit 1; fi; \
	grep -E '$(PACKAGE_LINT_ACCEPTED)' target/lint/package-lint.log | sed 's/^/package-lint: accepted: /'; \
	echo "package-lint: clean"

# make check SCOPE=scope.yml DIR=/some/dir CMD='ls | grep foo'   (one readable decision)
# make check SCOPE=scope.yml DIR=/some/dir < cmds.jsonl          (one JSON object per line)
check: module
	@$(BATCH) -l gptel-scope-cli -f gptel-scope-cli-check "$(SCOPE)" "$(DIR)" "$(CMD)"

demo: module
	@$(BATCH) -l gptel-scope-demo -f gptel-scope-demo-run

# make bench: every benchmark (Rust engine, truncation, and through Emacs), then one table of
# their rows; the full reports are in target/bench-*.log.
BENCH_ROWS = target/bench-engine.log target/bench-truncate.log target/bench-denied.log target/bench-emacs.log
# The benchmarks are their own crate (benches/Cargo.toml), built into this target/.
BENCH_CARGO = $(CARGO) bench --manifest-path benches/Cargo.toml --target-dir target

bench: module
	@mkdir -p target
	@echo "cargo bench --manifest-path benches/Cargo.toml --bench engine   > target/bench-engine.log"
	@$(BENCH_CARGO) --bench engine > target/bench-engine.log 2>&1 || { cat target/bench-engine.log; exit 1; }
	@echo "cargo bench --manifest-path benches/Cargo.toml --bench truncate > target/bench-truncate.log"
	@$(BENCH_CARGO) --bench truncate > target/bench-truncate.log 2>&1 || { cat target/bench-truncate.log; exit 1; }
	@echo "cargo bench --manifest-path benches/Cargo.toml --bench denied   > target/bench-denied.log"
	@$(BENCH_CARGO) --bench denied > target/bench-denied.log 2>&1 || { cat target/bench-denied.log; exit 1; }
	@echo "emacs -f gptel-scope-bench-run > target/bench-emacs.log (byte-compiled)"
	@rm -f dev/gptel-scope-bench.elc; $(BATCH) -f batch-byte-compile dev/gptel-scope-bench.el >/dev/null 2>&1; \
	  if [ -x $(VENDOR)/unpack ]; then eval "$$($(VENDOR)/unpack $(DEPS) new)" || exit 1; \
	  else echo "no $(VENDOR): the load-time row times gptel-scope without gptel"; fi; \
	  $(BATCH) -l gptel-scope-bench -f gptel-scope-bench-run > target/bench-emacs.log 2>&1; \
	  status=$$?; rm -f dev/gptel-scope-bench.elc; if [ $$status -ne 0 ]; then cat target/bench-emacs.log; exit $$status; fi
	@echo; echo "$$(nproc) cores, $$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), $$($(EMACS) --version | head -1), $$(rustc --version)"
	@cat $(BENCH_ROWS) | awk -F'\t' 'BEGIN { printf "%-56s %-20s %-20s %8s %-9s %s\n", "figure", "ours", "reference", "ratio", "target", "pass"; \
	    printf "%-56s %-20s %-20s %8s %-9s %s\n", "------", "----", "---------", "-----", "------", "----" } \
	  $$1 == "row" { printf "%-56s %-20s %-20s %8s %-9s %s\n", $$2, $$3, $$4, $$5, $$6, $$7 }'

bench-engine:
	$(BENCH_CARGO) --bench engine

# make dist: a package.el tarball, target/dist/gptel-scope-VERSION.tar (M-x package-install-file):
# the package's elisp, lisp/*.el (not dev/'s tools, which need the repository), gptel-scope-pkg.el
# made from lisp/gptel-scope.el's headers, and what cargo builds the module from on first load.
.PHONY: dist test-install
VERSION   := $(shell sed -n 's/^;; Version: *//p' lisp/gptel-scope.el)
DIST_NAME := gptel-scope-$(VERSION)
DIST_TAR  := target/dist/$(DIST_NAME).tar

dist:
	@test "$$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)" = "$(VERSION)" || \
	  { echo "dist: Cargo.toml's version is not $(VERSION), lisp/gptel-scope.el's"; exit 1; }
	@rm -rf target/dist/$(DIST_NAME) $(DIST_TAR); mkdir -p target/dist/$(DIST_NAME)
	@cp $(ELISP) Cargo.toml Cargo.lock target/dist/$(DIST_NAME)/
	@cp -R src data scope-profiles target/dist/$(DIST_NAME)/
	@$(EMACS) -Q --batch --eval '(progn (require (quote package)) (package-generate-description-file (with-temp-buffer (insert-file-contents "lisp/gptel-scope.el") (package-buffer-info)) "target/dist/$(DIST_NAME)/gptel-scope-pkg.el"))'
	@tar -C target/dist --format=ustar --owner=0 --group=0 --numeric-owner --sort=name -cf $(DIST_TAR) $(DIST_NAME)
	@echo "$(DIST_TAR): $$(tar -tf $(DIST_TAR) | grep -vc /$$) files"

# make test-install: install the package the three ways the README gives (straight.el, elpaca,
# package.el with the dist tarball), each offline in a fresh HOME, and make a tool call; on
# EMACS and on EMACS30 when .ci/emacs30 has unpacked it.
test-install:
	@status=0; for emacs in $(EMACS) $(EMACS30); do \
	  echo "install test on $$($$emacs --version | head -n 1)"; \
	  EMACS=$$emacs test/install/run.sh || status=1; \
	done; exit $$status

# Fuzzing (fuzz/, its own workspace): each target runs FUZZ_SECONDS. cargo-fuzz needs nightly
# flags, which RUSTC_BOOTSTRAP=1 gives the stable toolchain. Seeds: the attack corpora.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decide patch
FUZZ_FLAGS   ?= -s none

fuzz-seeds:
	@mkdir -p fuzz/corpus/decide fuzz/corpus/patch
	@if [ -z "$$(ls -A fuzz/corpus/decide)" ]; then \
	  awk -F'\t' 'FNR > 1 && $$2 != "" { f = sprintf("fuzz/corpus/decide/seed-%s", $$1); printf "%s", $$2 > f; close(f) }' \
	    tests/corpus/attacks-extra.tsv tests/corpus/attacks.tsv; \
	  printf 'git commit -m "$$(cat <<'"'"'EOF'"'"'\nmsg it'"'"'s (x)\nEOF\n)" && git log -1 2>&1 | tail -n 3\n' > fuzz/corpus/decide/heredoc; fi
	@if [ -z "$$(ls -A fuzz/corpus/patch)" ]; then \
	  printf -- '--- a/src/a\n+++ b/src/a\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' > fuzz/corpus/patch/unified; \
	  printf -- '*** Begin Patch\n*** Add File: src/n\n+new\n*** Update File: src/x\n*** Move to: src/y\n@@\n-x\n+X\n*** End of File\n*** Delete File: src/a\n*** End Patch\n' > fuzz/corpus/patch/envelope; \
	  printf -- '--- /dev/null\n+++ b/../outside/z\n@@ -0,0 +1 @@\n+z\n\\ No newline at end of file\n' > fuzz/corpus/patch/escape; fi

fuzz: fuzz-seeds
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	@cd fuzz && for t in $(FUZZ_TARGETS); do \
	  dict=$$(test -f $$t.dict && echo -dict=$$t.dict); \
	  RUSTC_BOOTSTRAP=1 RUST_BACKTRACE=0 $(CARGO) fuzz run $(FUZZ_FLAGS) $$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 $$dict || exit 1; \
	done

# Part of `make test`: 10 s per target when cargo-fuzz is installed (CI installs it).
test-fuzz:
	@if command -v cargo-fuzz >/dev/null 2>&1; then $(MAKE) --no-print-directory fuzz-smoke; \
	else echo "fuzz smoke test skipped: cargo-fuzz is not installed (cargo install cargo-fuzz)"; fi

# CI: 10 s per target; a decision may take up to 1 s there (shared machines).
fuzz-smoke:
	GPTEL_SCOPE_TIME_LIMIT_MS=1000 $(MAKE) fuzz FUZZ_SECONDS=10

clean:
	$(CARGO) clean
	rm -f $(MODULE) lisp/gptel-scope-run lisp/*.elc dev/*.elc
