#!/bin/sh
# heaptape benchmarks -- heaptape's Valgrind tool alone (no record, no
# finalisation) from two builds, A/B: valgrind --tool=none, --tool=dhat and
# each build's tool with every access and with --access-sample 100, run in
# turn within each round (so a loaded machine weighs on all alike), on the
# workloads of bench/access_workloads.sh. Prints the median CPU time
# (user + sys) of ROUNDS runs of each, and ratios to --tool=none.
# usage: ROUNDS=5 [PROGS="lua5.4 perl"] sh bench/access_ab.sh BUILD_A BUILD_B
# (two build dirs; PROGS: sqlite3 python3 lua5.4 perl by default)
set -u
cd "$(dirname "$0")/.."
[ $# = 2 ] || { echo "usage: sh bench/access_ab.sh BUILD_A BUILD_B"; exit 2; }
A=$(cd "$1" && pwd)/valgrind B=$(cd "$2" && pwd)/valgrind
ROUNDS=${ROUNDS:-5}
T=$(mktemp -d /tmp/ht-bench-ab.XXXXXX)
trap 'rm -rf "$T"' EXIT
. bench/access_workloads.sh
mkdir "$T/cwd"
cpu() {  # cpu CMD...: CPU seconds of one run
  (cd "$T/cwd" && /usr/bin/time -f '%U %S' -o "$T/time" "$@" >/dev/null 2>"$T/err" </dev/null)
  awk '{printf "%.3f\n", $1 + $2}' "$T/time"
}
tool() {  # tool DIR SAMPLE CMD...
  d=$1 s=$2; shift 2
  VALGRIND_LIB=$d cpu valgrind -q --tool=heaptape --tape="$T/t.tape" --access-sample="$s" "$@"
}
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
variants="none dhat a1 b1 a100 b100"
echo "| program | none | dhat | A | B | A sample 100 | B sample 100 | B / A | B / dhat | B sample 100 / none |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for prog in ${PROGS:-sqlite3 python3 lua5.4 perl}; do
  access_argv "$prog"; set -- "$AW1" "$AW2" "$AW3"
  for v in $variants; do : >"$T/$v"; done
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    cpu valgrind -q --tool=none "$@" >>"$T/none"
    cpu valgrind -q --tool=dhat --dhat-out-file="$T/dhat.out" "$@" >>"$T/dhat"
    tool "$A" 1 "$@" >>"$T/a1"; tool "$B" 1 "$@" >>"$T/b1"
    tool "$A" 100 "$@" >>"$T/a100"; tool "$B" 100 "$@" >>"$T/b100"
    r=$((r + 1))
  done
  for v in $variants; do eval "m_$v=\$(median \"\$T/\$v\")"; done
  awk -v p="$prog" -v n="$m_none" -v d="$m_dhat" -v a="$m_a1" -v b="$m_b1" -v as="$m_a100" -v bs="$m_b100" \
    'BEGIN {printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n",
            p, n, d, a, b, as, bs, b / a, b / d, bs / n}'
done
