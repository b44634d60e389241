#!/bin/sh
# heaptape -- `heaptape record` seals the journal while the program runs
# (src/analyze/sealfollow.c): the sealed tape it leaves is the one `heaptape
# seal` makes of the same journal (kept with --keep-journal), packet for
# packet, its aggregate section's HTML snapshots included (they fold as the
# journal grows: docs/FORMAT.md), and every analysis answers the same from
# both, html and report --at without a pass over the events
# (HEAPTAPE_READ_LOG): on 8 threads exchanging blocks, on python3, on a
# program SIGKILLed mid-run. A heaptape record SIGKILLed itself leaves the
# journal, which `heaptape seal` seals.
. "$(dirname "$0")/viz_common.inc"
PROGS=$HT_BUILD/progs
export HEAPTAPE_SEAL_LOG=1

# Packets of two tapes: "same" when all are byte for byte equal, in the
# same order; else the first difference (and its kind).
cat > "$TMP/pk.py" <<'EOF'
import struct, sys
def packets(path):
    d = open(path, 'rb').read()
    hl = 16 + struct.unpack_from('<I', d, 12)[0] + 4
    out, o = [('H', d[:hl])], hl
    while o < len(d):
        if d[o:o + 4] != b'HTPK': return out + [('bad', o)]
        blen = struct.unpack_from('<I', d, o + 8)[0]
        out.append((d[o + 4], d[o:o + 56 + blen]))
        o += 56 + blen
    return out
a = packets(sys.argv[1])
b = packets(sys.argv[2])
if a == b: print('same')
else:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    k = a[i][0] if i < len(a) else b[i][0]
    print('packet %d (kind %s) differs (%d and %d packets)' % (i, k, len(a), len(b)))
EOF

# Outputs of the analyses of tape.tape in directory $1.
analyse() { (cd "$1" && analyse1 tape.tape); }
analyse1() {
  for a in "" --json --memprof --leaks --peak "--json --paths"; do
    echo "== report $a"; "$HEAPTAPE" report $a "$1" 2>&1
  done
  d=$("$HEAPTAPE" stats "$1" 2>/dev/null | awk '/duration/ {print $2}')
  for f in 0.3 0.7; do
    t=$(awk -v d="$d" -v f=$f 'BEGIN {printf "%.6f", d * f}')
    echo "== report --at $t"; "$HEAPTAPE" report --at "$t" "$1" 2>&1
  done
  echo "== stats"; "$HEAPTAPE" stats "$1" 2>&1 | grep -v -e '^  sealed ' -e '^  file ' -e '^  events '
  for m in alloc inuse peak; do
    echo "== folded $m"; "$HEAPTAPE" flamegraph --folded --metric $m "$1" 2>&1
  done
  echo "== html"; "$HEAPTAPE" html -o "$TMP/page.html" "$1" 2>&1 | sed 's|^.*/||'; cksum < "$TMP/page.html"
  echo "== pprof"; "$HEAPTAPE" pprof -o "$TMP/p.pb.gz" "$1" >/dev/null 2>&1; cksum < "$TMP/p.pb.gz"
}

