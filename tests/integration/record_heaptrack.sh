#!/bin/sh
# heaptape tests -- on real programs (sqlite3, perl) the number of allocation
# calls on the tape agrees with Debian's heaptrack within 1%; on a C++
# program that makes the same calls under both, calls and peak are equal
# (libstdc++'s 72 KiB emergency pool, allocated before heaptape's
# constructor, included).
. "$(dirname "$0")/record_common.inc"
if ! command -v heaptrack >/dev/null 2>&1 || ! command -v heaptrack_print >/dev/null 2>&1; then
  echo "skip (heaptrack not installed)"; finish; exit $?
fi
# agree NAME CMD...: record CMD with both tools (stdin from $T/in), compare counts.
agree() {
  name=$1; shift
  if ! command -v "$1" >/dev/null 2>&1; then echo "skip $name ($1 missing)"; return; fi
  "$HEAPTAPE" record --no-symbols -o "$T/$name.tape" -- "$@" <"$T/in" >"$T/$name.out1" 2>/dev/null
  heaptrack -o "$T/$name.ht" "$@" <"$T/in" >"$T/$name.out2" 2>&1
  h=$(heaptrack_print "$T/$name.ht.zst" 2>/dev/null | sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
  t=$("$HEAPTAPE" stats "$T/$name.tape" 2>/dev/null | awk '$1 == "alloc" {print $2}')
  [ -n "$h" ] && [ -n "$t" ] && [ "$h" -gt 1000 ] &&
    awk -v a="$t" -v b="$h" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d * 100 <= b)}'
  ok "$name: allocation calls heaptape $t, heaptrack $h (within 1%)" $?
}
{
  echo "create table kv(k integer primary key, v text);"
  echo "with recursive c(x) as (select 1 union all select x+1 from c where x<5000)"
  echo "  insert into kv(v) select hex(randomblob(x % 200 + 1)) from c;"
  echo "create index kv_v on kv(v);"
  echo "delete from kv where k % 3 = 0;"
  echo "select count(*) from kv;"
} >"$T/in"
agree sqlite sqlite3 :memory:
: >"$T/in"
agree perl perl -e 'my %h; for my $i (1..60000) { $h{$i % 2000} .= "ab$i"; delete $h{($i * 7) % 2000} if $i % 3 == 0 } print scalar(keys %h), "\n"'

# exact NAME CMD...: calls equal, and the peak equal as heaptrack_print prints it.
exact() {
  name=$1; shift
  "$HEAPTAPE" record --no-symbols -o "$T/$name.tape" -- "$@" >/dev/null 2>&1
  heaptrack -o "$T/$name.ht" "$@" >/dev/null 2>&1
  hp=$(heaptrack_print "$T/$name.ht.zst" 2>/dev/null)
  h=$(printf '%s\n' "$hp" | sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
  hpk=$(printf '%s\n' "$hp" | sed -n 's/^peak heap memory consumption: \(.*\)$/\1/p')
  t=$("$HEAPTAPE" stats "$T/$name.tape" 2>/dev/null | awk '$1 == "alloc" {print $2}')
  tp=$("$HEAPTAPE" report --json "$T/$name.tape" 2>/dev/null |
       python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["peak"])')
  tpk=$(awk -v b="$tp" 'BEGIN { if (b >= 1e9) printf "%.2fG", b / 1e9; else if (b >= 1e6) printf "%.2fM", b / 1e6;
                                else if (b >= 1e3) printf "%.2fK", b / 1e3; else printf "%dB", b }')
  [ -n "$h" ] && [ "$t" = "$h" ]; ok "$name: allocation calls heaptape $t, heaptrack $h (equal)" $?
  [ -n "$hpk" ] && [ "$tpk" = "$hpk" ]; ok "$name: peak heaptape $tp bytes = $tpk, heaptrack $hpk (equal)" $?
  [ "$(count_size "$T/$name.tape" 72704)" -ge 1 ]; ok "$name: libstdc++'s emergency pool (72704 bytes, before the constructor) is on the tape" $?
}
exact cxx "$PROGS/rec_cxx"
finish
