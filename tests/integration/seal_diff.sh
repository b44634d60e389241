#!/bin/sh
# heaptape -- sealed tapes answer as their journals do: for tapes of C, C++
# (threads), python3 (native, the Python module and --python=native), ruby
# (the Ruby extension, with a compaction), sqlite3, perl, lua5.4, luajit (Lua profiler and --lua=native), sampled,
# blocks of 5 GiB,
# truncated and SIGKILLed runs, every analysis gives the same output from
# `heaptape seal`'s tape as from the journal (report, stats, flamegraph,
# pprof and html from its aggregate section); sealing
# twice changes nothing.
. "$(dirname "$0")/viz_common.inc"
LIBHT="$HT_BUILD/libheaptape.so"

# rec NAME [OPTIONS] -- CMD...: record with `heaptape record` into NAME.tape,
# a journal (record seals by default: here the journal is what is compared).
rec() { n=$1; shift; "$HEAPTAPE" record --journal -o "$TMP/$n.tape" "$@" >/dev/null 2>&1; }
has() { command -v "$1" >/dev/null 2>&1; }

rec c -- "$HT_BUILD/progs/viz_grow" 0.2
rec cxx -- "$HT_BUILD/progs/rec_cxx"
ok "cxx: a C++ program allocating on five threads" sh -c \
  "[ \$(\"$HEAPTAPE\" stats \"$TMP/cxx.tape\" | awk '/^THREADS/ {t = 1; next} t && \$4 > 1000' | wc -l) -ge 5 ]"
