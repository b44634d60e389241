#!/bin/sh
# heaptape -- `make install` into a temporary DESTDIR: the command, the
# recorder, the headers, pkg-config, the Lua modules and the man pages land
# where they should, and examples/embed.c builds against the installed
# header and heaptape.pc alone, runs, and its tape reads back.
set -u
passed=0 failed=0
ok() { if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
D=$T/root P=/opt/ht

make -s -C "$HT_ROOT" B="$HT_BUILD" DESTDIR="$D" PREFIX=$P install-files >"$T/make.log" 2>&1
ok "make install-files DESTDIR=... PREFIX=$P" $?
for f in bin/heaptape lib/libheaptape.so lib/heaptape/libheaptape.so lib/heaptape/heaptape-replay \
         include/heaptape.h include/heaptape_errors.h include/heaptape_driver.h \
         lib/pkgconfig/heaptape.pc lib/lua/5.4/heaptape.so lib/lua/5.1/heaptape.so \
         share/man/man1/heaptape.1 share/man/man1/heaptape-record.1 share/man/man1/heaptape-report.1 \
         lib/python3.11/dist-packages/heaptape.cpython-311-x86_64-linux-gnu.so \
         lib/heaptape/python/sitecustomize.py lib/site_ruby/heaptape.so lib/site_ruby/heaptape_record.rb; do
  [ -e "$D$P/$f" ]; ok "installed $f" $?
done

# The header stands alone: nothing outside include/ is reached.
if grep -n '#include "\.\.' "$D$P/include/"*.h; then ok "headers include nothing outside include/" 1
else ok "headers include nothing outside include/" 0; fi

# Man pages carry the --help texts.
grep -q -- '--memprof' "$D$P/share/man/man1/heaptape-report.1"; ok "heaptape-report.1 has report --help" $?
if command -v man >/dev/null 2>&1; then
  man -l "$D$P/share/man/man1/heaptape-record.1" 2>/dev/null | grep -q 'HEAPTAPE-RECORD'
  ok "heaptape-record.1 renders" $?
fi

# An embedding program built with pkg-config against the installed tree only.
export PKG_CONFIG_PATH="$D$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D"
flags=$(pkg-config --cflags --libs heaptape); ok "pkg-config --cflags --libs heaptape: $flags" $?
[ "$(pkg-config --modversion heaptape)" = "$("$HEAPTAPE" --version | sed 's/^heaptape //; s/ .*//')" ]
ok "pkg-config version is the command's" $?
cp "$HT_ROOT/examples/embed.c" "$T/embed.c"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer -o "$T/embed" "$T/embed.c" $flags 2>"$T/cc.log"
ok "examples/embed.c compiles against the installed header" $?
LD_LIBRARY_PATH="$D$P/lib" "$T/embed" "$T/e.tape" >"$T/out" 2>&1; ok "embed runs" $?
cat >"$T/want" <<'W'
idle: mark profiler is not running, pool_alloc success, pool_alloc(NULL) invalid argument or call out of order, loc_declare profiler is not running
start without size: invalid argument or call out of order
recorded: success; stop again: profiler is not running
W
cmp -s "$T/out" "$T/want"; ok "return values outside and inside a recording" $?
LD_LIBRARY_PATH="$D$P/lib" ldd "$T/embed" | grep -q "$D$P/lib/libheaptape.so"
ok "embed links the installed recorder" $?

# The installed command reads the tape: 100 pool blocks, half given back.
H="$D$P/bin/heaptape"
"$H" symbolize "$T/e.tape" >/dev/null 2>&1
"$H" report --json "$T/e.tape" >"$T/r.json" 2>"$T/rerr"; ok "installed heaptape reports the tape" $?
python3 - "$T/r.json" <<'PY'; ok "report: 100 pool blocks, 50 left, at make_node" $?
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
assert s["allocs"] == 100 and s["leaked_blocks"] == 50, s
assert "make_node" in json.dumps(r), "make_node not named"
PY
# The installed command finds its recorder through ../lib/heaptape/.
"$H" record -o "$T/true.tape" -- true >/dev/null 2>&1; ok "installed heaptape record finds libheaptape.so" $?
# record --access finds its Valgrind tool in ../lib/heaptape/valgrind.
if command -v valgrind >/dev/null 2>&1 && [ -d "$HT_BUILD/valgrind" ]; then
  "$H" record --access -o "$T/acc.tape" -- true >/dev/null 2>&1 &&
    "$H" stats "$T/acc.tape" 2>/dev/null | grep -q 'heap accesses'
  ok "installed heaptape record --access finds its Valgrind tool" $?
fi
# The installed Python module: record --python finds its start-up file in
# ../lib/heaptape/python, the module (on the user's PYTHONPATH) its recorder.
if [ -x /usr/bin/python3 ]; then
  PYTHONPATH="$D$P/lib/python3.11/dist-packages" "$H" record --python -o "$T/py.tape" -- \
    /usr/bin/python3 -c 'x = [str(i) * 2 for i in range(5000)]' >/dev/null 2>&1
  ok "installed heaptape record --python" $?
  "$H" report "$T/py.tape" 2>/dev/null | grep -q '^        <module> <string>:1$'
  ok "installed: the Python site <module> <string>:1" $?
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
