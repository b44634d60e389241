#!/bin/sh
# heaptape -- the Ruby extension on a real workload (JSON, ERB, CSV, threads:
# tests/ruby/workload.rb): the output is the same under record --ruby and
# --ruby=native as without heaptape, and every analysis reads its tape;
# record --ruby --sample --pprof-every writes snapshots while it runs; object
# sizes are brought up to date while recording (HEAPTAPE_RUBY_SIZES), full and
# sampled.
. "$(dirname "$0")/viz_common.inc"
command -v ruby >/dev/null 2>&1 || { echo "skip: no ruby"; echo "0 passed, 0 failed"; exit 0; }
W="$HT_ROOT/tests/ruby/workload.rb"
(cd "$TMP" && ruby "$W" > "$TMP/bare.out" 2>&1)
ok "workload runs bare" test $? = 0
for mode in ruby ruby=native; do
  (cd "$TMP" && "$HEAPTAPE" record --$mode -o "$TMP/w.$mode.tape" -- ruby "$W" > "$TMP/w.$mode.out" 2>"$TMP/w.$mode.err")
  ok "record --$mode: exit status" test $? = 0
  ok "record --$mode: output identical" cmp -s "$TMP/bare.out" "$TMP/w.$mode.out"
done
T="$TMP/w.ruby.tape"
for c in "report" "report --memprof" "report --json" "report --leaks" "stats" "ops" "lifetimes --by-site"; do
  "$HEAPTAPE" $c "$T" > "$TMP/a.out" 2>"$TMP/a.err"
  ok "$c: exit 0, output, no warnings" sh -c "[ -s '$TMP/a.out' ] && [ ! -s '$TMP/a.err' ]"
done
"$HEAPTAPE" report --memprof "$T" | grep -q "^@$W:[0-9]*: [0-9]* events"
ok "memprof names @workload.rb:line" test $? = 0
"$HEAPTAPE" flamegraph --folded -o - "$T" 2>/dev/null | grep -q "^<main> $W;<main> $W:[0-9]*;"
ok "flamegraph --folded: Ruby stacks, outermost first" test $? = 0
"$HEAPTAPE" html -o "$TMP/w.html" "$T" 2>/dev/null && grep -q "workload.rb" "$TMP/w.html"
ok "html: the script's frames" test $? = 0
"$HEAPTAPE" pprof -o "$TMP/w.pb.gz" "$T" 2>/dev/null
ok "pprof: written" test -s "$TMP/w.pb.gz"
"$HEAPTAPE" diff "$TMP/w.ruby.tape" "$TMP/w.ruby=native.tape" > "$TMP/d.out" 2>&1
ok "diff of two Ruby tapes" test -s "$TMP/d.out"
"$HEAPTAPE" replay "$T" > "$TMP/r.out" 2>&1
ok "replay of a Ruby tape" test $? = 0

# periodic pprof while it runs (record --pprof-every), sampled
cat > "$TMP/long.rb" <<'RB'
keep = []
20.times { keep << 20000.times.map { |i| "v#{i}" * 2 }; sleep 0.05 } # LONG
RB
(cd "$TMP" && "$HEAPTAPE" record --ruby --sample 64K --pprof-every 0.3 -o "$TMP/lg.tape" -- ruby long.rb > /dev/null 2>&1)
ok "record --ruby --pprof-every: exit status" test $? = 0
ok "record --ruby --pprof-every: snapshots written" test -s "$TMP/lg.tape.0002.pb.gz"
# (mid-run snapshots name runtime locations LOC N: the recorder writes
# the location dictionary at stop; docs/RUBY.md)
if command -v go >/dev/null 2>&1; then
  HOME=$TMP go tool pprof -raw "$TMP/lg.tape.0002.pb.gz" 2>/dev/null | grep -q "^Samples:"
  ok "go tool pprof reads a snapshot" test $? = 0
fi
# sizes kept current while recording: strings grown in place show their 4 MB
# between two GCs as ObjectSpace.memsize_of has them (full: one string,
# within 1%: the array beside it; sampled at 4 KiB: 4000 of 1000 bytes, within 30%), their slots at
# the end; HEAPTAPE_RUBY_SIZES=0
# measures at stop only
Z="$HT_ROOT/tests/ruby/sizes.rb"
sz_at() {  # NAME: the strings' site at the time sizes.rb wrote, and at the end
  "$HEAPTAPE" report --json --at "$(cut -d' ' -f1 "$TMP/$1.at")" "$TMP/$1.tape" > "$TMP/$1.json" 2>/dev/null
  python3 - "$TMP/$1.json" "$Z" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
line = [i + 1 for i, l in enumerate(open(sys.argv[2])) if l.rstrip().endswith("# BIG")][0]
s = [x for x in d["at"] if x["location"].endswith("sizes.rb:%d" % line)]
print("at", sum(x["at"] for x in s), "leaked", sum(x["leaked"] for x in s),
      "true", open(sys.argv[1][:-4] + "at").read().split()[1])
PYEOF
}
for run in "0 1 0.01" "4K 4000 0.3"; do
  set -- $run
  (cd "$TMP" && HEAPTAPE_SEED=3 HEAPTAPE_SAMPLE=$1 HEAPTAPE_RUBY_SIZES=0.2 RUBYLIB="$HT_BUILD/ruby" \
     ruby "$Z" sz$1.tape sz$1.at $2) > /dev/null 2>&1
  ok "sizes ($1): the run completes" test -s "$TMP/sz$1.at"
  r=$(sz_at sz$1)
  ok "sizes ($1): 4 MB at the strings' line mid-run, their slots at the end ($r)" \
    sh -c "echo '$r' | awk -v e=$3 '{ d = \$2 - \$6; exit !(d <= e * \$6 && -d <= e * \$6 && \$4 < 400000) }'"
done
(cd "$TMP" && HEAPTAPE_RUBY_SIZES=0 RUBYLIB="$HT_BUILD/ruby" ruby "$Z" szoff.tape szoff.at) > /dev/null 2>&1
r=$(sz_at szoff)
ok "sizes: HEAPTAPE_RUBY_SIZES=0 measures at stop only ($r)" sh -c "echo '$r' | awk '{ exit !(\$2 < 1000) }'"

finish
