#!/usr/bin/env bash
# sla's adaptive search against --exhaustive (bench/sla/run.sh) on the two RAM devices of
# issue 46: a zram device, and a RAM-backed loop device throttled by the kernel's block-I/O
# throttle (cgroup v1 blkio.throttle, else v2 io.max) to a known rate (IOPS=10000 reads by
# default), with diskmeter and fio both run inside the cgroup. Needs root.
#   sudo bench/sla/devices.sh [ROUNDS]        (env: IOPS=10000 SIZE_MIB=1024 BOUND=1ms PCT=99)
# Results: bench/results/sla/<stamp>-{zram,throttled-loop}/summary.txt. Everything it makes
# (the zram device, the loop device and its image, the cgroup) is removed on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-2}
iops=${IOPS:-10000}
size=${SIZE_MIB:-1024}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ "$(id -u)" = 0 ] || { echo "devices.sh: needs root (zram, losetup, cgroups)" >&2; exit 2; }
zram= loop= image= cg=
cleanup() {
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  [ -n "$image" ] && rm -f "$image"
  [ -n "$zram" ] && echo "$zram" > /sys/class/zram-control/hot_remove 2>/dev/null || true
}
trap cleanup EXIT INT TERM

zram=$(cat /sys/class/zram-control/hot_add)
echo "${size}M" > "/sys/block/zram$zram/disksize"
dd if=/dev/urandom of="/dev/zram$zram" bs=1M count="$size" oflag=direct status=none
echo "== zram$zram"
OUT="$here/bench/results/sla/$stamp-zram" "$here/bench/sla/run.sh" "/dev/zram$zram" "$rounds"

image=$(mktemp -p /dev/shm dm-sla-XXXXXX)
truncate -s "${size}M" "$image"
loop=$(losetup -f --show "$image")
dd if=/dev/urandom of="$loop" bs=1M count="$size" oflag=direct status=none
devno=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
if [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
  cg=/sys/fs/cgroup/blkio/diskmeter-sla-$$
  mkdir "$cg"
  echo "$devno $iops" > "$cg/blkio.throttle.read_iops_device"
else
  root=/sys/fs/cgroup
  [ -e $root/cgroup.controllers ] || root=/sys/fs/cgroup/unified
  echo +io > "$root/cgroup.subtree_control" 2>/dev/null || true
  cg=$root/diskmeter-sla-$$
  mkdir "$cg"
  echo "$devno riops=$iops" > "$cg/io.max"
fi
echo "== $loop throttled to $iops read IOPS ($cg)"
# The subshell joins the cgroup; diskmeter and fio inherit it.
(echo "$BASHPID" > "$cg/cgroup.procs"
 OUT="$here/bench/results/sla/$stamp-throttled-loop" "$here/bench/sla/run.sh" "$loop" "$rounds")
