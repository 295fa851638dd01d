#!/usr/bin/env python3
"""Fairness and bounds of `ibfab serve` (docs/ARCHITECTURE.md): clients that
misbehave cost the others nothing they would notice.

usage: fairness.py IBFAB FLOOD_CLIENT SA_LATENCY CASE [ARG]
  flood N MODE   N flood_client processes (MODE requests, mads or events)
                 send without reading, on hosts H3..H8 (events: until the
                 engine has logged dropping one of them over its 64 MiB
                 budget, within 60 s); meanwhile a normal client
                 on H2 makes 100 SA queries (sa_latency) and runs `saquery -g`
                 three times: every query is answered, the 99th percentile
                 within 50 ms, every saquery exits 0, and the engine's peak
                 resident size stays within 100 MiB of what it was before.
  partial        20 unfinished 16 MiB SendMads from one process: the engine
                 drops the clients over its 64 MiB budget and logs it, its
                 peak resident size stays within 100 MiB of what it was, and
                 saquery -g still works.
  limit          serve --max-clients 24, and 40 connections: 24 held, 16
                 refused with EUSERS; `ibfab exec` and libibverbs say why; the
                 engine logs it, uses at most 10% of a core over 2 s
                 meanwhile, still answers the 24, and serves saquery -g once
                 they have gone.
  nofile         serve with 64 file descriptors (RLIMIT_NOFILE), and 80
                 connections: those it has no descriptor for are refused with
                 EMFILE; it does not spin (10% of a core over 2 s), still
                 answers the ones it holds, and serves saquery -g afterwards.
"""
import errno
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served import Output  # noqa: E402

LATENCY_BOUND_MS = 50.0
DROPPED = "dropped: it held [0-9]+ KiB of unread output and unfinished messages"

RSS_GROWTH_MIB = 100


def proc_status(pid, field):
    """A field of /proc/PID/status, in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User + system CPU time of pid so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Engine:
    """`ibfab serve` on fat-tree:2:4, on a private socket, until stop()."""

    def __init__(self, ibfab, tmp, serve_args=(), nofile=None):
        self.ibfab = ibfab
        self.lib = os.path.join(os.path.dirname(os.path.abspath(ibfab)), "..", "lib")  # the drop-in libraries
        self.sock = os.path.join(tmp, "ibfab.sock")

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen([ibfab, "serve", "--topology", "fat-tree:2:4", "--socket", self.sock]
                                     + list(serve_args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, preexec_fn=limit)
        self.out = Output(self.proc.stdout)
        if not self.out.wait_for("^ready$", 60):
            raise RuntimeError("serve did not get ready:\n" + self.out.text(5))

    def run(self, node, *program, timeout=120):
        """PROGRAM under `ibfab exec --node NODE`: (exit status, output)."""
        r = subprocess.run([self.ibfab, "exec", "--socket", self.sock, "--node", node, "--"] + list(program),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        return r.returncode, r.stdout

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start_flood(flood_client, engine, n, mode):
    """N flood_client processes in MODE, each once it says it floods."""
    procs = []
    for i in range(n):
        node = f"H{3 + i % 6}"
        env = dict(os.environ, IBFAB_SOCKET=engine.sock, IBFAB_NODE=node,  # the drop-in libraries (events)
                   LD_LIBRARY_PATH=engine.lib)
        p = subprocess.Popen([flood_client, engine.sock, node, mode], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env)
        procs.append((p, Output(p.stdout)))
    for p, out in procs:
        if not out.wait_for("^flooding$", 60):
            raise RuntimeError("a flood client did not start:\n" + out.text(1))
    return procs


def stop_all(procs):
    for p, _ in procs:
        p.kill()
    for p, _ in procs:
        p.wait()


def latency(engine, sa_latency, queries):
    """sa_latency QUERIES on H2: (exit status, summary line, dict of the figures)."""
    status, out = engine.run("H2", sa_latency, str(queries))
    m = re.search(r"^sa_latency: (\d+) queries, (\d+) failed, median ([\d.]+) ms, p99 ([\d.]+) ms, max ([\d.]+) ms$",
                  out, re.MULTILINE)
    if not m:
        return status, out[-3000:], None
    return status, m.group(0), {"failed": int(m.group(2)), "median": float(m.group(3)), "p99": float(m.group(4)),
                                "max": float(m.group(5))}


def saquery_ok(engine, times):
    """Runs saquery -g TIMES times on H2; the failures' output."""
    bad = []
    for _ in range(times):
        status, out = engine.run("H2", "saquery", "-g")
        if status != 0 or "MCMemberRecord" not in out:
            bad.append(f"saquery -g exited {status}:\n{out[-2000:]}")
    return bad


def check(cond, why, failures):
    print(("ok: " if cond else "FAILED: ") + why)
    if not cond:
        failures.append(why)


