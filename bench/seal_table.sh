#!/bin/sh
# heaptape benchmarks -- the sealer, two builds side by side: `heaptape seal`
# of journals whose blocks are near one another in time and address
# (python3 and cc1plus of bench/workloads.sh, and fpapp of
# bench/rec_fpapp.cc: 1.8 M events in half a second, where compressing the
# columns weighs most) and of bench/scatter.c, whose 4 M blocks of 8 bytes
# are freed in a random order (the live table's worst case; under glibc, and
# under mimalloc when installed: it puts 8-byte blocks 8 bytes apart).
# Alternating runs, wall and CPU medians, new/old ratios; checks that both
# builds seal each journal to the same bytes.
# usage: sh bench/seal_table.sh OLD_BUILD NEW_BUILD   (ROUNDS=7)
set -u
cd "$(dirname "$0")/.."
A=$(cd "$1" && pwd)/heaptape
B=$(cd "$2" && pwd)/heaptape
ROUNDS=${ROUNDS:-7}
W=$(mktemp -d /tmp/ht-bench-table.XXXXXX)
trap 'rm -rf "$W"' EXIT
export W
. bench/workloads.sh
${CC:-cc} -O2 -o "$W/scatter" bench/scatter.c || exit 1
MI=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2

wl_python "$B" record --journal -o "$W/python.j" -- >/dev/null 2>&1
LIST="python"
if [ -n "$CC1PLUS" ]; then
  wl_cxx "$B" record --journal -o "$W/cxx.j" -- >/dev/null 2>&1 && LIST="$LIST cxx"
fi
if ${CXX:-g++} -std=c++17 -O2 -g -fno-omit-frame-pointer -o "$W/fpapp" bench/rec_fpapp.cc; then
  "$B" record --journal -o "$W/fpapp.j" -- "$W/fpapp" 1 >/dev/null 2>&1 && LIST="$LIST fpapp"
fi
"$B" record --journal -o "$W/scatter.j" -- "$W/scatter" >/dev/null 2>&1
LIST="$LIST scatter"
if [ -e "$MI" ]; then
  LD_PRELOAD=$MI "$B" record --journal -o "$W/scatter-mi.j" -- "$W/scatter" >/dev/null 2>&1
  LIST="$LIST scatter-mi"
fi

echo "workload    old_wall new_wall  ratio  old_cpu new_cpu  ratio  (medians of $ROUNDS)"
for w in $LIST; do
  : >"$W/runs"
  for i in $(seq "$ROUNDS"); do
    for b in old new; do
      [ $b = old ] && H=$A || H=$B
      cp "$W/$w.j" "$W/$b.tape"
      /usr/bin/time -o "$W/t" -f "%e %U %S" "$H" seal "$W/$b.tape" >/dev/null 2>&1
      awk -v b=$b '{ printf "%s %s %.2f\n", b, $1, $2 + $3 }' "$W/t" >>"$W/runs"
    done
  done
  cmp -s "$W/old.tape" "$W/new.tape" || echo "$w: DIFFERENT TAPES"
  for b in old new; do
    for c in 2 3; do
      awk -v b=$b -v c=$c '$1 == b { print $c }' "$W/runs" | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' >"$W/m.$b.$c"
    done
  done
  awk -v w="$w" -v ow="$(cat "$W/m.old.2")" -v nw="$(cat "$W/m.new.2")" \
      -v oc="$(cat "$W/m.old.3")" -v nc="$(cat "$W/m.new.3")" 'BEGIN {
    printf "%-10s %8.2f %8.2f %6.2f %8.2f %7.2f %6.2f\n", w, ow, nw, nw / ow, oc, nc, nc / oc }'
done
