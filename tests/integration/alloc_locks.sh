#!/bin/sh
# heaptape tests -- `heaptape locks` (Steve's coarse and fine locking models)
# on a real python3 tape, checked against a plain reimplementation of the
# rules; `heaptape replay --locks` with the compacting driver (contents of
# moved blocks intact, locks fed through lock()/unlock()); bad input.
. "$(dirname "$0")/alloc_common.inc"
MOVDRV=$HT_BUILD/tests/drivers/alloc_moving.so
for f in "$MOVDRV" "$HT_BUILD/driver_compact.so"; do
  [ -e "$f" ] || { echo "FAIL missing $f (make test builds it)"; echo "0 passed, 1 failed"; exit 1; }
done
PYBIN=/usr/bin/python3
P=$T/py.tape
PYTHONMALLOC=malloc rec "$P" "$PYBIN" -c 'import json; d={str(i): [i]*(i%7) for i in range(3000)}; s=json.dumps(d); print(len(s), len(json.loads(s)))'

# The rules, written plainly (every live block's life updated at every op):
# the expected `heaptape locks` output from `heaptape ops`.
cat >"$T/model.py" <<'PY'
import sys
model, pct, ops_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ops, live = [], set()   # accesses (L/S/M) to blocks not live are no ops
for f in (l.split() for l in open(ops_path) if not l.startswith('#')):
    h = int(f[3])
    if f[2] in 'LSM' and h not in live: continue
    if f[2] == 'N': live.add(h)
    if f[2] == 'F': live.discard(h)
    ops.append(f)
n = len(ops)
out = []
if model == 'coarse':
    born, life = {}, {}
    for i, f in enumerate(ops):
        h = int(f[3])
        if f[2] == 'N': born[h] = i
        elif f[2] == 'F' and h in born and h not in life: life[h] = i - born[h]
    for h in born:
        life.setdefault(h, n - born[h])
    glob = {h for h in born if life[h] * 100 >= pct * n}
    for f in ops:
        h = int(f[3]); place = f[0] + ' ' + f[1]
        if f[2] == 'F' and h in glob: out.append(place + ' U %d' % h)
        out.append(' '.join(f))
        if f[2] == 'N' and h in glob: out.append(place + ' K %d' % h)
else:
    life = {}     # live block with a life above 0 -> its life (blocks at 0 stay at 0)
    for f in ops:
        h = int(f[3]); place = f[0] + ' ' + f[1]
        if f[2] == 'F':
            if life.get(h, 0) > 0: out.append(place + ' U %d' % h)
            life.pop(h, None)
            out.append(' '.join(f))
        else:   # a New or an access: its own op, life + 1
            out.append(' '.join(f))
            if life.get(h, 0) == 0: out.append(place + ' K %d' % h)
            life[h] = life.get(h, 0) + 1.0
        ended = []
        for b in life:   # every other block sinks by 0.5, floor 0
            if b != h:
                life[b] -= 0.5
                if life[b] <= 0: ended.append(b)
        for b in ended: del life[b]
        out.extend(place + ' U %d' % b for b in sorted(ended))
print('\n'.join(out))
PY
"$HEAPTAPE" ops "$P" >"$T/ops.txt"; ok "ops of the python3 tape" $?
for m in coarse fine; do
  "$HEAPTAPE" locks --model $m "$P" -o "$T/$m.txt" 2>"$T/$m.err"; ok "locks --model $m: exit 0" $?
  py "$T/model.py" $m 50 "$T/ops.txt" >"$T/$m.want"
  grep -v '^#' "$T/$m.txt" >"$T/$m.got"
  cmp -s "$T/$m.got" "$T/$m.want"; ok "locks --model $m: every line as the rules give it" $?
  [ "$(wc -l <"$T/ops.txt")" -gt 2000 ] && [ "$(grep -c ' K ' "$T/$m.got")" -gt 100 ]
  ok "locks --model $m: a real tape, with locks ($(grep -c ' K ' "$T/$m.got") K lines)" $?
  # The ops lines are `heaptape ops`'s, in order; the tail line counts the K and U lines.
  grep -v ' [KU] ' "$T/$m.got" | cmp -s - "$(grep -v '^#' "$T/ops.txt" >"$T/ops.only"; echo "$T/ops.only")"
  ok "locks --model $m: the ops lines are heaptape ops's" $?
  tail -n 1 "$T/$m.txt" | grep -q "locks $(grep -c ' K ' "$T/$m.got") unlocks $(grep -c ' U ' "$T/$m.got") "
  ok "locks --model $m: the summary counts the K and U lines" $?
