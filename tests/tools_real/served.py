#!/usr/bin/env python3
"""Runs one real Debian program against `ibfab serve` and checks its output.

usage: served.py IBFAB TOPOLOGY NODE EXPECT_REGEX [--sm-none] [--copies N] [--pcap-expect REGEX]
                 [--count REGEX N]
                 [--background BGNODE BGPROGRAM... --wait-for REGEX] -- PROGRAM ARGS...

Starts `IBFAB serve --topology TOPOLOGY` on a private socket (with
`--sm none` for --sm-none), waits for "ready", optionally starts BGPROGRAM
under `IBFAB exec --node BGNODE` and waits until its output matches REGEX
(e.g. opensm's "SUBNET UP"), runs PROGRAM under `IBFAB exec --node NODE`,
and passes when the program exits 0 and its output matches every
EXPECT_REGEX (separated by '|||'). With --pcap-expect, the engine captures
every packet (serve --pcap) and tshark's reading of the capture, once the
engine has stopped, must match REGEX. With --count, exactly N lines of the
output must match REGEX. With --copies N, N copies of PROGRAM run
at once, on the hosts of NODE (a comma-separated list) in turn, and each
must pass. Everything is stopped with SIGTERM afterwards.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def main():
    if "--" not in sys.argv or len(sys.argv) < 6:
        print(__doc__)
        return 2
    split = sys.argv.index("--")
    ibfab, topology, node, expect = sys.argv[1:5]
    options = sys.argv[5:split]
    program = sys.argv[split + 1:]
    sm_none = "--sm-none" in options
    copies = int(options[options.index("--copies") + 1]) if "--copies" in options else 1
    pcap_expect = options[options.index("--pcap-expect") + 1] if "--pcap-expect" in options else None
    count = None
    if "--count" in options:
        c = options.index("--count")
        count = (options[c + 1], int(options[c + 2]))
    nodes = node.split(",")
    background, wait_for = None, None
    if "--background" in options:
        b = options.index("--background")
        w = options.index("--wait-for")
        background = options[b + 1:w]
        wait_for = options[w + 1]
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "ibfab.sock")
        capture = os.path.join(tmp, "capture.erf")
        serve = subprocess.Popen([ibfab, "serve", "--topology", topology, "--socket", sock]
                                 + (["--sm", "none"] if sm_none else [])
                                 + (["--pcap", capture] if pcap_expect else []),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 60
            lines = []
            while time.time() < deadline:
                line = serve.stdout.readline()
                if not line:
                    break
                lines.append(line)
                if line.strip() == "ready":
                    break
            else:
                print("serve did not get ready:\n" + "".join(lines))
                return 1
            if not lines or lines[-1].strip() != "ready":
                print("serve did not get ready:\n" + "".join(lines))
                return 1
            bg = None
            if background:
                bg = subprocess.Popen([ibfab, "exec", "--socket", sock, "--node", background[0], "--"] + background[1:],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
                seen = []
                deadline = time.time() + 60
                while time.time() < deadline:
                    line = bg.stdout.readline()
                    if not line:
                        break
                    seen.append(line)
                    if re.search(wait_for, line):
                        break
                else:
                    seen.append("(timed out)\n")
                if not seen or not re.search(wait_for, seen[-1]):
                    print(f"{background[1]} never printed {wait_for}:\n" + "".join(seen[-30:]))
                    bg.kill()
                    return 1
            runs = [subprocess.Popen([ibfab, "exec", "--socket", sock, "--node", nodes[i % len(nodes)], "--"] + program,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    for i in range(copies)]
            outputs = [r.communicate(timeout=120)[0] for r in runs]
            if bg:
                bg.send_signal(signal.SIGTERM)
                try:
                    bg.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    bg.kill()
            for r, out in zip(runs, outputs):
                if r.returncode != 0:
                    print(out[-20000:])
                    print(f"{program[0]} exited {r.returncode}")
                    return 1
                for pattern in expect.split("|||"):
                    if not re.search(pattern, out, re.MULTILINE):
                        print(out[-20000:])
                        print(f"output does not match: {pattern}")
                        return 1
            if count:
                got = sum(1 for line in outputs[0].splitlines() if re.search(count[0], line))
                if got != count[1]:
                    print(outputs[0][-20000:])
                    print(f"{got} lines match {count[0]}, not {count[1]}")
                    return 1
            print(outputs[0][-20000:])
            print(f"{copies} run(s) passed")
            if pcap_expect:
                serve.send_signal(signal.SIGTERM)
                serve.wait(timeout=10)
                read = subprocess.run(["tshark", "-r", capture], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, timeout=120)
                if not re.search(pcap_expect, read.stdout, re.MULTILINE):
                    print(read.stdout[-5000:])
                    print(f"the capture does not show: {pcap_expect}")
                    return 1
                print("the capture shows it")
            return 0
        finally:
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()


if __name__ == "__main__":
    sys.exit(main())
