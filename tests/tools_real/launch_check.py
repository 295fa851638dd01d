#!/usr/bin/env python3
"""`ibfab launch` as an application's test runs it: real programs on named
hosts of a fabric, and the cases that must fail, each with its exit status,
its message, and nothing left behind.

usage: launch_check.py IBFAB CASE

Each case runs `IBFAB launch ...` with TMPDIR set to a fresh directory and
checks (1) the exit status, (2) that the output matches every expected
regular expression, and (3) that nothing is left: the directory is empty
again (the engine's socket and its private directory are gone) and no
process has it in its environment or command line (the engine, the
programs and their children). Exit status 0 when every check passes, 1
when one fails, 2 on bad usage.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

T2 = ["--topology", "fat-tree:2:4", "--timeout", "60"]
T3 = ["--topology", "fat-tree:3:4", "--timeout", "60"]  # 16 hosts, 4 pods: H1 and H16 meet at a spine
SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios")

# name: (launch arguments, exit status, [patterns]); patterns use (?s) where
# they span lines.
CASES = {
    # RC send bandwidth, the server on the SM's host, same leaf.
    "perftest_send_bw": (
        T2 + ["--", "H1", "--ready-port", "18515", "ib_send_bw", "-d", "ibfab0", ":",
              "H2", "ib_send_bw", "-d", "ibfab0", "{H1}"],
        0, [r"\[H2\] +65536 +1000 ", r"\[H1\] +65536 +1000 ", r"ibfab launch: passed: 2 programs"]),
    # RC write latency across the spines, the server away from the SM's host.
    "perftest_write_lat_spines": (
        T3 + ["--", "H16", "--ready-port", "18515", "ib_write_lat", "-d", "ibfab0", "-n", "200", ":",
              "H1", "ib_write_lat", "-d", "ibfab0", "-n", "200", "{H16}"],
        0, [r"\[H1\] +2 +200 ", r"passed: 2 programs"]),
    # ibv_rc_pingpong with one message and with thousands.
    "rc_pingpong_1": (
        T2 + ["--", "H3", "--ready-port", "18515", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "1", ":",
              "H7", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "1", "{H3}"],
        0, [r"\[H7\] \d+ bytes in [0-9.]+ seconds", r"\[H3\] \d+ bytes in"]),
    "rc_pingpong_5000": (
        T2 + ["--", "H3", "--ready-port", "18515", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "5000", ":",
              "H7", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "5000", "{H3}"],
        0, [r"\[H7\] 40960000 bytes in", r"\[H7\] 5000 iters in"]),
    # UD ping-pong, the client on the SM's host.
    "ud_pingpong": (
        T2 + ["--", "H8", "--ready-port", "18515", "ibv_ud_pingpong", "-d", "ibfab0", "-n", "100", ":",
              "H1", "ibv_ud_pingpong", "-d", "ibfab0", "-n", "100", "{H8}"],
        0, [r"\[H1\] 100 iters in"]),
    # rdma_cm: rdma_server listens on 7471.
    "rdma_cm_server_client": (
        T2 + ["--", "H2", "--ready-port", "7471", "rdma_server", ":", "H5", "rdma_client", "-s", "{H2}"],
        0, [r"\[H5\] rdma_client: end 0", r"\[H2\] rdma_server: end 0"]),
    # RC connected by rdma_cm (REQ, REP, RTU): the server listens with an
    # rdma_cm id, no TCP socket. (Not perftest's -R: its client is at times
    # rejected with reason 8 after its server listens, which the served -R
    # tests in CMakeLists.txt retry, and then uses an id it destroyed.)
    "ucmatose_rdma_cm": (
        T2 + ["--", "H6", "--ready-port", "7471", "ucmatose", ":", "H3", "ucmatose", "-s", "{H6}"],
        0, [r"\[H3\] data transfers complete", r"\[H6\] return status 0", r"\[H3\] return status 0"]),
    # In the machine's own namespaces (a container that allows no new
    # ones): rdma_cm still resolves the hosts' addresses through the engine.
    "no_device_view": (
        T2 + ["--no-device-view", "--", "H2", "--ready-port", "7471", "rdma_server", ":",
              "H3", "rdma_client", "-s", "{H2}"],
        0, [r"\[H3\] rdma_client: end 0", r"passed: 2 programs"]),
    # Multicast: two receivers on two leaves join first, then the sender.
    "mckey_two_receivers": (
        T2 + ["--", "H2", "--ready-line", "joined", "mckey", "-m", "239.1.1.9", "-b", "{H2}", "-C", "20", ":",
              "H6", "--ready-line", "joined", "mckey", "-m", "239.1.1.9", "-b", "{H6}", "-C", "20", ":",
              "H1", "mckey", "-m", "239.1.1.9", "-b", "{H1}", "-C", "20", "-s"],
        0, [r"\[H2\] receiving data transfers", r"\[H6\] data transfers complete", r"passed: 3 programs"]),
    # A server that never ends by itself, stopped once the client passed.
    "background_server": (
        T2 + ["--", "H4", "--background", "--ready-line", "joined", "mckey", "-m", "239.1.1.7", "-b", "{H4}",
              "-C", "1000", ":", "H5", "mckey", "-m", "239.1.1.7", "-b", "{H5}", "-C", "5", "-s"],
        0, [r"\[H5\] return status 0", r"passed: 2 programs"]),
    # A client that fails: its host and status are named, the server is stopped.
    "failing_client": (
        T2 + ["--", "H1", "--ready-port", "18515", "ib_send_bw", "-d", "ibfab0", ":",
              "H2", "ib_send_bw", "-d", "ibfab0", "-p", "18516", "{H1}"],
        1, [r"^ibfab launch: H2 failed: exited with status 1 \(expected 0\)$", r"^ibfab launch: stopped [a-z, ]*H1$"]),
    "expected_status": (
        T2 + ["--", "H1", "--exit", "3", "sh", "-c", "exit 3"], 0, [r"passed: 1 program"]),
    # Faults: the host's own cable fails under an RC ping-pong (the HCA's
    # retries run out, the program fails and launch says which host) ...
    "fault_host_link_down": (
        T2 + ["--fault", "500ms link-down H1[1]", "--", "H3", "--ready-port", "18515", "ibv_rc_pingpong", "-d",
              "ibfab0", "-n", "1000000", ":", "H1", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "1000000", "{H3}"],
        1, [r"\[fabric\] ibfab: fault at 500ms: link-down H1\[1\]", r"transport retry counter exceeded",
            r"ibfab launch: H[13] failed: exited with status 1 \(expected 0\)"]),
    # ... a leaf's cable to a spine fails while traffic flows: the SM
    # re-routes and the programs pass ...
    "fault_reroute": (
        T2 + ["--fabric-log", "--fault", "300ms link-down L1[3]", "--", "H3", "--ready-port", "18515",
              "ibv_rc_pingpong", "-d", "ibfab0", "-n", "20000", ":",
              "H1", "ibv_rc_pingpong", "-d", "ibfab0", "-n", "20000", "{H3}"],
        0, [r"\[fabric\] ibfab: fault at 300ms: link-down L1\[3\]", r"\[H1\] 20000 iters in", r"passed: 2 programs"]),
    # ... and a scenario's fabric and link actions (fat-tree:2:8, L5[5] down at 1 s).
    "fault_from_scenario": (
        ["--scenario", SCENARIOS + "/link-failure-reroute.yaml", "--timeout", "60", "--fabric-log", "--",
         "H17", "sleep", "1.5"],
        0, [r"\[fabric\] ibfab: fault at 1s: link-down L5\[5\]", r"passed: 1 program"]),
    "fault_bad_link": (T2 + ["--fault", "1s link-down L9[9]", "--", "H1", "true"], 2,
                       [r"the fabric did not start", r"\[fabric\] .*L9\[9\]"]),
    "fault_bad_text": (T2 + ["--fault", "soon link-down L1[3]", "--", "H1", "true"], 2, [r"^ibfab: --fault 'soon link-down"]),
    # Bad input: one line naming the host and the cause, exit status 2.
    "unknown_host": (T2 + ["--", "H99", "true"], 2, [r"^ibfab: H99: no such host in the fabric$"]),
    "program_not_found": (T2 + ["--", "H1", "true", ":", "H2", "no-such-program-here"], 2,
                          [r"^ibfab: H2: program 'no-such-program-here' not found \(PATH\)$"]),
    "fabric_cannot_start": (T2 + ["--partitions", "/nonexistent/partitions.conf", "--", "H1", "true"], 2,
                            [r"ibfab launch: the fabric did not start: exited with status 2",
                             r"\[fabric\] .*/nonexistent/partitions.conf"]),
    "bad_program_words": (T2 + ["--", "H1", "--ready-port", "x", "true"], 2, [r"H1: --ready-port 'x' is no TCP port"]),
    # A readiness line that never comes: the timeout names it.
    "never_ready": (
        ["--topology", "fat-tree:2:4", "--timeout", "3", "--", "H1", "--ready-line", "never printed", "sleep", "60", ":", "H2", "true"],
        1, [r"ibfab launch: timed out after 3 s; H1 was not ready \(no line with 'never printed'\)$", r"^ibfab launch: stopped fabric, H1$"]),
}


def leftovers(tmp):
    """Processes that still refer to `tmp` (environment or command line)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    if tmp.encode() in f.read():
                        found.append(pid)
                        break
            except OSError:
                pass
    return found


