#!/usr/bin/env python3
"""Accuracy cross-check: diskmeter vs fio on one preconditioned file, runs interleaved.

The same comparison as ../shared/bench/vs-fio.py (fio io_uring vs diskmeter io_uring, direct I/O,
same file, same workload, medians over interleaved rounds), with what that script lacks:

  * a ramp (default 1 s) excluded from both tools' figures;
  * rounds in ABBA order (fio, dm, dm, fio, ...) so a position effect cancels;
  * the median of the per-round ratios next to the ratio of medians, and the spread of each tool;
  * CPU time per I/O of each tool (user + sys), which explains a gap on a device so fast that
    the tool's own cost per I/O is a visible share of the latency;
  * a Little's-law check per tool: IOPS x mean latency / depth is 1.00 when a tool keeps its
    queue full and times each I/O from submission to completion;
  * --fio-matched: fio with what diskmeter does by default (registered buffers and file, a pinned
    CPU per job), so a remaining gap is not the I/O path;
  * --throttle: runs both tools in a block-I/O cgroup that limits the backing disk (cgroup v1
    blkio.throttle.* or v2 io.max) to a known IOPS and bandwidth, so the *device* is the
    bottleneck, as it is on real hardware; both tools are then also compared with that known
    rate (the "reference" column);
  * a JSON record of every run in bench/results/.

  sudo bench/accuracy.py --dir /var/tmp                      # 9 rounds, unthrottled
  sudo bench/accuracy.py --dir /var/tmp --throttle           # device-bound reference
  sudo bench/accuracy.py --dir /var/tmp --fio-matched        # fio set up as diskmeter
  bench/accuracy.py --dir /mnt/ssd --rounds 5 --runtime 10 --cases rnd4k-q1,seq1m-q8 --dirs read

Needs fio (apt-get install fio); --throttle needs root. The test file is created in DIR
(tmpfs/ramfs refused: direct I/O there measures memory copies), filled with random data by
fio, and removed on exit (also on error or Ctrl-C) unless --keep; the cgroup is removed too.
Exit status: 0 when every cell is within --tolerance (default 3 %), 1 when not, 2 on bad input.
"""
import argparse
import datetime
import errno
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

CASES = {
    "rnd4k-q1": dict(rw="rand", bs=4096, qd=1, threads=1),
    "rnd4k-q32": dict(rw="rand", bs=4096, qd=32, threads=1),
    "rnd4k-q32t4": dict(rw="rand", bs=4096, qd=32, threads=4),
    "seq1m-q8": dict(rw="seq", bs=1 << 20, qd=8, threads=1),
    "seq1m-q1": dict(rw="seq", bs=1 << 20, qd=1, threads=1),
}
RAM_FS = {0x01021994: "tmpfs", 0x858458F6: "ramfs"}
INTERRUPTED = False


def on_sigint(*_):
    # Ctrl-C reaches the tool too; remember it, so its exit is not reported as a failure.
    global INTERRUPTED
    INTERRUPTED = True
    raise KeyboardInterrupt


def die(msg):
    print(f"accuracy.py: {msg}", file=sys.stderr)
    sys.exit(2)


def rwname(kind, d):
    return ("rand" + d) if kind == "rand" else d


