#!/bin/sh
# the default report: summary, peak, calls, bytes, leaks
"$HEAPTAPE" report ../../data/rep_basic.tape
