#!/bin/sh
# a missing file: one line naming it, exit 1
"$HEAPTAPE" stats no_such.tape 2>&1
