#!/bin/sh
# --at after the end of the tape: a note says where the tape ends, and the
# heading says the heap shown is the heap at that end
"$HEAPTAPE" report --at 99 --stacks 1 ../../data/rep_basic.tape 2>&1 | grep -E '^(heaptape|HEAP AT)'
"$HEAPTAPE" report --at 2 --stacks 1 ../../data/rep_basic.tape 2>&1 | grep -E '^(heaptape|HEAP AT)'
