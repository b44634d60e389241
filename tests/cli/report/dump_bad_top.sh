# report --dump's --top is checked like report's (it went through an
# unchecked strtoul: "1x" meant 1); a usage error comes before reading.
out=$("$HEAPTAPE" report --dump no_such.dump --top 1x 2>&1); rc=$?
printf '%s\n' "$out" | head -n 1
exit $rc
