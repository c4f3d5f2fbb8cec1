#!/usr/bin/env python3
"""A/B of the hot path between two builds of diskmeter.

Two measures, each taken in alternating rounds (A B A B ...) so that the drift of a shared,
noisy machine falls on both builds alike; the medians and their ratio are reported:

* criterion's `hotpath` benchmark of `diskmeter-engine` (per-operation cost of the latency
  histogram, offset generators, buffer stamping, and `worker/null`, the whole worker loop on the
  null engine): run with `--output-format bencher`, ns/iter per benchmark;
* `diskmeter run --engine null` at QD 1 and QD 32: the end-to-end ceiling of the tool in IOPS.

Build the two sides first, e.g. for the tree before and after a change:

    cargo bench -p diskmeter-engine --bench hotpath --no-run   # prints the bench binary
    cargo build --release -p diskmeter

and copy the bench binary and target/release/diskmeter of each side somewhere. Then:

    bench/ab.py --a-bench OLD/hotpath --b-bench NEW/hotpath \\
                --a-bin OLD/diskmeter --b-bin NEW/diskmeter --rounds 5 --json out.json
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

BENCHER = re.compile(r"^test (\S+) \.\.\. bench:\s+([\d,]+) ns/iter")


def criterion(binary, filt, seconds):
    """One run of a criterion binary: {benchmark: ns/iter}."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [binary, "--bench", "--output-format", "bencher", "--noplot",
             "--warm-up-time", "1", "--measurement-time", str(seconds), filt],
            cwd=d, env=dict(os.environ, CARGO_TARGET_DIR=d),
            capture_output=True, text=True, check=True,
        ).stdout
    res = {}
    for line in out.splitlines():
        m = BENCHER.match(line)
        if m:
            res[m.group(1)] = float(m.group(2).replace(",", ""))
    return res


def null_iops(binary, qd, runtime):
    """One null-engine run: read IOPS."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [binary, "run", "--engine", "null", "--rw", "randread", "--bs", "4k",
             "--qd", str(qd), "--runtime", runtime, "--ramp", "1s", "--json"],
            cwd=d, capture_output=True, text=True, check=True,
            # Benchmark runs are not kept in the user's history database.
            env=dict(os.environ, DISKMETER_HISTORY="off"),
        ).stdout
    return json.loads(out)["results"][0]["read"]["iops"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a-bench", required=True)
    ap.add_argument("--b-bench", required=True)
    ap.add_argument("--a-bin")
    ap.add_argument("--b-bin")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--filter", default="", help="criterion benchmark filter (default: all)")
    ap.add_argument("--seconds", type=int, default=3, help="criterion measurement time")
    ap.add_argument("--runtime", default="3s", help="null-engine run time")
    ap.add_argument("--json", help="write every round's figures here")
    a = ap.parse_args()

    bench = {"A": [], "B": []}
    null = {"A": {1: [], 32: []}, "B": {1: [], 32: []}}
    for r in range(a.rounds):
        for side in ("A", "B"):
            bench[side].append(criterion(a.a_bench if side == "A" else a.b_bench, a.filter, a.seconds))
            if a.a_bin and a.b_bin:
                for qd in (1, 32):
                    null[side][qd].append(null_iops(a.a_bin if side == "A" else a.b_bin, qd, a.runtime))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    print(f"{'benchmark':40} {'A ns/iter':>12} {'B ns/iter':>12} {'B/A':>7}   (medians of {a.rounds} rounds)")
    names = sorted(set().union(*bench["A"], *bench["B"]))
    table = {}
    for n in names:
        ma = statistics.median(x[n] for x in bench["A"] if n in x)
        mb = statistics.median(x[n] for x in bench["B"] if n in x)
        table[n] = {"a_ns": ma, "b_ns": mb, "ratio": mb / ma}
        print(f"{n:40} {ma:12.1f} {mb:12.1f} {mb / ma:7.3f}")
    if a.a_bin and a.b_bin:
        print(f"\n{'null engine, randread 4k':40} {'A IOPS':>12} {'B IOPS':>12} {'B/A':>7}")
        for qd in (1, 32):
            ma, mb = statistics.median(null["A"][qd]), statistics.median(null["B"][qd])
            table[f"null/qd{qd}"] = {"a_iops": ma, "b_iops": mb, "ratio": mb / ma}
            print(f"{'qd ' + str(qd):40} {ma:12.0f} {mb:12.0f} {mb / ma:7.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "criterion": bench, "null": null, "medians": table}, f, indent=1)


if __name__ == "__main__":
    main()
