#!/bin/sh
# heaptape benchmarks -- bytes read and written per allocation site:
# heaptape record --access against valgrind --tool=dhat on the same run of
# sqlite3 and python3 (bench/access_workloads.sh), compared by
# bench/dhat_compare.py (sites paired by blocks and bytes allocated). Both
# run in an empty directory (python3 lists its current directory) with
# PYTHONHASHSEED=0 and the same VALGRIND_LIB, so the runs are the same.
# Prints markdown for docs/ACCESS.md.
# usage: sh bench/access_dhat.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
H=$PWD/$B/heaptape VG=$PWD/$B/valgrind
T=$(mktemp -d /tmp/ht-bench-dhat.XXXXXX)
trap 'rm -rf "$T"' EXIT
command -v valgrind >/dev/null || { echo "valgrind missing"; exit 1; }
[ -x "$B/valgrind/heaptape-amd64-linux" ] || { echo "build $B/valgrind first (make)"; exit 1; }
. bench/access_workloads.sh
mkdir "$T/cwd"
export PYTHONHASHSEED=0
for prog in sqlite3 python3; do
  access_argv "$prog"; set -- "$AW1" "$AW2" "$AW3"
  (cd "$T/cwd" && VALGRIND_LIB="$VG" valgrind -q --tool=dhat \
     --dhat-out-file="$T/$prog.dhat" "$@" >/dev/null 2>&1 </dev/null)
  (cd "$T/cwd" && "$H" record --access -o "$T/$prog.tape" -- "$@" >/dev/null 2>&1 </dev/null)
  "$H" access --json --top 0 "$T/$prog.tape" >"$T/$prog.json"
  echo "$prog (\`$*\`):"
  echo
  python3 bench/dhat_compare.py "$T/$prog.dhat" "$T/$prog.json" --check 0.01
  echo
done
