#!/bin/sh
# a bad flag: one error line and the short usage, which names every option
"$HEAPTAPE" record --bogus -- true 2>&1
