#!/usr/bin/env python3
"""diskmeter against fio where the kernel may hand I/O to io_uring's workers (issue: async punt).

Device classes, each set up and taken down here (root):

* ``zram``    a new zram device (1 GiB, filled with random data): bio-based, cannot take a
              request without blocking, so io_uring hands every request to its kernel workers;
* ``ramloop`` a loop device over a file in /dev/shm (the loop driver's own worker);
* ``ext4``    a file on ext4 on a RAM-backed loop device;
* ``tmpfs``   a file on /dev/shm.

Cases (the CrystalDiskMark card's shapes): RND4K Q32 read, RND4K Q1 read, SEQ1M Q8 read,
RND4K Q32 write, SEQ1M Q8 write. Each round runs fio (io_uring, direct, default options; with
--fio-psync also fio psync with numjobs = the queue depth; with --fio-best fio's io_uring,
libaio and psync with numjobs = QD (a region of its own per job in sequential cases), and the table holds diskmeter against the best of them) and
each diskmeter variant back to back, in alternating order (A B, then B A). For every run the
script reads the process's own CPU time (/proc/PID/stat, all threads, io_uring's workers
included) over the middle of the run and reports CPU microseconds per I/O for both tools
alike, beside each tool's IOPS; medians and diskmeter/fio ratios at the end.

    sudo bench/handoff.py                                  # all classes and cases, 5 rounds
    sudo bench/handoff.py --classes zram --rounds 7
    sudo bench/handoff.py --variant nopin=--no-pin         # an extra diskmeter variant
    sudo bench/handoff.py --variant before=/tmp/old/diskmeter::   # another build
    sudo bench/handoff.py --fio-psync                      # also fio psync, numjobs = QD
    sudo bench/handoff.py --fio-best                       # io_uring, libaio, psync: against the best

Writes bench/results/handoff-<date>.json (every run) and a .txt table beside it.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TICK = os.sysconf("SC_CLK_TCK")

CASES = {
    "rnd4k-q32-read": ("randread", "4k", 32),
    "rnd4k-q1-read": ("randread", "4k", 1),
    "seq1m-q8-read": ("read", "1m", 8),
    "rnd4k-q32-write": ("randwrite", "4k", 32),
    "seq1m-q8-write": ("write", "1m", 8),
}


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout.strip()


def fill(path, mib):
    sh("dd", "if=/dev/urandom", f"of={path}", "bs=1M", f"count={mib}", "oflag=direct", "status=none")


class Device:
    """One device class: `path` to measure, `dm_write` the flags diskmeter needs to write it."""

    def __init__(self, cls, size_mib, work):
        self.cls, self.work, self.undo, self.size_mib = cls, work, [], size_mib
        if cls == "zram":
            n = sh("cat", "/sys/class/zram-control/hot_add")
            self.undo.append(lambda: open("/sys/class/zram-control/hot_remove", "w").write(n))
            with open(f"/sys/block/zram{n}/disksize", "w") as f:
                f.write(f"{size_mib}M")
            self.path = f"/dev/zram{n}"
            fill(self.path, size_mib)
            self.dm_write = ["--destroy-data", self.path]
        elif cls in ("ramloop", "ext4"):
            backing = tempfile.mktemp(prefix="dm-handoff-", dir="/dev/shm")
            self.undo.append(lambda: os.unlink(backing))
            extra = size_mib // 4 + 64 if cls == "ext4" else 0
            sh("truncate", "-s", f"{size_mib + extra}M", backing)
            loop = sh("losetup", "-f", "--show", backing)
            self.undo.append(lambda: sh("losetup", "-d", loop))
            if cls == "ramloop":
                self.path = loop
                fill(loop, size_mib)
                self.dm_write = ["--destroy-data", loop]
            else:
                sh("mkfs.ext4", "-q", "-F", loop)
                mnt = tempfile.mkdtemp(prefix="dm-handoff-mnt-")
                sh("mount", loop, mnt)
                self.undo.append(lambda: (sh("umount", mnt), os.rmdir(mnt)))
                self.path = os.path.join(mnt, "test.file")
                fill(self.path, size_mib)
                self.undo.append(lambda: os.unlink(self.path))
                self.dm_write = ["--overwrite"]
        elif cls == "tmpfs":
            self.path = tempfile.mktemp(prefix="dm-handoff-", dir="/dev/shm")
            sh("dd", "if=/dev/urandom", f"of={self.path}", "bs=1M", f"count={size_mib}", "status=none")
            self.undo.append(lambda: os.unlink(self.path))
            self.dm_write = ["--overwrite"]
        else:
            raise SystemExit(f"handoff.py: unknown class {cls} (zram, ramloop, ext4, tmpfs)")

    def close(self):
        for u in reversed(self.undo):
            try:
                u()
            except Exception as e:  # keep tearing down the rest
                print(f"handoff.py: cleanup of {self.cls}: {e}", file=sys.stderr)


def cpu_ticks(pid):
    """utime + stime of the whole process (live and exited threads) and of its child
    processes alive now (fio runs each job in a process of its own), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        kids = []
    for k in kids:
        try:
            ticks += cpu_ticks(k)
        except (OSError, IndexError, ValueError):
            pass
    return ticks


