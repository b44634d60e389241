#!/bin/sh
# heaptape tests -- the cache of uncompressed debug files (debugcache.h):
# a program whose DWARF sits compressed in a separate file (as Debian ships
# it) is symbolised with file:line; the copy is made once, used when the
# original is gone, remade when damaged, and not made when the cache is off.
. "$(dirname "$0")/record_common.inc"

cat > "$T/dc.c" <<'CEOF'
#include <stdlib.h>
__attribute__((noinline)) void *make_block(size_t n) { return malloc(n); }
int main(void)
{
  for (int i = 0; i < 100; i++) free(make_block(4321));   /* line 5 */
  return 0;
}
CEOF
gcc -g -O0 -Wl,--build-id -o "$T/dc" "$T/dc.c" &&
  objcopy --only-keep-debug --compress-debug-sections=zlib "$T/dc" "$T/dc.debug" &&
  objcopy --strip-debug --add-gnu-debuglink="$T/dc.debug" "$T/dc"
ok "test program built with a compressed separate debug file" $?
readelf -SW "$T/dc.debug" 2>/dev/null | grep debug_info | grep -q ' C '
ok "its .debug_info is compressed (SHF_COMPRESSED)" $?
bid=$(readelf -n "$T/dc" 2>/dev/null | sed -n 's/.*Build ID: *//p')

# site TAPE: the report line of make_block with its file:line, if any.
site() { "$HEAPTAPE" report "$1" 2>/dev/null | grep -c 'make_block.*dc\.c:2'; }
C=$T/cache
HEAPTAPE_CACHE=$C "$HEAPTAPE" record -o "$T/a.tape" -- "$T/dc" 2>/dev/null
[ "$(site "$T/a.tape")" -ge 1 ]; ok "first run: make_block at dc.c:2" $?
[ -f "$C/debug/$bid.debug" ]; ok "first run: copy $bid.debug made" $?
readelf -SW "$C/debug/$bid.debug" 2>/dev/null | grep -q debug_info &&
  ! readelf -SW "$C/debug/$bid.debug" 2>/dev/null | grep debug_ | grep -q ' C '
ok "the copy has .debug_info, uncompressed" $?
size=$(stat -c %s "$C/debug/$bid.debug")

mv "$T/dc.debug" "$T/dc.debug.away"
HEAPTAPE_CACHE=$C "$HEAPTAPE" record -o "$T/b.tape" -- "$T/dc" 2>/dev/null
[ "$(site "$T/b.tape")" -ge 1 ]; ok "original debug file gone: file:line from the copy" $?
HEAPTAPE_CACHE=off "$HEAPTAPE" record -o "$T/c.tape" -- "$T/dc" 2>/dev/null
[ "$(site "$T/c.tape")" = 0 ]; ok "cache off and original gone: no file:line (the copy was what served it)" $?

mv "$T/dc.debug.away" "$T/dc.debug"
head -c 1000 "$C/debug/$bid.debug" > "$T/cut" && cp "$T/cut" "$C/debug/$bid.debug"
HEAPTAPE_CACHE=$C "$HEAPTAPE" record -o "$T/d.tape" -- "$T/dc" 2>/dev/null
[ "$(site "$T/d.tape")" -ge 1 ]; ok "damaged copy: symbols still complete" $?
[ "$size" -gt 1000 ] && [ "$(stat -c %s "$C/debug/$bid.debug")" = "$size" ]; ok "damaged copy: remade whole" $?

D=$T/nocache
HEAPTAPE_CACHE=off HOME=$D "$HEAPTAPE" record -o "$T/e.tape" -- "$T/dc" 2>/dev/null
[ "$(site "$T/e.tape")" -ge 1 ] && [ ! -e "$D" ]; ok "cache off: symbols from the original, nothing written" $?
# A module without any debug file, and no debuginfod server configured:
# finalisation must not load libdebuginfod (and its ~35 libraries) to ask.
mv "$T/dc.debug" "$T/dc.debug.away"
HEAPTAPE_CACHE=off "$HEAPTAPE" record --no-symbols -o "$T/n.tape" -- "$T/dc" 2>/dev/null
env -u DEBUGINFOD_URLS HEAPTAPE_CACHE=off LD_DEBUG=files "$HEAPTAPE" symbolize "$T/n.tape" 2>"$T/ld.txt"
# (libc's line shows LD_DEBUG took effect: libdw is linked in statically.)
grep -q 'file=libc.so' "$T/ld.txt" && ! grep -q 'file=libdebuginfod' "$T/ld.txt"
ok "no debug file, no DEBUGINFOD_URLS: libdebuginfod never loaded" $?
# A debug file of another build under the debuglink name: skipped (a build
# id that differs would give wrong lines), the function still named.
sed 's/return 0;/return 1 - 1;/' "$T/dc.c" > "$T/other.c"
gcc -g -O0 -Wl,--build-id -o "$T/other" "$T/other.c" &&
  objcopy --only-keep-debug "$T/other" "$T/dc.debug"
HEAPTAPE_CACHE=off "$HEAPTAPE" record -o "$T/s.tape" -- "$T/dc" 2>/dev/null
"$HEAPTAPE" report "$T/s.tape" > "$T/s.txt"
grep -q make_block "$T/s.txt" && ! grep -q 'other\.c' "$T/s.txt"
ok "stale debug file (other build id) beside the program: not used" $?
mv "$T/dc.debug.away" "$T/dc.debug"

"$HEAPTAPE" report "$T/a.tape" | sed -E "1,8d; s/[0-9]+\.[0-9]+ s/T s/g" > "$T/ra"
"$HEAPTAPE" report "$T/e.tape" | sed -E "1,8d; s/[0-9]+\.[0-9]+ s/T s/g" > "$T/re"
[ -s "$T/ra" ] && cmp -s "$T/ra" "$T/re"; ok "report with and without the cache identical" $?
finish
