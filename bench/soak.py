#!/usr/bin/env python3
"""Memory under churn of a served engine (issue 13): RSS before and after.

usage: soak.py IBFAB CHURN LOAD [--cycles N] [--rounds R] [--topology SPEC] [--max-growth-kb K]

Serves TOPOLOGY (default fat-tree:2:4) with the built-in SM, then runs R
rounds (default 4). Each round: two `mcast_churn` processes on H2 and H3
do N/R join/leave cycles each on 8 groups (join 0x1, join 0x9, leave
0x1: OpenSM's MLID-leak pattern, leave 0x8), while four `rdmacm_join_load`
processes on H4..H7 connect, join and leave 4 groups through librdmacm
and exit. The engine's resident size (VmRSS of `ibfab serve`, from
/proc/PID/status) is read after the first round (the warm-up: tables and
pools at their working size) and after the last; the script prints both,
the growth, the cycles in all and cycles/s of the rounds after the first.
With --max-growth-kb it exits 1 when the growth is above K kB (CTest runs
it short that way). `make bench` runs 1,000,000 cycles.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_fabric import Served  # noqa: E402


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def round_of(served, churn, load, cycles, base):
    procs = [served.run(h, churn, str(cycles), "8") for h in ("H2", "H3")]
    procs += [served.run(f"H{4 + i}", load, "4", f"239.1.{base % 200}.{1 + 4 * i}") for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            sys.exit(f"soak: {p.args[-3] if len(p.args) > 3 else p.args} failed: {err.strip() or out.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ibfab")
    ap.add_argument("churn")
    ap.add_argument("load")
    ap.add_argument("--cycles", type=int, default=1_000_000, help="join/leave cycles in all (both churn hosts)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--topology", default="fat-tree:2:4")
    ap.add_argument("--max-growth-kb", type=int)
    a = ap.parse_args()
    if a.rounds < 2 or a.cycles < 2 * a.rounds:
        sys.exit("soak: need --rounds >= 2 and --cycles >= 2 * rounds")
    per_process = a.cycles // (2 * a.rounds)
    served = Served(a.ibfab, a.topology, "builtin")
    try:
        pid = served.engine.pid
        start = rss_kb(pid)
        round_of(served, a.churn, a.load, per_process, 0)
        before = rss_kb(pid)
        t0 = time.monotonic()
        for r in range(1, a.rounds):
            round_of(served, a.churn, a.load, per_process, r)
        took = time.monotonic() - t0
        after = rss_kb(pid)
    finally:
        served.stop()
    cycles = per_process * 2 * a.rounds
    rate = per_process * 2 * (a.rounds - 1) / took
    growth = after - before
    print(f"soak spec={a.topology} cycles={cycles} rss_start_kb={start} rss_before_kb={before} "
          f"rss_after_kb={after} growth_kb={growth} cycles_per_s={rate:.0f}")
    if a.max_growth_kb is not None and growth > a.max_growth_kb:
        print(f"soak: the engine grew by {growth} kB after the warm-up round (allowed {a.max_growth_kb} kB)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
