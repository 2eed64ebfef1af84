#!/usr/bin/env bash
# make test-install: install gptel-scope the three ways the README gives, each offline in a
# fresh HOME, and make one tool call through gptel with each:
#
#   straight  straight.el (pinned, ../shared/vendor) with the README's :files, from a clone
#   elpaca    elpaca (pinned) with the README's :files, from a clone
#   package   package.el: package-install-file on the `make dist` tarball
#
# What is installed is a clone of the repository's committed HEAD, as a recipe would fetch
# it. gptel and its dependencies come from the pinned archives: on the load path for
# straight.el and elpaca, installed with package.el for package.el. Each way
# builds the module with cargo on first load (offline: CARGO_NET_OFFLINE), in its own
# target/. One line per way; the exit status is non-zero when any fails.
#
#   WAYS="straight package" test/install/run.sh    # some of them
#   KEEP=1 test/install/run.sh                     # keep the work directory
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
vendor=${GPTEL_SCOPE_VENDOR:-$repo/../shared/vendor}
EMACS=${EMACS:-emacs}
WAYS=${WAYS:-straight elpaca package}
TIME_LIMIT=${TIME_LIMIT:-1200}  # seconds per Emacs run, a guard against a hang (a module build is about 90 s on 2 quiet cores, and several times that on a busy machine)

skip() { echo "install test skipped: $*"; [ -z "${REQUIRE_DEPS:-}" ] || exit 1; exit 0; }   # REQUIRE_DEPS=1 (CI): fail instead
[ -d "$vendor" ] || skip "no $vendor (the pinned straight.el, elpaca and gptel archives it installs from)"
for a in straight.el elpaca gptel transient compat seq cond-let llama; do
  [ -f "$vendor/$a.tar.gz" ] || skip "$vendor/$a.tar.gz is missing"
done
command -v git >/dev/null 2>&1 || skip "git is not installed (straight.el and elpaca need it)"
command -v cargo >/dev/null 2>&1 || { echo "install test: cargo is not on PATH"; exit 1; }

# The Rust toolchain stays the real one when HOME changes; cargo works from its cache only.
if [ -z "${RUSTUP_HOME:-}" ] && command -v rustup >/dev/null 2>&1; then
  RUSTUP_HOME=$(rustup show home 2>/dev/null) && export RUSTUP_HOME
fi
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export CARGO_NET_OFFLINE=true
unset CARGO_TARGET_DIR EMACSLOADPATH
git_id=(-c user.name=gptel-scope-install-test -c user.email=install-test@localhost)

work=$(mktemp -d "${TMPDIR:-/tmp}/gptel-scope-install.XXXXXX")
failed=0
cleanup() { if [ -n "${KEEP:-}" ] || [ "$failed" -ne 0 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

git clone -q "$repo" "$work/src" || { echo "install test: cannot clone $repo"; failed=1; exit 1; }
eval "$("$vendor/unpack" "$work/deps" new)"   # GPTEL_SCOPE_DEPS: gptel, transient 0.13.7 and theirs
# On the load path of every Emacs, including those the package managers start to compile.
export EMACSLOADPATH="$GPTEL_SCOPE_DEPS:"

# The recipes' :files, as the README gives them (both recipes must give the same).
files=$(grep -o ':files ([^)]*)' "$work/src/README.md" | sort -u)
if [ "$(printf '%s\n' "$files" | grep -c .)" -ne 1 ]; then
  echo "install test: the README's recipes should give one :files list, not:"; printf '%s\n' "$files"; failed=1; exit 1
fi
export GPTEL_SCOPE_FILES=${files#:files }
echo "installing $(git -C "$work/src" log -1 --format='%h %s' | cut -c1-60)... (the committed HEAD)"
echo "recipe :files $GPTEL_SCOPE_FILES"

# A directory unpacked from an archive, made a git repository (as if cloned).
git_repo() {
  git -C "$1" init -q && git -C "$1" add -A && git "${git_id[@]}" -C "$1" commit -q -m "pinned archive"
}

# emacs LOG HOME ARGS...: batch Emacs in the fresh HOME, output appended to LOG.
emacs_in() {
  local log=$1 home=$2; shift 2
  HOME=$home timeout "$TIME_LIMIT" "$EMACS" -Q --batch "$@" >>"$log" 2>&1
}

way_straight() {   # LOG HOME
  local repos="$2/.emacs.d/straight/repos"
  mkdir -p "$repos" && tar -xzf "$vendor/straight.el.tar.gz" -C "$repos" && git_repo "$repos/straight.el" &&
    GPTEL_SCOPE_SRC="$work/src" emacs_in "$1" "$2" -l "$here/install-straight.el" -l "$here/check.el"
}

way_elpaca() {     # LOG HOME
  local sources="$2/.emacs.d/elpaca/sources"
  # elpaca uses a local :repo in place, so it gets a clone of its own.
  git clone -q "$work/src" "$work/elpaca-src" &&
    mkdir -p "$sources" && tar -xzf "$vendor/elpaca.tar.gz" -C "$sources" && git_repo "$sources/elpaca" &&
    # What elpaca's installer does after cloning elpaca.
    (cd "$sources/elpaca" && HOME=$2 "$EMACS" -Q -L . --batch --eval "(byte-recompile-directory \".\" 0 'force)" >>"$1" 2>&1) &&
    GPTEL_SCOPE_SRC="$work/elpaca-src" emacs_in "$1" "$2" -l "$here/install-elpaca.el" -l "$here/check.el"
}

way_package() {    # LOG HOME
  local tar
  make -s -C "$work/src" dist EMACS="$EMACS" >>"$1" 2>&1 || return 1
  tar=$(ls "$work/src"/target/dist/gptel-scope-*.tar) || return 1
  # Everything from package.el: nothing on the load path.
  (unset EMACSLOADPATH
   GPTEL_SCOPE_TAR=$tar GPTEL_SCOPE_DEPS_DIR="$work/deps" emacs_in "$1" "$2" -l "$here/install-package.el" &&
     # Then Emacs starts as a user's would.
     emacs_in "$1" "$2" --eval '(package-initialize)' -l "$here/check.el")
}

start=$SECONDS
for way in $WAYS; do
  log="$work/$way.log" home="$work/home-$way"
  mkdir -p "$home/.emacs.d"
  t=$SECONDS
  if "way_$way" "$log" "$home"; then
    echo "install $way: ok ($((SECONDS - t)) s; $(grep -o 'run_bash_command "echo hi" -> .*' "$log" | tail -1))"
  else
    failed=1
    echo "install $way: FAILED ($((SECONDS - t)) s); the end of $log:"
    tail -n 40 "$log" | sed 's/^/  /'
  fi
done
echo "install test: $((SECONDS - start)) s"
exit $failed