# same NAME: TAPE.tape (sealed while recorded) against `heaptape seal` of
# its journal TAPE.tape.journal.
same() {
  n=$1 t=$TMP/$1.tape
  # While the program ran, unless a packet reached the journal too late
  # (a loaded machine): then after it, as heaptape seal does. Either way the
  # log says which, and at least one case of this test is sealed while running.
  ok "$n: the log says how it was sealed" grep -q 'sealed while the program ran\|sealed after the run' "$TMP/$n.err"
  grep -q 'sealed while the program ran' "$TMP/$n.err" && concurrent=$((concurrent + 1))
  ok "$n: the tape is sealed, with its aggregate section" sh -c \
    "\"$HEAPTAPE\" stats \"$t\" 2>/dev/null | grep -q '^  sealed  *yes: report'"
  ok "$n: the journal was kept (--keep-journal)" sh -c \
    "\"$HEAPTAPE\" stats \"$t.journal\" 2>/dev/null | grep -q 'format version   1'"
  ok "$n: no temporary left" [ ! -e "$t.sealing" ]
  cp "$t.journal" "$TMP/off.tape"
  "$HEAPTAPE" seal "$TMP/off.tape" >/dev/null 2>&1
  r=$(python3 "$TMP/pk.py" "$t" "$TMP/off.tape")
  ok "$n: every packet equals heaptape seal's, the aggregate section too ($r)" [ "$r" = same ]
  # html and report --at read the aggregate section's snapshots: html no
  # event, --at those after the snapshot before its moment (python3: at
  # most a tenth; the small tapes are a block or two).
  HEAPTAPE_READ_LOG=1 "$HEAPTAPE" html -o "$TMP/rl.html" "$t" 2>"$TMP/rl.err" >/dev/null
  ok "$n: html reads no event" grep -q ': 0 events read of [1-9]' "$TMP/rl.err"
  d=$("$HEAPTAPE" stats "$t" 2>/dev/null | awk '/duration/ {print $2 / 2}')
  HEAPTAPE_READ_LOG=1 "$HEAPTAPE" report --at "$d" "$t" 2>"$TMP/rl.err" >/dev/null
  frac=$( [ "$n" = python ] && echo 10 || echo 1)
  ok "$n: report --at reads fewer events than the tape holds (1/$frac)" awk -v f="$frac" \
    '/ events read of / {n = $(NF - 4); all = $NF} END {exit !(all > 0 && n * f < all)}' "$TMP/rl.err"
  rm -rf "$TMP/c" "$TMP/o"; mkdir "$TMP/c" "$TMP/o"
  cp "$t" "$TMP/c/tape.tape"; cp "$TMP/off.tape" "$TMP/o/tape.tape"
  analyse "$TMP/c" > "$TMP/a1"; analyse "$TMP/o" > "$TMP/a2"
  ok "$n: every analysis the same as from heaptape seal's tape" cmp -s "$TMP/a1" "$TMP/a2"
  cmp -s "$TMP/a1" "$TMP/a2" || diff "$TMP/a1" "$TMP/a2" | head -n 10
}

concurrent=0
# rec NAME OPTIONS... -- CMD...: record into NAME.tape, stderr in NAME.err.
rec() { n=$1; shift; "$HEAPTAPE" record -o "$TMP/$n.tape" "$@" >/dev/null 2>"$TMP/$n.err"; }

# Eight threads exchanging blocks: a gap in the numbers is another thread's
# packet still to come; the order, the stack ids and every byte must still
# be the offline ones.
rec threads --seal --keep-journal -- "$PROGS/rec_stress" 200000
same threads
rec late --seal --keep-journal -- "$PROGS/rec_stress" 200000 late
same late
if [ -x /usr/bin/python3 ]; then
  PYTHONMALLOC=malloc rec python --seal --keep-journal -- /usr/bin/python3 -c \
    'import json; x=[json.dumps({"a": i, "b": [i] * 3}) for i in range(200000)]; del x[::2]; y=[json.loads(s) for s in x]'
  same python
  # The recorder says which numbers of its blocks a thread leaves unused
  # (EXT VOID, at every RSS record): a follower that waits at every other
  # gap in the numbers still gets every heap event before the run ends.
  r=$("$HT_BUILD/tests/test_format" --held "$TMP/python.tape.journal")
  ok "python: a reader waiting at every gap no VOID explains gets every heap event ($r)" \
    "$HT_BUILD/tests/test_format" --held "$TMP/python.tape.journal"
fi

# The program SIGKILLed mid-run: the tape heaptape record leaves is sealed
# and warns as its journal does.
("$HEAPTAPE" record --seal --keep-journal -o "$TMP/killed.tape" -- "$PROGS/viz_grow" 5 >/dev/null 2>"$TMP/killed.err" &
 sleep 1; pkill -KILL -P $! -x viz_grow; wait) 2>/dev/null
same killed
ok "killed: the sealed tape says the run was cut short" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/killed.tape\" 2>&1 | grep -q 'closed *no (no trailer)'"

ok "sealed while the program ran in $concurrent of the cases above" [ "$concurrent" -gt 0 ]

# The default output is the sealed tape; --journal leaves the journal
# (symbolised, format 1), --no-symbols an unsymbolised one; --keep-journal
# needs a sealed tape.
rec plain -- "$PROGS/viz_grow" 0.3
ok "default: the tape is sealed" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/plain.tape\" | grep -q 'format version   12' &&
   grep -q 'sealed while the program ran\|sealed after the run' \"$TMP/plain.err\""
