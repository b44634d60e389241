#!/bin/sh
# heaptape stats: events, sizes, threads, damage
"$HEAPTAPE" stats ../../data/rep_basic.tape
