# Every subcommand reads its arguments one way: the same mistake gets the
# same message (the first line on stderr) and exit status 2.
for c in report stats dump ops symbolize diff pprof flamegraph html lifetimes replay heapmap; do
  err=$("$HEAPTAPE" $c --bogus ../../data/rep_basic.tape 2>&1 >/dev/null); rc=$?
  echo "$(printf '%s\n' "$err" | head -n 1) (exit $rc)"
done
for c in report diff lifetimes; do
  "$HEAPTAPE" $c --top 2>&1 >/dev/null | head -n 1
  "$HEAPTAPE" $c --top=x ../../data/rep_basic.tape 2>&1 >/dev/null | head -n 1
done
for c in report stats lifetimes diff; do
  "$HEAPTAPE" $c --json=yes ../../data/rep_basic.tape 2>&1 >/dev/null | head -n 1
done
for c in report stats dump ops lifetimes flamegraph html heapmap replay; do
  "$HEAPTAPE" $c 2>&1 >/dev/null | head -n 1
  "$HEAPTAPE" $c ../../data/rep_basic.tape ../../data/rep_lua.tape 2>&1 >/dev/null | head -n 1
done