def timed(cmd, window):
    """Run `cmd`; CPU seconds of the process between window[0] and window[1] seconds after
    its start. Returns (stdout, cpu_seconds, wall_seconds of the window)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
    t0 = time.monotonic()
    a = b = None
    try:
        time.sleep(window[0])
        a = (cpu_ticks(p.pid), time.monotonic())
        time.sleep(window[1] - (time.monotonic() - t0))
        b = (cpu_ticks(p.pid), time.monotonic())
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {err.strip()[:400]}")
    if a is None or b is None:
        return out, None, None
    return out, (b[0] - a[0]) / TICK, b[1] - a[1]


RAMP = 0


def run_fio(dev, case, runtime, engine="io_uring"):
    """fio's job on `engine`: io_uring or libaio at the queue depth; psync as the queue depth
    of psync jobs (group reporting), fio's way to what diskmeter's threads policy does."""
    rw, bs, qd = CASES[case]
    engine = ["--ioengine=psync", f"--numjobs={qd}", "--group_reporting"] if engine == "psync" else \
        [f"--ioengine={engine}", f"--iodepth={qd}"]
    if "--ioengine=psync" in engine and not rw.startswith("rand") and qd > 1:
        # Each of fio's numjobs clones of a sequential job starts at the same offset: QD jobs then
        # read every block QD times almost at once, and all but the first find it in the CPU's
        # cache (zram 1 MiB x 8: 11 031 IOPS so, 9 220 with a region each; RAM loop 6 569-7 166
        # against 4 929-5 108). A region of its own per job is QD distinct I/Os in flight, as the
        # other engines' one stream and diskmeter's threads.
        part = dev.size_mib // qd
        engine += [f"--size={part}m", f"--offset_increment={part}m"]
    cmd = ["fio", "--name=f", f"--filename={dev.path}", "--direct=1", *engine,
           f"--rw={rw}", f"--bs={bs}", f"--runtime={runtime}", "--time_based", f"--ramp_time={RAMP}",
           "--output-format=json"]
    out, cpu, wall = timed(cmd, (1.0 + RAMP, RAMP + runtime - 0.4))
    j = json.loads(out[out.index("{"):])["jobs"][0]
    d = j["write" if "write" in rw else "read"]
    return d["iops"], cpu, wall


def run_dm(binary, dev, case, runtime, extra):
    rw, bs, qd = CASES[case]
    cmd = [binary, "run", "--target", dev.path, "--rw", rw, "--bs", bs, "--qd", str(qd),
           "--runtime", f"{runtime}s", "--ramp", f"{RAMP}s", "--json"] + extra
    if "write" in rw:
        cmd += dev.dm_write
    # diskmeter checks the target and the memory before it starts: the window starts later.
    out, cpu, wall = timed(cmd, (1.5 + RAMP, RAMP + runtime + 0.1))
    doc = json.loads(out)
    r = doc["results"][0]
    d = r["write" if "write" in rw else "read"]
    warn = [w["code"] for w in doc.get("warnings", []) + r.get("warnings", [])]
    return d["iops"], cpu, wall, warn, r.get("handoff")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--classes", default="zram,ramloop,ext4,tmpfs")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=4, help="seconds per run (default 4)")
    ap.add_argument("--ramp", type=int, default=0,
                    help="seconds both tools run before their measured window (fio --ramp_time, diskmeter --ramp); "
                         "a host whose first seconds run faster then weighs on neither")
    ap.add_argument("--size", type=int, default=1024, help="MiB per device (default 1024)")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")),
                                                   "release", "diskmeter"))
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=ARGS or NAME=BINARY::ARGS: another diskmeter run per round with these extra "
                         "arguments (and another build: a before/after comparison)")
    ap.add_argument("--fio-psync", action="store_true",
                    help="also run fio with ioengine=psync and numjobs=QD (tool fio-psync)")
    ap.add_argument("--fio-best", action="store_true",
                    help="run fio with io_uring, libaio (iodepth = QD) and psync (numjobs = QD), and hold diskmeter "
                         "against the best of them (tools fio, fio-libaio, fio-psync)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    global RAMP
    RAMP = a.ramp
    if os.geteuid() != 0:
        raise SystemExit("handoff.py: needs root (zram, losetup, mount)")
    for tool in ("fio", "losetup", "mkfs.ext4"):
        if not shutil.which(tool):
            raise SystemExit(f"handoff.py: {tool} not found")
    if not os.access(a.bin, os.X_OK):
        raise SystemExit(f"handoff.py: no diskmeter at {a.bin} (cargo build --release -p diskmeter, or --bin)")
    variants = [("default", (a.bin, []))]
    for v in a.variant:
        name, args = v.split("=", 1)
        binary, args = args.split("::", 1) if "::" in args else (a.bin, args)
        variants.append((name, (binary, args.split())))
    fios = ["fio"] + (["fio-libaio"] if a.fio_best else []) + (["fio-psync"] if a.fio_psync or a.fio_best else [])
    tools = fios + [v[0] for v in variants]
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    runs = []
    for cls in a.classes.split(","):
        dev = Device.__new__(Device)
        dev.cls, dev.undo = cls, []
        try:
            dev.__init__(cls, a.size, None)
            for case in a.cases.split(","):
                for rnd in range(a.rounds):
                    order = tools
                    if rnd % 2:
                        order = order[::-1]
                    for who in order:
                        if who.startswith("fio"):
                            engine = who.split("-", 1)[1] if "-" in who else "io_uring"
                            iops, cpu, wall = run_fio(dev, case, a.runtime, engine)
                            warn, handoff = [], None
                        else:
                            binary, extra = dict(variants)[who]
                            iops, cpu, wall, warn, handoff = run_dm(binary, dev, case, a.runtime, extra)
                        us = cpu / wall * 1e6 / iops if cpu is not None and iops else None
                        runs.append(dict(cls=cls, case=case, round=rnd, tool=who, iops=iops,
                                         cpu_us_per_io=us, warnings=warn, handoff=handoff))
                        print(f"{cls:8} {case:16} r{rnd} {who:10} {iops:12.0f} IOPS  "
                              f"{'-' if us is None else f'{us:6.2f}'} CPU us/IO  {' '.join(warn)}", flush=True)
        finally:
            dev.close()
    # Each diskmeter variant's hand-off policy as its results said it (threads, ring or none).
    def policy(rs):
        ps = sorted({(r["handoff"] or {}).get("policy", "-") for r in rs})
        return "/".join(ps) if rs and not rs[0]["tool"].startswith("fio") else ""
    lines = [f"{'class':8} {'case':16} {'tool':10} {'IOPS (median)':>14} {'x fio':>7} {'x best':>7} {'CPU us/IO':>10} "
             f"{'hand-off':8}  per round"]
    for cls in a.classes.split(","):
        for case in a.cases.split(","):
            base = None
            # fio's best engine for the cell: the highest median of its engines.
            meds = {w: statistics.median(r["iops"] for r in runs if r["cls"] == cls and r["case"] == case and r["tool"] == w)
                    for w in fios if any(r["cls"] == cls and r["case"] == case and r["tool"] == w for r in runs)}
            best = max(meds.values()) if meds else None
            for who in tools:
                rs = [r for r in runs if r["cls"] == cls and r["case"] == case and r["tool"] == who]
                if not rs:
                    continue
                med = statistics.median(r["iops"] for r in rs)
                cpus = [r["cpu_us_per_io"] for r in rs if r["cpu_us_per_io"] is not None]
                cpu = statistics.median(cpus) if cpus else float("nan")
                if who == "fio":
                    base = med
                ratio = med / base if base else float("nan")
                vs_best = med / best if best else float("nan")
                each = " ".join(f"{r['iops']:.0f}" for r in rs)
                lines.append(f"{cls:8} {case:16} {who:10} {med:14.0f} {ratio:7.2f} {vs_best:7.2f} {cpu:10.2f} "
                             f"{policy(rs):8}  {each}")
            if meds:
                lines.append(f"{cls:8} {case:16} best fio: {max(meds, key=meds.get)}")
    table = "\n".join(lines)
    print(table)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"handoff-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(dict(rounds=a.rounds, runtime=a.runtime, ramp=a.ramp, size_mib=a.size, kernel=os.uname().release, fio=fios,
                       cpus=os.cpu_count(), variants={k: [b, " ".join(x)] for k, (b, x) in variants},
                       runs=runs), f, indent=1)
    with open(base + ".txt", "w") as f:
        f.write(f"# {a.rounds} interleaved rounds, {a.ramp} s ramp + {a.runtime} s measured per run, "
                f"{os.cpu_count()} CPUs, {os.uname().release}\n" + table + "\n")
    print(f"wrote {base}.json and .txt")


if __name__ == "__main__":
    main()
