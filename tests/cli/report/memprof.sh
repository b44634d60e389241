#!/bin/sh
# the LuaJIT memprof layout of a native tape
"$HEAPTAPE" report --memprof ../../data/rep_basic.tape
