#!/usr/bin/env bash
# Replay throughput: how many requests a second diskmeter itself can replay, on the null
# engine (no device), from a binary trace — so that the tool is never the limit of a replay.
#  1. `--timing afap` (as fast as possible), ROUNDS runs: median requests/s and peak RSS
#     (the trace is streamed: memory must not grow with it).
#  2. `--timing original` at RATE requests/s (the trace's own rate × --speed): the issue lag
#     and the share of requests issued within 1 ms of their intended time.
# Usage: cargo build --release && bench/replay.sh   (REQUESTS, ROUNDS, RATE to change)
# Writes bench/results/replay-<date>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
DM=${DM:-target/release/diskmeter}
REQUESTS=${REQUESTS:-10000000}
ROUNDS=${ROUNDS:-5}
RATE=${RATE:-1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
out=bench/results/replay-$(date -u +%Y%m%d-%H%M%S).txt
mkdir -p bench/results
# The synthetic trace's own rate is 100 000 requests/s; --speed scales it to RATE.
"$DM" cache synth --dist zipf:1.1 --blocks 1000000 --requests "$REQUESTS" --iops 100000 -o "$work/t.dmt" >/dev/null
speed=$(python3 -c "print($RATE / 100000)")
{
  echo "# bench/replay.sh $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs"
  echo "# trace: $REQUESTS requests, binary, $(stat -c %s "$work/t.dmt") bytes"
  echo "## afap on the null engine"
  rates=()
  for i in $(seq "$ROUNDS"); do
    r=$(/usr/bin/time -f "%M" -o "$work/rss" "$DM" replay "$work/t.dmt" --engine null --timing afap --json 2>/dev/null |
      python3 -c 'import json,sys; p=json.load(sys.stdin)["replay"]["passes"][0]; print(round(p["requests"]/p["seconds"]))')
    echo "round $i: $r requests/s, peak RSS $(cat "$work/rss") KiB"
    rates+=("$r")
  done
  printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print "median: " a[int((NR+1)/2)] " requests/s (goal >= 1000000)"}'
  echo "## original timing at $RATE requests/s (--speed $speed) on the null engine"
  "$DM" replay "$work/t.dmt" --engine null --speed "$speed" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["replay"]["passes"][0]; f = p["fidelity"]; l = f["lag_ns"]
n, s = p["requests"], p["seconds"]
print("%d requests in %.3f s = %.0f requests/s" % (n, s, n / s))
print("issue lag p50 %d ns, p99 %d ns, max %d ns; %.2f %% within 1 ms" % (l["p50"], l["p99"], l["max"], f["on_time_pct"]))
print("warnings:", [w["code"] for w in d["warnings"]])'
} | tee "$out"
