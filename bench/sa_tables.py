#!/usr/bin/env python3
"""SA GetTable figures in served mode (issue 12), wall time, against OpenSM.

usage: sa_tables.py IBFAB [--topology SPEC] [--runs R] [--query ARG]...

Starts `IBFAB serve` with the built-in SM, then again with OpenSM 3.3.23 as
the SM (`--sm none` + opensm on H1: the anchor, in the same run), and each
time runs `saquery ARG` from H2 R times (default 11; the default query is
`-x`, every LinkRecord, a GetTable answered through RMPP). Each run is
timed as a whole process (`ibfab exec` included), and its records are
counted; both SAs must give the same count. Prints the median and the
spread of both and their ratio.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


class Served:
    def __init__(self, ibfab, topology, sm):
        self.dir = tempfile.mkdtemp(prefix="ibfab-sa-")
        self.sock = os.path.join(self.dir, "ibfab.sock")
        self.ibfab = ibfab
        args = [ibfab, "serve", "--topology", topology, "--socket", self.sock]
        if sm == "opensm":
            args += ["--sm", "none"]
        self.engine = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in self.engine.stdout:
            if line.strip() == "ready":
                break
        self.opensm = None
        if sm == "opensm":
            env = dict(os.environ, OSM_CACHE_DIR=self.dir, OSM_TMP_DIR=self.dir)
            log = os.path.join(self.dir, "osm.log")
            self.opensm = subprocess.Popen(
                [ibfab, "exec", "--node", "H1", "--socket", self.sock, "--", "opensm", "-f", log],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            deadline = time.time() + 120
            while time.time() < deadline and not (os.path.exists(log) and "SUBNET UP" in open(log).read()):
                time.sleep(0.2)
            time.sleep(2)

    def query(self, args):
        start = time.perf_counter()
        out = subprocess.run([self.ibfab, "exec", "--node", "H2", "--socket", self.sock, "--", "saquery", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        elapsed = time.perf_counter() - start
        if out.returncode != 0:
            raise SystemExit(f"saquery {' '.join(args)} failed: {out.stderr[-500:]}")
        return elapsed, out.stdout.count("Record dump") or out.stdout.count("\n")

    def close(self):
        for p in (self.opensm, self.engine):
            if p:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ibfab")
    ap.add_argument("--topology", default="fat-tree:3:24")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--query", action="append", default=None)
    a = ap.parse_args()
    queries = a.query or ["-x"]
    results = {}
    for sm in ("builtin", "opensm"):
        s = Served(os.path.abspath(a.ibfab), a.topology, sm)
        try:
            for q in queries:
                times, counts = [], set()
                for _ in range(a.runs):
                    t, n = s.query(q.split())
                    times.append(t)
                    counts.add(n)
                results[(sm, q)] = (times, counts)
        finally:
            s.close()
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
