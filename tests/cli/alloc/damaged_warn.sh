#!/bin/sh
# lifetimes, heapmap and replay warn about a truncated tape as every other
# command does (one line on stderr, the same words as heaptape report)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
tape=../../data/rep_trunc.tape
"$HEAPTAPE" lifetimes "$tape" 2>&1 >/dev/null
"$HEAPTAPE" heapmap -o "$t/map.png" "$tape" 2>&1 >/dev/null
"$HEAPTAPE" replay --allocator glibc "$tape" 2>&1 >/dev/null
"$HEAPTAPE" report "$tape" 2>&1 >/dev/null
