#!/bin/sh
# heaptape -- integration tests of `heaptape record`: refusals, usage, exit
# status, signals, environment, default tape name, symbols in the tape.
# Needs HEAPTAPE (the binary), HT_BUILD (build dir), HT_ROOT (repo root).
set -u
: "${HEAPTAPE:?set HEAPTAPE}" "${HT_BUILD:?set HT_BUILD}" "${HT_ROOT:?set HT_ROOT}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
CHAIN="$HT_BUILD/progs/sym_chain"
SRC="$HT_ROOT/tests/progs/sym_chain.c"

. "$(dirname "$0")/expect.inc"

# Line number of a "/* TAG */" marker in the test program's source.
line_of() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }

# -- Refusals (nothing may run) --------------------------------------------

marker="$tmp/ran"
if [ -f "$(gcc -print-file-name=libc.a)" ]; then
  printf '#include <stdio.h>\nint main(void){fopen("%s","w");return 0;}\n' "$marker" >"$tmp/static.c"
  if gcc -static -o "$tmp/static" "$tmp/static.c" 2>/dev/null; then
    expect static_refused 1 'statically linked; LD_PRELOAD cannot reach it' \
      "$HEAPTAPE" record -o "$tmp/s.tape" -- "$tmp/static"
    [ -e "$marker" ] && bad static_not_run "the static program ran"
    [ "$(wc -l <"$tmp/err")" = 1 ] && ok static_one_line || bad static_one_line "$(cat "$tmp/err")"
    printf '#!%s\n' "$tmp/static" >"$tmp/script"; chmod +x "$tmp/script"
    expect static_interpreter_refused 1 'script interpreter .*statically linked' \
      "$HEAPTAPE" record -o "$tmp/s.tape" -- "$tmp/script"
  else
    skip static_refused "gcc -static failed"
  fi
else
  skip static_refused "libc.a not installed (libc6-dev)"
fi
expect missing_program 1 '^heaptape: no-such-program-ht: command not found$' \
  "$HEAPTAPE" record -- no-such-program-ht
expect missing_path 1 'No such file' "$HEAPTAPE" record -- "$tmp/nothere"
printf 'int main;\n' >"$tmp/noexec"
expect not_executable 1 'noexec: not executable' "$HEAPTAPE" record -- "$tmp/noexec"
chmod +x "$tmp/noexec"
expect not_elf 1 'not an ELF executable' "$HEAPTAPE" record -- "$tmp/noexec"
expect directory 1 'not a regular file' "$HEAPTAPE" record -- "$tmp"

# -- Usage -----------------------------------------------------------------

expect bad_flag 2 "unknown option '--bogus'" "$HEAPTAPE" record --bogus -- true
expect bad_unwind 2 "takes libunwind, fp or none, not 'dwarf'" "$HEAPTAPE" record --unwind dwarf -- true
expect bad_sample 2 "takes a byte count \\(e\\.g\\. 512K\\), not '12X'" "$HEAPTAPE" record --sample 12X -- true
expect bad_frames 2 "takes a whole number from 1 to 256, not '0'" "$HEAPTAPE" record --frames 0 -- true
expect missing_value 2 "needs a value" "$HEAPTAPE" record --sample
expect no_program 2 'no program to run' "$HEAPTAPE" record -o x.tape
"$HEAPTAPE" record --help >"$tmp/help" 2>&1; rc=$?
miss=
for v in HEAPTAPE_OUTPUT HEAPTAPE_SAMPLE HEAPTAPE_UNWIND HEAPTAPE_FRAMES \
         HEAPTAPE_FOLLOW_FORK HEAPTAPE_FOLLOW_EXEC LD_PRELOAD -- --follow-fork --follow-exec; do
  grep -q -- "$v" "$tmp/help" || miss="$miss $v"
done
[ "$rc" = 0 ] && [ -z "$miss" ] && ok help || bad help "exit $rc, missing:$miss"

# -- Running ---------------------------------------------------------------

if [ ! -f "$HT_BUILD/libheaptape.so" ]; then
  skip running "no $HT_BUILD/libheaptape.so"
  echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit
fi

expect exit_status 3 '' "$HEAPTAPE" record -o "$tmp/e.tape" -- sh -c 'exit 3'
expect killed_status 143 '' "$HEAPTAPE" record -o "$tmp/k.tape" -- sh -c 'kill -TERM $$'

# A SIGTERM sent to heaptape reaches the program; heaptape reports its death.
"$HEAPTAPE" record -o "$tmp/f.tape" -- sleep 30 >/dev/null 2>&1 &
hp=$!
sleep 0.5
kill -TERM "$hp"
wait "$hp"; rc=$?
[ "$rc" = 143 ] && ok forward_sigterm || bad forward_sigterm "exit $rc, want 143"

# The recorder's environment reaches the program (LD_PRELOAD stays only
# when exec'd programs are followed: the recorder removes it otherwise).
(cd "$tmp" && "$HEAPTAPE" record -o "rel.tape" --sample 2K --unwind fp --frames 7 \
  --follow-fork --follow-exec -- "$CHAIN" env >"$tmp/env" 2>"$tmp/err")
want="HEAPTAPE_OUTPUT=$(cd "$tmp" && pwd -P)/rel.tape
HEAPTAPE_SAMPLE=2048
HEAPTAPE_UNWIND=fp
HEAPTAPE_FRAMES=7
HEAPTAPE_FOLLOW_FORK=1
HEAPTAPE_FOLLOW_EXEC=1"
got=$(grep '^HEAPTAPE_' "$tmp/env")
[ "$got" = "$want" ] && ok environment || bad environment "$got"
grep -q "^LD_PRELOAD=$(cd "$HT_BUILD" && pwd -P)/libheaptape.so" "$tmp/env" \
  && ok ld_preload || bad ld_preload "$(grep LD_PRELOAD "$tmp/env")"
