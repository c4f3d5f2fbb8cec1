#!/usr/bin/env python3
"""Where a RAM loop device's IOPS stop: the kernel's own loop path, per tool, per run.

On a RAM-backed loop device the device itself costs CPU: every request is served by the loop
driver's worker (one work item, so one CPU at a time: a kworker copying the page) and completed
in a softirq raised on that same CPU (ksoftirqd when raised outside an interrupt). When that CPU
is saturated, no submitter can go faster, however little CPU it spends itself. This bench
measures, for fio and diskmeter side by side on the same device, in alternating order:

  * IOPS (device reads counted in /proc/diskstats over the run, divided by its length);
  * kernel loop path, ns of CPU per I/O: perf cpu-clock samples of every kworker and ksoftirqd
    thread (any CPU; also `kthreadd`, the name a kworker created during the run can carry in
    the samples) over the device's reads;
  * the tool's own ns per I/O: samples of the tool's threads;
  * the loop CPU (where most loop-path samples fell): its busy share and its idle share;
  * the bound: 1e9 / (loop path ns per I/O) = the IOPS the loop path allows if one CPU did
    nothing else; and the run's IOPS as a share of that bound.

A tool at ~100 % of its bound cannot go faster by spending less CPU itself: only by making the
kernel's path per I/O cheaper (fewer ksoftirqd switches) or keeping the loop CPU from idling.
Then `1.15 x fio` is reachable only if diskmeter's bound exceeds 1.15 x fio's IOPS.

  sudo bench/loop_bound.py                        # QD32, 5 rounds x 5 s
  sudo bench/loop_bound.py --qd 1 --rounds 3 --bin target/release/diskmeter

Needs root (losetup), fio, perf (apt-get install linux-perf) and python3. Writes
bench/results/loop-bound-<date>.txt and .json. The loop device and its image are removed on
exit, also on error or Ctrl-C.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print(f"loop_bound.py: {msg}", file=sys.stderr)
    sys.exit(2)


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def dev_reads(name):
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if p[2] == name:
                return int(p[3])
    die(f"{name} not in /proc/diskstats")


def samples_by_comm_cpu(perf_data):
    """(comm, cpu) -> ns of cpu-clock samples."""
    out = sh("perf", "report", "-i", perf_data, "--stdio", "--sort", "comm,cpu", "-F", "period,comm,cpu")
    res = {}
    for line in out.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        p = line.split()
        if len(p) < 3 or not p[0].isdigit() or not p[-1].isdigit():
            continue
        res[(" ".join(p[1:-1]), int(p[-1]))] = int(p[0])
    return res


def is_loop_path(comm):
    # A kworker created during the run can carry its parent's name in perf's samples.
    return comm.startswith(("kworker", "ksoftirqd", "kthreadd"))


def one_run(tool, cmd, dev, ncpu, work):
    data = os.path.join(work, "perf.data")
    before = dev_reads(dev)
    t0 = time.monotonic()
    r = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-a", "-o", data, "--"] + cmd,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        die(f"{tool} failed: {r.stderr.strip()[-400:]}")
    ios = dev_reads(dev) - before
    if ios <= 0:
        die(f"{tool}: the device saw no reads")
    s = samples_by_comm_cpu(data)
    loop_ns = sum(v for (c, _), v in s.items() if is_loop_path(c))
    tool_ns = sum(v for (c, _), v in s.items() if c.startswith(("fio", "dm-worker", "diskmeter")))
    per_cpu_loop = [sum(v for (c, cpu), v in s.items() if cpu == k and is_loop_path(c)) for k in range(ncpu)]
    loop_cpu = max(range(ncpu), key=lambda k: per_cpu_loop[k])
    cpu_total = sum(v for (_, cpu), v in s.items() if cpu == loop_cpu)
    cpu_idle = sum(v for (c, cpu), v in s.items() if cpu == loop_cpu and c.startswith("swapper"))
    # The tool's IOPS from its own JSON (the measured window), else the device's over the wall.
    iops = None
    try:
        text = r.stdout
        doc = json.loads(text[text.index("{"):])
        iops = doc["jobs"][0]["read"]["iops"] if "jobs" in doc else doc["results"][0]["read"]["iops"]
    except (ValueError, KeyError, IndexError):
        iops = ios / wall
    loop_per_io = loop_ns / ios
    return dict(tool=tool, iops=iops, device_reads=ios, loop_ns_per_io=loop_per_io, tool_ns_per_io=tool_ns / ios,
                loop_cpu=loop_cpu, loop_cpu_idle=cpu_idle / cpu_total if cpu_total else 0.0,
                loop_cpu_loop_share=per_cpu_loop[loop_cpu] / cpu_total if cpu_total else 0.0,
                loop_path_off_loop_cpu=1 - per_cpu_loop[loop_cpu] / loop_ns if loop_ns else 0.0,
                bound_iops=1e9 / loop_per_io, of_bound=iops * loop_per_io / 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "diskmeter"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    ap.add_argument("--qd", type=int, default=32)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        die("needs root (losetup, perf -a)")
    for t in ("fio", "perf", "losetup"):
        if not shutil.which(t):
            die(f"{t} not found (apt-get install fio linux-perf)")
    if not os.access(a.bin, os.X_OK):
        die(f"{a.bin} is not an executable; build it with cargo build --release -p diskmeter")
    ncpu = os.cpu_count() or 1
    work = tempfile.mkdtemp(prefix="dm-loop-bound.")
    img = tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="dm-loop-bound.", delete=False).name
    loop = None
    try:
        sh("truncate", "-s", a.size, img)
        loop = sh("losetup", "-f", "--show", img)
        dev = os.path.basename(loop)
        print(f"loop device {loop} over {img} ({a.size}, RAM-backed); preconditioning", file=sys.stderr)
        sh("fio", "--name=prep", f"--filename={loop}", "--rw=write", "--bs=1m", "--iodepth=8", "--direct=1",
           "--ioengine=io_uring", "--output-format=json")
        fio = ["fio", "--name=bound", "--rw=randread", "--bs=4k", "--randrepeat=0", "--norandommap", "--time_based",
               "--output-format=json", f"--filename={loop}", "--direct=1", "--ioengine=io_uring",
               f"--iodepth={a.qd}", f"--runtime={a.runtime}"]
        dm = [a.bin, "run", "--target", loop, "--rw", "randread", "--bs", "4k", "--qd", str(a.qd),
              "--runtime", f"{a.runtime}s", "--json", "--no-ceiling-check"]
        runs = []
        for r in range(1, a.rounds + 1):
            order = [("fio", fio), ("diskmeter", dm)] if r % 2 else [("diskmeter", dm), ("fio", fio)]
            for tool, cmd in order:
                x = one_run(tool, cmd, dev, ncpu, work)
                x["round"] = r
                runs.append(x)
                print(f"  round {r} {tool:9s} {x['iops']:10.0f} IOPS  loop path {x['loop_ns_per_io']:6.0f} ns/IO"
                      f"  tool {x['tool_ns_per_io']:6.0f} ns/IO  loop CPU idle {100 * x['loop_cpu_idle']:4.1f} %"
                      f"  bound {x['bound_iops']:9.0f}  ({100 * x['of_bound']:5.1f} % of it)", file=sys.stderr)
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
        os.unlink(img)
        shutil.rmtree(work, ignore_errors=True)

    med = {}
    for tool in ("fio", "diskmeter"):
        rs = [x for x in runs if x["tool"] == tool]
        med[tool] = {k: statistics.median(x[k] for x in rs)
                     for k in ("iops", "loop_ns_per_io", "tool_ns_per_io", "loop_cpu_idle", "loop_path_off_loop_cpu",
                               "bound_iops", "of_bound")}
    by_round = {}
    for x in runs:
        by_round.setdefault(x["round"], {})[x["tool"]] = x
    ratios = sorted(v["diskmeter"]["iops"] / v["fio"]["iops"] for v in by_round.values())
    bound_ratios = sorted(v["diskmeter"]["bound_iops"] / v["fio"]["iops"] for v in by_round.values())
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    lines = [
        f"loop_bound.py {stamp}: 4k randread QD{a.qd}, RAM loop device ({a.size}), {a.rounds} rounds x {a.runtime} s,"
        f" alternating order; {platform.node()} {platform.release()}, {ncpu} CPUs, {sh('fio', '--version')}",
        "",
        f"{'tool':10s} {'IOPS':>10s} {'loop path':>10s} {'tool':>9s} {'loop CPU':>9s} {'loop path':>10s}"
        f" {'bound':>10s} {'of bound':>9s}",
        f"{'':10s} {'':>10s} {'ns/IO':>10s} {'ns/IO':>9s} {'idle':>9s} {'elsewhere':>10s} {'IOPS':>10s} {'':>9s}",
    ]
    for tool, m in med.items():
        lines.append(f"{tool:10s} {m['iops']:10.0f} {m['loop_ns_per_io']:10.0f} {m['tool_ns_per_io']:9.0f}"
                     f" {100 * m['loop_cpu_idle']:8.1f}% {100 * m['loop_path_off_loop_cpu']:9.1f}%"
                     f" {m['bound_iops']:10.0f} {100 * m['of_bound']:8.1f}%")
    lines += [
        "",
        f"diskmeter/fio IOPS, per-round median:            {statistics.median(ratios):.3f}"
        f"  ({' '.join(f'{r:.3f}' for r in ratios)})",
        f"diskmeter's bound / fio's IOPS, per-round median: {statistics.median(bound_ratios):.3f}"
        f"  (the most diskmeter could reach against fio at its own loop-path cost, loop CPU never idle)",
        "(medians over the rounds; 'loop path elsewhere' = share of the loop path that ran off the loop CPU)",
    ]
    text = "\n".join(lines)
    print(text)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"loop-bound-{stamp}")
    with open(base + ".txt", "w") as f:
        f.write(text + "\n")
    with open(base + ".json", "w") as f:
        json.dump(dict(schema=1, date=stamp, qd=a.qd, rounds=a.rounds, runtime_s=a.runtime, size=a.size,
                       host=dict(node=platform.node(), kernel=platform.release(), cpus=ncpu),
                       fio_version=sh("fio", "--version"), diskmeter_version=sh(a.bin, "--version"),
                       git_rev=subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                              text=True).stdout.strip(),
                       medians=med, iops_ratio_per_round=ratios, bound_over_fio_per_round=bound_ratios, runs=runs),
                  f, indent=1)
    print(f"wrote {base}.txt and .json", file=sys.stderr)


if __name__ == "__main__":
    main()
