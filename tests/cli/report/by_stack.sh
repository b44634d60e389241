#!/bin/sh
# --by-stack: one row per stack, as before sites were merged by location
"$HEAPTAPE" report --by-stack --wrapper "xmall*" --leaks --top 2 --stacks 2 ../../data/rep_basic.tape
