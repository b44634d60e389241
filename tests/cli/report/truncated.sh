#!/bin/sh
# a truncated tape: the report of what is there plus one warning
"$HEAPTAPE" report --leaks --stacks 1 ../../data/rep_trunc.tape 2>&1
