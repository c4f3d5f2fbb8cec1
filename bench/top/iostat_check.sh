#!/usr/bin/env bash
# Cross-check `diskmeter top` against `iostat -x` (sysstat) over the same seconds.
#
# A steady fio load (4k random reads, O_DIRECT, QD 4, time-based) runs on a file on the root
# disk and then on a loop device over a /dev/shm file; while it runs, iostat and diskmeter top
# sample the device at 1 s for N intervals, started together. compare.py aligns the intervals
# by timestamp and checks r/s and r_await: median of per-interval ratios and whole-window
# ratios, each within 2 %.
#
# Each device is loaded twice: at QD 4 (the usual check) and at a deep queue (--deep-qd,
# default 128), because iostat prints r_await with two decimals and a fast device's await at
# QD 4 (a few hundredths of a ms) cannot be compared as a ratio at that resolution; the deep
# queue lifts the await to where the 2 % ratio is meaningful.
#
# usage: bench/top/iostat_check.sh [--bin PATH] [--count N] [--dir DIR] [--deep-qd N] [--skip-loop]
# needs: fio, sysstat (iostat), python3; root for the loop device case.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=""
count=25
dir=/var/tmp
skip_loop=0
deep_qd=128
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --skip-loop) skip_loop=1; shift ;;
    --deep-qd) deep_qd=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  for c in "${CARGO_TARGET_DIR:-$repo/target}/release/diskmeter" "$repo/target/release/diskmeter"; do
    [ -x "$c" ] && { bin=$c; break; }
  done
fi
[ -x "$bin" ] || { echo "build first: cargo build --release -p diskmeter (or --bin PATH)" >&2; exit 2; }
for t in fio iostat python3; do command -v $t >/dev/null || { echo "missing $t" >&2; exit 2; }; done

stamp=$(date -u +%Y%m%d-%H%M%S)
out="$repo/bench/results/top/$stamp"
mkdir -p "$out"
runtime=$((count + 15))
status=0
loopdev=""
cleanup() {
  [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
  rm -f "$dir/diskmeter-top-bench.dat" /dev/shm/diskmeter-top-bench.img
}
trap cleanup EXIT

# root device of a path: the whole disk behind its filesystem
disk_of() {
  local src; src=$(findmnt -no SOURCE --target "$1")
  local name; name=$(basename "$src")
  if [ -e "/sys/class/block/$name/partition" ]; then
    basename "$(dirname "$(readlink -f "/sys/class/block/$name")")"
  else
    echo "$name"
  fi
}

# case NAME DEV QD FIO_FILENAME [FIO_SIZE]
run_case() {
  local name=$1 dev=$2 qd=$3 target=$4 size=${5:-}
  echo "== $name: fio randread 4k QD$qd direct on $target; sampling $dev for $count s"
  fio --name=top-check --filename="$target" ${size:+--size=$size} --rw=randread --bs=4k --iodepth="$qd" \
      --ioengine=libaio --direct=1 --time_based --runtime="$runtime" --output-format=json \
      --output="$out/$name-fio.json" &
  local fpid=$!
  sleep 5   # let the load settle (and the file be laid out)
  S_TIME_FORMAT=ISO iostat -x -y -t -o JSON "$dev" 1 "$count" > "$out/$name-iostat.json" &
  local ipid=$!
  "$bin" top --json --interval 1s --count "$count" --devices "$dev" > "$out/$name-diskmeter.jsonl" &
  local dpid=$!
  wait "$ipid" "$dpid"
  wait "$fpid" || true
  python3 "$here/compare.py" "$out/$name-iostat.json" "$out/$name-diskmeter.jsonl" "$dev" \
      --json-out "$out/$name-summary.json" | tee "$out/$name-compare.txt" || status=1
}

# Lay the file out before timing anything.
fio --name=layout --filename="$dir/diskmeter-top-bench.dat" --size=1G --rw=write --bs=1M --direct=1 \
    --output=/dev/null
rootdev=$(disk_of "$dir")
run_case rootdisk-qd4 "$rootdev" 4 "$dir/diskmeter-top-bench.dat" 1G
run_case rootdisk-qd$deep_qd "$rootdev" "$deep_qd" "$dir/diskmeter-top-bench.dat" 1G

if [ "$skip_loop" = 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    truncate -s 1G /dev/shm/diskmeter-top-bench.img
    loopdev=$(losetup -f --show /dev/shm/diskmeter-top-bench.img)
    run_case loop-qd4 "$(basename "$loopdev")" 4 "$loopdev"
    run_case loop-qd$deep_qd "$(basename "$loopdev")" "$deep_qd" "$loopdev"
  else
    echo "skipping the loop-device case: needs root"
  fi
fi
echo "results in $out"
exit $status
