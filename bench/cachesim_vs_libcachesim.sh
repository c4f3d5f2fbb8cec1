#!/usr/bin/env bash
# `diskmeter cache simulate --policy lru` against libCacheSim's `cachesim` LRU, end to end
# (start, read the trace, simulate, print the result) on the same requests, with the same
# cache size in units: both must count the same misses.
#
#  1. libCacheSim (only when asked: --build-libcachesim SRC_DIR or LIBCACHESIM_SRC): installs
#     cmake, libglib2.0-dev, libzstd-dev, build-essential, pkg-config with apt-get, copies the
#     source to the work directory, patches one printf of bin/cachesim/sim.c to print the miss
#     count (stock cachesim prints the miss ratio to 4 decimals only), builds `cachesim`.
#     Without it, --cachesim PATH (or LIBCACHESIM_BIN) names a cachesim built by this script.
#  2. The trace: `diskmeter cache synth` (zipf:0.9 over 10 M blocks of 4 KiB, 20 M requests,
#     70 % reads; a 480 MB .dmt) unless --trace FILE.dmt (binary v1 or v2) gives one. Every
#     request must be a read or write of exactly one aligned unit (one object to libCacheSim).
#  3. The same requests for libCacheSim, in its oracleGeneral binary format (24-byte records:
#     u32 time in s, u64 object id = device << 44 | offset / unit, u32 size 1, i64 next -1),
#     read with --ignore-obj-size 1, so its cache size is a number of objects.
#  4. R rounds, interleaved: diskmeter, cachesim, diskmeter, cachesim, …, each under
#     /usr/bin/time -v (wall time, peak RSS), both traces in the page cache beforehand.
#     Medians, the speed ratio (cachesim time / diskmeter time: > 1 means diskmeter is
#     faster), both miss counts (must be equal). cachesim maps its trace file, so its RSS
#     counts the trace's pages; diskmeter streams it.
#
# Output: a report on stdout and in bench/results/cachesim-vs-libcachesim-<date>.txt, the
# figures in the .json beside it.
#
#   bench/cachesim_vs_libcachesim.sh --build-libcachesim ~/src/libCacheSim     # build, then run
#   bench/cachesim_vs_libcachesim.sh                        # reuse the build in the work dir
#   bench/cachesim_vs_libcachesim.sh --requests 2M --rounds 3                  # quick
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

lcs_src="${LIBCACHESIM_SRC:-}"
lcs_bin="${LIBCACHESIM_BIN:-}"
bin=""
trace=""
dist="zipf:0.9"
blocks="10M"
requests="20M"
read_pct=70
seed=1
unit=4096
cache_units=1048576
rounds=5
outdir="$here/results"
work="${TMPDIR:-/tmp}/dm-cachesim-bench"
dm_args=""

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    cat <<EOF

Options:
  --build-libcachesim DIR  build libCacheSim's cachesim from this source tree (env LIBCACHESIM_SRC)
  --cachesim PATH      a cachesim built by this script (env LIBCACHESIM_BIN; default: the work dir's)
  --bin PATH           diskmeter binary (default: \$CARGO_TARGET_DIR or target/, release)
  --trace FILE.dmt     use this binary trace instead of a synthetic one
  --dist D --blocks N --requests N --read-pct P --seed S   the synthetic trace (default $dist, $blocks, $requests, $read_pct, $seed)
  --unit BYTES         cache unit = request size (default $unit)
  --cache-units N      cache size in units (default $cache_units: 4 GiB of 4 KiB)
  --rounds N           interleaved rounds (default $rounds)
  --dm-args "ARGS"     extra arguments for diskmeter cache simulate (e.g. "--interval 200s")
  --work DIR           build, traces and logs (default $work; kept for the next run)
  --out DIR            where the report goes (default bench/results)
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --build-libcachesim) lcs_src=$2; shift 2 ;;
        --cachesim) lcs_bin=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --dist) dist=$2; shift 2 ;;
        --blocks) blocks=$2; shift 2 ;;
        --requests) requests=$2; shift 2 ;;
        --read-pct) read_pct=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --unit) unit=$2; shift 2 ;;
        --cache-units) cache_units=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --dm-args) dm_args=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --out) outdir=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "cachesim_vs_libcachesim.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

die() { echo "cachesim_vs_libcachesim.sh: $*" >&2; exit 2; }

