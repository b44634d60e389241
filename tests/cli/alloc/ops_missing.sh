#!/bin/sh
# heaptape ops of a missing file: one line naming it, exit 1.
"$HEAPTAPE" ops no_such.tape 2>&1
