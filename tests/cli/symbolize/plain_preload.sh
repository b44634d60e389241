# A tape recorded with plain LD_PRELOAD shows raw addresses until symbolised.
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
LD_PRELOAD="$HT_BUILD/libheaptape.so" HEAPTAPE_OUTPUT="$t/x.tape" "$HT_BUILD/progs/sym_chain" >/dev/null
"$HEAPTAPE" dump "$t/x.tape" | grep -c ' f3 ' 
"$HEAPTAPE" symbolize "$t/x.tape" 2>/dev/null || echo "symbolize failed"
"$HEAPTAPE" dump "$t/x.tape" | grep -q ' f3 .*sym_chain.c:' && echo "f3 named with file:line"
