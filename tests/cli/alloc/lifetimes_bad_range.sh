#!/bin/sh
# heaptape lifetimes with an inverted --range: usage error.
"$HEAPTAPE" lifetimes --range 50-10 ../../data/rep_basic.tape
