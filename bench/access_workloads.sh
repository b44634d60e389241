# heaptape benchmarks -- the workloads of bench/access.sh and
# bench/access_dhat.sh (sourced): small by default, since Lackey takes
# minutes on them. sqlite3 inserts ACCESS_ROWS rows (3000) in :memory:,
# python3 counts ACCESS_N strings (20 000), lua5.4 builds ACCESS_N strings,
# perl fills a hash of ACCESS_N strings. The default runs last 0.4-0.6 s
# under Valgrind, where its start-up (translation, debug info) is most of
# the time: ACCESS_N=400000 ACCESS_ROWS=60000 measures the tool's cost per
# allocation and access instead (docs/PERFORMANCE.md, issue 15).
ACCESS_N=${ACCESS_N:-20000}
ACCESS_ROWS=${ACCESS_ROWS:-3000}
ACCESS_SQL='create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<'$ACCESS_ROWS') insert into t select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t;'
ACCESS_PY='import json,collections; d=collections.Counter(str(i%97) for i in range('$ACCESS_N')); print(json.dumps(sorted(d.items())[:5]))'
ACCESS_LUA='local t={} for i=1,'$ACCESS_N' do t[i]=tostring(i)..string.rep("x",i%50) end local s=0 for i=1,#t do s=s+#t[i] end print(s)'
ACCESS_PL='my %h; $h{$_} = $_ . ("x" x ($_ % 50)) for 1..'$ACCESS_N'; my $s = 0; $s += length $h{$_} for keys %h; print "$s\n"'
# access_argv NAME: NAME's command line (three words) into AW1 AW2 AW3, for
# `set -- "$AW1" "$AW2" "$AW3"`.
access_argv() {
  case $1 in
    sqlite3) AW1=/usr/bin/sqlite3 AW2=:memory: AW3=$ACCESS_SQL ;;
    python3) AW1=/usr/bin/python3 AW2=-c AW3=$ACCESS_PY ;;
    lua5.4) AW1=/usr/bin/lua5.4 AW2=-e AW3=$ACCESS_LUA ;;
    perl) AW1=/usr/bin/perl AW2=-e AW3=$ACCESS_PL ;;
  esac
}
