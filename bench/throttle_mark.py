#!/usr/bin/env python3
"""A device of known speed, measured by `diskmeter mark` with its true defaults, fio beside it.

A RAM-backed loop device (a file in /dev/shm) is limited by the kernel's block-I/O throttle
(cgroup v1 blkio.throttle.*, or v2 io.max where only v2 is mounted) to a known rate, far below
what it can do unthrottled. For each setting

  * 10k-iops   10 000 IOPS read and write
  * 2k-iops     2 000 IOPS read and write
  * 300MB/s   300 000 000 B/s read and write, together with 10 000 IOPS (so that every cell has
              a known figure: SEQ1M is bytes-bound at 300 MB/s = 286.1 IOPS, RND4K IOPS-bound at
              10 000 IOPS = 41 MB/s; a bytes limit alone would leave RND4K at the loop device's
              own, unknown, speed)

it runs `diskmeter mark DEV --destroy-data DEV --json` with default options (1 GiB, warm-up +
3 passes x 5 s, 5 s pauses, best pass) inside the cgroup, then fio for each of the card's eight
cells (same bs, iodepth and direction; direct, io_uring, time_based, 1 s ramp, 5 s, 1 GiB).
Before the throttled runs each cell is run once unthrottled with fio, so a cell the loop device
itself cannot serve at the throttle's rate is marked device-bound instead of being compared with
a figure it cannot reach. For SEQ1M it also counts, from /proc/diskstats, how many requests one
1 MiB I/O of each tool becomes at the device (blk-throttle counts split bios against IOPS).

  sudo bench/throttle_mark.py                     # all three settings (~20 min)
  sudo bench/throttle_mark.py --settings 10k-iops --bin target/release/diskmeter

Writes bench/results/throttle-mark-<date>.txt (the table) and .json (every figure). The loop
device, its image and the cgroup are removed on exit, also on error or Ctrl-C.
Exit status 0 when every throttle-bound diskmeter cell is within --tolerance (1 %), 1 when not.
"""
import argparse
import datetime
import errno
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time

CELLS = [  # name, sequential, bs, qd
    ("SEQ1M Q8T1", True, 1 << 20, 8),
    ("SEQ1M Q1T1", True, 1 << 20, 1),
    ("RND4K Q32T1", False, 4096, 32),
    ("RND4K Q1T1", False, 4096, 1),
]
SETTINGS = {  # name -> (iops limit or None, bytes/s limit or None)
    "10k-iops": (10000, None),
    "2k-iops": (2000, None),
    "300MB/s": (10000, 300_000_000),
}


def die(msg):
    print(f"throttle_mark.py: {msg}", file=sys.stderr)
    sys.exit(2)


class Cgroup:
    """A block-I/O cgroup limiting one device; tools join it at exec (preexec_fn)."""

    def __init__(self, devno):
        self.devno = devno
        name = f"diskmeter-throttle-mark-{os.getpid()}"
        v2 = None
        for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
            ctl = os.path.join(root, "cgroup.controllers")
            if os.path.exists(ctl) and "io" in open(ctl).read().split():
                v2 = root
                break
        v1 = "/sys/fs/cgroup/blkio"
        if os.path.exists(os.path.join(v1, "blkio.throttle.read_iops_device")):
            self.v2, self.path, self.kind = False, os.path.join(v1, name), "cgroup v1 blkio.throttle"
        elif v2:
            try:
                with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
                    f.write("+io")
            except OSError:
                pass
            self.v2, self.path, self.kind = True, os.path.join(v2, name), "cgroup v2 io.max"
        else:
            die("no block-I/O cgroup controller (v1 blkio or v2 io) is mounted")
        os.mkdir(self.path)

    def limit(self, iops, bps):
        if self.v2:
            v = lambda x: "max" if x is None else str(x)  # noqa: E731
            with open(os.path.join(self.path, "io.max"), "w") as f:
                f.write(f"{self.devno} riops={v(iops)} wiops={v(iops)} rbps={v(bps)} wbps={v(bps)}")
            return
        for key, val in (("read_iops", iops), ("write_iops", iops), ("read_bps", bps), ("write_bps", bps)):
            with open(os.path.join(self.path, f"blkio.throttle.{key}_device"), "w") as f:
                f.write(f"{self.devno} {val or 0}")  # 0 removes the rule

    def join(self):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError as e:
                if e.errno != errno.EBUSY:
                    break
                time.sleep(0.1)
        print(f"throttle_mark.py: could not remove cgroup {self.path}; rmdir it", file=sys.stderr)


def teardown(cg, dev, image):
    """Remove what a run made: the cgroup, the loop device, its image (each if made)."""
    if cg:
        cg.remove()
    if dev:
        subprocess.run(["losetup", "-d", dev])
    if image and os.path.exists(image):
        os.unlink(image)


def diskstats(dev):
    """(reads completed, writes completed) of a block device."""
    name = os.path.basename(dev)
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == name:
            return int(f[3]), int(f[7])
    return 0, 0


