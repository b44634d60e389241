#!/bin/sh
# heaptape tests -- dlopen/dlclose of an allocating library: its blocks are
# recorded and its load and unload appear as MODULE/UNLOAD records.
. "$(dirname "$0")/record_common.inc"
cat >"$T/dl.c" <<'SRC'
#include <stdlib.h>
void *dl_alloc(size_t n) { return malloc(n); }
void dl_release(void *p) { free(p); }
SRC
cc -shared -fPIC -o "$T/libhtdl.so" "$T/dl.c" || { echo "FAIL cc"; echo "0 passed, 1 failed"; exit 1; }
out=$(rec "$T/d.tape" "$PROGS/rec_dl" "$T/libhtdl.so")
[ "$out" = "dl done" ]; ok "dlopen: program output" $?
[ "$(count_size "$T/d.tape" 8888)" = 300 ]; ok "dlopen: 300 blocks of the library recorded" $?
"$HEAPTAPE" dump --no-stacks "$T/d.tape" >"$T/d.txt"
[ "$(grep -c 'MODULE .*libhtdl.so' "$T/d.txt")" -ge 3 ]; ok "dlopen: loads noticed" $?
[ "$(grep -c 'UNLOAD .*libhtdl.so' "$T/d.txt")" -ge 3 ]; ok "dlopen: unloads noticed" $?
check "$T/d.tape" >/dev/null; ok "dlopen: orderly" $?
finish