def size_bytes(s):
    """1G, 512M, 300MiB, 4096 -> bytes (binary units, as fio and diskmeter read them)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", s.strip().lower())
    if not m:
        die(f"'{s}' is not a size; use e.g. 1G, 512M, 300MiB")
    return int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)])


# ---------------------------------------------------------------------------------------------
# Block-I/O cgroup (the reference device)


class Throttle:
    """A cgroup limiting one whole disk to read/write IOPS and bytes/s; tools join it at exec."""

    def __init__(self, devno, iops, bps):
        self.devno, self.iops, self.bps = devno, iops, bps
        self.path = None
        v1 = "/sys/fs/cgroup/blkio"
        v2 = None
        for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
            ctl = os.path.join(root, "cgroup.controllers")
            if os.path.exists(ctl) and "io" in open(ctl).read().split():
                v2 = root
                break
        name = f"diskmeter-accuracy-{os.getpid()}"
        try:
            self._create(v1, v2, name, devno, iops, bps)
        except OSError as e:
            if self.path and os.path.isdir(self.path):
                os.rmdir(self.path)
            self.path = None
            die(f"could not set up the throttling cgroup for {devno}: {e}")

    def _create(self, v1, v2, name, devno, iops, bps):
        if v2:
            sub = os.path.join(v2, "cgroup.subtree_control")
            try:
                with open(sub, "w") as f:
                    f.write("+io")
            except OSError:
                pass
            self.path = os.path.join(v2, name)
            os.mkdir(self.path)
            with open(os.path.join(self.path, "io.max"), "w") as f:
                f.write(f"{devno} riops={iops} wiops={iops} rbps={bps} wbps={bps}")
            self.kind = "cgroup2 io.max"
        elif os.path.exists(os.path.join(v1, "blkio.throttle.read_iops_device")):
            self.path = os.path.join(v1, name)
            os.mkdir(self.path)
            for key, val in (("read_iops", iops), ("write_iops", iops), ("read_bps", bps), ("write_bps", bps)):
                with open(os.path.join(self.path, f"blkio.throttle.{key}_device"), "w") as f:
                    f.write(f"{devno} {val}")
            self.kind = "cgroup1 blkio.throttle"
        else:
            die("--throttle needs a block-I/O cgroup controller (cgroup v2 'io' or v1 'blkio'); none is mounted")

    def join(self):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def expected_iops(self, bs):
        return min(self.iops, self.bps / bs)

    def remove(self):
        # A tool killed by Ctrl-C may leave a child (fio's job process) exiting for a moment:
        # the cgroup can only go once it is empty.
        for _ in range(50):
            try:
                os.rmdir(self.path)
                break
            except OSError as e:
                if e.errno != errno.EBUSY:
                    print(f"accuracy.py: could not remove cgroup {self.path}: {e}", file=sys.stderr)
                    break
                time.sleep(0.1)
        else:
            print(f"accuracy.py: cgroup {self.path} still busy; remove it with rmdir", file=sys.stderr)
        self.path = None


def whole_disk(st_dev):
    """MAJ:MIN of the whole disk holding st_dev (blk-throttle limits whole disks)."""
    devno = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    sys_path = os.path.realpath(f"/sys/dev/block/{devno}")
    if not os.path.exists(sys_path):
        die(f"the file's device {devno} is not a block device (a network or virtual file system?); "
            "--throttle needs a file on a local disk")
    if os.path.exists(os.path.join(sys_path, "partition")):
        sys_path = os.path.dirname(sys_path)
    return open(os.path.join(sys_path, "dev")).read().strip(), os.path.basename(sys_path)


# ---------------------------------------------------------------------------------------------
# The two tools


def fio_cmd(a, target, c, d):
    cmd = ["fio", "--name=x", f"--filename={target}", f"--size={a.size_b}", f"--rw={rwname(c['rw'], d)}",
           f"--bs={c['bs']}", f"--iodepth={c['qd']}", f"--numjobs={c['threads']}", "--group_reporting",
           "--direct=1", "--ioengine=io_uring", f"--runtime={a.runtime}", "--time_based",
           "--randrepeat=0", "--norandommap", "--output-format=json"]
    if a.ramp and a.fio_ramp:
        cmd.append(f"--ramp_time={a.ramp}")
    if a.fio_matched:
        # What diskmeter does by default: registered buffers and file, each worker pinned to one
        # allowed CPU (diskmeter takes the highest-numbered first; fio's split takes them in order).
        cpus = sorted(os.sched_getaffinity(0), reverse=True)[: c["threads"]]
        cmd += ["--fixedbufs", "--registerfiles", f"--cpus_allowed={','.join(map(str, sorted(cpus)))}",
                "--cpus_allowed_policy=split"]
    return cmd


def dm_cmd(a, target, c, d):
    cmd = [a.bin, "run", "--target", target, "--size", str(a.size_b), "--rw", rwname(c["rw"], d),
           "--bs", str(c["bs"]), "--qd", str(c["qd"]), "--threads", str(c["threads"]),
           "--runtime", f"{a.runtime}s", "--json", "--no-ceiling-check", "--overwrite"]
    if a.ramp:
        cmd += ["--ramp", f"{a.ramp}s"]
    return cmd


def run(cmd, throttle):
    pre = throttle.join if throttle else None
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=pre)
    if p.returncode != 0 and INTERRUPTED:
        raise KeyboardInterrupt
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p.stdout


def run_fio(a, target, c, d, throttle):
    out = run(fio_cmd(a, target, c, d), throttle)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    j = job[d]
    secs = job["job_runtime"] / 1000.0 if job.get("job_runtime") else a.runtime
    ops = j["total_ios"] if "total_ios" in j else j["iops"] * secs
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * secs
    return dict(iops=j["iops"], lat_ns=j["lat_ns"]["mean"], ops=ops, cpu_us_per_io=cpu_s / ops * 1e6 if ops else None)


def run_dm(a, target, c, d, throttle):
    doc = json.loads(run(dm_cmd(a, target, c, d), throttle))
    r = doc["results"][0]
    x = r[d]
    wall = a.runtime + a.ramp
    cpu_s = (r["cpu"]["user_pct"] + r["cpu"]["sys_pct"]) / 100.0 * wall
    # rusage covers the ramp too: divide by every I/O of the run (measured rate x wall time).
    ops_all = x["iops"] * wall
    return dict(iops=x["iops"], lat_ns=x["lat_ns"]["mean"], ops=x["ops"],
                cpu_us_per_io=cpu_s / ops_all * 1e6 if ops_all else None)


# ---------------------------------------------------------------------------------------------


def spread(xs):
    m = statistics.median(xs)
    return (max(xs) - min(xs)) / m if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=".", help="directory for the test file (default: .)")
    ap.add_argument("--bin", help="diskmeter binary (default: $CARGO_TARGET_DIR or target/, release)")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--runtime", type=int, default=4, help="measured seconds per run")
    ap.add_argument("--ramp", type=int, default=1, help="unmeasured seconds before (both tools)")
    ap.add_argument("--cases", default="rnd4k-q1,rnd4k-q32,seq1m-q8")
    ap.add_argument("--dirs", default="read,write")
    ap.add_argument("--throttle", action="store_true", help="limit the disk in a cgroup (root)")
    ap.add_argument("--throttle-iops", type=int, default=10000, help="IOPS limit (default 10000)")
    ap.add_argument("--throttle-bps", default="300M", help="bytes/s limit (default 300M)")
    ap.add_argument("--fio-matched", action="store_true",
                    help="give fio what diskmeter does by default: --fixedbufs --registerfiles and one pinned CPU per job")
    ap.add_argument("--fio-ramp", choices=("auto", "yes", "no"), default="auto",
                    help="give fio --ramp_time (auto: yes, except under --throttle, where fio 3.33's "
                         "ramp_time inflates its mean latency; see bench/README.md)")
    ap.add_argument("--tolerance", type=float, default=3.0, help="percent (default 3)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--keep", action="store_true", help="keep the test file")
    ap.add_argument("--allow-ram", action="store_true", help="allow a tmpfs/ramfs --dir")
    a = ap.parse_args()

    if a.rounds < 1 or a.runtime < 1 or a.ramp < 0:
        die("--rounds and --runtime must be at least 1, --ramp at least 0")
    a.size_b = size_bytes(a.size)
    if a.size_b < 16 << 20:
        die(f"--size {a.size} is too small; use at least 16M (default 1G)")
    cases = a.cases.split(",")
    for c in cases:
        if c not in CASES:
            die(f"unknown case '{c}'; known: {', '.join(CASES)}")
    dirs = a.dirs.split(",")
    for d in dirs:
        if d not in ("read", "write"):
            die(f"unknown direction '{d}'; use read, write or read,write")
    if not shutil.which("fio"):
        die("fio not found; install it (apt-get install fio)")
    if not a.bin:
        tgt = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target")
        a.bin = os.path.join(tgt, "release", "diskmeter")
    if not os.access(a.bin, os.X_OK):
        die(f"diskmeter binary {a.bin} not found; build it (cargo build --release -p diskmeter) or pass --bin")
    if not os.path.isdir(a.dir):
        die(f"--dir {a.dir} is not a directory")
    vfs = os.statvfs(a.dir)
    magic = int(subprocess.run(["stat", "-f", "-c", "%t", a.dir], capture_output=True, text=True).stdout.strip() or "0", 16)
    if magic in RAM_FS and not a.allow_ram:
        die(f"--dir {a.dir} is on {RAM_FS[magic]}: direct I/O there measures memory copies; pick a directory on a disk (or --allow-ram)")
    if vfs.f_bavail * vfs.f_frsize < a.size_b * 1.1:
        die(f"--dir {a.dir} has less than {a.size} free; pick another directory or a smaller --size")
    throttle_bps = size_bytes(a.throttle_bps)
    a.fio_ramp = a.fio_ramp == "yes" or (a.fio_ramp == "auto" and not a.throttle)
    if a.throttle and os.geteuid() != 0:
        die("--throttle needs root (it creates a block-I/O cgroup)")

    target = os.path.join(os.path.abspath(a.dir), f"diskmeter-accuracy-{os.getpid()}.bin")
    throttle = None
    rows, record = [], []
    worst = 0.0

    def cleanup(*_):
        if throttle and throttle.path:
            throttle.remove()
        if not a.keep and os.path.exists(target):
            os.unlink(target)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    signal.signal(signal.SIGINT, on_sigint)
    try:
        pre = subprocess.run(["fio", "--name=prep", f"--filename={target}", f"--size={a.size_b}", "--rw=write",
                              "--bs=1m", "--direct=1", "--ioengine=io_uring", "--iodepth=8",
                              "--output-format=json"], capture_output=True, text=True)
        if pre.returncode != 0:
            die(f"could not precondition {target}: {pre.stderr.strip()[-300:]}")
        disk = None
        if a.throttle:
            devno, disk = whole_disk(os.stat(target).st_dev)
            throttle = Throttle(devno, a.throttle_iops, throttle_bps)

        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        fio_v = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
        dm_v = subprocess.run([a.bin, "--version"], capture_output=True, text=True).stdout.strip()
        mode = f"throttled to {a.throttle_iops} IOPS / {throttle_bps / 2**20:g} MiB/s on {disk} ({throttle.kind})" if throttle else "unthrottled"
        head = [f"# diskmeter vs fio, {stamp}, {platform.release()}, {mode}",
                f"# {dm_v}, {fio_v}{' matched (fixedbufs, registerfiles, pinned)' if a.fio_matched else ''}, "
                f"rounds {a.rounds} (ABBA), runtime {a.runtime}s + ramp {a.ramp}s{'' if a.fio_ramp else ' (diskmeter only)'}, "
                f"size {a.size}, dir {a.dir}",
                "# ratio = dm/fio of the medians, r/rnd = median of per-round ratios, spread = (max-min)/median "
                "of IOPS, Little = IOPS x mean latency / (QD x threads), 1.00 at a constant full queue",
                f"{'case':<12} {'dir':<5} {'fio IOPS':>9} {'dm IOPS':>9} {'ratio':>6} {'r/rnd':>6} "
                f"{'fio µs':>9} {'dm µs':>9} {'ratio':>6} {'r/rnd':>6} {'spread f/d':>11} {'cpu µs/IO f/d':>14} "
                f"{'Little f/d':>11}"
                + (f" {'ref IOPS':>9} {'f/ref':>6} {'d/ref':>6}" if throttle else "")]
        for h in head:
            print(h, flush=True)
        for name in cases:
            c = CASES[name]
            for d in dirs:
                runs = {"fio": [], "dm": []}
                for r in range(a.rounds):
                    order = ("fio", "dm") if r % 2 == 0 else ("dm", "fio")
                    for tool in order:
                        f = run_fio if tool == "fio" else run_dm
                        res = f(a, target, c, d, throttle)
                        res["round"] = r + 1
                        runs[tool].append(res)
                fi = [x["iops"] for x in runs["fio"]]
                di = [x["iops"] for x in runs["dm"]]
                fl = [x["lat_ns"] for x in runs["fio"]]
                dl = [x["lat_ns"] for x in runs["dm"]]
                F, D, FL, DL = map(statistics.median, (fi, di, fl, dl))
                ri, rl = D / F, DL / FL
                pri = statistics.median(y / x for x, y in zip(fi, di))
                prl = statistics.median(y / x for x, y in zip(fl, dl))
                fc = statistics.median(x["cpu_us_per_io"] for x in runs["fio"])
                dc = statistics.median(x["cpu_us_per_io"] for x in runs["dm"])
                depth = c["qd"] * c["threads"]
                lf, ld = F * FL / 1e9 / depth, D * DL / 1e9 / depth
                cell_worst = max(abs(ri - 1), abs(rl - 1))
                worst = max(worst, cell_worst)
                line = (f"{name:<12} {d:<5} {F:>9.0f} {D:>9.0f} {ri:>6.3f} {pri:>6.3f} {FL / 1000:>9.1f} "
                        f"{DL / 1000:>9.1f} {rl:>6.3f} {prl:>6.3f} {spread(fi):>5.2f}/{spread(di):<5.2f} "
                        f"{fc:>6.2f}/{dc:<6.2f} {lf:>5.3f}/{ld:<5.3f}")
                cell = dict(case=name, dir=d, fio_iops=F, dm_iops=D, iops_ratio=ri, iops_ratio_per_round=pri,
                            fio_lat_ns=FL, dm_lat_ns=DL, lat_ratio=rl, lat_ratio_per_round=prl,
                            fio_cpu_us_per_io=fc, dm_cpu_us_per_io=dc, fio_little=lf, dm_little=ld, runs=runs)
                if throttle:
                    ref = throttle.expected_iops(c["bs"])
                    line += f" {ref:>9.0f} {F / ref:>6.3f} {D / ref:>6.3f}"
                    cell["ref_iops"] = ref
                print(line, flush=True)
                rows.append(line)
                record.append(cell)
        verdict = f"worst deviation from fio: {worst * 100:.1f}% (tolerance {a.tolerance:g}%)"
        print(verdict)
        os.makedirs(a.out, exist_ok=True)
        tag = ("-throttled" if throttle else "") + ("-fio-matched" if a.fio_matched else "")
        base = os.path.join(a.out, f"accuracy-{stamp}{tag}")
        with open(base + ".txt", "w") as f:
            f.write("\n".join(head + rows + [verdict]) + "\n")
        with open(base + ".json", "w") as f:
            json.dump(dict(schema="diskmeter.bench.accuracy.v1", date=stamp, kernel=platform.release(),
                           fio=fio_v, diskmeter=dm_v, mode=mode, rounds=a.rounds, runtime_s=a.runtime,
                           ramp_s=a.ramp, size=a.size, dir=a.dir, fio_matched=a.fio_matched, fio_ramp=a.fio_ramp,
                           fio_example=fio_cmd(a, target, CASES[cases[0]], dirs[0]),
                           dm_example=dm_cmd(a, target, CASES[cases[0]], dirs[0]),
                           cells=record, worst=worst), f, indent=1)
        print(f"saved {base}.txt and .json", file=sys.stderr)
        return 0 if worst * 100 <= a.tolerance else 1
    except KeyboardInterrupt:
        print("accuracy.py: interrupted; nothing saved", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"accuracy.py: {e}", file=sys.stderr)
        return 1
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
