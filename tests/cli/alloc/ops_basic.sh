#!/bin/sh
# heaptape ops of a golden tape: the first operations and the summary line.
"$HEAPTAPE" ops ../../data/rep_basic.tape | sed -n "1,4p;\$p"
