#!/usr/bin/env bash
# Accuracy cross-check: diskmeter vs fio on the same preconditioned 1 GiB file, same
# workloads, runs interleaved (fio, diskmeter, fio, diskmeter, ...), medians and ratios.
#
# Wraps the project's shared cross-check script ../shared/bench/vs-fio.py (relative to the
# repository root). The test file goes into DIR, which must be on a real filesystem: tmpfs
# and ramfs are refused (O_DIRECT there is page-cache copying, not storage).
#
#   bench/accuracy.sh                       # new dir under the current directory
#   bench/accuracy.sh /mnt/nvme/tmp         # a dir on the device you care about
#   bench/accuracy.sh --rounds 5 --runtime 10 /mnt/nvme/tmp
#
# Prints the table of vs-fio.py (medians of IOPS and mean latency, ratio diskmeter/fio)
# and keeps a copy in bench/results/accuracy-<date>.txt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

size=1G
rounds=3
runtime=4
cases=rnd4k-q1,rnd4k-q32,seq1m-q8
dirs=read,write
bin=""
script="$repo/../shared/bench/vs-fio.py"
outdir="$here/results"
keep=0
allow_ram=0
dir=""

usage() {
    sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    cat <<EOF

Usage: bench/accuracy.sh [options] [DIR]
  --size SIZE       test file size (default $size)
  --rounds N        interleaved rounds per cell (default $rounds)
  --runtime S       seconds per run (default $runtime)
  --cases LIST      vs-fio.py cases (default $cases;
                    also rnd4k-q32t4, seq1m-q1)
  --dirs LIST       read,write (default $dirs)
  --bin PATH        diskmeter binary (default: \$CARGO_TARGET_DIR or target/, release)
  --script PATH     cross-check script (default ../shared/bench/vs-fio.py)
  --out DIR         where the copy of the table goes (default bench/results)
  --keep            keep the test file (and the directory this script created)
  --allow-ram       allow a tmpfs/ramfs DIR (engine overhead only; not storage)
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --cases) cases=$2; shift 2 ;;
        --dirs) dirs=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --script) script=$2; shift 2 ;;
        --out) outdir=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --allow-ram) allow_ram=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "accuracy.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) [[ -z "$dir" ]] || { echo "accuracy.sh: one DIR only" >&2; exit 2; }; dir=$1; shift ;;
    esac
done

if [[ -z "$bin" ]]; then
    bin="${CARGO_TARGET_DIR:-$repo/target}/release/diskmeter"
fi
[[ -x "$bin" ]] || { echo "accuracy.sh: no diskmeter binary at $bin (cargo build --release -p diskmeter, or --bin)" >&2; exit 2; }
[[ -f "$script" ]] || { echo "accuracy.sh: cross-check script not found: $script (--script)" >&2; exit 2; }
command -v fio >/dev/null || { echo "accuracy.sh: fio not found (apt-get install fio)" >&2; exit 2; }

made_dir=""
if [[ -z "$dir" ]]; then
    dir=$(mktemp -d "$PWD/dm-accuracy.XXXXXX")
    made_dir=$dir
fi
[[ -d "$dir" ]] || { echo "accuracy.sh: $dir is not a directory" >&2; exit 2; }
fstype=$(stat -f -c %T "$dir")
case "$fstype" in
    tmpfs|ramfs)
        if [[ $allow_ram -eq 0 ]]; then
            [[ -n "$made_dir" ]] && rmdir "$made_dir"
            echo "accuracy.sh: $dir is on $fstype (RAM); pick a directory on a real filesystem or pass --allow-ram" >&2
            exit 2
        fi ;;
esac

target="$dir/dm-accuracy-$$.bin"
cleanup() {
    local rc=$?
    if [[ $keep -eq 0 ]]; then
        rm -f "$target"
        [[ -n "$made_dir" ]] && rmdir "$made_dir" 2>/dev/null
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Precondition once with random data (1 MiB direct writes), so reads hit allocated extents
# and writes overwrite them (vs-fio.py would do the same for a missing file).
echo "preconditioning $target ($size on $fstype, $(df -h --output=source "$dir" | tail -1))" >&2
fio --name=prep --filename="$target" --size="$size" --rw=write --bs=1m --direct=1 \
    --ioengine=io_uring --iodepth=8 --output-format=json >/dev/null
sync

mkdir -p "$outdir"
stamp=$(date +%Y%m%d-%H%M%S)
copy="$outdir/accuracy-$stamp.txt"
{
    echo "# diskmeter vs fio, $(date -Iseconds), $(uname -r), $fstype on $(df --output=source "$dir" | tail -1)"
    echo "# $("$bin" --version), $(fio --version), rounds $rounds, runtime ${runtime}s, size $size"
} >"$copy"
python3 "$script" --bin "$bin" --target "$target" --size "$size" --runtime "$runtime" --rounds "$rounds" \
    --cases "$cases" --dirs "$dirs" | tee -a "$copy"
echo "table saved to $copy" >&2
