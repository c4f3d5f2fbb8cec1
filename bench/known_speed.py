#!/usr/bin/env python3
"""Known speed, back to back: the eight mark cells in one throttled cgroup, several rounds, for
`mark` and for `run`, every cell held against the throttle's rate.

A RAM-backed loop device (a file in /dev/shm) is limited by the kernel's block-I/O throttle to
300 MB/s and 10 000 IOPS, read and write: every cell of the card then has a known figure (SEQ1M
is bytes-bound, 300 000 000 / 1 MiB = 286.1 IOPS; RND4K is IOPS-bound at 10 000 IOPS). Each round
runs, inside the cgroup, one after another with no pause between commands:

  * `diskmeter mark DEV --destroy-data DEV --json` with its default options (the card's eight
    cells: warm-up, three 5 s passes, 5 s pauses, the best pass as the headline);
  * `diskmeter run` for each of the eight cells in the card's order (5 s, no ramp, no options
    beyond the cell's), each right after the one before, so every cell but the first opens its
    window on a throttle that the job before has just used.

Each headline is held against the throttle's rate (diskmeter/expected); the result's
`whole_bursts` (the window cut to whole throttle slices) is reported beside it, with the whole
window's rate. Exit 0 when every cell of every round is within --tolerance (1 %), 1 when not.

With --also compare,sla,steady each round also runs, through the same throttle and right after
the cells:

  * `compare DEV DEV2` (a second loop device under the same throttle): RND4K Q32 read, 3 passes of
    3 s a side, interleaved; every pass of both sides is held against 10 000 IOPS;
  * `sla DEV --latency 20ms` (p99, the default random 4 KiB read): the best point's IOPS;
  * `steady DEV --matrix quick --round-time 2s --max-rounds 5`: in every round, each point's
    binding direction (the one the throttle limits first: reads of 4K 65/35 and 64K 65/35 at
    10 000 and 4 577.6 IOPS, writes of 4K 0/100 at 10 000).

  sudo bench/known_speed.py                    # 5 rounds (~25 min)
  sudo bench/known_speed.py --rounds 1 --no-mark
  sudo bench/known_speed.py --no-mark --no-run --also compare,sla,steady

Writes bench/results/known-speed-<date>.txt (the table) and .json (every figure). The loop device,
its image and the cgroup are removed on exit, also on error or Ctrl-C.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from throttle_mark import CELLS, Cgroup, run, teardown  # noqa: E402

IOPS, BPS = 10_000, 300_000_000


def expected(bs):
    return min(IOPS, BPS / bs)


def cell_args(seq, bs, qd, d):
    rw = d if seq else "rand" + d
    return ["--rw", rw, "--bs", str(bs), "--qd", str(qd)]


def figures(res, d):
    x = res[d]
    wb = res.get("whole_bursts") or {}
    whole = wb.get(f"whole_{d}_iops")
    return dict(iops=x["iops"], mb_s=x["mb_s"], seconds=x["seconds"], bursts=wb.get("bursts"),
                dropped=wb.get("dropped"), whole_iops=whole if whole is not None else x["iops"],
                passes=[p[d]["iops"] for p in res.get("passes", []) if p.get(d)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="diskmeter binary (default: $CARGO_TARGET_DIR or target/, release)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-mark", action="store_true", help="only the eight `run` cells")
    ap.add_argument("--no-run", action="store_true", help="only `mark`")
    ap.add_argument("--tolerance", type=float, default=1.0, help="percent (default 1)")
    ap.add_argument("--also", default="", help="comma-separated: compare, sla, steady (each once per round)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("known_speed.py: needs root (loop device, cgroup)", file=sys.stderr)
        return 2
    if not shutil.which("losetup"):
        print("known_speed.py: losetup not found", file=sys.stderr)
        return 2
    if not a.bin:
        tgt = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target")
        a.bin = os.path.join(tgt, "release", "diskmeter")
    if not os.access(a.bin, os.X_OK):
        print(f"known_speed.py: diskmeter binary {a.bin} not found; build it or pass --bin", file=sys.stderr)
        return 2
    home = f"/tmp/diskmeter-known-speed-home-{os.getpid()}"
    os.makedirs(home, exist_ok=True)
    os.environ.update(HOME=home, DISKMETER_HISTORY="off")
    image = f"/dev/shm/diskmeter-known-speed-{os.getpid()}.img"
    dev, cg, dev2 = None, None, None
    image2 = f"/dev/shm/diskmeter-known-speed-{os.getpid()}-b.img"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        run(["truncate", "-s", "2G", image])
        dev = run(["losetup", "--find", "--show", image]).strip()
        devno = open(f"/sys/block/{os.path.basename(dev)}/dev").read().strip()
        run(["dd", f"if=/dev/urandom", f"of={dev}", "bs=1M", "count=1100", "oflag=direct", "status=none"])
        cg = Cgroup(devno)
        cg.limit(IOPS, BPS)
        if "compare" in a.also:
            # compare needs two devices: a second loop device under the same throttle.
            run(["truncate", "-s", "2G", image2])
            dev2 = run(["losetup", "--find", "--show", image2]).strip()
            run(["dd", f"if=/dev/urandom", f"of={dev2}", "bs=1M", "count=1100", "oflag=direct", "status=none"])
            cg.devno = open(f"/sys/block/{os.path.basename(dev2)}/dev").read().strip()
            cg.limit(IOPS, BPS)
            cg.devno = devno
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        dm_v = run([a.bin, "--version"]).strip()
        print(f"loop device {dev} ({devno}) over {image}, {cg.kind}: {IOPS} IOPS, {BPS} B/s", file=sys.stderr)
        record = []
        for rnd in range(1, a.rounds + 1):
            if not a.no_mark:
                print(f"round {rnd}: mark (defaults)…", file=sys.stderr, flush=True)
                t0 = time.monotonic()
                doc = json.loads(run([a.bin, "mark", dev, "--destroy-data", dev, "--json"], cg))
                took = time.monotonic() - t0
                by = {r["name"]: r for r in doc["results"]}
                for name, seq, bs, qd in CELLS:
                    for d in ("read", "write"):
                        record.append(dict(round=rnd, cmd="mark", cell=name, dir=d, expected=expected(bs),
                                           seconds_cmd=took, **figures(by[name], d)))
            if not a.no_run:
                print(f"round {rnd}: run, eight cells back to back…", file=sys.stderr, flush=True)
                for name, seq, bs, qd in CELLS:
                    for d in ("read", "write"):
                        doc = json.loads(run([a.bin, "run", "--target", dev, "--size", "1g", *cell_args(seq, bs, qd, d),
                                              "--runtime", "5s", "--json", "--destroy-data", dev], cg))
                        record.append(dict(round=rnd, cmd="run", cell=name, dir=d, expected=expected(bs),
                                           **figures(doc["results"][0], d)))
            also = [c for c in a.also.split(",") if c]
            if "compare" in also:
                print(f"round {rnd}: compare, RND4K Q32 read, two devices under one throttle…", file=sys.stderr, flush=True)
                doc = json.loads(run([a.bin, "compare", dev, dev2, "--labels", "A,B", "--rw", "randread", "--qd", "32",
                                      "--passes", "3", "--time", "3s", "--size", "1g", "--json"], cg))
                for row in doc["compare"]["rows"]:
                    if row.get("metric") != "iops" or row.get("direction", "read") != "read":
                        continue
                    for smp in row["samples"]:
                        for k, v in enumerate(smp["values"]):
                            record.append(dict(round=rnd, cmd="compare", cell=f"RND4K Q32 {smp['label']}{k + 1}",
                                               dir="read", expected=IOPS, iops=v, whole_iops=v, bursts=None,
                                               dropped=None))
            if "sla" in also:
                print(f"round {rnd}: sla --latency 20ms…", file=sys.stderr, flush=True)
                doc = json.loads(run([a.bin, "sla", dev, "--latency", "20ms", "--size", "1g", "--json"], cg))
                best = doc["sla"]["best"]
                record.append(dict(round=rnd, cmd="sla", cell=f"best QD{best['qd']}T{best['threads']}", dir="read",
                                   expected=IOPS, iops=best["iops"], whole_iops=best["iops"], bursts=None,
                                   dropped=None))
            if "steady" in also:
                print(f"round {rnd}: steady --matrix quick…", file=sys.stderr, flush=True)
                doc = json.loads(run([a.bin, "steady", dev, "--destroy-data", dev, "--matrix", "quick",
                                      "--round-time", "2s", "--max-rounds", "5", "--precondition-passes", "0",
                                      "--size", "1g", "--json"], cg))
                pts = {p["name"]: p for p in doc["steady"]["points"]}
                for rd in doc["steady"]["rounds"]:
                    for pt in rd["points"]:
                        spec = pts[pt["name"]]
                        bs, rp = spec["bs"], spec["read_pct"] / 100
                        lim = expected(bs)
                        # The direction the throttle binds first: its rate is the known one.
                        d = "write" if rp == 0 or (rp < 1 and lim / (1 - rp) < lim / rp) else "read"
                        got = pt[f"{d}_iops"]
                        record.append(dict(round=rnd, cmd="steady", cell=f"r{rd['round']} {pt['name']}", dir=d,
                                           expected=lim, iops=got, whole_iops=got, bursts=None, dropped=None))
        head = [f"# known speed back to back: {IOPS} IOPS + {BPS / 1e6:.0f} MB/s (blk-throttle, {cg.kind}), "
                f"RAM-backed loop device, {stamp}, {platform.release()}, {dm_v}",
                "# mark: default options; run: 5 s per cell, no ramp, cells one after another; "
                "dm/exp = headline / throttle's rate; whole/exp = the whole window's rate (before whole bursts)",
                f"{'round':>5} {'cmd':<4} {'cell':<12} {'dir':<5} {'expected':>9} {'IOPS':>9} {'dm/exp':>8} "
                f"{'whole/exp':>9} {'bursts':>6} {'dropped':>7}"]
        rows, worst, worst_whole = [], 0.0, 0.0
        for c in record:
            e = c["expected"]
            worst = max(worst, abs(c["iops"] / e - 1))
            worst_whole = max(worst_whole, abs(c["whole_iops"] / e - 1))
            rows.append(f"{c['round']:>5} {c['cmd']:<4} {c['cell']:<12} {c['dir']:<5} {e:>9.1f} {c['iops']:>9.1f} "
                        f"{c['iops'] / e:>8.4f} {c['whole_iops'] / e:>9.4f} {c['bursts'] or '-':>6} "
                        f"{c['dropped'] if c['dropped'] is not None else '-':>7}")
        summary = [f"worst |headline/expected - 1| over {len(record)} cells: {worst * 100:.3f} % "
                   f"(tolerance {a.tolerance:g} %); the whole windows' worst: {worst_whole * 100:.3f} %"]
        for cmd in ("mark", "run", "compare", "sla", "steady"):
            xs = [abs(c["iops"] / c["expected"] - 1) for c in record if c["cmd"] == cmd]
            if xs:
                summary.append(f"{cmd}: {len(xs)} cells, worst {max(xs) * 100:.3f} %, "
                               f"{sum(x <= a.tolerance / 100 for x in xs)} within {a.tolerance:g} %")
        for line in head + rows + summary:
            print(line)
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"known-speed-{stamp}")
        with open(base + ".txt", "w") as f:
            f.write("\n".join(head + rows + summary) + "\n")
        with open(base + ".json", "w") as f:
            json.dump(dict(schema="diskmeter.bench.known-speed.v1", date=stamp, kernel=platform.release(),
                           diskmeter=dm_v, cgroup=cg.kind, iops=IOPS, bps=BPS, cells=record, worst=worst,
                           worst_whole=worst_whole), f, indent=1)
        print(f"saved {base}.txt and .json", file=sys.stderr)
        return 0 if worst * 100 <= a.tolerance else 1
    except KeyboardInterrupt:
        print("known_speed.py: interrupted; nothing saved", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"known_speed.py: {e}", file=sys.stderr)
        return 1
    finally:
        teardown(cg, dev, image)
        teardown(None, dev2, image2)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