rec sampled --sample 4096 -- "$HT_BUILD/progs/viz_grow" 0.2
# Pool blocks of 5 GiB among small ones at the same addresses: the sealer's
# table keeps them whole beside the packed ones (a value too large for 32 bits).
rec wide -- "$HT_BUILD/progs/seal_wide"
has python3 && PYTHONMALLOC=malloc rec python -- python3 -c 'import json; x=[json.dumps({"a": i}) for i in range(30000)]; del x[::2]'
has sqlite3 && rec sqlite -- sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<5000) insert into t select x, hex(randomblob(x%200)) from c; select count(*) from t;'
has perl && rec perl -- perl -e 'my %h; $h{$_ % 100} .= "ab$_" for 1..20000; print scalar(keys %h), "\n"'
has lua5.4 && rec lua -- lua5.4 -e 'local t={} for i=1,20000 do t[i]=tostring(i)..string.rep("x",i%50) end'
has luajit && rec luajit --lua -- luajit -e 'local t={} for i=1,20000 do t[i]=tostring(i)..string.rep("x",i%50) end t=nil collectgarbage()'
[ -x /usr/bin/python3 ] && rec pymod --python -- /usr/bin/python3 -c 'import json; x=[json.dumps({"a": i}) for i in range(30000)]; del x[::2]'
[ -x /usr/bin/python3 ] && rec pynative --python=native -- /usr/bin/python3 -c 'x=sorted(range(20000), key=lambda i: str(i) * 2)'
has ruby && rec rbmod --ruby -- ruby -e 'x = 20000.times.map { |i| "s#{i}" * 2 }; GC.start; x = nil; GC.compact'
has lua5.4 && rec luanative --lua=native -- lua5.4 -e 'local t={} for i=1,20000 do t[i]={i} end t=nil collectgarbage()'
# 2.4 MB of marks in 2412 events: the sealer ends blocks early, as a block's
# columns must fit a packet (before version 7, sealing failed).
rec marks -- "$HT_BUILD/progs/seal_marks"
cp "$TMP/marks.tape" "$TMP/marks.copy"
"$HEAPTAPE" seal "$TMP/marks.copy" >/dev/null 2>&1
ok "800 marks of 3000 bytes: sealed in more than one block, every mark kept" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/marks.copy\" | grep -q 'packets ([2-9] of events)' &&
   [ \$(\"$HEAPTAPE\" dump \"$TMP/marks.copy\" | grep -c ' MARK .*mark [0-9]') = 800 ]"
# A run killed by SIGKILL: a journal without trailer, symbolised by neither.
(env LD_PRELOAD="$LIBHT" HEAPTAPE_OUTPUT="$TMP/killed.tape" "$HT_BUILD/progs/viz_grow" 5 >/dev/null 2>&1 &
 p=$!; sleep 0.4; kill -9 $p; wait $p) 2>/dev/null
# A journal cut in the middle of a packet.
sz=$(wc -c < "$TMP/c.tape"); head -c $((sz * 2 / 3)) "$TMP/c.tape" > "$TMP/cut.tape"
cp "$DATA/rep_trunc.tape" "$DATA/rep_sampled.tape" "$DATA/rep_lua.tape" "$TMP/"
# Such a cut journal (viz_grow 0.2, kept): its scan ends at the last
# packet's start, 1.7 ms, but the writer thread's packet runs on to an RSS
# sample at 101 ms. html warned of "events far past the tape's end" from
# the journal, not from the sealed tape (its end is the pass's).
cp "$DATA/cut_rss.tape" "$TMP/cutrss.tape"

mkdir "$TMP/j" "$TMP/s"
# Outputs of every analysis of tape.tape in directory $1, into $1/out.
analyse() {
  (cd "$1" && {
    # (--stacks 3, --wrapper: other groups than the sealer stored, named here)
    for a in "" --json --memprof --leaks --peak --temporary --by-stack "--json --paths" \
             "--stacks 3" "--paths 0 --top 30" "--wrapper main"; do
      echo "== report $a"; "$HEAPTAPE" report $a tape.tape 2>&1
    done
    d=$("$HEAPTAPE" stats tape.tape 2>/dev/null | awk '/duration/ {print $2}')
    for f in 0.1 0.5 0.9; do
      t=$(awk -v d="$d" -v f=$f 'BEGIN {printf "%.6f", d * f}')
      echo "== report --at $t"; "$HEAPTAPE" report --at "$t" tape.tape 2>&1
    done
    # Snapshots far apart (each from the stored one before it) and closer
    # than the stored ones (on from the moment before, through the events).
    # (Not of a journal cut short: its events run past its scan's end, where
    # its snapshots stop; the sealed tape's end is the pass's.)
    case $n in cut|cutrss) set -- ;; *) set -- 7 50 130 300 ;; esac
    for f in "$@"; do
      t=$(awk -v d="$d" -v f=$f 'BEGIN {printf "%.6f", d / f}')
      [ "$t" = 0.000000 ] && continue
      echo "== report --memprof --heap-snap-interval d/$f"
      "$HEAPTAPE" report --memprof --heap-snap-interval "$t" tape.tape 2>&1
    done
    echo "== stats"; "$HEAPTAPE" stats tape.tape 2>&1 | grep -v -e 'format version' -e '^  sealed ' -e '^  file ' -e '^  events '
    for m in alloc inuse peak leaks temporary; do
      echo "== folded $m"; "$HEAPTAPE" flamegraph --folded --metric $m tape.tape 2>&1
    done
    echo "== ops"; "$HEAPTAPE" ops tape.tape 2>&1
    echo "== lifetimes"; "$HEAPTAPE" lifetimes --by-site --json tape.tape 2>&1
    echo "== heapmap"; "$HEAPTAPE" heapmap -o map.png tape.tape 2>&1; cksum < map.png
    # html: the snapshots fold as the pass goes, so even a journal cut short
    # (its length known only after its pass) gets the sealed tape's page.
    echo "== html"; "$HEAPTAPE" html -o page.html tape.tape 2>&1; cksum < page.html
    # (--touch none: the wide tape's heap peaks at 510 GiB)
    echo "== replay"; "$HEAPTAPE" replay --allocator glibc --touch none tape.tape 2>&1 | head -n 1
    echo "== pprof"; "$HEAPTAPE" pprof -o p.pb.gz tape.tape 2>&1
    go tool pprof -raw p.pb.gz 2>/dev/null | sed -n '/^Samples:/,$p'
  } > out 2>&1)
}
for t in "$TMP"/*.tape; do
  n=$(basename "$t" .tape)
  cp "$t" "$TMP/j/tape.tape"; cp "$t" "$TMP/s/tape.tape"
  "$HEAPTAPE" seal "$TMP/s/tape.tape" 2>/dev/null
  ok "$n: sealed (version 12)" sh -c "\"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" 2>/dev/null | grep -q 'format version   12'"
  cp "$TMP/s/tape.tape" "$TMP/once"
  "$HEAPTAPE" seal "$TMP/s/tape.tape" 2>/dev/null
  ok "$n: sealing twice changes nothing" cmp -s "$TMP/once" "$TMP/s/tape.tape"
  # The killed run's journal gets the symbols sealing adds to it.
  [ "$n" = killed ] && "$HEAPTAPE" symbolize "$TMP/j/tape.tape" >/dev/null 2>&1
  analyse "$TMP/j"; analyse "$TMP/s"
  ok "$n: every analysis the same from the sealed tape" cmp -s "$TMP/j/out" "$TMP/s/out"
  # More than one block: frees of blocks born in earlier blocks carry their
  # births and addresses (version 8), which lifetimes and heapmap read.
  [ "$n" = pymod ] && ok "pymod: sealed in several blocks (lifetimes, heapmap without a table)" \
    sh -c "\"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" | grep -Eq 'packets \(([2-9]|[1-9][0-9]+) of events\)'"
  cmp -s "$TMP/j/out" "$TMP/s/out" || diff "$TMP/j/out" "$TMP/s/out" | head -n 10
  ok "$n: html of the sealed tape has the 100 buckets asked, from its aggregate section" sh -c \
    "cd \"$TMP/s\" && HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" html -o page.html tape.tape 2>&1 |
     grep -q ' 100 time buckets' &&
     HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" html -o page.html tape.tape 2>&1 | grep -q ': 0 events read of'"
  # Version 3 tapes carry the figures: these analyses read no event.
  ok "$n: the sealed tape has its aggregate section" sh -c \
    "\"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" 2>/dev/null | grep -q '^  sealed  *yes: report'"
  # Version 12 carries the sites' names, which the report above used (and
  # not with another --wrapper, or of the journal).
  ok "$n: report groups the sealed tape's stacks as the sealer named them" sh -c \
    "cd \"$TMP\" && HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" report s/tape.tape 2>&1 >/dev/null |
       grep -q ': sites named by the sealer\$' &&
     HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" report --wrapper main s/tape.tape 2>&1 >/dev/null |
       grep -q ': sites named here\$' &&
     HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" report j/tape.tape 2>&1 >/dev/null | grep -q ': sites named here\$'"
done
# `record` seals the tape it finalises (the default; --seal says so).
"$HEAPTAPE" record -o "$TMP/sealrec.tape" -- "$HT_BUILD/progs/viz_grow" 0.2 >/dev/null 2>&1
ok "record: the tape is sealed with its aggregate section" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/sealrec.tape\" | grep -q '^  sealed  *yes: report'"
ok "record: report names the allocating function" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/sealrec.tape\" | grep -q grow_step"
# Version 11 carries the heap map's layout: heapmap reads the events once.
ok "record: heapmap reads the sealed tape's events once" sh -c \
  "HEAPTAPE_READ_LOG=1 \"$HEAPTAPE\" heapmap -o \"$TMP/once.png\" \"$TMP/sealrec.tape\" 2>&1 >/dev/null |
   grep -Eq ': ([0-9]+) events read of \\1\$'"
# Sealed tapes of earlier versions, kept in tests/data, answer as their
# journals do: version 2 (sealed before the aggregate section existed) and
# version 3 (a reused address moved the address prediction; journal_reuse is
# a C program's recording with reused and fresh blocks interleaved) and
# version 5 (columns compressed together, before version 7) and version 7
# (frees without their births: lifetimes and heapmap keep a table) and
# version 8 (each class's latest 64 freed addresses, a ring) and version 10
# (heapmap reads twice, without the layout of version 11) and version 11
# (its sites named by the report, without the names of version 12).
for p in rep_basic:2:basic rep_lua:2:lua journal_reuse:3:reuse journal_reuse:5:reuse journal_reuse:7:reuse journal_reuse:8:reuse seal_burst:8:burst journal_reuse:9:reuse journal_reuse:10:reuse seal_burst:10:burst journal_reuse:11:reuse seal_burst:11:burst; do
  j=${p%%:*}; v=${p#*:}; n=${v#*:}; v=${v%%:*}
  cp "$DATA/$j.tape" "$TMP/j/tape.tape"; cp "$DATA/sealed_v${v}_$n.tape" "$TMP/s/tape.tape"
  ok "version $v sealed $n: format version $v" sh -c "\"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" | grep -q 'format version   $v'"
  analyse "$TMP/j"; analyse "$TMP/s"
  ok "version $v sealed $n: every analysis the same as its journal's" cmp -s "$TMP/j/out" "$TMP/s/out"
  for d in j s; do
    "$HEAPTAPE" dump "$TMP/$d/tape.tape" 2>/dev/null | awk '$4 == "ALLOC" {print $1, $5, $6, $7}' | sort -n >"$TMP/$d/allocs"
  done
  hn=$("$HEAPTAPE" dump "$TMP/s/tape.tape" 2>/dev/null | grep -c ' FREE .* handle=[1-9]')
  fn=$("$HEAPTAPE" ops "$TMP/j/tape.tape" 2>/dev/null | grep -c '^[0-9]* [0-9]* F ')
  ok "version $v sealed $n: dump names each resolved free's block (handle=N, as ops: $hn of $fn)" \
    [ "$hn" = "$fn" -a "$fn" -gt 0 ]
  ok "version $v sealed $n: the same addresses as its journal's" sh -c \
    "[ -s \"$TMP/j/allocs\" ] && cmp -s \"$TMP/j/allocs\" \"$TMP/s/allocs\""
  "$HEAPTAPE" seal "$TMP/s/tape.tape" 2>/dev/null
  ok "version $v sealed $n: heaptape seal makes it version 12 with its aggregate section" sh -c \
    "\"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" | grep -q 'format version   12' &&
     \"$HEAPTAPE\" stats \"$TMP/s/tape.tape\" | grep -q '^  sealed  *yes: report'"
  analyse "$TMP/s"
  ok "version $v sealed $n, sealed again: every analysis the same" cmp -s "$TMP/j/out" "$TMP/s/out"
done
# Version 9: a class's freed addresses all count. seal_burst's 3000 blocks
# of one size come back latest freed first: each named by rank 0 (version 8
# spelled out all but 64 of them: an ADDR column of 6775 bytes).
cp "$DATA/seal_burst.tape" "$TMP/burst.tape"
"$HEAPTAPE" seal "$TMP/burst.tape" 2>/dev/null
addr=$(python3 "$HT_ROOT/bench/seal_columns.py" "$TMP/burst.tape" | awk '$1 == "ADDR" {print $2}')
ok "version 9: a burst of 3000 frees of one class taken back costs ADDR little ($addr bytes < 1000)" \
  [ -n "$addr" ] && [ "$addr" -lt 1000 ]
finish
