#!/usr/bin/env python3
"""SA GetTable figures in served mode (issue 12), wall time, against OpenSM.

usage: sa_tables.py IBFAB [--topology SPEC] [--runs R] [--query ARG]...

Starts `IBFAB serve` with the built-in SM, then again with OpenSM 3.3.23 as
the SM (`--sm none` + opensm on H1: the anchor, in the same run), and each
time runs `saquery ARG` from H2 R times (default 11; the default queries
are `-x`, every LinkRecord, a GetTable answered through RMPP, and `-c`,
the SA's ClassPortInfo, one MAD each way: the fixed cost of a run). Each run is
timed as a whole process (`ibfab exec` included), and its records are
counted; both SAs must give the same count. Prints the median and the
spread of both and their ratio.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_fabric import Served  # noqa: E402


def query(served, args):
    """Runs `saquery args` on H2: (wall seconds, records printed)."""
    start = time.perf_counter()
    p = served.run("H2", "saquery", *args)
    out, err = p.communicate(timeout=300)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"saquery {' '.join(args)} failed: {err[-500:]}")
    return elapsed, out.count("Record dump") or out.count("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ibfab")
    ap.add_argument("--topology", default="fat-tree:3:24")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--query", action="append", default=None)
    a = ap.parse_args()
    queries = a.query or ["-x", "-c"]
    results = {}
    for sm in ("builtin", "opensm"):
        s = Served(os.path.abspath(a.ibfab), a.topology, sm)
        try:
            for q in queries:
                times, counts = [], set()
                for _ in range(a.runs):
                    t, n = query(s, q.split())
                    times.append(t)
                    counts.add(n)
                results[(sm, q)] = (times, counts)
        finally:
            s.stop()
    print(f"saquery on {a.topology}, {a.runs} runs each, whole process (ibfab exec + saquery), wall time")
    status = 0
    for q in queries:
        b, bc = results[("builtin", q)]
        o, oc = results[("opensm", q)]
        mb, mo = statistics.median(b), statistics.median(o)
        print(f"  saquery {q}: built-in SA {mb * 1000:.1f} ms (min {min(b) * 1000:.1f}, max {max(b) * 1000:.1f}), "
              f"OpenSM's SA {mo * 1000:.1f} ms (min {min(o) * 1000:.1f}, max {max(o) * 1000:.1f}); "
              f"ratio {mo / mb:.2f}x; records {sorted(bc)} / {sorted(oc)}")
        if bc != oc:
            print("  the two SAs gave different record counts")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
