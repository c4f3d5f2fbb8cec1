#!/usr/bin/env bash
# `steady --matrix quick` on a device of known speed: a loop device over /dev/shm limited by a
# blk-throttle cgroup (v1 blkio) to IOPS_FAST reads and writes per second, switched to IOPS_SLOW
# once the preconditioning and about CHANGE_MB more megabytes are written (an SSD falling
# off its SLC cache, in miniature). Prints the rounds, the steady-state window against the
# PTS limits, the time it took, and iostat's view of the window's rounds next to diskmeter's.
# Root only. Usage: cargo build --release && sudo bench/steady_throttle.sh
# (ROUND_TIME, IOPS_FAST, IOPS_SLOW, CHANGE_MB, SIZE_MB to change). Writes
# bench/results/steady-<date>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
DM=${DM:-${CARGO_TARGET_DIR:-$PWD/target}/release/diskmeter}
ROUND_TIME=${ROUND_TIME:-5s}
IOPS_FAST=${IOPS_FAST:-8000}
IOPS_SLOW=${IOPS_SLOW:-2000}
CHANGE_MB=${CHANGE_MB:-2500}
SIZE_MB=${SIZE_MB:-256}
cg=/sys/fs/cgroup/blkio/diskmeter-bench-$$
work=$(mktemp -d -p /dev/shm)
dev=""
cleanup() {
  [ -n "${watch:-}" ] && kill "$watch" 2>/dev/null || true
  [ -n "${ios:-}" ] && kill "$ios" 2>/dev/null || true
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
truncate -s "${SIZE_MB}M" "$work/img"
dev=$(losetup -f --show "$work/img")
name=$(basename "$dev")
devno=$(cat "/sys/block/$name/dev")
mkdir "$cg"
limit() {
  echo "$devno $1" > "$cg/blkio.throttle.read_iops_device"
  echo "$devno $1" > "$cg/blkio.throttle.write_iops_device"
}
limit "$IOPS_FAST"
written() { local s; s=$(awk '{print $7}' "/sys/block/$name/stat"); echo $((s * 512)); }
start=$(written)
trigger=$((start + 2 * SIZE_MB * 1048576 + CHANGE_MB * 1000000))
(
  while [ "$(written)" -lt "$trigger" ]; do sleep 0.01; done
  limit "$IOPS_SLOW"
  echo "$(date +%s.%N)" > "$work/switched"
) &
watch=$!
out=bench/results/steady-$(date -u +%Y%m%d-%H%M%S).txt
mkdir -p bench/results
iostat -dxy "$name" 1 > "$work/iostat" 2>/dev/null &
ios=$!
t0=$(date +%s.%N)
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$DM" steady "$dev" --destroy-data "$dev" \
  --matrix quick --round-time "$ROUND_TIME" --json -q > "$work/doc.json" || true
t1=$(date +%s.%N)
kill "$ios" 2>/dev/null || true
{
  echo "# bench/steady_throttle.sh $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs"
  echo "# $dev over /dev/shm, ${SIZE_MB} MiB; throttle ${IOPS_FAST} IOPS, ${IOPS_SLOW} IOPS after ~${CHANGE_MB} MB of round writes"
  echo "# steady --matrix quick --round-time $ROUND_TIME (enterprise: QD32 x 4 workers)"
  python3 - "$work/doc.json" "$t0" "$t1" "$IOPS_FAST" "$IOPS_SLOW" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["steady"]
t0, t1, fast, slow = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print("purge:", s["purge"]["message"])
p = s["precondition"]
print("preconditioning: %d/%d passes, %.0f MiB at %.0f MB/s in %.1f s" % (p["passes_done"], p["passes_planned"], p["bytes"] / 2**20, p["mb_s"], p["seconds"]))
names = [t["name"] for t in s["tracking"]]
print("round  " + "  ".join("%16s" % n for n in names))
w = s.get("window") or {}
for i in range(len(s["rounds"])):
    mark = "*" if w and w["first_round"] <= i + 1 <= w["last_round"] else " "
    print("%4d%s  " % (i + 1, mark) + "  ".join("%16.0f" % t["values"][i] for t in s["tracking"] if i < len(t["values"])))
print("verdict:", s["verdict"])
for c in (w.get("checks") or []):
    print("  %s: mean %.0f, range %.0f (limit %.0f) %s, excursion %.0f (limit %.0f) %s" % (
        c["name"], c["mean"], c["range"], c["range_limit"], "ok" if c["range_ok"] else "FAIL",
        c["excursion"], c["excursion_limit"], "ok" if c["slope_ok"] else "FAIL"))
print("throttle after the change: %d IOPS (4K 0/100 is write-only: %d expected)" % (slow, slow))
print("rounds to steady state: %s; wall time %.1f s (steady's own: %.1f s)" % (
    w.get("last_round") if s["steady"] else "not steady", t1 - t0, s["seconds"]))
print("warnings:", [x["code"] for x in d["warnings"]])
PY
  echo "## iostat -dxy 1 during the run (w/s of the device; the last rounds' 4K 0/100 seconds sit at the slow limit)"
  grep -E "^$name " "$work/iostat" | awk '{print $0}' | tail -40
} | tee "$out"
