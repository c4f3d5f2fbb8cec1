#!/usr/bin/env bash
# Engine-ceiling benchmark: how close diskmeter gets to fio when the device is (almost) free.
#
#  1. RAM-backed loop device (file in /dev/shm), preconditioned with random data:
#     4 KiB random read at QD1 and QD32, fio io_uring (plain and with fixed buffers +
#     registered file) vs `diskmeter run` (default: polling for completions at QD <= 8,
#     sleeping deeper; `--poll-us 0`, sleeping at once as fio does; `--poll-us 100`, polling
#     at any depth), interleaved per round; fio and diskmeter back to back in A B B A order
#     (`--pair-only`: just those two, for more pairs in the same time).
#  2. Null engines (no device at all): fio --ioengine=null vs diskmeter --engine null,
#     QD1 and QD32, interleaved. Both are single-threaded, so IOPS is IOPS per core.
#
# Prints medians and ratios diskmeter/fio, writes bench/results/ceiling-<date>.json.
# Needs root (losetup), fio, python3 and a release build of diskmeter.
#
#   sudo bench/ceiling.sh                               # 1G, 5 rounds, 10 s loop runs, 3 s null runs
#   sudo bench/ceiling.sh --rounds 3 --runtime 3        # quick
#   bench/ceiling.sh --skip-loop                        # null engines only (no root needed)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

size=1G
rounds=5
runtime=10
null_runtime=3
bin=""
outdir="$here/results"
skip_loop=0
skip_null=0
seq=1
qds="1 32"
pair_only=0

usage() {
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    cat <<EOF

Options:
  --size SIZE          loop device size (default $size)
  --rounds N           interleaved rounds per case (default $rounds)
  --runtime S          seconds per loop-device run (default $runtime)
  --null-runtime S     seconds per null-engine run (default $null_runtime)
  --qd "1 32"          queue depths (default "$qds")
  --bin PATH           diskmeter binary (default: \$CARGO_TARGET_DIR or target/, release)
  --out DIR            where the JSON summary goes (default bench/results)
  --pair-only          loop cases: only fio and diskmeter (more pairs in the same time)
  --skip-loop | --skip-null | --skip-seq
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) size=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --null-runtime) null_runtime=$2; shift 2 ;;
        --qd) qds=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --out) outdir=$2; shift 2 ;;
        --skip-loop) skip_loop=1; shift ;;
        --skip-null) skip_null=1; shift ;;
        --skip-seq) seq=0; shift ;;
        --pair-only) pair_only=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "ceiling.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

if [[ -z "$bin" ]]; then
    bin="${CARGO_TARGET_DIR:-$repo/target}/release/diskmeter"
fi
[[ -x "$bin" ]] || { echo "ceiling.sh: no diskmeter binary at $bin (cargo build --release -p diskmeter, or --bin)" >&2; exit 2; }
command -v fio >/dev/null || { echo "ceiling.sh: fio not found (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ceiling.sh: python3 not found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dm-ceiling.XXXXXX")
shmfile=""
loopdev=""
cleanup() {
    local rc=$?
    if [[ -n "$loopdev" ]]; then losetup -d "$loopdev" 2>/dev/null || echo "ceiling.sh: could not detach $loopdev" >&2; fi
    if [[ -n "$shmfile" ]]; then rm -f "$shmfile"; fi
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

runs="$work/runs.tsv"   # section case tool round iops lat_mean_ns cpu_pct
: >"$runs"

# parse KIND FILE -> "iops lat_mean_ns cpu_pct" (read direction; cpu in % of one core)
parse() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
kind, path = sys.argv[1], sys.argv[2]
text = open(path).read()
d = json.loads(text[text.index("{"):])
if kind == "fio":
    j = d["jobs"][0]
    if j.get("error"):
        sys.exit(f"fio job error {j['error']}")
    r = j["read"]
    print(r["iops"], r["lat_ns"]["mean"], j["usr_cpu"] + j["sys_cpu"], r["total_ios"])
else:
    res = d["results"][0]
    if res.get("error"):
        sys.exit(f"diskmeter error: {res['error']}")
    r = res["read"]
    c = res.get("cpu", {})
    print(r["iops"], r["lat_ns"]["mean"], c.get("user_pct", 0) + c.get("sys_pct", 0), r["ops"])
EOF
}