(cd "$tmp" && "$HEAPTAPE" record -o "rel.tape" -- "$CHAIN" env >"$tmp/env" 2>"$tmp/err")
grep -q '^HEAPTAPE_FOLLOW_FORK=0$' "$tmp/env" && grep -q '^HEAPTAPE_FOLLOW_EXEC=0$' "$tmp/env" \
  && ok environment_defaults || bad environment_defaults "$(cat "$tmp/env")"

# The real recorder defines malloc; the placeholder library does not.
if ! nm -D --defined-only "$HT_BUILD/libheaptape.so" 2>/dev/null | grep -qw malloc; then
  skip recording "libheaptape.so does not interpose malloc yet"
  echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit
fi

# Default tape name heaptape.<prog>.<pid>.tape in the current directory.
(cd "$tmp" && "$HEAPTAPE" record -- "$CHAIN" >/dev/null 2>"$tmp/err"); rc=$?
name=$(sed -n 's/.*; tape \(heaptape\.sym_chain\.[0-9]*\.tape\) (heaptape report .*/\1/p' "$tmp/err")
if [ "$rc" = 0 ] && [ -n "$name" ] && [ -s "$tmp/$name" ]; then ok default_name
else bad default_name "exit $rc; stderr: $(cat "$tmp/err")"; fi
grep -Eq '^heaptape: [0-9]+ events, [0-9.]+ (B|KiB|MiB|GiB) allocated, peak [0-9.]+ (B|KiB|MiB|GiB); tape ' "$tmp/err" \
  && ok summary_line || bad summary_line "$(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] && ok summary_one_line || bad summary_one_line "$(cat "$tmp/err")"

# Symbols from the tape's dictionary: the inline chain and f3, f2, f1 with lines.
expect record_chain 0 '' "$HEAPTAPE" record -o "$tmp/chain.tape" -- "$CHAIN"
"$HEAPTAPE" dump "$tmp/chain.tape" >"$tmp/dump" 2>&1
for want in "sym_inl [^ ]*sym_chain.c:$(line_of L_INL) inlined-in f3 [^ ]*sym_chain.c:$(line_of L_F3)" \
            " f2 [^ ]*sym_chain.c:$(line_of L_F2)" " f1 [^ ]*sym_chain.c:$(line_of L_F1)" \
            " main [^ ]*sym_chain.c:"; do
  grep -Eq "$want" "$tmp/dump" && ok "dump: $want" || bad "dump: $want" "$(grep STACK "$tmp/dump" | head -n 8)"
done
# The dictionary is enough: the symbols survive the binary being gone.
cp "$CHAIN" "$tmp/chain2"
"$HEAPTAPE" record -o "$tmp/gone.tape" -- "$tmp/chain2" 2>/dev/null
rm -f "$tmp/chain2"
"$HEAPTAPE" dump "$tmp/gone.tape" 2>&1 | grep -Eq " f2 [^ ]*sym_chain.c:$(line_of L_F2)" \
  && ok self_contained || bad self_contained

# Followed children write their own tapes, finalised too.
mkdir "$tmp/ff"
(cd "$tmp/ff" && touch -d @0 x.1.tape && "$HEAPTAPE" record --follow-fork --follow-exec -o 'x.%p.tape' \
  -- sh -c "$CHAIN; $CHAIN" >/dev/null 2>"$tmp/err"); rc=$?
n=$(ls "$tmp/ff" | wc -l)
if [ "$rc" = 0 ] && [ "$n" = 4 ] && [ "$(wc -l <"$tmp/err")" = 3 ] &&
   [ "$(grep -c 'sym_chain (pid [0-9]*, tape [23] of 3)' "$tmp/err")" = 2 ]; then
  ok follow_tapes
else
  bad follow_tapes "exit $rc, $n files: $(cat "$tmp/err")"
fi
for t in "$tmp"/ff/x.*.tape; do
  [ -s "$t" ] || continue
  "$HEAPTAPE" dump "$t" 2>&1 | grep -q " f2 " && ok "follow_symbols $(basename "$t")"
done

# A program killed by SIGKILL leaves a tape that is still symbolised.
expect killed_program 137 '' "$HEAPTAPE" record -o "$tmp/kill.tape" -- "$CHAIN" kill
if [ -s "$tmp/kill.tape" ]; then
  "$HEAPTAPE" dump "$tmp/kill.tape" 2>&1 | grep -Eq " f2 [^ ]*sym_chain.c:$(line_of L_F2)" \
    && ok killed_symbolised || bad killed_symbolised "$(tail -n 3 "$tmp/err")"
else
  bad killed_symbolised "no tape"
fi

# No stack shows heaptape's own frames (interposers, the main() wrapper).
"$HEAPTAPE" record -o "$tmp/own.tape" -- "$CHAIN" >/dev/null 2>&1
if "$HEAPTAPE" dump "$tmp/own.tape" 2>/dev/null | grep -E '^STACK' | grep -Eq 'src/record/|libheaptape'; then
  bad no_own_frames "$("$HEAPTAPE" dump "$tmp/own.tape" | grep -E '^STACK' | grep -E 'src/record/|libheaptape' | head -n 2)"
elif "$HEAPTAPE" dump "$tmp/own.tape" 2>/dev/null | grep -q ' main '; then
  ok no_own_frames
else
  bad no_own_frames "no main frame on the tape"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
