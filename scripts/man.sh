#!/bin/sh
# heaptape -- man pages from the command's own help texts: heaptape(1) from
# `heaptape --help`, heaptape-CMD(1) from `heaptape help CMD`, so that a page
# never says something --help does not. Usage: scripts/man.sh HEAPTAPE OUTDIR
set -eu
bin=$1 out=$2
mkdir -p "$out"
version=$("$bin" --version | sed 's/^heaptape //; s/ .*//')

# Print the help text on stdin as roff: literal lines, backslashes and
# leading dots or quotes escaped.
roff_body() {
  printf '.nf\n'
  sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  printf '.fi\n'
}

# page NAME SUMMARY: the page header; the body follows on stdin.
page() {
  {
    printf '.TH %s 1 "" "heaptape %s" "heaptape manual"\n' "$(echo "$1" | tr a-z A-Z)" "$version"
    printf '.SH NAME\n%s \\- %s\n.SH DESCRIPTION\n' "$1" "$(printf '%s' "$2" | sed 's/\\/\\e/g')"
    roff_body
    if [ "$1" = heaptape ]; then
      printf '.SH SEE ALSO\n'
      "$bin" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $1}' |
        sed 's/.*/.BR heaptape-& (1)/'
    else
      printf '.SH SEE ALSO\n.BR heaptape (1)\n'
    fi
  } >"$out/$1.1"
}

"$bin" --help | page heaptape "a heap profiler that records a program's heap onto a tape"
"$bin" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print}' |
while read -r cmd summary; do
  "$bin" help "$cmd" | page "heaptape-$cmd" "$summary"
done
