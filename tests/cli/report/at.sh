#!/bin/sh
# --at: the heap composition at a time
"$HEAPTAPE" report --at 0.45 --temporary --stacks 1 ../../data/rep_basic.tape
