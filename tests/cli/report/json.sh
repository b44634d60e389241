#!/bin/sh
# --json is valid JSON with the summary figures
t=$(mktemp) || exit 1
trap 'rm -f "$t"' EXIT
"$HEAPTAPE" report --json ../../data/rep_basic.tape > "$t" || exit 1
python3 -m json.tool "$t" > /dev/null && echo valid
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=d[\"summary\"]; print(s[\"allocs\"], s[\"bytes\"], s[\"peak\"], s[\"peak_ns\"], s[\"leaked\"], s[\"temporary\"], [x[\"location\"] for x in d[\"leaks\"]], d[\"leaks\"][0][\"stack\"][0][\"function\"])" "$t"
