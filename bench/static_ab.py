#!/usr/bin/env python3
"""Does the static (musl) build cost speed? Two or more builds of diskmeter, interleaved.

Cells (each build once per round, builds alternating A B A B ..., medians per build):

* `run --engine null --rw randread --bs 4k` at QD 1 and QD 32: the tool's own per-I/O ceiling
  (clock reads, histogram, offset draw); IOPS, higher is better;
* `cache simulate` on a synthetic 20 M-request trace (`cache synth`, zipf:0.9 over 10 M blocks):
  the binary trace with the default policy (qsan), the same with `--policy lru,s3fifo,nhit`
  (hash maps and lists: the allocator's cell), and the same requests as CSV (text parsing);
  wall seconds and peak RSS, lower is better.

Build the sides first, e.g.

    cargo build --release -p diskmeter                                          # glibc
    cargo build --release -p diskmeter --target x86_64-unknown-linux-musl       # static

then

    bench/static_ab.py --bin glibc=target/release/diskmeter \\
        --bin musl=target/x86_64-unknown-linux-musl/release/diskmeter --rounds 5

The report goes to stdout and bench/results/static-ab-<date>.txt, the figures to the .json
beside it. Ratios are each build's median over the first build's (for IOPS > 1 is faster, for
seconds < 1 is faster).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ab import null_iops  # noqa: E402  (the same null-engine run as the hot-path A/B)
CSV_FORMAT = "csv:time=0:us,op=1,offset=2:bytes,size=3:bytes,header"


def simulate(binary, trace, extra):
    """Wall seconds and peak RSS (KiB) of one `cache simulate`."""
    t = time.monotonic()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%M", binary, "cache", "simulate", "--trace", trace,
         "--cache-size", "4g", "-q", "--json"] + extra,
        capture_output=True, text=True, check=True,
        env=dict(os.environ, DISKMETER_HISTORY="off"),
    )
    wall = time.monotonic() - t
    rss = int(p.stderr.strip().splitlines()[-1])
    return wall, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, metavar="NAME=PATH",
                    help="a build to compare (at least two; the first is the reference)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", default="3s", help="null-engine runtime per run")
    ap.add_argument("--requests", default="20M")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "dm-static-ab"),
                    help="where the synthetic traces are kept between runs")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    bins = []
    for spec in a.bin:
        name, _, path = spec.partition("=")
        if not path or not os.access(path, os.X_OK):
            sys.exit(f"--bin {spec}: give NAME=PATH of an executable diskmeter")
        bins.append((name, os.path.abspath(path)))
    if len(bins) < 2:
        sys.exit("give at least two --bin NAME=PATH")

    os.makedirs(a.work, exist_ok=True)
    traces = {}
    for ext in ("dmt", "csv"):
        path = os.path.join(a.work, f"zipf0.9-10M-{a.requests}.{ext}")
        if not os.path.exists(path):
            subprocess.run([bins[0][1], "cache", "synth", "--dist", "zipf:0.9", "--blocks", "10M",
                            "--requests", a.requests, "--seed", "1", "-o", path],
                           check=True, stdout=subprocess.DEVNULL)
        traces[ext] = path

    cells = [
        ("null QD1 IOPS", "iops", lambda b: null_iops(b, 1, a.runtime)),
        ("null QD32 IOPS", "iops", lambda b: null_iops(b, 32, a.runtime)),
        (f"simulate {a.requests} qsan s", "s", lambda b: simulate(b, traces["dmt"], [])),
        (f"simulate {a.requests} lru,s3fifo,nhit s", "s",
         lambda b: simulate(b, traces["dmt"], ["--policy", "lru,s3fifo,nhit"])),
        (f"simulate {a.requests} csv s", "s",
         lambda b: simulate(b, traces["csv"], ["--format", CSV_FORMAT])),
    ]
    raw = {c[0]: {n: [] for n, _ in bins} for c in cells}
    rss = {c[0]: {n: [] for n, _ in bins} for c in cells if c[1] == "s"}
    for r in range(a.rounds):
        for label, unit, fn in cells:
            order = bins if r % 2 == 0 else bins[::-1]
            for name, path in order:
                v = fn(path)
                if unit == "s":
                    raw[label][name].append(v[0])
                    rss[label][name].append(v[1])
                else:
                    raw[label][name].append(v)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    ref = bins[0][0]
    lines = [f"static_ab: {a.rounds} rounds, builds interleaved; medians; ratio = build / {ref}",
             "builds: " + ", ".join(f"{n}={p}" for n, p in bins), ""]
    w = max(16, *(len(n) + len(ref) + 3 for n, _ in bins))
    head = f"{'cell':36}" + "".join(f"{n:>16}" for n, _ in bins) + "".join(
        f"{n + '/' + ref:>{w}}" for n, _ in bins[1:])
    lines.append(head)
    summary = {}
    for label, unit, _ in cells:
        med = {n: statistics.median(raw[label][n]) for n, _ in bins}
        fmt = (lambda v: f"{v / 1e6:.2f} M") if unit == "iops" else (lambda v: f"{v:.2f}")
        row = f"{label:36}" + "".join(f"{fmt(med[n]):>16}" for n, _ in bins)
        row += "".join(f"{med[n] / med[ref]:>{w}.3f}" for n, _ in bins[1:])
        lines.append(row)
        summary[label] = {"median": med, "rounds": raw[label]}
        if label in rss:
            mr = {n: statistics.median(rss[label][n]) for n, _ in bins}
            lines.append(f"{'  peak RSS MiB':36}" + "".join(f"{mr[n] / 1024:>16.1f}" for n, _ in bins))
            summary[label]["peak_rss_kib"] = mr
    lines.append("")
    lines.append("per round (" + ", ".join(n for n, _ in bins) + "):")
    for label, unit, _ in cells:
        per = ["/".join(f"{raw[label][n][i]:.4g}" for n, _ in bins) for i in range(a.rounds)]
        lines.append(f"  {label}: " + "  ".join(per))
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, "static-ab-" + time.strftime("%Y%m%d-%H%M%S"))
    with open(stem + ".txt", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump({"builds": dict(bins), "rounds": a.rounds, "cells": summary}, f, indent=1)
    print(f"written: {stem}.txt, {stem}.json", file=sys.stderr)


if __name__ == "__main__":
    main()
