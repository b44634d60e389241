#!/bin/sh
# Installs every Debian package heaptape needs to build, test and benchmark.
# Idempotent: when everything is present it prints nothing and exits 0.
set -eu

# Build: compilers, libraries the recorder and the tools link against.
BUILD="make gcc g++ clang pkg-config libc6-dev zlib1g-dev libzstd-dev libbz2-dev
libunwind-dev libdw-dev libelf-dev libpng-dev libncurses-dev"
# Frontends and allocator studies.
EXTRA="liblua5.4-dev lua5.4 luajit libluajit-5.1-dev libjemalloc-dev
libmimalloc-dev libgoogle-perftools-dev libprotobuf-c-dev protobuf-c-compiler
python3.11-dev ruby-dev"
# Real programs the tests record, and the tools they compare against.
# libc6-dbg: libc's frames get file:line (and finalisation its realistic cost).
TESTS="python3 sqlite3 perl heaptrack file binutils procps libc6-dbg time"
# The live view's tests drive it in a terminal multiplexer (live_view.sh).
TESTS="$TESTS tmux"
# Programs the "never hang, kill or change the program" tests record
# (tests/integration/record_hard_real.sh; tar and bash are essential).
TESTS="$TESTS ripgrep nodejs gawk xz-utils gdb"
# The pictures' checks: go tool pprof reads the pprof exports, headless
# Chromium renders the SVG and HTML outputs (both large: ~300 MB together).
TESTS="$TESTS golang-go chromium"
# record --access: heaptape's Valgrind tool builds against the valgrind
# package (pkg-config valgrind, libcoregrind, libvex) and runs under it.
BUILD="$BUILD valgrind"
# Ruby's own memory profiler, beside the Ruby module in bench/bench_ruby.sh.
TESTS="$TESTS ruby-memory-profiler"

missing=""
for p in $BUILD $EXTRA $TESTS; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing packages:$missing (run as root to install them)" >&2
  exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
