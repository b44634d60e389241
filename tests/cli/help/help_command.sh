#!/bin/sh
# heaptape help COMMAND is COMMAND --help, for every command
for c in record report stats dump symbolize seal pprof flamegraph html ops lifetimes locks replay heapmap; do
  a=$("$HEAPTAPE" help $c 2>&1); b=$("$HEAPTAPE" $c --help 2>&1)
  [ -n "$b" ] && [ "$a" = "$b" ] && echo "$c same" || echo "$c differs"
done
"$HEAPTAPE" help report | head -n 1
