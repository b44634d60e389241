#!/bin/sh
# heaptape -- the README's main job on the bundled example: record
# examples/wordfreq and check what the report says about its known heap.
set -u
passed=0 failed=0
ok() { if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
EX="$HT_BUILD/examples/wordfreq"
out=$("$HEAPTAPE" record -o "$T/wf.tape" -- "$EX" 20000 2>"$T/err"); rc=$?
ok "example runs recorded, same output" $([ $rc = 0 ] && [ "$out" = "$("$EX" 20000)" ]; echo $?)
grep -q "heaptape report $T/wf.tape" "$T/err"; ok "closing line names the tape and the command" $?
"$HEAPTAPE" report --json "$T/wf.tape" > "$T/r.json" 2>"$T/rerr"; ok "report --json exits 0" $?
python3 - "$T/r.json" <<'PY'; ok "json: exact calls, temporaries and leaks of the example" $?
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
# 20000 temporary copies; 234 distinct words each leak a Word and its text
# (468 blocks) plus stdio's buffer; a copy made while its word was new is
# not temporary (234); 2 bucket arrays, 5 line-buffer (re)allocations.
assert s["allocs"] == 20000 + 468 + 2 + 5 + 1, s
assert s["temporary"] == 20000 - 234, s
assert s["leaked_blocks"] == 468 + 1, s
assert s["reallocs"] == 4, s
PY
"$HEAPTAPE" report "$T/wf.tape" > "$T/r.txt" 2>/dev/null
grep -q "count .*examples/wordfreq.c:" "$T/r.txt"; ok "report names count() in wordfreq.c" $?
if grep -q "src/record/" "$T/r.txt"; then ok "no heaptape frames in stacks" 1; else ok "no heaptape frames in stacks" 0; fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
