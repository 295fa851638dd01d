#!/usr/bin/env python3
"""A multicast group down to one member port: what stays in the switches' MFTs.

usage: one_member_mft.py IBFAB LEAVER

On `IBFAB serve --topology fat-tree:2:4`, once with the built-in SM and once
with OpenSM (opensm on H1, `--sm none`), a receiver `mckey -m 239.1.1.9 -C 1`
joins on H2, then a member `mckey -m 239.1.1.9 -C 0` joins on LEAVER, is
held (stopped) while the switches are read, and then leaves (H1 shares H2's
leaf; H3 is on another). `ibroute -a
-M` of every switch (what the real switches hold, read by SMP) must show
the group's MLID on the receiver's leaf while both are members, and, once
the member has left, on no switch at all: both SMs drop a group's tree when
fewer than two member ports remain. Passes when both SMs do so.
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


def mft_rows(ibfab, sock, mlid):
    """{switch LID: ports set for mlid} over every switch, read with ibroute -a -M."""
    run = lambda *args: subprocess.run([ibfab, "exec", "--socket", sock, "--node", "H1", "--"] + list(args),  # noqa: E731
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30).stdout
    rows = {}
    for lid in re.findall(r"\blid (\d+)", run("ibswitches")):
        out = run("ibroute", "-a", "-M", lid, hex(mlid), hex(mlid))
        m = re.search(rf"^{hex(mlid)}\s+(.*)$", out, re.MULTILINE | re.IGNORECASE)
        rows[int(lid)] = m[1].count("x") if m else 0
    return rows


def check(ibfab, leaver, opensm):
    name = "OpenSM" if opensm else "the built-in SM"
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OSM_CACHE_DIR"] = tmp
        os.environ["OSM_TMP_DIR"] = tmp
        sock = os.path.join(tmp, "ibfab.sock")
        exec_on = lambda node: [ibfab, "exec", "--socket", sock, "--node", node, "--"]  # noqa: E731
        serve = subprocess.Popen([ibfab, "serve", "--topology", "fat-tree:2:4", "--socket", sock]
                                 + (["--sm", "none"] if opensm else []),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        served = Output(serve.stdout)
        procs = []
        try:
            if not served.wait_for("^ready$", 60):
                print(f"{name}: serve did not get ready")
                return False
            if opensm:
                sm = subprocess.Popen(exec_on("H1") + ["opensm", "-d2", "-f", "/dev/stdout"], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, cwd=tmp)
                procs.append(sm)
                if not Output(sm.stdout).wait_for("SUBNET UP", 60):
                    print(f"{name}: never printed SUBNET UP")
                    return False
            # Under OpenSM the hosts join the IPoIB broadcast group after
            # SUBNET UP; rdma_cm refuses joins (EADDRNOTAVAIL) until then.
            for attempt in range(20):
                receiver = subprocess.Popen(exec_on("H2") + ["stdbuf", "-oL", "mckey", "-m", "239.1.1.9", "-C", "1"],
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                procs.append(receiver)
                rout = Output(receiver.stdout)
                if rout.wait_for("joined dgid", 60):
                    break
                receiver.wait()
                time.sleep(0.5)  # between two attempts; what is waited for is a join that succeeds
            else:
                print(f"{name}: the receiver never joined:\n" + rout.text(1))
                return False
            mlid = int(re.search(r"mlid (0x[0-9a-f]+)", rout.text(0))[1], 16)
            # A process group of its own: the member (ibfab exec and mckey)
            # is stopped once it has joined, so that it is still a member
            # however long reading the switches takes, and continued to
            # leave once they have been read.
            member = subprocess.Popen(exec_on(leaver) + ["stdbuf", "-oL", "mckey", "-m", "239.1.1.9", "-C", "0"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)
            procs.append(member)
            mout = Output(member.stdout)
            if not mout.wait_for("joined dgid", 60):
                print(f"{name}: the member on {leaver} never joined:\n" + mout.text(1))
                return False
            os.killpg(member.pid, signal.SIGSTOP)
            # The SM programs the switches after the join's answer: the
            # tree is read until it shows (each look reads every switch).
            deadline = time.time() + 60
            both = mft_rows(ibfab, sock, mlid)
            while not any(both.values()) and time.time() < deadline:
                both = mft_rows(ibfab, sock, mlid)
            os.killpg(member.pid, signal.SIGCONT)
            if member.wait(timeout=60) != 0:
                print(f"{name}: the member's mckey failed:\n" + mout.text(1))
                return False
            deadline = time.time() + 60
            after = mft_rows(ibfab, sock, mlid)
            while any(after.values()) and time.time() < deadline:
                after = mft_rows(ibfab, sock, mlid)
            print(f"{name}, MLID {hex(mlid)}: ports set per switch LID with two members {both}, "
                  f"after {leaver} left {after}")
            if not any(both.values()):
                print(f"{name}: no MFT entry while the group had two members")
                return False
            if any(after.values()):
                print(f"{name}: entries remain with one member left")
                return False
            return True
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ibfab, leaver = os.path.abspath(sys.argv[1]), sys.argv[2]
    results = [check(ibfab, leaver, opensm) for opensm in (False, True)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
