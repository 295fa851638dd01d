#!/usr/bin/env python3
"""Runs one real Debian program against `ibfab serve` and checks its output.

usage: served.py IBFAB TOPOLOGY NODE EXPECT_REGEX [--sm-none] [--serve-arg ARG]... [--exec-arg ARG]...
                 [--copies N] [--pcap-expect REGEX]
                 [--count REGEX N]
                 [--background BGNODE BGPROGRAM... (--wait-for REGEX [--listening] | --listening)
                  [--line-buffered] [--background-expect REGEX] [--kill-first]] -- PROGRAM ARGS...

Starts `IBFAB serve --topology TOPOLOGY` on a private socket (with
`--sm none` for --sm-none, and each --serve-arg), waits for "ready", optionally starts BGPROGRAM
under `IBFAB exec --node BGNODE` and waits until its output matches REGEX
(e.g. opensm's "SUBNET UP"), runs PROGRAM under `IBFAB exec --node NODE`
(with each --exec-arg),
and passes when the program exits 0 and its output matches every
EXPECT_REGEX (separated by '|||'). With --pcap-expect, the engine captures
every packet (serve --pcap) and tshark's reading of the capture, once the
engine has stopped, must match REGEX. With --count, exactly N lines of the
output must match REGEX. With --copies N, N copies of PROGRAM run
at once, on the hosts of NODE (a comma-separated list) in turn, and each
must pass, within 90 s. Everything is stopped with SIGTERM afterwards.

With --line-buffered, BGPROGRAM runs under `stdbuf -oL` (mckey prints
with printf, and its "joined" line must be seen while it runs).
With --listening, BGPROGRAM runs under `stdbuf -oL`, so that what it
prints reaches the pipe line by line (ibv_ud_pingpong and perftest print
their banners with printf and wait for a client without flushing), and
the wait goes on until it also has a TCP socket listening: those servers
print the banner just before they listen, and a client that came in
between would find no one (without --wait-for, a server that prints
nothing before a client comes, such as ibv_xsrq_pingpong's, is waited
for by its socket alone). With --background-expect, BGPROGRAM must then
exit by itself, 0, within 60 s of PROGRAM's end, and its output match
every REGEX (separated by '|||'). With --kill-first, BGPROGRAM is started
once before, killed with SIGKILL once it is waiting, and the engine must
log that its verbs client left and give back what it held for it (its
file descriptors and shared-memory mappings, counted in /proc, return to
what they were before it started); then BGPROGRAM starts again and the
test goes on as above.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time


class Output:
    """What a process prints (stdout and stderr), read line by line as it comes."""

    def __init__(self, stream):
        self.lines = []
        self.done = False
        self.cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def wait_for(self, pattern, timeout):
        """Whether a line matches pattern within timeout seconds (False at the end of the output)."""
        deadline = time.time() + timeout
        seen = 0
        with self.cond:
            while True:
                for line in self.lines[seen:]:
                    if re.search(pattern, line.rstrip("\n")):
                        return True
                seen = len(self.lines)
                if self.done or time.time() >= deadline:
                    return False
                self.cond.wait(deadline - time.time())

    def text(self, timeout=0):
        """Everything printed so far, once the output has ended or timeout seconds passed."""
        with self.cond:
            self.cond.wait_for(lambda: self.done, timeout)
            return "".join(self.lines)


def listening(pid):
    """Whether process pid has a TCP socket in the LISTEN state."""
    sockets = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                sockets.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
    except OSError:
        return False
    # The tables of the process's own network namespace (its host's).
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.readlines()[1:]
        except OSError:  # it has exited meanwhile
            return False
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and f"socket:[{cols[9]}]" in sockets:
                return True
    return False


def engine_holds(pid):
    """The engine's open file descriptors and shared-memory (memfd) mappings."""
    with open(f"/proc/{pid}/maps") as f:
        mappings = sum("/memfd:" in line for line in f)
    return len(os.listdir(f"/proc/{pid}/fd")), mappings


def failed(served, why):
    """Says why the test failed, with the end of the engine's log (a refused client shows there); 1."""
    print(why)
    print("the engine's log, last lines:\n" + "".join(served.text(1).splitlines(True)[-30:]))
    return 1


