#!/bin/sh
# heaptape -- the Ruby extension on a real workload (JSON, ERB, CSV, threads:
# tests/ruby/workload.rb): the output is the same under record --ruby and
# --ruby=native as without heaptape, and every analysis reads its tape;
# record --ruby --sample --pprof-every writes snapshots while it runs.
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
finish