def run_case(ibfab, name):
    if name == "interrupted":
        return run_interrupted(ibfab)
    args, want, patterns = CASES[name]
    with tempfile.TemporaryDirectory(prefix="launch-check-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        run = subprocess.run([ibfab, "launch"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", env=env, timeout=240)
        print(run.stdout)
        failures = []
        if run.returncode != want:
            failures.append(f"exit status {run.returncode}, not {want}")
        for p in patterns:
            if not re.search(p, run.stdout, re.MULTILINE):
                failures.append(f"the output does not match: {p}")
        failures += check_nothing_left(tmp)
    return failures


def check_nothing_left(tmp):
    failures = []
    left = os.listdir(tmp)
    if left:
        failures.append(f"left in TMPDIR: {left}")
    # Give exiting processes a moment to be gone from /proc.
    for _ in range(50):
        pids = leftovers(tmp)
        if not pids:
            break
        time.sleep(0.1)
    if pids:
        failures.append(f"processes left running: {pids}")
    return failures


def run_interrupted(ibfab):
    """SIGTERM to the launcher while its programs run: all are stopped, exit 1."""
    with tempfile.TemporaryDirectory(prefix="launch-check-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        p = subprocess.Popen([ibfab, "launch", "--topology", "fat-tree:2:4", "--", "H1", "--ready-line", "up",
                              "sh", "-c", "echo up; exec sleep 60", ":", "H2", "sleep", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        seen = ""
        while "[H1] up" not in seen:
            line = p.stdout.readline()
            if not line:
                break
            seen += line
        time.sleep(0.3)  # H2 started
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
        seen += out
        print(seen)
        failures = []
        if p.returncode != 1:
            failures.append(f"exit status {p.returncode}, not 1")
        if not re.search(r"ibfab launch: interrupted by TERM\nibfab launch: stopped fabric, H1, H2", seen):
            failures.append("no line saying it was interrupted and what it stopped")
        failures += check_nothing_left(tmp)
    return failures


def main():
    if len(sys.argv) != 3 or (sys.argv[2] not in CASES and sys.argv[2] != "interrupted"):
        print(__doc__ + "\ncases: " + " ".join(list(CASES) + ["interrupted"]))
        return 2
    failures = run_case(sys.argv[1], sys.argv[2])
    for f in failures:
        print(f"launch_check.py {sys.argv[2]}: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