# one SECTION CASE TOOL ROUND KIND CMD... : run, parse, append to runs.tsv, echo a line
one() {
    local section=$1 case=$2 tool=$3 round=$4 kind=$5
    shift 5
    local out="$work/out.json" err="$work/err.txt"
    local dev_before=0
    if [[ -n "$loopdev" ]]; then dev_before=$(awk -v d="${loopdev#/dev/}" '$3==d {print $4}' /proc/diskstats); fi
    if ! "$@" >"$out" 2>"$err"; then
        echo "ceiling.sh: $tool failed: $*" >&2
        tail -5 "$err" >&2
        exit 1
    fi
    local vals
    vals=$(parse "$kind" "$out") || { echo "ceiling.sh: cannot parse $tool output ($*)" >&2; head -c 600 "$out" >&2; exit 1; }
    read -r iops lat cpu ops <<<"$vals"
    # Device requests per I/O (loop runs): /proc/diskstats reads over the run / the tool's ops.
    local per=0
    if [[ -n "$loopdev" ]]; then
        local dev_after
        dev_after=$(awk -v d="${loopdev#/dev/}" '$3==d {print $4}' /proc/diskstats)
        per=$(awk -v a="$dev_before" -v b="$dev_after" -v n="$ops" 'BEGIN{printf "%.4f", (n > 0 ? (b-a)/n : 0)}')
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$section" "$case" "$tool" "$round" "$iops" "$lat" "$cpu" "$per" >>"$runs"
    printf '  %-5s %-8s %-9s round %d: %12.0f IOPS  %9.2f us  cpu %5.1f%%  %6.3f dev req/IO\n' \
        "$section" "$case" "$tool" "$round" "$iops" "$(awk -v x="$lat" 'BEGIN{print x/1000}')" "$cpu" "$per" >&2
}

fio_common=(--name=ceiling --rw=randread --bs=4k --randrepeat=0 --norandommap --time_based --output-format=json)

if [[ $skip_loop -eq 0 ]]; then
    [[ $(id -u) -eq 0 ]] || { echo "ceiling.sh: the loop-device part needs root (or use --skip-loop)" >&2; exit 2; }
    shmfile=$(mktemp /dev/shm/dm-ceiling.XXXXXX)
    truncate -s "$size" "$shmfile"
    loopdev=$(losetup -f --show "$shmfile")
    echo "loop device $loopdev over $shmfile ($size, RAM-backed); preconditioning with random data" >&2
    # fio fills its buffers with random data and scrambles them per write: every block of
    # the device gets written once, so reads hit real (allocated, non-zero) pages.
    fio --name=prep --filename="$loopdev" --rw=write --bs=1m --iodepth=8 --direct=1 \
        --ioengine=io_uring --output-format=json >/dev/null
    for q in $qds; do
        case="q$q"
        for ((r = 1; r <= rounds; r++)); do
            # The pair runs back to back, in A B B A order over the rounds, so that neither tool
            # always runs right after the other (a host that slows down over a pair hits both).
            pair_fio() {
                one loop "$case" fio "$r" fio fio "${fio_common[@]}" --filename="$loopdev" --direct=1 \
                    --ioengine=io_uring --iodepth="$q" --runtime="$runtime"
            }
            pair_dm() {
                one loop "$case" diskmeter "$r" dm "$bin" run --target "$loopdev" --rw randread --bs 4k \
                    --qd "$q" --runtime "${runtime}s" --json --no-ceiling-check
            }
            if ((r % 2)); then pair_fio; pair_dm; else pair_dm; pair_fio; fi
            [[ $pair_only -eq 1 ]] && continue
            one loop "$case" fio-best "$r" fio fio "${fio_common[@]}" --filename="$loopdev" --direct=1 \
                --ioengine=io_uring --iodepth="$q" --runtime="$runtime" \
                --fixedbufs --registerfiles --sqthread_poll=0
            # diskmeter's worker sleeping at once, as fio's does (no completion polling), and
            # polling up to 100 µs at any depth (the default polls only workers of QD <= 8).
            one loop "$case" dm-no-poll "$r" dm "$bin" run --target "$loopdev" --rw randread --bs 4k \
                --qd "$q" --runtime "${runtime}s" --json --no-ceiling-check --poll-us 0
            one loop "$case" dm-poll "$r" dm "$bin" run --target "$loopdev" --rw randread --bs 4k \
                --qd "$q" --runtime "${runtime}s" --json --no-ceiling-check --poll-us 100
        done
    done
    # SEQ1M Q8 read: whole 1 MiB requests at the device (requests per I/O recorded per run).
    if [[ $seq -eq 1 ]]; then
        for ((r = 1; r <= rounds; r++)); do
            one loop seq1m-q8 fio "$r" fio fio --name=ceiling --rw=read --bs=1m --time_based --output-format=json \
                --filename="$loopdev" --direct=1 --ioengine=io_uring --iodepth=8 --runtime="$runtime"
            one loop seq1m-q8 diskmeter "$r" dm "$bin" run --target "$loopdev" --rw read --bs 1M \
                --qd 8 --runtime "${runtime}s" --json --no-ceiling-check
        done
    fi
    losetup -d "$loopdev"; loopdev=""
    rm -f "$shmfile"; shmfile=""
