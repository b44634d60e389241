#!/bin/sh
# heaptape locks --model fine of a hand-made operations log with accesses
# (ops --access lines; one to a block not live is skipped): by hand,
# 0 N1 K1 | 1 N2 K2, 1=.5 | 2 L1 1=1.5 2=.5 | 3 N3 K3 1=1 2=0 U2 |
# 4 F2 (unlocked) 1=.5 3=.5 | 5 M3 3=1.5 1=0 U1; 3 stays locked.
t=$(mktemp); trap 'rm -f "$t"' EXIT
printf '# heaptape ops 1: hand-made\n1 1 N 1 100\n2 1 N 2 100\n3 1 L 1 0x10 8\n4 1 S 9 0x10 8\n5 1 N 3 8\n6 1 F 2\n7 1 M 3 0x0 4\n' >"$t"
"$HEAPTAPE" locks --model fine "$t" | grep -v '^# heaptape ops'
