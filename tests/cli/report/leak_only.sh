#!/bin/sh
# memprof heap summary alone, human-readable sizes
"$HEAPTAPE" report --leak-only --human-readable ../../data/rep_lua.tape
