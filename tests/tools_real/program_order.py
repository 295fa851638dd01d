#!/usr/bin/env python3
"""Program order across channels, with real receivers: what a sender posts
before it leaves its group, destroys its QP or id, or exits, reaches every
receiver.

usage: program_order.py IBFAB ORDER_SENDER TOPOLOGY CASE...

Each CASE is COUNT:THEN[:wait]@SENDER>RECEIVER,RECEIVER... and runs on one
`IBFAB serve --topology TOPOLOGY --rx-grace-us 0` (the built-in SM on H1;
no receive grace: a message that finds no receive posted is dropped, as
on hardware). Its receivers are `mckey -m ADDR -C COUNT` (rdma-core's
example, unmodified), started first; once each has joined, SENDER runs
ORDER_SENDER (send-only join, COUNT sends, then THEN at once: leave,
destroy-qp, destroy-id, exit or umad-leave; with :wait, signalled sends whose
completions it polls first), or `mckey -s -o` when THEN is `mckey`. The
case passes when the sender exits 0 and every receiver prints "data
transfers complete" (it got all COUNT messages) and exits 0 within 60 s;
the engine must then report no message dropped. Cases run one after the
other, each on a group of its own (239.1.2.N).
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served import Output  # noqa: E402


def parse(case):
    m = re.fullmatch(r"(\d+):(leave|destroy-qp|destroy-id|exit|umad-leave|mckey)(:wait)?@(H\d+)>(H\d+(?:,H\d+)*)", case)
    if not m:
        raise SystemExit(f"bad case: {case}")
    return int(m[1]), m[2], bool(m[3]), m[4], m[5].split(",")


def run_case(ibfab, sender_program, sock, tmp, number, case):
    count, then, wait, sender, receivers = parse(case)
    addr = f"239.1.2.{number}"
    exec_on = lambda node: [ibfab, "exec", "--socket", sock, "--node", node, "--"]  # noqa: E731
    procs = []
    try:
        for node in receivers:
            p = subprocess.Popen(exec_on(node) + ["stdbuf", "-oL", "mckey", "-m", addr, "-C", str(count)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
            procs.append((node, p, Output(p.stdout)))
        for node, p, out in procs:
            if not out.wait_for("mckey: joined dgid", 60):
                print(f"{case}: the receiver on {node} never joined:\n" + out.text(5)[-3000:])
                return False
        if then == "mckey":
            program = ["mckey", "-m", addr, "-C", str(count), "-s", "-o"]
        else:
            program = [sender_program, addr, str(count), "100", then] + (["--wait"] if wait else [])
        s = subprocess.run(exec_on(sender) + program, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=90)
        if s.returncode != 0:
            print(f"{case}: the sender on {sender} exited {s.returncode}:\n{s.stdout[-3000:]}")
            return False
        deadline = time.time() + 60
        ok = True
        for node, p, out in procs:
            try:
                status = p.wait(timeout=max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                status = None
            text = out.text(5)
            if status != 0 or "data transfers complete" not in text:
                print(f"{case}: the receiver on {node} " +
                      (f"exited {status}" if status is not None else "did not get every message within 60 s") +
                      ":\n" + text[-2000:])
                ok = False
        if ok:
            print(f"{case}: every receiver ({', '.join(receivers)}) got all {count} messages")
        return ok
    finally:
        for _, p, _ in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    ibfab, sender_program = (os.path.abspath(p) for p in sys.argv[1:3])
    topology = sys.argv[3]
    cases = sys.argv[4:]
    for c in cases:
        parse(c)
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "ibfab.sock")
        serve = subprocess.Popen([ibfab, "serve", "--topology", topology, "--socket", sock, "--rx-grace-us", "0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        served = Output(serve.stdout)
        try:
            if not served.wait_for("^ready$", 60):
                print("serve did not get ready:\n" + served.text(5))
                return 1
            passed = all([run_case(ibfab, sender_program, sock, tmp, i + 1, c) for i, c in enumerate(cases)])
        finally:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()
        log = served.text(5)
        drops = [line for line in log.splitlines() if "dropped" in line]
        if drops:
            print("the engine dropped messages:\n" + "\n".join(drops))
            passed = False
        if not passed:
            print("the engine's log, last lines:\n" + "\n".join(log.splitlines()[-30:]))
            return 1
        print(f"{len(cases)} case(s) passed")
        return 0


if __name__ == "__main__":
    sys.exit(main())
