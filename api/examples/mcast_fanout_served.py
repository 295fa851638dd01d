#!/usr/bin/env python3
"""Runs mcast_fanout served: one process per role on its own host.

usage: mcast_fanout_served.py IBFAB MCAST_FANOUT [--topology SPEC] [--sender HOST]
                              [--receivers HOST,HOST...] [MCAST_FANOUT_ARGS...]

Starts `IBFAB serve --topology SPEC` (fat-tree:2:4) on a private socket and
waits for its "ready"; starts `mcast_fanout --role recv MCAST_FANOUT_ARGS`
on each receiver host (H2 and H7, under different leaf switches) and waits
for each one's "ready" line; then runs `mcast_fanout --role send
MCAST_FANOUT_ARGS` on the sender host (H4), with `--to LID:QPN,...` from
the receivers' "ready" lines when MCAST_FANOUT_ARGS hold `--mode unicast`.
Passes when all of them exit 0, every receiver says it got every message,
and the source each receiver saw (LID and QPN) is the sender's, as the
sender prints them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 120


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
    parser = argparse.ArgumentParser(usage=__doc__, allow_abbrev=False)
    parser.add_argument("ibfab")
    parser.add_argument("program")
    parser.add_argument("--topology", default="fat-tree:2:4")
    parser.add_argument("--sender", default="H4")
    parser.add_argument("--receivers", default="H2,H7")
    args, passed = parser.parse_known_args()
    program = os.path.abspath(args.program)
    receiver_hosts = args.receivers.split(",")
    unicast = any(a == "--mode" and b == "unicast" for a, b in zip(passed, passed[1:]))
    deadline = time.time() + TIMEOUT_S
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "ibfab.sock")
        serve = subprocess.Popen([args.ibfab, "serve", "--topology", args.topology, "--socket", sock],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started = []
        try:
            if wait_for_line(serve, "ready", deadline) is None:
                print("ibfab serve did not get ready")
                return 1

            def run(node, role, extra=()):
                p = subprocess.Popen([args.ibfab, "exec", "--socket", sock, "--node", node, "--",
                                      program, "--role", role] + passed + list(extra),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                started.append((f"{role} on {node}", p))
                return p

            receivers = [run(node, "recv") for node in receiver_hosts]
            peers = []
            for node, r in zip(receiver_hosts, receivers):
                lines = wait_for_line(r, "ready", deadline)
                if lines is None:
                    print(f"the receiver on {node} never got ready")
                    return 1
                print(f"{node}: {lines[-1]}", end="")
                m = re.search(r"LID (\d+) QPN (0x[0-9a-f]+)", lines[-1])
                peers.append(f"{m.group(1)}:{m.group(2)}")
            run(args.sender, "send", ["--to", ",".join(peers)] if unicast else [])
            failed = 0
            outputs = {}
            for name, p in started:
                out, _ = p.communicate(timeout=max(1, deadline - time.time()))
                print(f"{name}: exit {p.returncode}\n{out}", end="")
                outputs[name] = out
                failed += p.returncode != 0
            if failed:
                print(f"{failed} of {len(started)} processes failed")
                return 1
            sent = re.search(r"^send \S+ \(LID (\d+) QPN (0x[0-9a-f]+)\)", outputs[f"send on {args.sender}"], re.M)
            for node in receiver_hosts:
                got = re.search(r"^recv .*; from LID (\d+) QPN (0x[0-9a-f]+): all received, exactly once, in order$",
                                outputs[f"recv on {node}"], re.M)
                if not sent or not got or got.groups() != sent.groups():
                    print(f"the receiver on {node} did not get every message from the sender "
                          f"(LID {sent.group(1) if sent else '?'} QPN {sent.group(2) if sent else '?'})")
                    return 1
            print("mcast_fanout served: every receiver got every message, from the sender")
            return 0
        finally:
            for _, p in started:
                stop(p)
            stop(serve)


if __name__ == "__main__":
    sys.exit(main())