def case_flood(ibfab, flood_client, sa_latency, n, mode, tmp):
    engine = Engine(ibfab, tmp)
    failures = []
    try:
        before = proc_status(engine.proc.pid, "VmRSS")
        flood = start_flood(flood_client, engine, n, mode)
        try:
            if mode == "events":
                check(engine.out.wait_for(DROPPED, 60), "the engine logs a client dropped over its budget", failures)
            status, line, fig = latency(engine, sa_latency, 100)
            print(line)
            check(status == 0 and fig and fig["failed"] == 0, "every SA query of the normal client is answered",
                  failures)
            check(fig and fig["p99"] <= LATENCY_BOUND_MS,
                  f"its 99th percentile is within {LATENCY_BOUND_MS:.0f} ms", failures)
            bad = saquery_ok(engine, 3)
            for b in bad:
                print(b)
            check(not bad, "saquery -g succeeds three times", failures)
            peak = proc_status(engine.proc.pid, "VmHWM")
            print(f"the engine's resident size: {before // 1024} MiB before, peak {peak // 1024} MiB")
            check(peak - before <= RSS_GROWTH_MIB * 1024,
                  f"its peak is within {RSS_GROWTH_MIB} MiB of what it was before", failures)
        finally:
            stop_all(flood)
    finally:
        engine.stop()
    if failures:
        print("the engine's log, last lines:\n" + "".join(engine.out.text(1).splitlines(True)[-20:]))
    return failures


def case_partial(ibfab, flood_client, sa_latency, tmp):
    engine = Engine(ibfab, tmp)
    failures = []
    try:
        before = proc_status(engine.proc.pid, "VmRSS")
        p = subprocess.Popen([flood_client, engine.sock, "H3", "partial", "20"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        out = Output(p.stdout)
        try:
            done = out.wait_for("^partial: ", 60)
            print(out.text(0).strip())
            check(done, "the client sent its fragments", failures)
            check(engine.out.wait_for(DROPPED, 60), "the engine logs a client dropped over its budget", failures)
            peak = proc_status(engine.proc.pid, "VmHWM")
            print(f"the engine's resident size: {before // 1024} MiB before, peak {peak // 1024} MiB")
            check(peak - before <= RSS_GROWTH_MIB * 1024,
                  f"its peak is within {RSS_GROWTH_MIB} MiB of what it was before", failures)
            bad = saquery_ok(engine, 1)
            check(not bad, "saquery -g still succeeds", failures)
        finally:
            p.kill()
            p.wait()
    finally:
        engine.stop()
    print("the engine's log, last lines:\n" + "".join(engine.out.text(1).splitlines(True)[-8:]))
    return failures


def case_refusals(ibfab, flood_client, tmp, serve_args, nofile, count, held_expect, why, exec_says):
    """Connections past what the engine takes: refused with WHY, no spinning, the rest served."""
    engine = Engine(ibfab, tmp, serve_args, nofile)
    failures = []
    try:
        p = subprocess.Popen([flood_client, engine.sock, "H3", "connections", str(count)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = Output(p.stdout)
        try:
            check(out.wait_for(r"^connections: ", 120), "the client opened its connections", failures)
            line = out.text(0).strip()
            print(line)
            m = re.match(r"connections: (\d+) held, (\d+) refused \((.*)\)", line)
            held = int(m.group(1)) if m else 0
            check(m and held_expect(held) and held + int(m.group(2)) == count and m.group(3) == why,
                  f"the connections past the engine's limit are refused ({why})", failures)
            if exec_says:
                status, text = engine.run("H2", "true")
                print(text.strip())
                check(status != 0 and re.search(exec_says, text), "ibfab exec says why it was refused", failures)
                # A program that reaches the engine through the drop-in libraries alone.
                env = dict(os.environ, LD_LIBRARY_PATH=engine.lib, IBFAB_SOCKET=engine.sock, IBFAB_NODE="H2")
                r = subprocess.run(["ibv_devinfo"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=60)
                print(r.stdout.strip())
                check(re.search(exec_says, r.stdout), "libibverbs says why it was refused", failures)
            check(engine.out.wait_for("refused .*connection", 60), "the engine logs the refusals", failures)
            start = cpu_seconds(engine.proc.pid)
            time.sleep(2)  # an interval to measure the engine's CPU time over, not a synchronisation
            used = cpu_seconds(engine.proc.pid) - start
            print(f"the engine used {used:.2f} s of CPU time in 2 s, holding {held} connections")
            check(used <= 0.2, "the engine does not spin", failures)
            p.stdin.write("query\n")
            p.stdin.flush()
            check(out.wait_for(f"^answered {held} of {held}$", 60), "it still answers every connection it holds",
                  failures)
        finally:
            p.stdin.close()
            p.wait(timeout=30)
        bad = saquery_ok(engine, 1)
        for b in bad:
            print(b)
        check(not bad, "saquery -g succeeds once they have gone", failures)
    finally:
        engine.stop()
    print("the engine's log, last lines:\n" + "".join(engine.out.text(1).splitlines(True)[-8:]))
    return failures


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    ibfab, flood_client, sa_latency, case = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        if case == "flood" and len(sys.argv) == 7:
            failures = case_flood(ibfab, flood_client, sa_latency, int(sys.argv[5]), sys.argv[6], tmp)
        elif case == "partial":
            failures = case_partial(ibfab, flood_client, sa_latency, tmp)
        elif case == "limit":
            failures = case_refusals(ibfab, flood_client, tmp, ["--max-clients", "24"], None, 40,
                                     lambda held: held == 24, os.strerror(errno.EUSERS),
                                     "refused by the ibfab engine at .*: "
                                     "the engine serves as many connections as it takes")
        elif case == "nofile":
            failures = case_refusals(ibfab, flood_client, tmp, [], 64, 80, lambda held: 0 < held < 64,
                                     os.strerror(errno.EMFILE), None)
        else:
            print(__doc__)
            return 2
    print("passed" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
