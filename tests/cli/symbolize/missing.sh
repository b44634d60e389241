"$HEAPTAPE" symbolize /nonexistent/x.tape 2>&1
