#!/usr/bin/env python3
"""A normal client's SA query latency while N other clients flood the engine
(issue 13, fairness), wall time, served mode.

usage: served_fairness.py IBFAB FLOOD_CLIENT SA_LATENCY [--counts 0,1,4,16,64]
                          [--queries Q] [--mode requests|mads|events]... [--topology SPEC]

For each mode and each N in --counts, starts `IBFAB serve` (built-in SM),
then N flood_client processes in that mode (tests/tools_real/flood_client.cpp:
`requests` sends ListHosts requests and never reads the answers, `mads`
sends SA GetTables on a MAD port and never reads the answers, `events` makes
rdma_cm ids through librdmacm and never reads their events; each connects
again whenever the engine drops it), then runs sa_latency Q on H2 (Q SA
GetTables of MCMemberRecords, one at a time, as `saquery -g` sends; each
timed from umad_send to umad_recv, 1 s timeout, no retry). N = 0 is the
anchor, in the same run. Prints, per mode and N, the median, 99th percentile
and maximum latency, the queries that failed, and the engine's peak resident
size (VmHWM).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_fabric import Served  # noqa: E402


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def measure(a, mode, n):
    """(median, p99, max, failed, peak MiB) with N clients flooding in MODE."""
    s = Served(os.path.abspath(a.ibfab), a.topology, "builtin")
    flood = []
    try:
        for i in range(n):
            node = f"H{3 + i % 6}"
            env = dict(os.environ, IBFAB_SOCKET=s.sock, IBFAB_NODE=node,  # the drop-in libraries (events)
                       LD_LIBRARY_PATH=os.path.join(os.path.dirname(os.path.abspath(a.ibfab)), "..", "lib"))
            p = subprocess.Popen([a.flood_client, s.sock, node, mode], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True, env=env)
            flood.append(p)
        for p in flood:
            if p.stdout.readline().strip() != "flooding":
                raise SystemExit(f"a flood client ({mode}) did not start")
        p = s.run("H2", a.sa_latency, str(a.queries))
        out, err = p.communicate(timeout=600)
        m = re.search(r"^sa_latency: \d+ queries, (\d+) failed, median ([\d.]+) ms, p99 ([\d.]+) ms, max ([\d.]+) ms$",
                      out, re.MULTILINE)
        if not m:
            raise SystemExit(f"sa_latency printed no summary:\n{out[-1000:]}{err[-1000:]}")
        return (float(m.group(2)), float(m.group(3)), float(m.group(4)), int(m.group(1)),
                peak_rss_mib(s.engine.pid))
    finally:
        for p in flood:
            p.kill()
            p.wait()
        s.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ibfab")
    ap.add_argument("flood_client")
    ap.add_argument("sa_latency")
    ap.add_argument("--counts", default="0,1,4,16,64")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--mode", action="append", choices=["requests", "mads", "events"], default=None)
    ap.add_argument("--topology", default="fat-tree:2:4")
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    print(f"a normal client's SA GetTable (MCMemberRecord) on {a.topology}, {a.queries} queries, "
          f"while N clients flood the engine; wall time")
    print(f"{'mode':<9} {'N':>3} {'median ms':>10} {'p99 ms':>8} {'max ms':>8} {'failed':>6} {'engine peak MiB':>16}")
    for mode in a.mode or ["requests", "mads", "events"]:
        for n in counts:
            med, p99, worst, failed, peak = measure(a, mode, n)
            print(f"{mode:<9} {n:>3} {med:>10.3f} {p99:>8.3f} {worst:>8.3f} {failed:>6} {peak:>16.1f}", flush=True)


if __name__ == "__main__":
    main()
