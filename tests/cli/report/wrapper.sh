#!/bin/sh
# --wrapper attributes past a custom allocation wrapper
"$HEAPTAPE" report --wrapper "xmall*" --leaks --top 2 --stacks 2 ../../data/rep_basic.tape
