#!/bin/sh
# --at with a malformed time is bad usage
"$HEAPTAPE" report --at soon ../../data/rep_basic.tape 2>/dev/null
