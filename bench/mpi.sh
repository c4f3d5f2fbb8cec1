#!/usr/bin/env bash
# The cost of running under MPI, and merged IOPS against a known rate.
#  1. 4k randread QD1 on a RAM-backed loop device: one diskmeter alone, then under
#     `mpirun -np 1`, interleaved (A B A B …, ROUNDS rounds); medians and their ratio.
#  2. Three loop devices, each throttled by the blkio cgroup to RATE read IOPS, one rank each
#     under `mpirun -np 3`: the merged IOPS must be 3 × RATE within 2 %.
# Needs root, losetup, cgroup v1 blkio, Open MPI and a `--features mpi` build:
#   cargo build --release --features mpi && bench/mpi.sh
# Writes bench/results/mpi-<date>.txt. Loop devices, images and the cgroup are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
DM=${DM:-target/release/diskmeter}
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-5}
RATE=${RATE:-2000}
[ "$(id -u)" = 0 ] || { echo "bench/mpi.sh needs root (loop devices, cgroups)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/dm-mpi.XXXX)
cg=/sys/fs/cgroup/blkio/dm-mpi-bench
loops=()
cleanup() {
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  [ -d "$cg" ] && { cat "$cg/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" > /sys/fs/cgroup/blkio/cgroup.procs || true; done; rmdir "$cg" || true; }
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
mk() { truncate -s 512M "$work/$1.img"; head -c 64M /dev/urandom > "$work/$1.img.part"; dd if="$work/$1.img.part" of="$work/$1.img" conv=notrunc status=none; rm "$work/$1.img.part"; losetup -f --show --direct-io=off "$work/$1.img"; }
out=bench/results/mpi-$(date -u +%Y%m%d-%H%M%S).txt
mkdir -p bench/results
job=(run --rw randread --bs 4k --qd 1 --runtime "${SECS}s" --size 64M --no-ceiling-check --json -q)
iops() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["results"][0]["read"]["iops"]))'; }

ram=$(mk ram); loops+=("$ram")
{
  echo "# diskmeter under MPI: $(date -u +%FT%TZ), $(nproc) CPUs, kernel $(uname -r), $(mpirun --version | head -1)"
  echo "## 1. 4k randread QD1, RAM-backed loop $ram, ${SECS}s, $ROUNDS interleaved rounds (IOPS)"
  echo "round alone mpirun-np1"
} | tee "$out"
alone=(); mpi=()
for r in $(seq "$ROUNDS"); do
  a=$("$DM" "${job[@]}" --target "$ram" | iops)
  m=$(mpirun --allow-run-as-root -np 1 "$DM" "${job[@]}" --target "$ram" | iops)
  alone+=("$a"); mpi+=("$m")
  echo "$r $a $m" | tee -a "$out"
done
python3 - "${alone[*]}" "${mpi[*]}" <<'PY' | tee -a "$out"
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]; m = [float(x) for x in sys.argv[2].split()]
ma, mm = statistics.median(a), statistics.median(m)
print(f"median alone {ma:.0f} IOPS, under mpirun -np 1 {mm:.0f} IOPS: ratio {mm/ma:.3f}")
PY

echo "## 2. three loop devices throttled to $RATE read IOPS each, one rank each (mpirun -np 3)" | tee -a "$out"
t=()
for i in 0 1 2; do l=$(mk "t$i"); loops+=("$l"); t+=("$l"); done
mkdir -p "$cg"
for l in "${t[@]}"; do
  echo "$(lsblk -dno MAJ:MIN "$l" | tr -d ' ') $RATE" > "$cg/blkio.throttle.read_iops_device"
done
printf '%s\n' "${t[@]}" > "$work/targets"
echo $$ > "$cg/cgroup.procs"
mpirun --allow-run-as-root --oversubscribe -np 3 sh -c \
  "T=\$(sed -n \"\$((OMPI_COMM_WORLD_RANK+1))p\" $work/targets); exec $DM run --rw randread --bs 4k --qd 4 --runtime 10s --size 64M --no-ceiling-check --json -q --target \$T" \
  > "$work/three.json"
echo $$ > /sys/fs/cgroup/blkio/cgroup.procs
python3 - "$work/three.json" "$RATE" <<'PY' | tee -a "$out"
import json, sys
d = json.load(open(sys.argv[1])); rate = float(sys.argv[2])
hosts = d["cluster"]["jobs"][0]["hosts"]
for h in hosts:
    print(f"rank {h['rank']}: {h['iops']:.1f} IOPS (throttle {rate:.0f}, {100*(h['iops']/rate-1):+.2f}%)")
m = d["results"][0]["read"]["iops"]
err = 100 * (m / (3 * rate) - 1)
print(f"merged {m:.1f} IOPS = sum of ranks {sum(h['iops'] for h in hosts):.1f}; 3 x throttle = {3*rate:.0f}: {err:+.2f}% "
      f"({'within' if abs(err) <= 2 else 'OUTSIDE'} 2%); start skew {1e3*d['cluster']['jobs'][0]['start_skew_s']:.3f} ms")
PY
echo "written: $out"
