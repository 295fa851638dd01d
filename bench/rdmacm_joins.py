#!/usr/bin/env python3
"""rdma_cm join figures in served mode (issue 6), wall time.

usage: rdmacm_joins.py IBFAB LOAD [--topology SPEC] [--processes N] [--groups G] [--runs R]
                        [--sm builtin,opensm]

Starts `IBFAB serve` with the built-in SM, then again with OpenSM 3.3.23
as the SM (`--sm none` + opensm on H1: the same workload against the
anchor's SA, in the same run), and each time:
  latency:    one process (rdmacm_join_load, through ibfab's librdmacm)
              joins 200 groups one after another; each join is timed from
              rdma_join_multicast_ex to its MULTICAST_JOIN event;
  throughput: N processes (default 64), each on its own host, start
              together and each join the same G groups (default 16) one
              after another; joins/s = N*G / (last end - first start).
Prints the median and p99 join latency of both, and the median joins/s
over R runs (default 3).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_fabric import Served  # noqa: E402


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def collect(procs):
    joins, spans = [], []
    for p in procs:
        out, err = p.communicate(timeout=300)
        if p.returncode != 0:
            sys.exit("rdmacm_join_load failed: " + err.strip())
        for line in out.splitlines():
            f = line.split()
            if f[0] == "join":
                joins.append(float(f[1]))
            elif f[0] == "span":
                spans.append((int(f[1]), int(f[2])))
    return joins, spans


def measure(a, sm):
    """(single-process join latencies, loaded latencies, joins/s per run) with `sm`'s SA."""
    served = Served(a.ibfab, a.topology, sm)
    try:
        single = []
        for run in range(a.runs):
            joins, _ = collect([served.run("H2", a.load, "200", "239.10.%d.1" % run)])
            single += joins
        rates, loaded = [], []
        for run in range(a.runs):
            start_at = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 1_500_000_000
            procs = [served.run("H%d" % (i + 1), a.load, str(a.groups), "239.20.%d.1" % run, str(start_at))
                     for i in range(a.processes)]
            joins, spans = collect(procs)
            loaded += joins
            seconds = (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e9
            rates.append(len(joins) / seconds)
        return single, loaded, rates
    finally:
        served.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ibfab")
    ap.add_argument("load")
    ap.add_argument("--topology", default="fat-tree:2:16")
    ap.add_argument("--processes", type=int, default=64)
    ap.add_argument("--groups", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sm", default="builtin,opensm", help="builtin, opensm, or both (the anchor) in one run")
    a = ap.parse_args()
    results = {}
    for sm in a.sm.split(","):
        single, loaded, rates = measure(a, sm)
        results[sm] = (statistics.median(single), statistics.median(rates))
        print("rdma_cm joins, served, %s, SA: %s" % (a.topology, "OpenSM 3.3.23" if sm == "opensm" else "built-in"))
        print("  one process, %d joins: median %.1f us, p99 %.1f us" %
              (len(single), statistics.median(single), percentile(single, 99)))
        print("  %d processes x %d groups: median %.0f joins/s over %d runs (%s); join latency median %.1f us, p99 %.1f us" %
              (a.processes, a.groups, statistics.median(rates), a.runs, ", ".join("%.0f" % r for r in rates),
               statistics.median(loaded), percentile(loaded, 99)))
        sys.stdout.flush()
    if "builtin" in results and "opensm" in results:
        print("  built-in SA against OpenSM's: join latency %.2fx lower, joins/s %.2fx higher" %
              (results["opensm"][0] / results["builtin"][0], results["builtin"][1] / results["opensm"][1]))


if __name__ == "__main__":
    main()
