#!/bin/sh
# heap snapshots of a tape whose times run far past the end its scan saw (a
# fuzzer-made journal): they stop at 4x what the length asks for, and say so
"$HEAPTAPE" report --memprof --heap-snap-interval 0.0000001 ../../fuzz/corpus/fuzz_sealed/gen-1.tape 2>&1 >/dev/null