done
"$HEAPTAPE" locks --model coarse --global 10 "$P" | grep -v '^#' >"$T/c10.got"
py "$T/model.py" coarse 10 "$T/ops.txt" | cmp -s - "$T/c10.got"; ok "locks --global 10 as the rules give it" $?
[ "$(grep -c ' K ' "$T/c10.got")" -gt "$(grep -c ' K ' "$T/coarse.got")" ]; ok "a lower --global makes more blocks global" $?

# A tape of record --access (tests/progs/acc_known.c): the loads, stores and
# modifies are ops of their blocks; the tape and its `ops --access` log give
# the same lines, and both the rules' (accesses as own ops).
if [ -x "$PROGS/acc_known" ]; then
  "$HEAPTAPE" record --access -o "$T/acc.tape" -- "$PROGS/acc_known" >/dev/null 2>"$T/acc.err"
  ok "record --access of acc_known" $?
  "$HEAPTAPE" ops --access "$T/acc.tape" >"$T/acc.ops"
  for m in coarse fine; do
    "$HEAPTAPE" locks --model $m "$T/acc.tape" | grep -v '^#' >"$T/acc.$m.tape"
    "$HEAPTAPE" locks --model $m "$T/acc.ops" | grep -v '^#' >"$T/acc.$m.log"
    cmp -s "$T/acc.$m.tape" "$T/acc.$m.log"; ok "access tape, $m: the tape and its ops --access log agree" $?
    py "$T/model.py" $m 50 "$T/acc.ops" | cmp -s - "$T/acc.$m.tape"; ok "access tape, $m: as the rules give it" $?
  done
  [ "$(grep -c ' [LSM] ' "$T/acc.fine.tape")" -gt 1000 ] && [ "$(grep -c ' K ' "$T/acc.fine.tape")" -gt "$(grep -c ' N ' "$T/acc.fine.tape")" ]
  ok "access tape, fine: accesses relock blocks (more K than N)" $?
  "$HEAPTAPE" replay "$T/acc.tape" --allocator compact --locks fine --touch all --allocstats "$T/acc.json" >/dev/null 2>&1
  py -c '
import json, sys
d = json.load(open(sys.argv[1])); x = d["allocators"][0]
assert x["ok"] and x["corrupt"] == 0 and x["lock_calls"] == d["locks"]["locks"] + d["locks"]["unlocks"] > 2 * d["blocks"], x
' "$T/acc.json"; ok "access tape: replay --locks fine, locks at accesses fed to compact" $?
else
  ok "acc_known built (make test builds it)" 1
fi

# Replay with the compacting driver: each model, every byte touched and
# checked at every free and at the end (blocks move: contents must follow).
for m in none coarse fine; do
  L=; [ $m != none ] && L="--locks $m"
  "$HEAPTAPE" replay "$P" --allocator compact,glibc $L --touch all --allocstats "$T/r$m.json" >"$T/r$m.txt" 2>"$T/r$m.err"
  ok "replay compact, locks $m: exit 0" $?
  py -c '
import json, sys
d = json.load(open(sys.argv[1])); m = sys.argv[2]
c, g = d["allocators"]
assert c["driver"] == "compact" and g["driver"] == "glibc"
for x in (c, g):
    assert x["ok"] and x["corrupt"] == 0 and x["failures"] == 0 and x["ops"] == d["ops"] > 1000, x["driver"]
    assert x["peak_rss"] > 0 and x["time_ns"] > 0
