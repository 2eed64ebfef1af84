# gptel-scope: build, test, lint, demo, benchmarks.
EMACS   ?= emacs
CARGO   ?= cargo
SCOPE   ?=
DIR     ?= $(CURDIR)
CMD     ?=

MODULE_SUFFIX := $(shell $(EMACS) -Q --batch --eval '(princ module-file-suffix)' 2>/dev/null || echo .so)
MODULE  := lisp/gptel-scope-module$(MODULE_SUFFIX)
LIB     := target/release/libgptel_scope$(if $(filter .dylib,$(MODULE_SUFFIX)),.dylib,$(if $(filter .dll,$(MODULE_SUFFIX)),.dll,.so))
ELISP   := $(filter-out lisp/gptel-scope-module%,$(wildcard lisp/*.el))
BATCH   := $(EMACS) -Q --batch -L lisp -L test

.PHONY: all module test test-rust test-elisp test-fuzz lint check demo bench bench-engine clean fuzz fuzz-smoke fuzz-seeds

all: module

module: $(MODULE)

$(MODULE): Cargo.toml $(wildcard src/*.rs src/*/*.rs data/*.yml)
	$(CARGO) build --release --lib
	cp $(LIB) $(MODULE).new && mv -f $(MODULE).new $(MODULE)

test: test-rust test-elisp test-fuzz

test-rust:
	$(CARGO) test --quiet

test-elisp: module
	@if ls test/*-test.el >/dev/null 2>&1; then \
	  $(BATCH) -l test/test-helper.el $(patsubst %,-l %,$(wildcard test/*-test.el)) -f ert-run-tests-batch-and-exit; \
	else echo "no elisp tests yet"; fi

lint: module
	@rm -f lisp/*.elc; $(BATCH) --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile $(ELISP); \
	  status=$$?; rm -f lisp/*.elc; exit $$status
	@$(BATCH) --eval '(progn (require (quote checkdoc)) (setq checkdoc-spellcheck-documentation-flag nil) (dolist (f command-line-args-left) (checkdoc-file f)))' $(ELISP) > .checkdoc.log 2>&1; \
	  status=0; if grep -E '^[^ ]+\.el:[0-9]+: ' .checkdoc.log; then status=1; else echo "checkdoc: clean"; fi; rm -f .checkdoc.log; exit $$status

# make check SCOPE=scope.yml DIR=/some/dir CMD='ls | grep foo'   (one readable decision)
# make check SCOPE=scope.yml DIR=/some/dir < cmds.jsonl          (one JSON object per line)
check: module
	@$(BATCH) -l gptel-scope-cli -f gptel-scope-cli-check "$(SCOPE)" "$(DIR)" "$(CMD)"

demo: module
	@$(BATCH) -l gptel-scope-demo -f gptel-scope-demo-run

# make bench: every benchmark (Rust engine, truncation, and through Emacs), then one table of
# their rows; the full reports are in target/bench-*.log.
BENCH_ROWS = target/bench-engine.log target/bench-truncate.log target/bench-emacs.log
# The benchmarks are their own crate (benches/Cargo.toml), built into this target/.
BENCH_CARGO = $(CARGO) bench --manifest-path benches/Cargo.toml --target-dir target

bench: module
	@mkdir -p target
	@echo "cargo bench --manifest-path benches/Cargo.toml --bench engine   > target/bench-engine.log"
	@$(BENCH_CARGO) --bench engine > target/bench-engine.log 2>&1 || { cat target/bench-engine.log; exit 1; }
	@echo "cargo bench --manifest-path benches/Cargo.toml --bench truncate > target/bench-truncate.log"
	@$(BENCH_CARGO) --bench truncate > target/bench-truncate.log 2>&1 || { cat target/bench-truncate.log; exit 1; }
	@echo "emacs -f gptel-scope-bench-run > target/bench-emacs.log (byte-compiled)"
	@rm -f lisp/gptel-scope-bench.elc; $(BATCH) -f batch-byte-compile lisp/gptel-scope-bench.el >/dev/null 2>&1; \
	  $(BATCH) -l gptel-scope-bench -f gptel-scope-bench-run > target/bench-emacs.log 2>&1; \
	  status=$$?; rm -f lisp/gptel-scope-bench.elc; if [ $$status -ne 0 ]; then cat target/bench-emacs.log; exit $$status; fi
	@echo; echo "$$(nproc) cores, $$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), $$($(EMACS) --version | head -1), $$(rustc --version)"
	@cat $(BENCH_ROWS) | awk -F'\t' 'BEGIN { printf "%-56s %-20s %-20s %8s %-9s %s\n", "figure", "ours", "reference", "ratio", "target", "pass"; \
	    printf "%-56s %-20s %-20s %8s %-9s %s\n", "------", "----", "---------", "-----", "------", "----" } \
	  $$1 == "row" { printf "%-56s %-20s %-20s %8s %-9s %s\n", $$2, $$3, $$4, $$5, $$6, $$7 }'

bench-engine:
	$(BENCH_CARGO) --bench engine

# make dist: a package.el tarball, target/dist/gptel-scope-VERSION.tar (M-x package-install-file):
# the elisp (not the benchmarks, which need the repository), gptel-scope-pkg.el made from
# lisp/gptel-scope.el's headers, and what cargo builds the module from on first load.
.PHONY: dist test-install
VERSION   := $(shell sed -n 's/^;; Version: *//p' lisp/gptel-scope.el)
DIST_NAME := gptel-scope-$(VERSION)
DIST_TAR  := target/dist/$(DIST_NAME).tar

dist:
	@test "$$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)" = "$(VERSION)" || \
	  { echo "dist: Cargo.toml's version is not $(VERSION), lisp/gptel-scope.el's"; exit 1; }
	@rm -rf target/dist/$(DIST_NAME) $(DIST_TAR); mkdir -p target/dist/$(DIST_NAME)
	@cp $(filter-out lisp/gptel-scope-bench.el,$(ELISP)) Cargo.toml Cargo.lock target/dist/$(DIST_NAME)/
	@cp -R src data scope-profiles target/dist/$(DIST_NAME)/
	@$(EMACS) -Q --batch --eval '(progn (require (quote package)) (package-generate-description-file (with-temp-buffer (insert-file-contents "lisp/gptel-scope.el") (package-buffer-info)) "target/dist/$(DIST_NAME)/gptel-scope-pkg.el"))'
	@tar -C target/dist --format=ustar --owner=0 --group=0 --numeric-owner --sort=name -cf $(DIST_TAR) $(DIST_NAME)
	@echo "$(DIST_TAR): $$(tar -tf $(DIST_TAR) | grep -vc /$$) files"

# make test-install: install the package the three ways the README gives (straight.el, elpaca,
# package.el with the dist tarball), each offline in a fresh HOME, and make a tool call.
test-install:
	@test/install/run.sh

# Fuzzing (fuzz/, its own workspace): each target runs FUZZ_SECONDS. cargo-fuzz needs nightly
# flags, which RUSTC_BOOTSTRAP=1 gives the stable toolchain. Seeds: the attack corpora.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decide patch fastparse yaml
FUZZ_FLAGS   ?= -s none

fuzz-seeds:
	@mkdir -p fuzz/corpus/decide fuzz/corpus/patch fuzz/corpus/fastparse
	@if [ -z "$$(ls -A fuzz/corpus/fastparse)" ]; then \
	  awk -F'\t' 'FNR > 1 && $$2 != "" { f = sprintf("fuzz/corpus/fastparse/seed-%s", $$1); printf "%s", $$2 > f; close(f) }' \
	    tests/corpus/attacks-extra.tsv tests/corpus/attacks.tsv; \
	  printf 'git commit -m "$$(cat <<'"'"'EOF'"'"'\nmsg it'"'"'s (x)\nEOF\n)" && git log -1 2>&1 | tail -n 3\n' > fuzz/corpus/fastparse/heredoc; fi
	@if [ -z "$$(ls -A fuzz/corpus/decide)" ]; then \
	  awk -F'\t' 'FNR > 1 && $$2 != "" { f = sprintf("fuzz/corpus/decide/seed-%s", $$1); printf "%s", $$2 > f; close(f) }' \
	    tests/corpus/attacks-extra.tsv tests/corpus/attacks.tsv; fi
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
	rm -f $(MODULE) lisp/*.elc