fi

if [[ $skip_null -eq 0 ]]; then
    for q in $qds; do
        case="q$q"
        for ((r = 1; r <= rounds; r++)); do
            one null "$case" fio "$r" fio fio "${fio_common[@]}" --ioengine=null --iodepth="$q" \
                --size=1g --runtime="$null_runtime"
            one null "$case" diskmeter "$r" dm "$bin" run --engine null --rw randread --bs 4k --qd "$q" \
                --runtime "${null_runtime}s" --json --no-ceiling-check
        done
    done
fi

mkdir -p "$outdir"
stamp=$(date +%Y%m%d-%H%M%S)
summary="$outdir/ceiling-$stamp.json"
python3 - "$runs" "$summary" <<EOF
import json, math, os, platform, statistics, subprocess, sys
from collections import defaultdict

runs_path, out_path = sys.argv[1], sys.argv[2]
runs = defaultdict(list)
for line in open(runs_path):
    sec, case, tool, rnd, iops, lat, cpu, per = line.rstrip("\n").split("\t")
    runs[(sec, case, tool)].append(dict(round=int(rnd), iops=float(iops), lat_mean_ns=float(lat), cpu_pct=float(cpu),
                                        cpu_us_per_io=float(cpu) / 100.0 / max(float(iops), 1e-9) * 1e6,
                                        dev_req_per_io=float(per)))

def med(xs, k):
    return statistics.median(x[k] for x in xs)

