#!/bin/sh
# heaptape replay without a tape: usage error, nothing on stdout.
"$HEAPTAPE" replay --allocator glibc