if [[ -z "$bin" ]]; then
    bin="${CARGO_TARGET_DIR:-$repo/target}/release/diskmeter"
fi
[[ -x "$bin" ]] || die "no diskmeter binary at $bin (cargo build --release -p diskmeter, or --bin)"
command -v python3 >/dev/null || die "python3 not found"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install time)"
[[ "$unit" =~ ^[0-9]+$ && "$cache_units" =~ ^[0-9]+$ ]] || die "--unit and --cache-units take plain numbers"
mkdir -p "$work" "$outdir"
work=$(cd "$work" && pwd)

# --- 1. libCacheSim ------------------------------------------------------------------------
build_libcachesim() {
    local src=$1 copy="$work/libCacheSim-src" build="$work/libCacheSim-build"
    [[ -f "$src/CMakeLists.txt" && -f "$src/libCacheSim/bin/cachesim/sim.c" ]] \
        || die "$src does not look like libCacheSim's source (no CMakeLists.txt, libCacheSim/bin/cachesim/sim.c)"
    local pkgs="cmake libglib2.0-dev libzstd-dev build-essential pkg-config"
    local missing=""
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [[ -n "$missing" ]]; then
        local sudo=""
        [[ $(id -u) -eq 0 ]] || sudo="sudo"
        echo "installing$missing" >&2
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
    fi
    rm -rf "$copy" "$build"
    cp -a "$src" "$copy"
    # Print the miss count: "... N req, M miss, miss ratio ..." (the only change).
    local sim="$copy/libCacheSim/bin/cachesim/sim.c"
    sed -i -e 's/req, miss ratio %\.4lf, throughput/req, %lu miss, miss ratio %.4lf, throughput/' \
        -e 's/(unsigned long)req_cnt, (double)miss_cnt/(unsigned long)req_cnt, (unsigned long)miss_cnt, (double)miss_cnt/' \
        "$sim"
    [[ $(grep -c '%lu miss' "$sim") -eq 2 && $(grep -c '(unsigned long)miss_cnt' "$sim") -eq 2 ]] \
        || die "could not patch $sim to print the miss count (another libCacheSim version?)"
    mkdir -p "$build"
    (cd "$build" && cmake -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTS=OFF "$copy" >"$work/cmake.log" 2>&1) \
        || die "cmake failed, see $work/cmake.log"
    (cd "$build" && make -j"$(nproc)" cachesim >"$work/make.log" 2>&1) || die "make failed, see $work/make.log"
    echo "$build/bin/cachesim"
}

if [[ -n "$lcs_src" ]]; then
    lcs_bin=$(build_libcachesim "$lcs_src")
elif [[ -z "$lcs_bin" ]]; then
    lcs_bin="$work/libCacheSim-build/bin/cachesim"
fi
[[ -x "$lcs_bin" ]] || die "no libCacheSim cachesim at $lcs_bin; build it with --build-libcachesim SRC_DIR (e.g. a clone of https://github.com/1a1a11a/libCacheSim)"

# --- 2. the trace --------------------------------------------------------------------------
if [[ -z "$trace" ]]; then
    trace="$work/synth-${dist//[:\/]/_}-$blocks-$requests-$read_pct-$seed-$unit.dmt"
    if [[ ! -s "$trace" ]]; then
        "$bin" cache synth --dist "$dist" --blocks "$blocks" --requests "$requests" --read-pct "$read_pct" \
            --seed "$seed" --block-size "$unit" -o "$trace" --force >&2
    fi
fi
[[ -s "$trace" ]] || die "no trace at $trace"

# --- 3. the same requests for libCacheSim -------------------------------------------------
oracle="$work/$(basename "$trace" .dmt).u$unit.oracleGeneral"
if [[ ! -s "$oracle" || "$oracle" -ot "$trace" ]]; then
    echo "converting $trace to libCacheSim's oracleGeneral format (about a minute per 20 M requests)" >&2
    python3 - "$trace" "$oracle.tmp" "$unit" <<'EOF'