def median_ci(xs, level=0.95):
    """Distribution-free confidence interval of the median (order statistics, binomial):
    the narrowest [x_(k), x_(n+1-k)] whose coverage is at least the level, with that coverage;
    None when even [min, max] falls short (fewer than 6 rounds for 95 %)."""
    xs, n = sorted(xs), len(xs)
    cdf = lambda k: sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n  # P(Bin(n, 1/2) <= k)
    best = None
    for k in range(1, n // 2 + 1):
        coverage = 1 - 2 * cdf(k - 1)
        if coverage >= level:
            best = (xs[k - 1], xs[n - k], coverage)
    return best

def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return None

cpu_model = None
try:
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            cpu_model = l.split(":", 1)[1].strip(); break
except OSError:
    pass

cases = []
order = []
for key in runs:
    if key[:2] not in order:
        order.append(key[:2])
for sec, case in order:
    tools = {}
    for (s, c, t), xs in runs.items():
        if (s, c) != (sec, case):
            continue
        tools[t] = dict(
            iops_median=med(xs, "iops"),
            lat_mean_ns_median=med(xs, "lat_mean_ns"),
            cpu_pct_median=med(xs, "cpu_pct"),
            cpu_us_per_io_median=med(xs, "cpu_us_per_io"),
            dev_req_per_io_median=med(xs, "dev_req_per_io"),
            # (max - min) / median of IOPS over the rounds: how noisy the case was
            iops_spread=(max(x["iops"] for x in xs) - min(x["iops"] for x in xs)) / med(xs, "iops"),
            # IOPS per fully busy core: single-threaded runs, normalised by measured CPU use
            iops_per_cpu=med([dict(v=x["iops"] / (x["cpu_pct"] / 100)) for x in xs if x["cpu_pct"] > 0], "v")
            if any(x["cpu_pct"] > 0 for x in xs) else None,
            runs=xs,
        )
    ratios = {}
    dm = tools.get("diskmeter")
    for base in ("fio", "fio-best", "dm-no-poll", "dm-poll"):
        if dm and base in tools:
            ratios[f"diskmeter/{base}"] = dict(
                iops=dm["iops_median"] / tools[base]["iops_median"],
                lat_mean=dm["lat_mean_ns_median"] / tools[base]["lat_mean_ns_median"],
            )
    # Per-round ratios (rounds are interleaved: A B A B), their median is the robust figure.
    if dm and "fio" in tools:
        pairs = [(d["iops"] / f["iops"]) for d, f in zip(sorted(dm["runs"], key=lambda x: x["round"]),
                                                         sorted(tools["fio"]["runs"], key=lambda x: x["round"]))]
        ratios["diskmeter/fio"]["iops_per_round_median"] = statistics.median(pairs)
        ci = median_ci(pairs)
        if ci:
            ratios["diskmeter/fio"]["iops_per_round_ci"] = dict(low=ci[0], high=ci[1], coverage=ci[2])
    qd = 8 if case.startswith("seq1m") else int(case[1:])
    cases.append(dict(section=sec, case=case, qd=qd, tools=tools, ratios=ratios))

doc = dict(
    schema="diskmeter.bench.ceiling.v1",
    date="$stamp",
    settings=dict(size="$size", rounds=$rounds, runtime_s=$runtime, null_runtime_s=$null_runtime,
                  bs="4k", rw="randread"),
    host=dict(kernel=platform.release(), cpus=os.cpu_count(), cpu_model=cpu_model,
              loadavg=open("/proc/loadavg").read().split()[:3]),
    fio_version=sh("fio", "--version"),
    diskmeter_version=sh("$bin", "--version"),
    git_rev=sh("git", "-C", "$repo", "rev-parse", "--short", "HEAD"),
    cases=cases,
)
with open(out_path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

def k(x):
    return f"{x/1000:.1f}k" if x < 1e6 else f"{x/1e6:.2f}M"

print()
print(f"diskmeter engine ceiling: 4k randread (and SEQ1M Q8 read), medians of {$rounds} interleaved rounds "
      f"(loop {$runtime}s/run, null {$null_runtime}s/run)")
hdr = (f"{'case':<14} {'tool':<10} {'IOPS':>9} {'spread':>7} {'lat us':>8} {'cpu%':>6} {'cpu us/IO':>9} "
       f"{'req/IO':>6} {'IOPS/core':>10} {'dm/tool IOPS':>12} {'dm/tool lat':>11} {'per-round':>9}")
print(hdr)
print("-" * len(hdr))
for c in cases:
    name = f"{c['section']} {c['case']}"
    for t in ("fio", "fio-best", "dm-no-poll", "dm-poll", "diskmeter"):
        if t not in c["tools"]:
            continue
        x = c["tools"][t]
        r = c["ratios"].get(f"diskmeter/{t}")
        rs = f"{r['iops']:>12.3f} {r['lat_mean']:>11.3f}" if r else f"{'':>12} {'':>11}"
        pr = f"{r['iops_per_round_median']:>9.3f}" if r and "iops_per_round_median" in r else f"{'':>9}"
        ipc = k(x["iops_per_cpu"]) if x["iops_per_cpu"] else "-"
        print(f"{name:<14} {t:<10} {k(x['iops_median']):>9} {x['iops_spread']*100:>6.0f}% {x['lat_mean_ns_median']/1000:>8.2f} "
              f"{x['cpu_pct_median']:>6.1f} {x['cpu_us_per_io_median']:>9.2f} {x['dev_req_per_io_median']:>6.3f} {ipc:>10} {rs} {pr}")
        name = ""
print("IOPS, lat (mean completion latency), cpu% (of one core): medians over rounds; spread = (max-min)/median")
print("of IOPS; cpu us/IO = CPU time per completed I/O; req/IO = device requests per I/O (/proc/diskstats);")
print("IOPS/core = IOPS / busy fraction of the one thread; dm/tool = diskmeter median / tool median;")
print("per-round = median of the per-round ratios diskmeter/fio.")
for c in cases:
    r = c["ratios"].get("diskmeter/fio", {})
    if "iops_per_round_ci" in r:
        ci = r["iops_per_round_ci"]
        print(f"{c['section']} {c['case']}: diskmeter/fio per round {r['iops_per_round_median']:.3f}, "
              f"{ci['coverage']*100:.1f} % interval of the median {ci['low']:.3f} .. {ci['high']:.3f}")
print(f"summary: {out_path}")
EOF
