#!/bin/sh
# heaptape bench -- real-program workloads shared by the benchmarks. Source it
# with $W set to a scratch directory; it defines wl_<name> functions that run
# "$@" (a prefix command such as `heaptape record -o X --`, or nothing) and
# the list WORKLOADS.
PY=/usr/bin/python3
CC1PLUS=$(ls /usr/lib/gcc/x86_64-linux-gnu/*/cc1plus 2>/dev/null | tail -n 1)

# python3: build, serialise and parse 200k small JSON documents.
cat > "$W/pyjson.py" <<'PYEOF'
import json
d = [{'a': i, 'b': str(i) * 3, 'c': [i] * 5} for i in range(200000)]
s = json.dumps(d); e = json.loads(s); print(len(s))
PYEOF
wl_python() { PYTHONMALLOC=malloc "$@" "$PY" "$W/pyjson.py"; }

# sqlite3: 30k inserts of random-sized blobs, an index, updates and deletes.
{
  echo "create table kv(k integer primary key, v text, n real);"
  echo "with recursive c(x) as (select 1 union all select x+1 from c where x<30000)"
  echo "  insert into kv(v, n) select hex(randomblob(x % 300 + 1)), x * 0.5 from c;"
  echo "create index kv_v on kv(v);"
  echo "update kv set v = v || 'x' where k % 3 = 0;"
  echo "delete from kv where k % 5 = 0;"
  echo "select count(*), sum(length(v)) from kv;"
} > "$W/work.sql"
wl_sqlite() { "$@" sqlite3 :memory: < "$W/work.sql"; }

# perl: grow and delete hash entries and strings.
wl_perl() { "$@" perl -e 'my %h; for my $i (1..300000) { $h{$i % 5000} .= "ab$i"; delete $h{($i * 7) % 5000} if $i % 3 == 0 } print scalar(keys %h), "\n"'; }

# C++: GCC's C++ compiler proper compiling a template-heavy translation unit.
cat > "$W/tu.cc" <<'CCEOF'
#include <map>
#include <string>
#include <vector>
#include <regex>
#include <sstream>
template <int N> struct Fib { static const long v = Fib<N - 1>::v + Fib<N - 2>::v; };
template <> struct Fib<0> { static const long v = 0; };
template <> struct Fib<1> { static const long v = 1; };
std::string f(const std::vector<std::map<std::string, int>> &v) {
  std::ostringstream o; for (auto &m : v) for (auto &kv : m) o << kv.first << kv.second;
  std::regex r("a+b*"); return std::regex_replace(o.str(), r, "x") + std::to_string(Fib<60>::v);
}
CCEOF
wl_cxx() { "$@" "$CC1PLUS" -quiet -imultiarch x86_64-linux-gnu -D_GNU_SOURCE -O1 "$W/tu.cc" -o "$W/tu.s"; }

WORKLOADS="python sqlite perl"
[ -n "$CC1PLUS" ] && WORKLOADS="$WORKLOADS cxx"