import mmap, struct, sys
src, dst, unit = sys.argv[1], sys.argv[2], int(sys.argv[3])
rec = struct.Struct('<QQIB3s')
out = struct.Struct('<IQIq')
with open(src, 'rb') as f, open(dst, 'wb') as o:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if m[:8] != b'DMTRACE1':
        sys.exit(f'{src} is not a diskmeter binary trace')
    # Version 1: 24-byte records; version 2: the same and a recorded latency (32 bytes).
    size = struct.unpack_from('<H', m, 10)[0]
    if size < 24:
        sys.exit(f'{src}: record size {size} is not supported')
    pos, end, parts, first = 32, len(m), [], None
    unpack, pack = rec.unpack_from, out.pack
    while pos + size <= end:
        t, off, ln, kind, dev = unpack(m, pos)
        pos += size
        if kind == 0xFF:  # a device definition: its name follows, padded to the record size
            pos += (ln + size - 1) // size * size
            continue
        if kind > 1 or ln != unit or off % unit:
            sys.exit(f'request at byte {pos - size} (kind {kind}, offset {off}, len {ln}): only reads and '
                     f'writes of one aligned {unit}-byte unit are one object to libCacheSim')
        if first is None:
            first = t
        parts.append(pack((t - first) // 1_000_000_000, (int.from_bytes(dev, 'little') << 44) | (off // unit), 1, -1))
        if len(parts) == 65536:
            o.write(b''.join(parts))
            parts = []
    o.write(b''.join(parts))
EOF
    mv "$oracle.tmp" "$oracle"
fi

# --- 4. interleaved rounds -----------------------------------------------------------------
cache_bytes=$((cache_units * unit))
stamp=$(date -u +%Y%m%d-%H%M%S)
log="$work/rounds-$stamp"
mkdir -p "$log"
cat "$trace" "$oracle" >/dev/null # both in the page cache
# shellcheck disable=SC2206
dm_cmd=("$bin" cache simulate --trace "$trace" --policy lru --unit "$unit" --cache-size "$cache_bytes" $dm_args --json)
lcs_cmd=("$lcs_bin" "$oracle" oracleGeneral lru "$cache_units" --ignore-obj-size 1 -o "$log/cachesim.out")
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run() { # NAME ROUND OUT-SUFFIX COMMAND...
    local name=$1 i=$2 out=$3
    shift 3
    /usr/bin/time -v -o "$log/$name-$i.time" "$@" >"$log/$name-$i.$out" 2>"$log/$name-$i.err" || {
        tail -n 5 "$log/$name-$i.err" >&2
        die "$name failed in round $i: $*"
    }
}
for ((i = 1; i <= rounds; i++)); do
    run dm "$i" json "${dm_cmd[@]}"
    run lcs "$i" out "${lcs_cmd[@]}"
    echo "round $i/$rounds done" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 5. report -----------------------------------------------------------------------------
report="$outdir/cachesim-vs-libcachesim-$stamp"
python3 - "$log" "$rounds" "$report" <<EOF
import json, os, re, statistics, sys
log, rounds, report = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def timing(path):
    t = open(path).read()
    wall = re.search(r'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)', t)
    h, m, s = wall.groups()
    return {
        'wall_s': int(h or 0) * 3600 + int(m) * 60 + float(s),
        'user_s': float(re.search(r'User time \(seconds\): ([\d.]+)', t).group(1)),
        'sys_s': float(re.search(r'System time \(seconds\): ([\d.]+)', t).group(1)),
        'rss_kb': int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', t).group(1)),
        'exit': int(re.search(r'Exit status: (\d+)', t).group(1)),
    }

dm, lcs = [], []
for i in range(1, rounds + 1):
    d = timing(f'{log}/dm-{i}.time')
    doc = json.load(open(f'{log}/dm-{i}.json'))
    p = doc['cache']['policies'][0]
    r = p['requests']
    d['requests'] = doc['cache']['trace']['requests']
    d['misses'] = r['read_misses'] + r['partial_hits'] + r['write_misses']
    d['sim_seconds'] = p['sim_seconds']
    dm.append(d)
    c = timing(f'{log}/lcs-{i}.time')
    out = open(f'{log}/lcs-{i}.out').read() + open(f'{log}/lcs-{i}.err').read()
    m = re.search(r'(\d+) req, (\d+) miss, miss ratio', out)
    if not m:
        sys.exit(f'no "N req, M miss" line from cachesim in round {i}: was it built by this script?')
    c['requests'], c['misses'] = int(m.group(1)), int(m.group(2))
    lcs.append(c)

med = lambda xs, k: statistics.median(x[k] for x in xs)
summary = {
    'date_utc': '$stamp',
    'host': os.uname().nodename,
    'cpu': next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?'),
    'cores': os.cpu_count(),
    'load_before': '$load_before', 'load_after': '$load_after',
    'diskmeter_commit': os.popen('git -C "$repo" rev-parse --short HEAD 2>/dev/null').read().strip(),
    'libcachesim_rev': os.environ.get('LIBCACHESIM_REV', ''),
    'trace': '$trace', 'trace_bytes': os.path.getsize('$trace'),
    'oracle_trace': '$oracle', 'oracle_bytes': os.path.getsize('$oracle'),
    'unit_bytes': $unit, 'cache_units': $cache_units, 'rounds': rounds,
    'diskmeter_cmd': '${dm_cmd[*]}', 'cachesim_cmd': '${lcs_cmd[*]}',
    'diskmeter': dm, 'cachesim': lcs,
}
s = summary
dm_wall, lcs_wall = med(dm, 'wall_s'), med(lcs, 'wall_s')
s['median'] = {
    'diskmeter_wall_s': dm_wall, 'cachesim_wall_s': lcs_wall,
    'diskmeter_rss_kb': med(dm, 'rss_kb'), 'cachesim_rss_kb': med(lcs, 'rss_kb'),
    'speed_ratio': lcs_wall / dm_wall if dm_wall > 0 else float('nan'),
}
dm_miss = {x['misses'] for x in dm}
lcs_miss = {x['misses'] for x in lcs}
s['misses_equal'] = len(dm_miss) == 1 and dm_miss == lcs_miss
s['requests_equal'] = {x['requests'] for x in dm} == {x['requests'] for x in lcs}
lines = [
    f"diskmeter cache simulate --policy lru vs libCacheSim cachesim LRU, {s['date_utc']} UTC",
    f"host {s['host']}: {s['cpu']}, {s['cores']} cores; load {s['load_before']} before, {s['load_after']} after",
    f"diskmeter {s['diskmeter_commit']}; libCacheSim {s['libcachesim_rev'] or '(revision not given: LIBCACHESIM_REV)'}",
    f"trace {s['trace']} ({s['trace_bytes']} bytes), as oracleGeneral {s['oracle_bytes']} bytes",
    f"cache {s['cache_units']} units of {s['unit_bytes']} bytes; {rounds} rounds, interleaved",
    f"  diskmeter: {s['diskmeter_cmd']}",
    f"  cachesim:  {s['cachesim_cmd']}",
    '',
    f"{'round':>5}  {'diskmeter s':>11} {'RSS MB':>7} {'misses':>10}   {'cachesim s':>10} {'RSS MB':>7} {'misses':>10}",
]
for i, (a, b) in enumerate(zip(dm, lcs), 1):
    lines.append(f"{i:>5}  {a['wall_s']:>11.2f} {a['rss_kb']/1024:>7.0f} {a['misses']:>10}   "
                 f"{b['wall_s']:>10.2f} {b['rss_kb']/1024:>7.0f} {b['misses']:>10}")
m = s['median']
lines += [
    '',
    f"median wall: diskmeter {m['diskmeter_wall_s']:.2f} s, cachesim {m['cachesim_wall_s']:.2f} s "
    f"-> diskmeter {m['speed_ratio']:.2f}x cachesim's speed",
    f"median peak RSS: diskmeter {m['diskmeter_rss_kb']/1024:.0f} MB, cachesim {m['cachesim_rss_kb']/1024:.0f} MB "
    f"(cachesim maps the trace file: its pages count)",
    f"requests: diskmeter {sorted({x['requests'] for x in dm})}, cachesim {sorted({x['requests'] for x in lcs})}",
    f"misses: diskmeter {sorted(dm_miss)}, cachesim {sorted(lcs_miss)} -> "
    + ('EQUAL' if s['misses_equal'] else 'DIFFERENT: the comparison is not valid'),
]
text = '\n'.join(lines) + '\n'
open(report + '.txt', 'w').write(text)
json.dump(s, open(report + '.json', 'w'), indent=1)
sys.stdout.write(text)
print(f"written: {report}.txt, {report}.json")
sys.exit(0 if s['misses_equal'] and s['requests_equal'] else 1)
EOF
