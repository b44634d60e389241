#!/bin/sh
# heaptape tests -- real programs recorded must behave as they do unrecorded
# (issue 17): bash with its own fds 3 and 4, ripgrep's threads, node, gawk,
# tar, make -j2, xz -T2, gdb and a bash script, through heaptape record.
# A program missing from the machine is skipped, not failed.
. "$(dirname "$0")/record_common.inc"
. "$(dirname "$0")/record_hard.inc"

# -- bash writing to its own fds 3 and 4 -------------------------------------------
# $1: directory of the two files. Allocates (arrays, strings) in every round;
# sleeps every 10 rounds so the recorder flushes while the fds are the script's.
BASH_FDS='exec 3>"$1/b3.txt"; exec 4>"$1/b4.txt"
declare -A m
for i in $(seq 1 40); do
  printf -v s "%0${i}d" "$i"; a[$i]="$s$s$s"; m[k$((i % 7))]+="${s//0/ab},"
  read -r -a w <<<"$i ${s:0:5} ${a[$i]:3:4}"; t=${w[*]^^}
  echo "$i ${#s} $t" >&3; echo "line $i ${a[$i]} ${#m[@]}" >&4
  case $i in *0) sleep 0.15 ;; esac
done
exec 3>&- 4>&-
cksum <"$1/b3.txt"; cksum <"$1/b4.txt"; echo "${#a[@]} ${#m[k3]}"'
if have bash; then
  mkdir "$T/b0" "$T/b-preload" "$T/b-cli"
  plain bash -c "$BASH_FDS" bash "$T/b0"
  for how in preload cli; do
    recorded $how "$T/bf-$how.tape" bash -c "$BASH_FDS" bash "$T/b-$how"
    same "bash exec 3>file 4>file ($how)"
    reads "bash exec 3>file 4>file ($how)" "$T/bf-$how.tape"
  done
fi

# -- ripgrep: Rust threads call pthread_getattr_np as they start -------------------
if have rg; then
  cp -R "$HT_ROOT/src" "$T/rgsrc"
  plain rg -j2 -n 'ht_|return' "$T/rgsrc"; want=$(printf '%s\n' "$want" | sort)
  for how in preload cli; do
    recorded $how "$T/rg-$how.tape" rg -j2 -n 'ht_|return' "$T/rgsrc"
    got=$(printf '%s\n' "$got" | sort)
    same "rg -j2 ($how)"
    reads "rg -j2 ($how)" "$T/rg-$how.tape"
  done
fi

# -- Debian programs through heaptape record -----------------------------------------
# real NAME CMD...: CMD plain, then recorded by heaptape record: same stdout and
# status, no hang, tape reads.
real() {
  name=$1; shift
  plain "$@"
  recorded cli "$T/$name.tape" "$@"
  same "$name"
  reads "$name" "$T/$name.tape"
}

if have node; then
  real "node -e" node -e '
const m = new Map(); let s = 0;
for (let i = 0; i < 200000; i++) { const k = "k" + (i % 5000); m.set(k, (m.get(k) || "") + i % 10); }
for (const v of m.values()) s += v.length;
const a = Array.from({ length: 100000 }, (_, i) => ({ i, t: "x".repeat(i % 64) }));
console.log(m.size, s, a.reduce((n, o) => n + o.t.length, 0), JSON.stringify(a.slice(0, 2)));'
fi

if have gawk; then
  seq 1 200000 | awk '{ print "w" $1 % 997, "v" $1 % 31, "the", "x" ($1 * 7) % 5003 }' >"$T/words.txt"
  real "gawk word count" gawk '{ for (i = 1; i <= NF; i++) c[$i]++ }
    END { PROCINFO["sorted_in"] = "@ind_str_asc"; for (w in c) print w, c[w] }' "$T/words.txt"
fi

if have tar; then
  for d in 1 2 3 4 5; do
    mkdir -p "$T/tree/d$d/sub"
    for f in 1 2 3 4 5 6 7 8 9 10; do
      seq 1 $((d * f * 50)) >"$T/tree/d$d/f$f.txt"; echo "$d $f" >"$T/tree/d$d/sub/g$f"
    done
  done
  plain tar --sort=name -cf "$T/t0.tar" -C "$T/tree" .
  recorded cli "$T/tarc.tape" tar --sort=name -cf "$T/t1.tar" -C "$T/tree" .
  same "tar create"
  cmp -s "$T/t0.tar" "$T/t1.tar"; ok "tar create: same archive" $?
  reads "tar create" "$T/tarc.tape"
  real "tar list" tar -tvf "$T/t1.tar"
fi

if have make; then
  mkdir "$T/mk"
  printf '%s\n' 'all: t1 t2 t3 t4 t5 t6 t7 t8' \
    't%:' '	@echo "build $@"; echo "$@ $(words $(MAKEFILE_LIST)) made" >$(D)/$@.out; cat $(D)/$@.out' \
    '.PHONY: all t1 t2 t3 t4 t5 t6 t7 t8' >"$T/mk/Makefile"
  plain make -j2 -f "$T/mk/Makefile" D="$T/mk"; want=$(printf '%s\n' "$want" | sort)
  recorded cli "$T/make.tape" make -j2 -f "$T/mk/Makefile" D="$T/mk"
  got=$(printf '%s\n' "$got" | sort)
  same "make -j2"
  reads "make -j2" "$T/make.tape"
fi

if have xz; then
  mkdir "$T/x0" "$T/x1"
  seq 1 2600000 >"$T/x0/data"; cp "$T/x0/data" "$T/x1/data"   # 20 MB
  sum=$(cksum <"$T/x0/data")
  plain xz -1 -T2 -k "$T/x0/data"
  recorded cli "$T/xzc.tape" xz -1 -T2 -k "$T/x1/data"
  same "xz -T2 compress"
  cmp -s "$T/x0/data.xz" "$T/x1/data.xz"; ok "xz -T2 compress: same compressed file" $?
  reads "xz -T2 compress" "$T/xzc.tape"
  rm "$T/x0/data" "$T/x1/data"
  plain xz -d -T2 -k "$T/x0/data.xz"
  recorded cli "$T/xzd.tape" xz -d -T2 -k "$T/x1/data.xz"
  same "xz -T2 decompress"
  [ "$(cksum <"$T/x0/data")" = "$sum" ] && [ "$(cksum <"$T/x1/data" 2>/dev/null)" = "$sum" ]
  ok "xz -T2 decompress: same checksum" $?
  reads "xz -T2 decompress" "$T/xzd.tape"
fi

if have gdb; then
  real "gdb -batch" gdb -nx -batch -ex 'print 1+2' -ex 'info line main' \
    -ex 'ptype status_mode' -ex 'info functions _mode$' "$PROGS/hard_limits"
fi

if have bash; then
  real "bash script" bash -c '
s=0; for i in $(seq 1 3000); do s=$((s + ${#i})); done; echo "digits $s"
x=$(for i in 1 2 3; do echo "sub $i"; done | tr "\n" " "); echo "$x"
(cd / && echo "subshell in $(pwd)"; exit 3); echo "subshell status $?"
declare -A m; for i in $(seq 1 800); do m[k$((i % 50))]+="$i,"; done; echo "${#m[@]} ${#m[k7]}"
f() { local r=$1; [ "$1" -gt 0 ] && r=$(( $1 + $(f $(($1 - 1))) )); echo "$r"; }; echo "f $(f 12)"
exit 4'
fi
finish
