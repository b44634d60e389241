#!/bin/sh
# memprof layout of a runtime tape with heap snapshots every 0.5 s
"$HEAPTAPE" report --memprof --heap-snap-interval 0.5 ../../data/rep_lua.tape
