#!/bin/sh
# heaptape --version names the versions it writes, as docs/FORMAT.md does
v=$("$HEAPTAPE" --version)
doc=$(grep -o 'the sealer writes version [0-9]*' ../../../docs/FORMAT.md | head -n 1 | grep -o '[0-9]*$')
case "$v" in
  *"journals of tape format 1, sealed tapes of $doc;"*) echo "versions as documented" ;;
  *) echo "differs: '$v', FORMAT.md: sealed $doc" ;;
esac
echo "$v" | sed 's/ (.*//'
