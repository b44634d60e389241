# heaptape benchmarks -- the workloads of bench/access.sh and
# bench/access_dhat.sh (sourced): small, since Lackey takes minutes on them.
# sqlite3 inserts 3000 rows in :memory:, python3 counts 20 000 strings,
# lua5.4 builds 20 000 strings, perl fills a hash of 20 000 strings.
ACCESS_SQL='create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<3000) insert into t select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t;'
ACCESS_PY='import json,collections; d=collections.Counter(str(i%97) for i in range(20000)); print(json.dumps(sorted(d.items())[:5]))'
ACCESS_LUA='local t={} for i=1,20000 do t[i]=tostring(i)..string.rep("x",i%50) end local s=0 for i=1,#t do s=s+#t[i] end print(s)'
ACCESS_PL='my %h; $h{$_} = $_ . ("x" x ($_ % 50)) for 1..20000; my $s = 0; $s += length $h{$_} for keys %h; print "$s\n"'
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
