#!/bin/sh
# heaptape benchmarks -- the sealer's memory and record's parent, two builds
# side by side (A/B, alternating) on the python3 workload of
# bench/workloads.sh: `heaptape seal` of its journal, `heaptape record`,
# `heaptape html` of record's tape and `record --live` (in tmux; q sent as
# soon as the view says the program exited). CPU (user+sys), wall and peak
# RSS (/usr/bin/time: the largest process, here heaptape's) per run, then the
# medians per build. Checks that both builds seal the journal to the same
# bytes and write the same page.
# usage: sh bench/seal_ab.sh OLD_BUILD NEW_BUILD   (ROUNDS=5; LIVE=0 skips
# record --live, which needs tmux)
set -u
cd "$(dirname "$0")/.."
A=$(cd "$1" && pwd)/heaptape
B=$(cd "$2" && pwd)/heaptape
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d /tmp/ht-bench-seal.XXXXXX)
trap 'rm -rf "$W"; [ -n "${TM:-}" ] && $TM kill-server 2>/dev/null' EXIT
export W
. bench/workloads.sh
OUT=$W/runs

wl_python "$B" record --journal -o "$W/j.tape" -- >/dev/null 2>&1
# one KIND BUILD CMD...: a run, "KIND BUILD wall cpu rssKB" appended to OUT.
one() {
  k=$1 b=$2; shift 2
  /usr/bin/time -o "$W/t" -f "%e %U %S %M" "$@" >/dev/null 2>&1
  awk -v k="$k" -v b="$b" '{ printf "%s %s %s %.2f %s\n", k, b, $1, $2 + $3, $4 }' "$W/t" >>"$OUT"
}
for i in $(seq "$ROUNDS"); do
  for b in old new; do
    [ $b = old ] && H=$A || H=$B
    cp "$W/j.tape" "$W/s.$b.tape"
    one seal $b "$H" seal "$W/s.$b.tape"
    rm -f "$W/r.$b.tape"
    one record $b env PYTHONMALLOC=malloc "$H" record -o "$W/r.$b.tape" -- "$PY" "$W/pyjson.py"
  done
done
cmp -s "$W/s.old.tape" "$W/s.new.tape" && echo "seal: the same bytes" || echo "seal: DIFFERENT TAPES"
for i in $(seq "$ROUNDS"); do
  for b in old new; do
    [ $b = old ] && H=$A || H=$B
    one html $b "$H" html -o "$W/h.$b.html" "$W/r.new.tape"
  done
done
cmp -s "$W/h.old.html" "$W/h.new.html" && echo "html: the same page" || echo "html: DIFFERENT PAGES"

if [ "${LIVE:-1}" = 1 ] && command -v tmux >/dev/null 2>&1; then
  TM="tmux -L ht-bench-seal-$$"
  $TM -f /dev/null new-session -d -s b -x 120 -y 40 "cd $W && TERM=xterm sh"
  sleep 0.5
  for i in $(seq "$ROUNDS"); do
    for b in old new; do
      [ $b = old ] && H=$A || H=$B
      rm -f "$W/l.$b.tape" "$W/t"
      $TM send-keys -t b "clear" Enter
      $TM send-keys -t b "PYTHONMALLOC=malloc /usr/bin/time -o $W/t -f '%e %U %S %M' $H record --live -o $W/l.$b.tape -- $PY $W/pyjson.py 2>/dev/null >/dev/null; echo DONE-\$?" Enter
      n=0
      while ! $TM capture-pane -t b -p | grep -q 'program exited' && [ $n -lt 1800 ]; do
        sleep 0.1; n=$((n + 1)); done
      $TM send-keys -t b q
      n=0
      while ! $TM capture-pane -t b -p | grep -q 'DONE-[0-9]' && [ $n -lt 1800 ]; do
        sleep 0.1; n=$((n + 1)); done
      awk -v b="$b" '{ printf "live %s %s %.2f %s\n", b, $1, $2 + $3, $4 }' "$W/t" >>"$OUT"
    done
  done
fi

cat "$OUT"
echo
echo "| run | build | wall s | CPU s | peak RSS MiB | runs |"
echo "|---|---|---|---|---|---|"
python3 - "$OUT" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, b, wall, cpu, rss = line.split()
    runs.setdefault((k, b), []).append((float(wall), float(cpu), int(rss) / 1024))
for (k, b), v in runs.items():
    med = [statistics.median(x[i] for x in v) for i in range(3)]
    print("| %s | %s | %.2f | %.2f | %.0f | %d |" % (k, b, med[0], med[1], med[2], len(v)))
EOF