assert c["compactions"] > 0 and c["moved_bytes"] > 0, (c["compactions"], c["moved_bytes"])
assert c["peak_mapped"] >= d["live_peak"], (c["peak_mapped"], d["live_peak"])
assert g["lock_calls"] == 0 and g["compactions"] == 0
if m == "none":
    assert "locks" not in d and c["lock_calls"] == 0
else:
    L = d["locks"]
    assert L["model"] == m and L["locks"] > 100, L
    assert c["lock_calls"] == L["locks"] + L["unlocks"], (c["lock_calls"], L)
u = [p["used"] for p in c["alloc_stats"]]
assert max(u) == d["live_peak"]
print(m, c["compactions"], c["moved_bytes"], c["peak_mapped"])
' "$T/r$m.json" $m >>"$T/figures"; ok "replay compact, locks $m: intact, compacted, locks fed through lock()" $?
done
cat "$T/figures"
# Pinned blocks cannot move: the coarse model pins the long-lived blocks, so
# compaction moves fewer bytes than with no locks at all.
py -c '
import sys
f = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(sys.argv[1])}
assert f["coarse"][1] < f["none"][1], f
' "$T/figures"; ok "coarse pins: fewer bytes moved than without locks" $?
grep -q '^compact .* [0-9][0-9]*  *[0-9.]* [KMG]*i*B$' "$T/rcoarse.txt"; ok "replay text: lock calls, compactions, bytes moved" $?

# An operations log replays as its tape does: `heaptape locks -o` output
# (its own K and U lines) gives the figures of `replay --locks` on the tape.
"$HEAPTAPE" replay "$T/fine.txt" --allocator compact --touch all --allocstats "$T/rlog.json" >/dev/null 2>&1
ok "replay of a locks log: exit 0" $?
py -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
x, y = a["allocators"][0], b["allocators"][0]
assert (a["ops"], a["blocks"], a["live_peak"]) == (b["ops"], b["blocks"], b["live_peak"])
for k in ("lock_calls", "compactions", "moved_bytes", "peak_mapped", "corrupt", "failures"):
    assert x[k] == y[k], (k, x[k], y[k])
' "$T/rlog.json" "$T/rfine.json"; ok "replay of the fine locks log = replay --locks fine of the tape" $?
# A hand-made log: calloc, an aligned block, a realloc, a lock held across a
# compaction-free run, an access line (skipped), an unlock of an unlocked block.
cat >"$T/hand.ops" <<'OPS'
# heaptape ops 1: hand-made
1 1 N 1 100
2 1 N 2 5000 C
3 1 K 1
4 1 F 2
5 1 N 3 64 A64
6 1 F 1 R
6 1 N 4 200 R1
7 1 L 4 0 8
8 1 U 4
OPS
"$HEAPTAPE" replay "$T/hand.ops" --allocator compact,glibc --touch all --allocstats "$T/hand.json" >"$T/hand.txt" 2>&1
py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ops"] == 6 and d["blocks"] == 4 and d["live_peak"] == 5100, d
c, g = d["allocators"]
assert c["ok"] and g["ok"] and c["corrupt"] == 0 == g["corrupt"] and c["lock_calls"] == 1, c
' "$T/hand.json"; ok "replay of a hand-made log (K/U, C, A, R, an access line)" $?
printf '# heaptape ops 1\n1 1 N 1 100\n2 1 F 7\n' >"$T/bad.ops"
"$HEAPTAPE" replay "$T/bad.ops" --allocator glibc >/dev/null 2>"$T/e5"; r=$?
[ $r = 1 ] && [ "$(cat "$T/e5")" = "heaptape: $T/bad.ops:3: a Free of a block not live" ]
ok "replay of a log with a bad line: file and line named, exit 1" $?