def main():
    if "--" not in sys.argv or len(sys.argv) < 6:
        print(__doc__)
        return 2
    split = sys.argv.index("--")
    ibfab, topology, node, expect = sys.argv[1:5]
    options = sys.argv[5:split]
    program = sys.argv[split + 1:]
    sm_none = "--sm-none" in options
    serve_args = [options[i + 1] for i, o in enumerate(options) if o == "--serve-arg"]
    exec_args = [options[i + 1] for i, o in enumerate(options) if o == "--exec-arg"]
    copies = int(options[options.index("--copies") + 1]) if "--copies" in options else 1
    pcap_expect = options[options.index("--pcap-expect") + 1] if "--pcap-expect" in options else None
    count = None
    if "--count" in options:
        c = options.index("--count")
        count = (options[c + 1], int(options[c + 2]))
    nodes = node.split(",")
    background, wait_for, bg_expect = None, None, None
    if "--background" in options:
        b = options.index("--background")
        # BGPROGRAM ends at --wait-for, or at --listening when there is no
        # line to wait for.
        w = min(options.index(o) for o in ("--wait-for", "--listening") if o in options)
        background = options[b + 1:w]
        wait_for = options[options.index("--wait-for") + 1] if "--wait-for" in options else None
        if "--background-expect" in options:
            bg_expect = options[options.index("--background-expect") + 1]
    with tempfile.TemporaryDirectory() as tmp:
        # OpenSM's cache (guid2lid, neighbors) of this run only: what another
        # fabric left in /var/cache/opensm must not steer this one.
        os.environ["OSM_CACHE_DIR"] = tmp
        os.environ["OSM_TMP_DIR"] = tmp
        sock = os.path.join(tmp, "ibfab.sock")
        capture = os.path.join(tmp, "capture.erf")
        serve = subprocess.Popen([ibfab, "serve", "--topology", topology, "--socket", sock]
                                 + (["--sm", "none"] if sm_none else []) + serve_args
                                 + (["--pcap", capture] if pcap_expect else []),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        served = Output(serve.stdout)
        bg = None
        try:
            if not served.wait_for("^ready$", 60):
                print("serve did not get ready:\n" + served.text(5))
                return 1

            def start_background():
                # Line buffering only for the servers that need it: OpenSM's
                # -d2 log written a line at a time would slow it down.
                line_buffered = ["stdbuf", "-oL"] if "--listening" in options or "--line-buffered" in options else []
                p = subprocess.Popen([ibfab, "exec", "--socket", sock, "--node", background[0], "--"]
                                     + line_buffered + background[1:],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
                out = Output(p.stdout)
                if wait_for and not out.wait_for(wait_for, 60):
                    p.kill()
                    print(f"{background[1]} never printed {wait_for}:\n" + out.text(10)[-3000:])
                    return None, None
                deadline = time.time() + 60
                while "--listening" in options and not listening(p.pid):
                    if p.poll() is not None or time.time() > deadline:
                        p.kill()
                        print(f"{background[1]} never listened on TCP:\n" + out.text(10)[-3000:])
                        return None, None
                    time.sleep(0.05)  # the interval between two looks at its sockets; the wait is for the socket
                return p, out

            if background and "--kill-first" in options:
                before = engine_holds(serve.pid)
                bg, _ = start_background()
                if not bg:
                    return 1
                during = engine_holds(serve.pid)
                bg.kill()
                bg.wait()
                left = f"client pid {bg.pid} left {background[0]} \\(verbs\\)"
                if not served.wait_for(left, 60):
                    print(served.text(1)[-3000:])
                    print(f"the engine never logged: {left}")
                    return 1
                deadline = time.time() + 60
                while engine_holds(serve.pid) != before and time.time() < deadline:
                    time.sleep(0.05)  # the interval between two looks at /proc; the wait is for the counts
                after = engine_holds(serve.pid)
                print(f"the engine's file descriptors and memfd mappings: {before} before {background[1]}, "
                      f"{during} while it waited, {after} once it was killed")
                if during[0] <= before[0] or during[1] <= before[1] or after != before:
                    print("the engine did not give back what it held for the killed program")
                    return 1
            bgout = None
            if background:
                bg, bgout = start_background()
                if not bg:
                    return 1
            runs = [subprocess.Popen([ibfab, "exec", "--socket", sock, "--node", nodes[i % len(nodes)]] + exec_args
                                     + ["--"] + program,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    for i in range(copies)]
            try:
                outputs = [r.communicate(timeout=90)[0] for r in runs]
            except subprocess.TimeoutExpired:
                for r in runs:
                    r.kill()
                    print(r.communicate()[0][-20000:])
                return failed(served, f"{program[0]} did not finish within 90 s")
            bg_status = None
            if bg:
                if bg_expect and all(r.returncode == 0 for r in runs):
                    try:
                        bg_status = bg.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        pass
                if bg.poll() is None:
                    bg.send_signal(signal.SIGTERM)
                    try:
                        bg.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        bg.kill()
            if bg_expect:
                bg_text = bgout.text(10)
                print(f"{background[1]} on {background[0]}:\n" + bg_text[-20000:])
            for r, out in zip(runs, outputs):
                if r.returncode != 0:
                    print(out[-20000:])
                    return failed(served, f"{program[0]} exited {r.returncode}")
                for pattern in expect.split("|||"):
                    if not re.search(pattern, out, re.MULTILINE):
                        print(out[-20000:])
                        return failed(served, f"output does not match: {pattern}")
            if bg_expect:
                if bg_status != 0:
                    return failed(served, f"{background[1]} exited {bg_status}" if bg_status is not None
                                  else f"{background[1]} did not exit within 60 s")
                for pattern in bg_expect.split("|||"):
                    if not re.search(pattern, bg_text, re.MULTILINE):
                        return failed(served, f"{background[1]}'s output does not match: {pattern}")
            if count:
                got = sum(1 for line in outputs[0].splitlines() if re.search(count[0], line))
                if got != count[1]:
                    print(outputs[0][-20000:])
                    return failed(served, f"{got} lines match {count[0]}, not {count[1]}")
            print(outputs[0][-20000:])
            print(f"{copies} run(s) passed" + (f", and {background[1]} on {background[0]} too" if bg_expect else ""))
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
            if bg and bg.poll() is None:
                bg.kill()
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()


if __name__ == "__main__":
    sys.exit(main())
