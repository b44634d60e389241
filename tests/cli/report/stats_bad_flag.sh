#!/bin/sh
# stats with an unknown flag exits 2
"$HEAPTAPE" stats --bogus ../../data/rep_basic.tape 2>/dev/null
