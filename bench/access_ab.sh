#!/bin/sh
# heaptape benchmarks -- heaptape's Valgrind tool alone (no record, no
# finalisation) from two builds, A/B: valgrind --tool=none, --tool=dhat and
# each build's tool with every access and with --access-sample 100, run in
# turn within each round (so a loaded machine weighs on all alike), on the
# workloads of bench/access_workloads.sh. Prints the median CPU time
# (user + sys) of ROUNDS runs of each, and ratios: B / A, and each to
# --tool=none.
# usage: ROUNDS=5 [PROGS="lua5.4 perl"] [VARIANTS="none a100 b100"]
#        [ACCESS_N=400000 ACCESS_ROWS=60000] sh bench/access_ab.sh BUILD_A BUILD_B
# (two build dirs; PROGS: sqlite3 python3 lua5.4 perl by default; VARIANTS,
# of none dhat a1 b1 a100 b100 (the default) and massif (Valgrind's heap
# profiler: malloc replaced, a stack per allocation, no access
# instrumented) and b0 (B keeping no access: --access-sample=1000000000):
# which to run. The long
# workloads (ACCESS_N=400000 ACCESS_ROWS=60000) measure the cost per
# allocation and access; there DHAT and every access take 10-40 s a run:
# VARIANTS="none a100 b100" measures the sampled tool alone.)
set -u
cd "$(dirname "$0")/.."
[ $# = 2 ] || { echo "usage: sh bench/access_ab.sh BUILD_A BUILD_B"; exit 2; }
for d in "$1" "$2"; do
  [ -e "$d/valgrind/heaptape-amd64-linux" ] || { echo "$d/valgrind/heaptape-amd64-linux missing"; exit 2; }
done
A=$(cd "$1" && pwd)/valgrind B=$(cd "$2" && pwd)/valgrind
ROUNDS=${ROUNDS:-5}
variants=${VARIANTS:-none dhat a1 b1 a100 b100}
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
run() {  # run VARIANT CMD...
  v=$1; shift
  case $v in
    none) cpu valgrind -q --tool=none "$@" ;;
    dhat) cpu valgrind -q --tool=dhat --dhat-out-file="$T/dhat.out" "$@" ;;
    a1) tool "$A" 1 "$@" ;;
    b1) tool "$B" 1 "$@" ;;
    a100) tool "$A" 100 "$@" ;;
    b100) tool "$B" 100 "$@" ;;
    b0) tool "$B" 1000000000 "$@" ;;
    massif) cpu valgrind -q --tool=massif --massif-out-file="$T/massif.out" "$@" ;;
  esac
}
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
has() { case " $variants " in *" $1 "*) return 0 ;; esac; return 1; }
# Header: the variants, then the ratios their presence allows.
ratios=""
for p in "b1 a1" "b100 a100" "b1 dhat" "a100 none" "b100 none" "b0 none" "massif none"; do
  set -- $p; has "$1" && has "$2" && ratios="$ratios $1/$2"
done
printf '| program |'; for v in $variants; do printf ' %s |' "$v"; done
for r in $ratios; do printf ' %s |' "$r"; done; echo
printf '|---|'; for v in $variants $ratios; do printf -- '---|'; done; echo
for prog in ${PROGS:-sqlite3 python3 lua5.4 perl}; do
  access_argv "$prog"; set -- "$AW1" "$AW2" "$AW3"
  for v in $variants; do : >"$T/$v"; done
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    for v in $variants; do run "$v" "$@" >>"$T/$v"; done
    r=$((r + 1))
  done
  printf '| %s |' "$prog"
  for v in $variants; do m=$(median "$T/$v"); eval "m_$v=$m"; printf ' %s |' "$m"; done
  for r in $ratios; do
    eval "x=\$m_${r%/*} y=\$m_${r#*/}"
    awk -v x="$x" -v y="$y" 'BEGIN {printf " %.2f |", x / y}'
  done
  echo
done
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