def run(cmd, cg=None):
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=cg.join if cg else None)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} … failed ({p.returncode}): {p.stderr.strip()[-600:]}")
    return p.stdout


def fio(dev, seq, bs, qd, d, cg, runtime=5, ramp=1):
    rw = d if seq else "rand" + d
    before = diskstats(dev)
    out = run(["fio", "--name=x", f"--filename={dev}", "--size=1g", f"--rw={rw}", f"--bs={bs}",
               f"--iodepth={qd}", "--direct=1", "--ioengine=io_uring", "--time_based", f"--runtime={runtime}",
               f"--ramp_time={ramp}", "--norandommap", "--randrepeat=0", "--output-format=json"], cg)
    after = diskstats(dev)
    j = json.loads(out[out.index("{"):])["jobs"][0][d]
    k = 0 if d == "read" else 1
    ios = j["total_ios"]
    # fio's total_ios counts the measured part only; the ramp's I/Os reach the device too.
    reqs = (after[k] - before[k]) / (j["iops"] * (runtime + ramp)) if j["iops"] else None
    return dict(iops=j["iops"], mb_s=j["bw_bytes"] / 1e6, ios=ios, req_per_io=reqs)


def dm_requests(binary, dev, d, cg):
    """Requests per 1 MiB diskmeter I/O at the device (a 2 s sequential run), from the run's own
    device view: /proc/diskstats at the edges of the measured window. Counting over the whole
    process would add the reads made before the window (the target's signature check and the
    64 sampled blocks of the unwritten-read check) to a few hundred I/Os at 300 MB/s."""
    before = diskstats(dev)
    doc = json.loads(run([binary, "run", "--target", dev, "--size", "1g", "--rw", d, "--bs", "1m", "--qd", "1",
                          "--runtime", "2s", "--json", "--no-ceiling-check", "--destroy-data", dev], cg))
    after = diskstats(dev)
    res = doc["results"][0]
    per = (res.get("device_view") or {}).get(f"{d}s_per_io")
    if per is not None:
        return per
    x = res[d]
    k = 0 if d == "read" else 1
    return (after[k] - before[k]) / x["ops"] if x["ops"] else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="diskmeter binary (default: $CARGO_TARGET_DIR or target/, release)")
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"comma list of {', '.join(SETTINGS)}")
    ap.add_argument("--image-size", default="2G", help="loop image in /dev/shm (default 2G)")
    ap.add_argument("--tolerance", type=float, default=1.0, help="percent (default 1)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    a = ap.parse_args()
    settings = a.settings.split(",")
    for s in settings:
        if s not in SETTINGS:
            die(f"unknown setting '{s}'; known: {', '.join(SETTINGS)}")
    if os.geteuid() != 0:
        die("needs root (loop device, cgroup)")
    for tool in ("fio", "losetup"):
        if not shutil.which(tool):
            die(f"{tool} not found")
    if not a.bin:
        tgt = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target")
        a.bin = os.path.join(tgt, "release", "diskmeter")
    if not os.access(a.bin, os.X_OK):
        die(f"diskmeter binary {a.bin} not found; build it (cargo build --release -p diskmeter) or pass --bin")

    image = f"/dev/shm/diskmeter-throttle-mark-{os.getpid()}.img"
    dev, cg = None, None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        run(["truncate", "-s", a.image_size, image])
        dev = run(["losetup", "--find", "--show", image]).strip()
        devno = open(f"/sys/block/{os.path.basename(dev)}/dev").read().strip()
        cg = Cgroup(devno)
        # Touch every page of the test area once: a first write to tmpfs allocates pages and
        # runs at a fraction of the later speed.
        run(["fio", "--name=prep", f"--filename={dev}", "--size=1g", "--rw=write", "--bs=1m", "--direct=1",
             "--ioengine=io_uring", "--iodepth=8", "--output-format=json"])
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        fio_v = run(["fio", "--version"]).strip()
        dm_v = run([a.bin, "--version"]).strip()
        print(f"loop device {dev} ({devno}) over {image}, {cg.kind}", file=sys.stderr)

        unthrottled = {}
        for name, seq, bs, qd in CELLS:
            for d in ("read", "write"):
                unthrottled[(name, d)] = fio(dev, seq, bs, qd, d, None, runtime=3)
        record, rows, worst = [], [], 0.0
        for s in settings:
            iops, bps = SETTINGS[s]
            cg.limit(iops, bps)
            print(f"{s}: diskmeter mark (defaults)…", file=sys.stderr, flush=True)
            t0 = time.monotonic()
            doc = json.loads(run([a.bin, "mark", dev, "--destroy-data", dev, "--json"], cg))
            mark_s = time.monotonic() - t0
            req_dm = {d: dm_requests(a.bin, dev, d, cg) for d in ("read", "write")}
            by_name = {r["name"]: r for r in doc["results"]}
            for name, seq, bs, qd in CELLS:
                for d in ("read", "write"):
                    print(f"{s}: fio {name} {d}…", file=sys.stderr, flush=True)
                    f = fio(dev, seq, bs, qd, d, cg)
                    x = by_name[name][d]
                    u = unthrottled[(name, d)]
                    lim = [v for v in (iops, bps / bs if bps else None) if v]
                    base = min(lim)
                    base_bound = "bytes/s" if bps and bps / bs <= (iops or 1e18) else "IOPS"

                    def expected(req_per_io):
                        # A 1 MiB I/O that reaches the device as k > 1 requests: Linux 6.18 charged
                        # it k + 1 times against an IOPS limit and k MiB against a bytes limit
                        # (measured with this script, 2026-11-24). Each tool is held against the
                        # rate its own I/O earns: diskmeter's reach the device whole, fio's often not.
                        k = round(req_per_io or 1) if seq else 1
                        if base_bound == "IOPS" and k > 1:
                            e, b = base / (k + 1), f"IOPS/{k + 1}"
                        elif k > 1:
                            e, b = base / k, f"bytes/{k}"
                        else:
                            e, b = base, base_bound
                        return (None, "device") if u["iops"] < e * 1.05 else (e, b)

                    exp, bound = expected(req_dm[d] if seq else 1)
                    fio_exp, _ = expected(f["req_per_io"])
                    cell = dict(setting=s, cell=name, dir=d, bound=bound, expected_iops=exp, fio_expected_iops=fio_exp,
                                dm_iops=x["iops"], dm_mb_s=x["mb_s"], fio_iops=f["iops"], fio_mb_s=f["mb_s"],
                                unthrottled_fio_iops=u["iops"], fio_req_per_io=f["req_per_io"],
                                dm_req_per_io=req_dm[d] if seq else None,
                                dm_passes=[p[d]["iops"] for p in by_name[name].get("passes", []) if p.get(d)])
                    if exp:
                        worst = max(worst, abs(x["iops"] / exp - 1))
                    record.append(cell)
            record[-1]["mark_seconds"] = mark_s

        head = [f"# diskmeter mark (defaults) vs fio on a throttled loop device, {stamp}, {platform.release()}, {cg.kind}",
                f"# {dm_v}, {fio_v}; fio: direct, io_uring, time_based 5 s + ramp 1 s, 1 GiB; "
                "expected = the throttle's rate in IOPS (MB/s = IOPS x bs / 1e6)",
                "# bound: IOPS / bytes/s = the throttle binds; IOPS/n, bytes/n = a 1 MiB I/O split into requests "
                "is charged n times; device = the loop device itself is slower than the throttle (no known figure)",
                f"{'setting':<9} {'cell':<12} {'dir':<5} {'bound':<11} {'expected':>9} {'dm IOPS':>9} {'dm MB/s':>8} "
                f"{'fio IOPS':>9} {'fio MB/s':>8} {'dm/exp':>7} {'fio/exp':>7} {'dm/fio':>7} {'unthr.':>8} {'req/IO d/f':>11}"]
        for c in record:
            e = c["expected_iops"]
            rq = (f"{c['dm_req_per_io']:.2f}/{c['fio_req_per_io']:.2f}" if c["dm_req_per_io"] is not None else "")
            es = "%.1f" % e if e else "-"
            de = "%.4f" % (c["dm_iops"] / e) if e else "-"
            fe = "%.4f" % (c["fio_iops"] / c["fio_expected_iops"]) if c.get("fio_expected_iops") else "-"
            rows.append(f"{c['setting']:<9} {c['cell']:<12} {c['dir']:<5} {c['bound']:<11} "
                        f"{es:>9} {c['dm_iops']:>9.1f} {c['dm_mb_s']:>8.1f} {c['fio_iops']:>9.1f} "
                        f"{c['fio_mb_s']:>8.1f} {de:>7} {fe:>7} {c['dm_iops'] / c['fio_iops']:>7.4f} "
                        f"{c['unthrottled_fio_iops']:>8.0f} {rq:>11}")
        verdict = f"worst |diskmeter/expected - 1| over throttle-bound cells: {worst * 100:.2f}% (tolerance {a.tolerance:g}%)"
        for line in head + rows + [verdict]:
            print(line)
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"throttle-mark-{stamp}")
        with open(base + ".txt", "w") as f:
            f.write("\n".join(head + rows + [verdict]) + "\n")
        with open(base + ".json", "w") as f:
            json.dump(dict(schema="diskmeter.bench.throttle-mark.v1", date=stamp, kernel=platform.release(),
                           fio=fio_v, diskmeter=dm_v, cgroup=cg.kind, settings={s: SETTINGS[s] for s in settings},
                           cells=record, worst=worst), f, indent=1)
        print(f"saved {base}.txt and .json", file=sys.stderr)
        return 0 if worst * 100 <= a.tolerance else 1
    except KeyboardInterrupt:
        print("throttle_mark.py: interrupted; nothing saved", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"throttle_mark.py: {e}", file=sys.stderr)
        return 1
    finally:
        teardown(cg, dev, image)


if __name__ == "__main__":
    sys.exit(main())
