#!/bin/bash
# Usage: AB_DIR=DIR bench/ab_engines.sh, with the two builds as DIR/a and DIR/b (release binaries).
# A B A B ... medians of IOPS per cell.
cd /dev/shm
out=${AB_DIR:-/tmp/ab}/results.txt; : > $out
for r in 1 2 3 4 5 6 7; do
  for side in a b; do
    for cell in "null1:--engine null --rw randread --bs 4k --qd 1" "null32:--engine null --rw randread --bs 4k --qd 32" "psync1:--engine psync --rw randread --bs 4k --qd 1 --target /dev/shm/ab.test --size 64M" "def32:--rw randread --bs 4k --qd 32 --target /dev/shm/ab.test --size 64M"; do
      name=${cell%%:*}; args=${cell#*:}
      iops=$(${AB_DIR:-/tmp/ab}/$side run $args --runtime 3s --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["read"]["iops"] for r in d["results"]))')
      echo "$r $side $name $iops" >> $out
    done
  done
done
rm -f /dev/shm/ab.test
python3 - <<'PY'
import statistics, collections
d=collections.defaultdict(list)
for l in open(''+__import__("os").environ.get("AB_DIR","/tmp/ab")+'/results.txt'):
    r,s,n,v=l.split(); d[(n,s)].append(float(v))
for n in ['null1','null32','psync1','def32']:
    a=statistics.median(d[(n,'a')]); b=statistics.median(d[(n,'b')])
    print(f"{n:8s} A(main) {a:12.0f}  B(win) {b:12.0f}  B/A {b/a:.3f}")
PY
