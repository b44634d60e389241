#!/bin/sh
# a file that is not a tape: one line naming it, exit 1
"$HEAPTAPE" report not_a_tape.sh 2>&1
