#!/bin/sh
# heaptape tests -- record --access counts the bytes DHAT counts: bytes read
# and written on sqlite3 and python3, in total and per allocation site
# (sites paired by bench/dhat_compare.py), within 1% of valgrind
# --tool=dhat's on the same run (issue 15). Not timed.
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ] ||
   [ ! -e "$VGDIR/dhat-amd64-linux" ] || ! command -v python3 >/dev/null 2>&1; then
  echo "skip access_dhat (valgrind, its dhat, build/valgrind/heaptape-amd64-linux or python3 missing)"
  finish; exit
fi
. "$HT_ROOT/bench/access_workloads.sh"
mkdir "$T/cwd"  # an empty current directory: python3 lists it
export PYTHONHASHSEED=0

# both NAME CMD...: DHAT's JSON and heaptape access --json of one run each.
both() {
  name=$1; shift
  (cd "$T/cwd" && VALGRIND_LIB="$VGDIR" valgrind -q --tool=dhat --dhat-out-file="$T/$name.dhat" \
     "$@" >"$T/$name.dhat.out" 2>/dev/null </dev/null)
  ok "$name: DHAT ran" $?
  (cd "$T/cwd" && "$HEAPTAPE" record --access -o "$T/$name.tape" -- "$@" >"$T/$name.ht.out" 2>/dev/null </dev/null)
  ok "$name: record --access ran" $?
  cmp -s "$T/$name.dhat.out" "$T/$name.ht.out"; ok "$name: the same output under both" $?
  "$HEAPTAPE" access --json --top 0 "$T/$name.tape" >"$T/$name.json"; ok "$name: access --json" $?
  python3 "$HT_ROOT/bench/dhat_compare.py" "$T/$name.dhat" "$T/$name.json" --check 0.01 \
    >"$T/$name.md" 2>"$T/$name.err"
  ok "$name: bytes read and written within 1% of DHAT's, in total and per site" $?
  cat "$T/$name.err"
  grep '^| \*\*total' "$T/$name.md"
  # Pairing worked: most sites paired, the biggest paired ones among them.
  paired=$(sed -n 's/^| \*\*total\*\* (\([0-9]*\) of.*/\1/p' "$T/$name.md")
  [ "${paired:-0}" -ge 5 ]; ok "$name: $paired sites paired with DHAT's" $?
}
if [ -x /usr/bin/sqlite3 ]; then both sqlite3 /usr/bin/sqlite3 :memory: "$ACCESS_SQL"
else echo "skip sqlite3 (missing)"; fi
if [ -x /usr/bin/python3 ]; then both python3 /usr/bin/python3 -c "$ACCESS_PY"
else echo "skip python3 (missing)"; fi

# The definitions, on a small C program: realloc's copy is read and written
# (DHAT charges it to the first allocation), a system call's buffer is
# written (read(2)) and read (write(2)).
cat >"$T/rw.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(void)
{
  int fd[2];
  char *p = malloc(1000), *q;
  memset(p, 1, 1000);
  p = realloc(p, 2000);
  q = malloc(300);
  if (pipe(fd) || write(fd[1], p, 300) != 300 || read(fd[0], q, 300) != 300) return 1;
  free(q);
  free(p);
  return 0;
}
C
if cc -g -O1 -o "$T/rw" "$T/rw.c" 2>/dev/null; then
  "$HEAPTAPE" record --access -o "$T/rw.tape" -- "$T/rw" 2>/dev/null; ok "rw: recorded" $?
  "$HEAPTAPE" access --json "$T/rw.tape" | python3 -c '
import json, sys
d = json.load(sys.stdin)
got = sorted((s["bytes"], s["bytes_read"], s["bytes_written"]) for s in d["sites"] if s["bytes"] in (300, 1000, 2000))
sys.exit(0 if got == [(300, 0, 300), (1000, 1000, 1000), (2000, 300, 1000)] else print(got) or 1)'
  ok "rw: realloc copy 1000 read + 1000 written, write(2) reads 300, read(2) writes 300" $?
else
  echo "skip rw (no cc)"
fi
finish
