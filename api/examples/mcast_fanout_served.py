#!/usr/bin/env python3
"""Runs mcast_fanout served: one process per role on its own host.

usage: mcast_fanout_served.py IBFAB MCAST_FANOUT [COUNT]

Starts `IBFAB serve --topology fat-tree:2:4` on a private socket and waits
for its "ready"; starts `mcast_fanout --role recv` on H2 and H7 (under
different leaf switches) and waits for each one's "ready" line; then runs
`mcast_fanout --role send` on H4. Passes when all three exit 0.
"""
import os
import subprocess
import sys
import tempfile
import time

TOPOLOGY = "fat-tree:2:4"
RECEIVERS = ["H2", "H7"]
SENDER = "H4"
TIMEOUT_S = 60


def wait_for_line(process, prefix, deadline):
    """Reads `process`'s output until a line starts with `prefix`; returns
    the lines read, the last one matching, or None on EOF or timeout."""
    lines = []
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith(prefix):
            return lines
    print("".join(lines), end="")
    return None


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    ibfab, program = sys.argv[1], os.path.abspath(sys.argv[2])
    count = sys.argv[3] if len(sys.argv) == 4 else "1000"
    deadline = time.time() + TIMEOUT_S
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "ibfab.sock")
        serve = subprocess.Popen([ibfab, "serve", "--topology", TOPOLOGY, "--socket", sock],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started = []
        try:
            if wait_for_line(serve, "ready", deadline) is None:
                print("ibfab serve did not get ready")
                return 1

            def run(node, role):
                p = subprocess.Popen([ibfab, "exec", "--socket", sock, "--node", node, "--",
                                      program, "--role", role, "--count", count],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                started.append((f"{role} on {node}", p))
                return p

            receivers = [run(node, "recv") for node in RECEIVERS]
            for node, r in zip(RECEIVERS, receivers):
                lines = wait_for_line(r, "ready", deadline)
                if lines is None:
                    print(f"the receiver on {node} never got ready")
                    return 1
                print(f"{node}: {lines[-1]}", end="")
            run(SENDER, "send")
            failed = 0
            for name, p in started:
                out, _ = p.communicate(timeout=max(1, deadline - time.time()))
                print(f"{name}: exit {p.returncode}\n{out}", end="")
                failed += p.returncode != 0
            if failed:
                print(f"{failed} of {len(started)} processes failed")
                return 1
            print("mcast_fanout served: every receiver got every message")
            return 0
        finally:
            for _, p in started:
                stop(p)
            stop(serve)


if __name__ == "__main__":
    sys.exit(main())