# A small heap: the region fills, oom() compacts, the replay goes on intact.
"$HEAPTAPE" replay "$P" --driver "$HT_BUILD/driver_compact.so:threshold=90,heap=4M" --locks fine --touch all \
  --allocstats "$T/small.json" >/dev/null 2>&1
py -c '
import json, sys
x = json.load(open(sys.argv[1]))["allocators"][0]
assert x["ok"] and x["corrupt"] == 0 and x["oom_calls"] > 0 and x["compactions"] > 0, x
' "$T/small.json"; ok "compact with a 4 MiB heap: oom compacts, contents intact" $?
# Killpercent rounds with locks: blocks kept between rounds stay pinned, killed ones are unlocked first.
"$HEAPTAPE" replay "$P" --allocator compact --locks coarse --touch all --killpercent 50 --rounds 2 \
  --allocstats "$T/kill.json" >/dev/null 2>&1
py -c '
import json, sys
x = json.load(open(sys.argv[1]))["allocators"][0]
assert x["ok"] and x["corrupt"] == 0 and len(x["round_kills"]) == 2, x
' "$T/kill.json"; ok "compact, coarse locks, killpercent rounds: intact" $?

# The check can fail: a driver whose moves lose the contents is reported.
"$HEAPTAPE" replay "$P" --driver "$MOVDRV:500:lose" --locks fine --touch all >"$T/lose.txt" 2>&1
grep -q '^moving .*CORRUPT' "$T/lose.txt" && grep -q 'blocks lost their contents' "$T/lose.txt"
ok "a mover that loses contents: CORRUPT" $?
"$HEAPTAPE" replay "$P" --driver "$MOVDRV:500" --locks fine --touch all >"$T/keep.txt" 2>&1
! grep -q CORRUPT "$T/keep.txt" && grep -q '^moving ' "$T/keep.txt"; ok "the same mover copying: intact (a version 1 driver)" $?

# Bad input: one clear line, non-zero exit.
printf 'not a tape\n' >"$T/junk"
"$HEAPTAPE" locks "$T/junk" >/dev/null 2>"$T/e1"; r=$?
[ $r = 1 ] && [ "$(wc -l <"$T/e1")" = 1 ] && grep -q '^heaptape: .*junk' "$T/e1"; ok "locks on a non-tape: one line, exit 1" $?
"$HEAPTAPE" locks "$T/missing.tape" >/dev/null 2>"$T/e2"; r=$?
[ $r = 1 ] && [ "$(wc -l <"$T/e2")" = 1 ]; ok "locks on a missing file: one line, exit 1" $?
"$HEAPTAPE" locks --model medium "$P" >/dev/null 2>"$T/e3"; r=$?
[ $r = 2 ] && head -n 1 "$T/e3" | grep -q "locks: --model takes coarse or fine, not 'medium'"; ok "locks --model medium: usage error" $?
"$HEAPTAPE" locks --model fine --global 20 "$P" >/dev/null 2>&1; [ $? = 2 ]; ok "locks --global with fine: usage error" $?
"$HEAPTAPE" locks --global 0 "$P" >/dev/null 2>&1; [ $? = 2 ]; ok "locks --global 0: usage error" $?
"$HEAPTAPE" replay "$P" --allocator compact --locks tight >/dev/null 2>&1; [ $? = 2 ]; ok "replay --locks tight: usage error" $?
"$HEAPTAPE" replay "$P" --allocator compact --global 5 >/dev/null 2>&1; [ $? = 2 ]; ok "replay --global without --locks: usage error" $?
"$HEAPTAPE" replay "$P" --driver "$HT_BUILD/driver_compact.so:threshold=abc" >"$T/o" 2>"$T/e4"; r=$?
[ $r = 1 ] && grep -q 'driver could not be loaded or set up' "$T/e4"; ok "compact with bad arguments: reported, exit 1" $?
finish
