#!/bin/sh
# heaptape -- `heaptape record` and its tape file: an output it cannot write
# is refused before the program runs, a file this run did not write is never
# reported as this run's tape, and a missing tape fails the job (issue 11).
# Needs HEAPTAPE (the binary), HT_BUILD (build dir), HT_ROOT (repo root).
set -u
: "${HEAPTAPE:?set HEAPTAPE}" "${HT_BUILD:?set HT_BUILD}" "${HT_ROOT:?set HT_ROOT}"
tmp=$(mktemp -d) || exit 1
chmod 755 "$tmp"
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT

. "$(dirname "$0")/expect.inc"
# one_line NAME: stderr of the last expect is one line.
one_line() { [ "$(wc -l <"$tmp/err")" = 1 ] && ok "$1" || bad "$1" "$(cat "$tmp/err")"; }

marker="$tmp/ran"

# A directory that does not exist: refused, the program does not run.
expect nonexistent_dir 1 '^heaptape: /nonexistent-ht/x\.tape: cannot write the tape: No such file or directory$' \
  "$HEAPTAPE" record -o /nonexistent-ht/x.tape -- sh -c "touch $marker"
one_line nonexistent_dir_one_line
[ -e "$marker" ] && bad nonexistent_dir_not_run "the program ran" || ok nonexistent_dir_not_run
expect nonexistent_dir_pid 1 'cannot write the tape' \
  "$HEAPTAPE" record -o '/nonexistent-ht/x.%p.tape' -- sh -c "touch $marker"
[ -e "$marker" ] && bad nonexistent_dir_pid_not_run "the program ran" || ok nonexistent_dir_pid_not_run
# A directory named as the tape.
expect output_is_dir 1 "^heaptape: $tmp: cannot write the tape: Is a directory\$" \
  "$HEAPTAPE" record -o "$tmp" -- sh -c "touch $marker"
[ -e "$marker" ] && bad output_is_dir_not_run "the program ran" || ok output_is_dir_not_run
# A pipe (or a device) named as the tape: it is read back to be sealed, and
# must never be renamed over.
mkfifo "$tmp/fifo.tape"
expect output_is_pipe 1 "^heaptape: $tmp/fifo.tape: cannot write the tape: not a regular file\$" \
  "$HEAPTAPE" record -o "$tmp/fifo.tape" -- sh -c "touch $marker"
[ -e "$marker" ] && bad output_is_pipe_not_run "the program ran" || ok output_is_pipe_not_run
[ -p "$tmp/fifo.tape" ] && ok output_is_pipe_left || bad output_is_pipe_left "the pipe was replaced"

# The tape file is swapped for an older tape while the program runs: the
# recorder writes the file it opened, so the file under the name is not this
# run's; it must not be reported (nor changed), and the job fails.
mkdir "$tmp/sw"
"$HEAPTAPE" record -o "$tmp/sw/old.tape" -- true 2>/dev/null
cp "$tmp/sw/old.tape" "$tmp/sw/keep.tape"
expect swapped 1 "^heaptape: $tmp/sw/x\\.tape: no tape was written by this run" \
  "$HEAPTAPE" record -o "$tmp/sw/x.tape" -- sh -c "mv $tmp/sw/x.tape $tmp/sw/moved.tape; cp $tmp/sw/old.tape $tmp/sw/x.tape"
one_line swapped_one_line
cmp -s "$tmp/sw/x.tape" "$tmp/sw/keep.tape" && ok swapped_untouched || bad swapped_untouched "the older tape changed"
# The program's own failure status is kept when the tape is missing too.
expect swapped_status 5 'no tape was written by this run' \
  "$HEAPTAPE" record -o "$tmp/sw/y.tape" -- sh -c "mv $tmp/sw/y.tape $tmp/sw/moved2.tape; cp $tmp/sw/old.tape $tmp/sw/y.tape; exit 5"
# A successful recording still passes the program's status through.
expect written_status 4 '' "$HEAPTAPE" record -o "$tmp/sw/z.tape" -- sh -c 'exit 4'
grep -q '; tape ' "$tmp/err" && ok written_summary || bad written_summary "$(cat "$tmp/err")"

# Run as a user who cannot write the tape (heaptape as nobody): an existing
# tape in a read-only directory, a read-only existing tape, a default name in
# a read-only current directory.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
   setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -x "$HEAPTAPE"; then
  as_user() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
elif [ "$(id -u)" != 0 ]; then
  as_user() { "$@"; }
else
  no_user=1
fi
if [ -z "${no_user:-}" ]; then
  mkdir "$tmp/ro" "$tmp/rw"
  in_ro() { (cd "$tmp/ro" && as_user "$@"); }
  "$HEAPTAPE" record -o "$tmp/ro/x.tape" -- true 2>/dev/null
  cp "$tmp/ro/x.tape" "$tmp/ro/keep.tape"
  "$HEAPTAPE" record -o "$tmp/rw/r.tape" -- true 2>/dev/null
  chmod 444 "$tmp/rw/r.tape"
  chmod 755 "$tmp/ro"
  [ "$(id -u)" = 0 ] && chmod 777 "$tmp/rw" || chmod 555 "$tmp/ro"
  expect readonly_dir 1 "^heaptape: $tmp/ro/x\\.tape: cannot write the tape: Permission denied\$" \
    as_user "$HEAPTAPE" record -o "$tmp/ro/x.tape" -- sh -c "touch $tmp/rw/ran"
  one_line readonly_dir_one_line
  [ -e "$tmp/rw/ran" ] && bad readonly_dir_not_run "the program ran" || ok readonly_dir_not_run
  cmp -s "$tmp/ro/x.tape" "$tmp/ro/keep.tape" && ok readonly_dir_untouched || bad readonly_dir_untouched
  expect readonly_file 1 "^heaptape: $tmp/rw/r\\.tape: cannot write the tape: Permission denied\$" \
    as_user "$HEAPTAPE" record -o "$tmp/rw/r.tape" -- true
  expect readonly_cwd 1 'cannot write the tape: Permission denied' \
    in_ro "$HEAPTAPE" record -- true
  expect readonly_new_file 1 "^heaptape: $tmp/ro/new\\.%p\\.tape: cannot write the tape: Permission denied\$" \
    as_user "$HEAPTAPE" record -o "$tmp/ro/new.%p.tape" -- true
else
  skip unwritable "running as root without setpriv or user nobody"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
