#!/usr/bin/env bash
# What `--verify` costs: the same write and mixed jobs with and without it, interleaved
# (A B A B …), on a RAM-backed loop device, so the tool's own work is what differs. Prints the
# IOPS of every run, the median of each side and their ratio, and the read-back's MB/s.
#
#   sudo bench/verify_overhead.sh [DISKMETER_BINARY] [ROUNDS]
set -eu
bin=${1:-target/release/diskmeter}
rounds=${2:-3}
img=/dev/shm/diskmeter-verify-bench.img
truncate -s 1G "$img"
dev=$(losetup --find --show "$img")
trap 'losetup -d "$dev"; rm -f "$img"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
iops() { python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["results"][0]; print(round((r.get("read") or {}).get("iops",0)+(r.get("write") or {}).get("iops",0)))'; }
for shape in "randwrite 4k 32" "randrw 4k 32" "write 128k 8"; do
    set -- $shape
    plain=() verified=() readback=()
    for i in $(seq "$rounds"); do
        common=(run --target "$dev" --destroy-data "$dev" --rw "$1" --bs "$2" --qd "$3" --size 512M --runtime 5s --json)
        plain+=("$("$bin" "${common[@]}" | iops)")
        doc=$("$bin" "${common[@]}" --verify)
        verified+=("$(printf '%s' "$doc" | iops)")
        readback+=("$(printf '%s' "$doc" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["verify"]["after_mb_s"]))')")
    done
    p=$(printf '%s\n' "${plain[@]}" | median)
    v=$(printf '%s\n' "${verified[@]}" | median)
    rb=$(printf '%s\n' "${readback[@]}" | median)
    echo "$1 bs=$2 qd=$3: plain ${plain[*]} IOPS, --verify ${verified[*]} IOPS; medians $p vs $v = $(python3 -c "print(f'{$v/$p:.3f}')")x; read-back ${rb} MB/s"
done
