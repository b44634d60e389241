#!/bin/sh
# heaptape help of an unknown command: one error line, exit status 2
"$HEAPTAPE" help bogus 2>&1
