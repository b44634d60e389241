#!/bin/sh
# heaptape tests -- the recorder's options, one table for the environment,
# `heaptape record`'s flags and its --help: the same values mean the same
# everywhere; the embedding API's defaults come from it; native recording
# off from the first instant when an embedder asks for it.
. "$(dirname "$0")/record_common.inc"
header() { "$HEAPTAPE" dump --no-stacks "$1" 2>/dev/null | head -n 4; }
allocs() { "$HEAPTAPE" dump --no-stacks "$1" 2>/dev/null | awk '$4=="ALLOC"' | wc -l; }

# -- Sizes: HEAPTAPE_SAMPLE=1KiB is --sample 1KiB ------------------------------
rec "$T/env.tape" HEAPTAPE_SAMPLE=1KiB "$PROGS/rec_sample" >/dev/null 2>"$T/env.err"
header "$T/env.tape" | grep -q "sample 1024,"; ok "HEAPTAPE_SAMPLE=1KiB samples every 1024 bytes" $?
! grep -q "bad value" "$T/env.err"; ok "HEAPTAPE_SAMPLE=1KiB: no warning" $?
"$HEAPTAPE" record --no-symbols --sample 1KiB -o "$T/cli.tape" -- "$PROGS/rec_sample" >/dev/null 2>&1
header "$T/cli.tape" | grep -q "sample 1024,"; ok "--sample 1KiB samples every 1024 bytes" $?
rec "$T/mb.tape" HEAPTAPE_SAMPLE=64MB "$PROGS/rec_sample" >/dev/null 2>&1
header "$T/mb.tape" | grep -q "sample 67108864,"; ok "HEAPTAPE_SAMPLE=64MB" $?

# -- Bad values: one warning, the default kept ----------------------------------
rec "$T/bad.tape" HEAPTAPE_SAMPLE=12X HEAPTAPE_NO_MEMBARRIER=maybe true 2>"$T/bad.err"
grep -q 'bad value HEAPTAPE_SAMPLE="12X" ignored' "$T/bad.err"; ok "bad HEAPTAPE_SAMPLE warns" $?
grep -q 'bad value HEAPTAPE_NO_MEMBARRIER="maybe" ignored' "$T/bad.err"
ok "HEAPTAPE_NO_MEMBARRIER goes through the table (a bad value warns)" $?
header "$T/bad.tape" | grep -q "sample 0,"; ok "bad HEAPTAPE_SAMPLE: every event recorded" $?
rec "$T/nm.tape" HEAPTAPE_NO_MEMBARRIER=1 "$PROGS/rec_sample" >/dev/null 2>"$T/nm.err"
[ ! -s "$T/nm.err" ] && check "$T/nm.tape" >/dev/null; ok "HEAPTAPE_NO_MEMBARRIER=1 records, no warning" $?

# -- --help prints every variable of the table -----------------------------------
"$HEAPTAPE" record --help >"$T/help" 2>&1
miss=
for v in HEAPTAPE_OUTPUT HEAPTAPE_SAMPLE HEAPTAPE_UNWIND HEAPTAPE_FRAMES HEAPTAPE_FOLLOW_FORK \
         HEAPTAPE_FOLLOW_EXEC HEAPTAPE_SEED HEAPTAPE_ZSTD HEAPTAPE_NO_MEMBARRIER; do
  grep -q -- "$v" "$T/help" || miss="$miss $v"
done
[ -z "$miss" ]; ok "record --help lists every recorder variable (missing:${miss:- none})" $?

# -- The embedding API: 0 means the configured default ----------------------------
HEAPTAPE_FRAMES=7 HEAPTAPE_SAMPLE=4K "$PROGS/rec_api" "$LIB" "$T/api.tape" >/dev/null
header "$T/api.tape" | grep -q "sample 4096, unwind [0-9]*, frames 7$"
ok "heaptape_start: frames 0 and sample_bytes 0 take HEAPTAPE_FRAMES and HEAPTAPE_SAMPLE" $?
"$PROGS/rec_api" "$LIB" "$T/api0.tape" >/dev/null
header "$T/api0.tape" | grep -q "sample 0, unwind [0-9]*, frames 64$"
ok "heaptape_start: without them, every event and the table's 64 frames" $?

# -- native = 0: no malloc of the process recorded, not even during the start -------
# (preloaded, but not the traced process: the recorder waits for the API)
env LD_PRELOAD="$LIB" _HEAPTAPE_PID=1 "$PROGS/rec_window" "$LIB" "$T/win" >/dev/null
n=0
for f in "$T"/win.*; do n=$((n + $(allocs "$f"))); done
[ "$n" = 0 ]; ok "heaptape_start with native 0 records no malloc ($n recorded)" $?

# -- record --lua --sample samples the Lua heap -------------------------------------
if command -v lua5.4 >/dev/null && [ -f "$HT_BUILD/lua/5.4/heaptape.so" ]; then
  script='local t = {} for i = 1, 200000 do t[i] = {i} end'
  (cd "$T" && "$HEAPTAPE" record --no-symbols --lua -o "$T/lall.tape" -- lua5.4 -e "$script") >/dev/null 2>&1
  (cd "$T" && "$HEAPTAPE" record --no-symbols --lua --sample 64K -o "$T/ls.tape" -- \
    lua5.4 -e "$script") >/dev/null 2>&1
  all=$(allocs "$T/lall.tape") some=$(allocs "$T/ls.tape")
  header "$T/ls.tape" | grep -q "sample 65536,"; ok "record --lua --sample 64K: the tape says so" $?
  [ "$some" -gt 0 ] && [ $((some * 20)) -lt "$all" ]
  ok "record --lua --sample 64K samples ($some of $all events)" $?
else
  echo "skip lua (no lua5.4 or module)"
fi
finish