ok "default: report names the allocating function" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/plain.tape\" | grep -q grow_step"
rec jour --journal -- "$PROGS/viz_grow" 0.3
ok "--journal: the tape is a symbolised journal" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/jour.tape\" | grep -q 'format version   1' &&
   \"$HEAPTAPE\" stats \"$TMP/jour.tape\" | grep -q '^  symbolised *yes' &&
   ! grep -q sealed \"$TMP/jour.err\" && [ ! -e \"$TMP/jour.tape.sealing\" ]"
"$HEAPTAPE" seal "$TMP/jour.tape" >/dev/null 2>&1
ok "--journal: heaptape seal seals it later" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/jour.tape\" | grep -q grow_step &&
   \"$HEAPTAPE\" stats \"$TMP/jour.tape\" | grep -q 'format version   12'"
rec nosym --no-symbols -- "$PROGS/viz_grow" 0.3
ok "--no-symbols: the tape is an unsymbolised journal" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/nosym.tape\" | grep -q 'format version   1' &&
   \"$HEAPTAPE\" stats \"$TMP/nosym.tape\" | grep -q '^  symbolised *no'"
"$HEAPTAPE" record --journal --keep-journal -o "$TMP/bad.tape" -- true >/dev/null 2>"$TMP/bad.err"
ok "--keep-journal with --journal: refused (exit 2)" [ $? = 2 ]
ok "--keep-journal with --journal: its line, no tape" sh -c \
  "grep -q 'keep-journal' \"$TMP/bad.err\" && [ ! -e \"$TMP/bad.tape\" ]"

# heaptape record itself SIGKILLed: the program goes on, its journal stays
# whole; heaptape seal seals it (over the partial .sealing left).
"$HEAPTAPE" record --seal -o "$TMP/orphan.tape" -- "$PROGS/viz_grow" 1.5 >/dev/null 2>&1 &
rp=$!
sleep 0.7
kill -KILL $rp
wait $rp 2>/dev/null
for i in $(seq 100); do pgrep -x viz_grow >/dev/null || break; sleep 0.1; done
ok "orphan: the journal is there, not sealed" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/orphan.tape\" 2>/dev/null | grep -q 'format version   1'"
"$HEAPTAPE" seal "$TMP/orphan.tape" >/dev/null 2>&1
ok "orphan: heaptape seal seals it; the partial seal is gone" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/orphan.tape\" 2>/dev/null | grep -q '^  sealed  *yes: report' &&
   [ ! -e \"$TMP/orphan.tape.sealing\" ]"
ok "orphan: report names the allocating function" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/orphan.tape\" 2>/dev/null | grep -q grow_step"

# Out of memory after the run (ulimit -v: the program fits, the table of 2 M
# live blocks the finaliser keeps may not): the journal is kept, and the
# summary line gives the true peak or says it is unknown, never a false one
# (frees the finaliser could not match, counted as live, once made it 74.8
# MiB for 45.8).
(ulimit -v 140000; "$HEAPTAPE" record -o "$TMP/oom.tape" -- "$PROGS/seal_waves" 2000000 3) \
  >"$TMP/oom.out" 2>"$TMP/oom.err"
ok "out of memory after the run: the program runs to its end" \
  grep -q '^waves 3 of 2000000 blocks' "$TMP/oom.out"
ok "out of memory after the run: no false peak ($(grep -o 'peak [^;]*' "$TMP/oom.err"))" \
  grep -Eq 'allocated, peak (45\.8 MiB|unknown \(out of memory\));' "$TMP/oom.err"
ok "out of memory after the run: the tape kept reads, its true peak" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/oom.tape\" 2>/dev/null | grep -q 'peak heap  *45\.78 MiB in 2000001 blocks'"

# The same path four times: each run's tape replaces the last run's. The
# sealer follows the path only once its header is this run's: it had mapped
# the older tape there, which the program's recorder then cut short under
# it (SIGBUS, every other run).
for i in 1 2 3 4; do
  PYTHONMALLOC=malloc "$HEAPTAPE" record -o "$TMP/again.tape" -- /usr/bin/python3 -c \
    'import json; x=[json.dumps({"a": i}) for i in range(300000)]' </dev/null >/dev/null 2>&1
  echo $?
done > "$TMP/again.rc"
ok "record into the same path 4 times: every run ends 0 ($(echo $(cat "$TMP/again.rc")))" \
  sh -c "[ \"\$(cat \"$TMP/again.rc\" | tr -d '\n')\" = 0000 ]"
ok "record into the same path 4 times: the last tape sealed, readable" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/again.tape\" 2>/dev/null | grep -q '^  sealed  *yes: report'"
finish
