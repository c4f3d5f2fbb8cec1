#!/usr/bin/env python3
"""Summarise a bench/sla/run.sh directory: best feasible IOPS and search time of each
adaptive search and exhaustive run, their ratios, and fio's latency_target result."""
import glob, json, os, sys, statistics

d = sys.argv[1]

def load(kind):
    rows = []
    for p in sorted(glob.glob(os.path.join(d, f"{kind}-*.json"))):
        s = json.load(open(p))["sla"]
        b = s.get("best") or {}
        rows.append((os.path.basename(p), b.get("iops", 0.0), b.get("qd"), b.get("threads"),
                     b.get("metric_ns", 0.0), s["search_seconds"], len(s["points"])))
    return rows

search, exh = load("search"), load("exhaustive")
for name, rows in (("search", search), ("exhaustive", exh)):
    for f, iops, qd, t, m, secs, n in rows:
        print(f"{f:18} best {iops:10.0f} IOPS at QD {qd} x {t} (stat {m/1e3:7.1f} us)  {n:2d} points  {secs:6.1f} s")
if search and exh:
    si = statistics.median(r[1] for r in search)
    ei = statistics.median(r[1] for r in exh)
    ss = statistics.median(r[5] for r in search)
    es = statistics.median(r[5] for r in exh)
    print(f"median: search {si:.0f} IOPS in {ss:.0f} s; exhaustive {ei:.0f} IOPS in {es:.0f} s")
    print(f"search/exhaustive: IOPS {si/ei:.3f} (need >= 0.95), time {ss/es:.3f} (need <= 0.40)")
    worst = min(r[1] for r in search) / max(r[1] for r in exh)
    print(f"worst pairing: slowest search / best exhaustive = {worst:.3f}")
# The two picks measured again, interleaved (run.sh's REMEASURE): the fair quality ratio.
def remeasured(who):
    out = []
    for p in sorted(glob.glob(os.path.join(d, f"remeasure-{who}-*.json"))):
        r = json.load(open(p))["results"][0]
        rd = r.get("read") or {}
        out.append((rd.get("iops", 0.0), rd.get("lat_ns", {}).get("p99", 0.0), r["spec"].get("qd"), r["spec"].get("threads")))
    return out

rs, re_ = remeasured("search"), remeasured("exhaustive")
if rs and re_:
    ms, me = statistics.median(x[0] for x in rs), statistics.median(x[0] for x in re_)
    ps, pe = statistics.median(x[1] for x in rs), statistics.median(x[1] for x in re_)
    print(f"re-measured, interleaved x{len(rs)}: search's pick QD {rs[0][2]} x {rs[0][3]} {ms:.0f} IOPS "
          f"(p99 {ps/1e3:.1f} us); exhaustive's pick QD {re_[0][2]} x {re_[0][3]} {me:.0f} IOPS (p99 {pe/1e3:.1f} us)")
    print(f"re-measured search/exhaustive: IOPS {ms/me:.3f} (need >= 0.95)")

fp = os.path.join(d, "fio.json")
if os.path.exists(fp):
    try:
        j = json.load(open(fp))
        job = j["jobs"][0]
        rd = job["read"]
        print(f"fio latency_target: {rd['iops']:.0f} IOPS overall, mean {rd['clat_ns']['mean']/1e3:.1f} us, "
              f"p99 {rd['clat_ns']['percentile'].get('99.000000', 0)/1e3:.1f} us, "
              f"latency_depth {job.get('latency_depth')}, target {job.get('latency_target')} ns, "
              f"percentile {job.get('latency_percentile')}, window {job.get('latency_window')} us")
    except Exception as e:  # fio missing fields or failed
        print(f"fio: could not read {fp}: {e}")
