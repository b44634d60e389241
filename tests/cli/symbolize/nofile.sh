"$HEAPTAPE" symbolize 2>/dev/null
