#!/usr/bin/env python3
"""The anchor for ibfab's bring-up figures: OpenSM over ibsim, measured here.

For each topology SPEC this writes the ibsim net file with ibfab's own
exporter (`ibfab topo gen SPEC -o FILE`), starts `ibsim -s -n FILE`, runs
OpenSM against it (LD_PRELOAD=libumad2sim.so, `-R minhop` unless told
otherwise) and measures:

  subnet_up_s     wall time from starting opensm until it logs SUBNET UP
  opensm_rss_mb   peak resident memory (VmHWM, MiB) of opensm at that moment
  ibsim_rss_mb    peak resident memory (VmHWM, MiB) of ibsim at that moment
  opensm_cpu_s    CPU time (user + system, all threads) opensm used till then
  ibsim_cpu_s     CPU time ibsim used in that interval (loading the net
                  file before opensm starts is not counted)

then stops both. One line per run, `key=value` fields, and with --runs N
a last line `run=median` holding the median of each figure:

  anchor opensm+ibsim spec=fat-tree:2:36 hosts=648 switches=54 routing=minhop run=1 subnet_up_s=S opensm_rss_mb=M ibsim_rss_mb=M opensm_cpu_s=S ibsim_cpu_s=S

The two processes exchange every SMP over a Unix socket, so the wall time
is bound by their round trips and grows on a loaded machine; the CPU
times show what the work itself cost.

How the pieces are set up (so the figure means the same thing every time):
  - ibsim runs with its stock limits, raised (-N/-S/-P/-L) only as far as
    the fabric needs; each run has its own socket name (IBSIM_SOCKNAME), so
    runs of different users and worktrees do not meet.
  - OpenSM attaches at the first HCA of the net file (SIM_HOST): H1 for the
    generated fabrics, where ibfab's own bring-up benchmark runs its SM.
  - OpenSM's configuration is its own default template (`opensm -c`) with
    every file and directory moved into a private temporary directory; the
    only changes are the routing engine, the log going to stdout and each
    log line being flushed at once (force_log_flush), so SUBNET UP is seen
    the moment it is written. No daemon, no console.
  - The time starts just before opensm is started (after ibsim is up and
    listening) and ends when its SUBNET UP line arrives on the pipe.

Exit status: 0 when every run reached SUBNET UP, 1 on a failed run
(timeout, a process died), 2 on a usage or set-up error (missing package,
ibfab not built).
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# ibsim 0.10's built-in limits (ibsim/sim.h): raised with -N/-S/-P/-L only
# when a fabric needs more.
IBSIM_MAX_NODES = 2048
IBSIM_MAX_SWITCHES = 256
IBSIM_MAX_PORTS = IBSIM_MAX_SWITCHES * 36 + IBSIM_MAX_NODES * 2
IBSIM_LINEAR_CAP = 30 * 1024
MAX_UNICAST_LID = 0xBFFF

UMAD2SIM_PATTERNS = [
    "/usr/lib/*/umad2sim/libumad2sim.so",
    "/usr/lib/umad2sim/libumad2sim.so",
    "/usr/lib64/umad2sim/libumad2sim.so",
    "/usr/local/lib/umad2sim/libumad2sim.so",
]


class SetupError(Exception):
    """The tool cannot run here (exit status 2)."""


class RunError(Exception):
    """One measurement failed (exit status 1)."""


@dataclass
class NetFile:
    path: Path
    switches: int
    hcas: int
    ports: int  # as ibsim counts them: a switch has its port 0 too
    hca_ports: int
    first_hca: str


@dataclass
class Result:
    subnet_up_s: float
    opensm_rss_mb: float
    ibsim_rss_mb: float
    opensm_cpu_s: float
    ibsim_cpu_s: float


# ---------------------------------------------------------------- set-up


def find_umad2sim(given: str | None) -> str:
    if given:
        if not os.path.isfile(given):
            raise SetupError(f"--umad2sim {given}: no such file")
        return given
    for pattern in UMAD2SIM_PATTERNS:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[0]
    raise SetupError(
        "libumad2sim.so not found: install the Debian package libumad2sim0 "
        "(scripts/setup-deps.sh does), or give its path with --umad2sim")


def find_program(name: str, package: str) -> str:
    # opensm is in /usr/sbin, which a user's PATH may lack.
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        raise SetupError(f"{name} not found: install the Debian package {package} "
                         "(scripts/setup-deps.sh does)")
    return path


def find_ibfab(given: str | None) -> str:
    path = given or os.environ.get("IBFAB") or str(REPO / "build" / "tools" / "ibfab")
    if not os.access(path, os.X_OK):
        raise SetupError(f"{path}: ibfab not found or not executable; build it first "
                         "(make build) or give it with --ibfab")
    return path


_NODE_LINE = re.compile(r'^(Switch|Ca|Hca)\s+(\d+)\s+"([^"]+)"')


def write_netfile(ibfab: str, spec: str, path: Path) -> NetFile:
    """Writes SPEC as an ibsim net file with ibfab's exporter and counts it."""
    proc = subprocess.run([ibfab, "topo", "gen", spec, "-o", str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise SetupError(f"ibfab topo gen {spec} failed (status {proc.returncode}):\n"
                         + proc.stdout.strip())
    switches = hcas = ports = hca_ports = 0
    first_hca = ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _NODE_LINE.match(line)
            if not m:
                continue
            n = int(m.group(2))
            if m.group(1) == "Switch":
                switches += 1
                ports += n + 1
            else:
                hcas += 1
                ports += n
                hca_ports += n
                first_hca = first_hca or m.group(3)
    if hcas == 0:
        raise SetupError(f"{spec}: the net file has no HCA for OpenSM to run on")
    return NetFile(path, switches, hcas, ports, hca_ports, first_hca)


def opensm_config(opensm: str, work: Path, routing: str) -> Path:
    """OpenSM's default template with every path moved under WORK."""
    conf = work / "opensm.conf"
    proc = subprocess.run([opensm, "-c", str(conf)], cwd=work, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0 or not conf.is_file():
        raise SetupError("opensm -c (writing the default configuration) failed:\n"
                         + proc.stdout.strip())
    private = {
        "routing_engine": routing,
        "log_file": "/dev/stdout",
        "force_log_flush": "TRUE",
        "daemon": "FALSE",
        "console": "off",
        "dump_files_dir": str(work) + "/",
        "partition_config_file": str(work / "partitions.conf"),
        "torus_config": str(work / "torus-2QoS.conf"),
        "per_module_logging_file": str(work / "per-module-logging.conf"),
        "qos_policy_file": str(work / "qos-policy.conf"),
        "prefix_routes_file": str(work / "prefix-routes.conf"),
    }
    lines = conf.read_text(encoding="utf-8").splitlines()
    seen = set()
    for i, line in enumerate(lines):
        key = line.split(" ", 1)[0]
        if key in private:
            lines[i] = f"{key} {private[key]}"
            seen.add(key)
    missing = sorted(set(private) - seen)
    if missing:
        raise SetupError("opensm's configuration template lacks " + ", ".join(missing)
                         + " (an OpenSM other than 3.3.x?)")
    conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return conf


# ---------------------------------------------------------------- processes


def vm_hwm_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    raise RunError(f"cannot read the peak memory of process {pid} (it has exited?)")


def cpu_s(pid: int) -> float:
    """User plus system time of the process (all its threads) so far."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            after_name = f.read().rsplit(")", 1)[1].split()
    except OSError as e:
        raise RunError(f"cannot read the CPU time of process {pid}: {e}") from e
    # Fields 14 and 15 of stat(5), counted from the state (field 3).
    return (int(after_name[11]) + int(after_name[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no output)"
    return "\n".join("    " + l for l in text[-lines:]) or "    (no output)"


def abstract_socket_bound(name: str) -> bool:
    # /proc/net/unix shows an abstract name with '@' for its leading NUL;
    # ibsim's names carry a trailing NUL too (shown as '@' again).
    want = "@" + name
    try:
        with open("/proc/net/unix", encoding="ascii", errors="replace") as f:
            for line in f:
                path = line.rstrip("\n").rsplit(" ", 1)[-1]
                if path.rstrip("@") == want:
                    return True
    except OSError:
        pass
    return False


def start_ibsim(ibsim: str, net: NetFile, work: Path, sockname: str,
                timeout: float) -> subprocess.Popen:
    lids = net.switches + net.hca_ports  # LMC 0: one LID a switch, one an HCA port
    args = [ibsim, "-s", "-n",
            "-N", str(max(IBSIM_MAX_NODES, net.switches + net.hcas)),
            "-S", str(max(IBSIM_MAX_SWITCHES, net.switches)),
            "-P", str(max(IBSIM_MAX_PORTS, net.ports))]
    if lids + 1 > IBSIM_LINEAR_CAP:
        args += ["-L", str(min(MAX_UNICAST_LID + 1, (lids + 64) // 64 * 64))]
    args.append(str(net.path))
    out = work / "ibsim.out"
    env = dict(os.environ, IBSIM_SOCKNAME=sockname)
    with open(out, "wb") as f:
        proc = subprocess.Popen(args, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                stdout=f, stderr=subprocess.STDOUT)
    # ibsim prints "Network simulator ready." and then binds its ctl and ten
    # client sockets (abstract names SOCKNAME:ctl, SOCKNAME:out0..9): ready
    # once the last one is bound.
    last = f"{sockname}:out9"
    deadline = time.monotonic() + timeout
    while not abstract_socket_bound(last):
        if proc.poll() is not None:
            raise RunError(f"ibsim failed to start (status {proc.returncode}): "
                           f"{' '.join(args)}\n{tail(out)}")
        if time.monotonic() > deadline:
            stop(proc)
            raise RunError(f"timeout: ibsim was not listening within {timeout:g} s "
                           f"(--timeout)\n{tail(out)}")
        time.sleep(0.02)
    return proc


def start_ibfab(ibfab: str, net: NetFile, work: Path, sock: Path, timeout: float) -> subprocess.Popen:
    """`ibfab serve --sm none` on the same net file, until it prints ready."""
    out = work / "ibfab.out"
    proc = subprocess.Popen([ibfab, "serve", "--topology", str(net.path), "--sm", "none",
                             "--socket", str(sock)], cwd=work, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=open(out, "wb"))
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)  # unbuffered: select sees what is left
            if not chunk:
                raise RunError(f"ibfab serve exited (status {proc.wait()})\n{tail(out)}")
            seen += chunk
            if b"\nready\n" in b"\n" + seen:
                return proc
    stop(proc)
    raise RunError(f"timeout: ibfab serve was not ready within {timeout:g} s\n{tail(out)}")


def run_once(tools: dict, net: NetFile, work: Path, routing: str, timeout: float) -> Result:
    conf = opensm_config(tools["opensm"], work, routing)
    sockname = f"ibfab-anchor-{os.getpid()}-{time.monotonic_ns()}"
    ibsim = opensm = None
    log = work / "opensm.out"
    try:
        args = [tools["opensm"], "-F", str(conf), "-R", routing]
        if tools["fabric"] == "ibfab":
            sock = work / "ibfab.sock"
            ibsim = start_ibfab(tools["ibfab"], net, work, sock, timeout)
            env = dict(os.environ, OSM_CACHE_DIR=str(work), OSM_TMP_DIR=str(work))
            args = [tools["ibfab"], "exec", "--socket", str(sock), "--node", net.first_hca, "--"] + args
        else:
            ibsim = start_ibsim(tools["ibsim"], net, work, sockname, timeout)
            env = dict(os.environ,
                       LD_PRELOAD=tools["umad2sim"],
                       IBSIM_SOCKNAME=sockname,
                       SIM_HOST=net.first_hca,
                       OSM_CACHE_DIR=str(work),
                       OSM_TMP_DIR=str(work))
        ibsim_start_cpu = cpu_s(ibsim.pid)  # loading the net file is not counted
        deadline = time.monotonic() + timeout
        with open(log, "wb") as logf:
            t0 = time.monotonic()
            opensm = subprocess.Popen(args, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            pending = b""
            up_at = None
            while up_at is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RunError(f"timeout: no SUBNET UP within {timeout:g} s "
                                   f"(--timeout)\n{tail_of(logf, log)}")
                ready, _, _ = select.select([opensm.stdout], [], [], min(left, 1.0))
                if not ready:
                    if ibsim.poll() is not None:
                        raise RunError(f"ibsim died (status {ibsim.returncode})\n"
                                       f"{tail(work / 'ibsim.out')}")
                    continue
                chunk = os.read(opensm.stdout.fileno(), 65536)
                if not chunk:
                    opensm.wait()
                    raise RunError(f"opensm exited (status {opensm.returncode}) before "
                                   f"SUBNET UP\n{tail_of(logf, log)}")
                logf.write(chunk)
                pending += chunk
                if b"SUBNET UP" in pending:
                    up_at = time.monotonic()
                pending = pending[-16:]
            return Result(up_at - t0, vm_hwm_mb(opensm.pid), vm_hwm_mb(ibsim.pid),
                          cpu_s(opensm.pid), cpu_s(ibsim.pid) - ibsim_start_cpu)
    finally:
        stop(opensm)
        if opensm is not None and opensm.stdout is not None:
            opensm.stdout.close()
        stop(ibsim)


def tail_of(logf, path: Path) -> str:
    logf.flush()
    return "opensm's last lines:\n" + tail(path)


# ---------------------------------------------------------------- output


def fields(d: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in d.items())


def measure(spec: str, args, tools: dict) -> list[Result]:
    keep = Path(args.workdir).resolve() if args.workdir else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="ibfab-anchor-", dir=keep))
    try:
        net = write_netfile(tools["ibfab"], spec, base / "fabric.net")
        head = {"spec": spec, "hosts": net.hcas, "switches": net.switches,
                "routing": args.routing}
        results = []
        for i in range(1, args.runs + 1):
            work = base / f"run{i}"
            work.mkdir()
            r = run_once(tools, net, work, args.routing, args.timeout)
            results.append(r)
            print(f"anchor opensm+{args.fabric}", fields({**head, "run": i, **format_result(r)}),
                  flush=True)
        if args.runs > 1:
            med = Result(*(statistics.median(getattr(r, f.name) for r in results)
                           for f in dataclasses.fields(Result)))
            print(f"anchor opensm+{args.fabric}", fields({**head, "run": "median", **format_result(med)}),
                  flush=True)
        return results
    finally:
        if keep:
            print(f"anchor: files kept in {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)


def format_result(r: Result) -> dict:
    return {"subnet_up_s": f"{r.subnet_up_s:.3f}",
            "opensm_rss_mb": f"{r.opensm_rss_mb:.1f}",
            "ibsim_rss_mb": f"{r.ibsim_rss_mb:.1f}",
            "opensm_cpu_s": f"{r.opensm_cpu_s:.2f}",
            "ibsim_cpu_s": f"{r.ibsim_cpu_s:.2f}"}


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="opensm_ibsim.py",
        description="Measure the anchor for ibfab's bring-up figures: OpenSM 3.3.23 over "
                    "ibsim, wall time from starting opensm to SUBNET UP, and the peak "
                    "resident memory of opensm and of ibsim.",
        epilog="Output: one line per run, e.g.\n"
               "  anchor opensm+ibsim spec=fat-tree:2:36 hosts=648 switches=54 "
               "routing=minhop run=1 subnet_up_s=.. opensm_rss_mb=.. ibsim_rss_mb=.. "
               "opensm_cpu_s=.. ibsim_cpu_s=..\n"
               "and with --runs N > 1 a line run=median (the median of each field). "
               "Memory in MiB (peak RSS), times in seconds. Needs the Debian packages "
               "opensm, ibsim-utils and libumad2sim0 (scripts/setup-deps.sh) and a built "
               "ibfab. Exit status: 0 all runs done, 1 a run failed, 2 set-up error.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", metavar="SPEC", nargs="+",
                   help="a topology as `ibfab topo gen` takes it: fat-tree:2:K, "
                        "fat-tree:3:K, ring:N[:H], line:N[:H], torus:XxY[:H] or a net file")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="runs per topology; with N > 1 the median is printed too (default 1)")
    p.add_argument("--timeout", type=float, default=600, metavar="SECONDS",
                   help="give up on a run when ibsim is not listening, or opensm has not "
                        "reached SUBNET UP, within this time (each; default 600)")
    p.add_argument("--routing", default="minhop", metavar="ENGINE",
                   help="OpenSM routing engine (-R; default minhop)")
    p.add_argument("--ibfab", metavar="PATH",
                   help="the ibfab binary (default: $IBFAB, else build/tools/ibfab)")
    p.add_argument("--umad2sim", metavar="PATH",
                   help="libumad2sim.so (default: found under /usr/lib)")
    p.add_argument("--fabric", choices=["ibsim", "ibfab"], default="ibsim",
                   help="what OpenSM runs against: ibsim with libumad2sim (the anchor, default) or "
                        "`ibfab serve --sm none` with ibfab's libibumad (the same net file; the "
                        "*_ibsim_* fields then measure the ibfab serve process)")
    p.add_argument("--workdir", metavar="DIR",
                   help="keep the net file, configuration and logs in a new directory "
                        "under DIR (default: a temporary directory, removed)")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    # A SIGTERM (ctest's timeout, kill) unwinds like Ctrl-C, so ibsim and
    # opensm are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        tools = {"opensm": find_program("opensm", "opensm"),
                 "ibsim": find_program("ibsim", "ibsim-utils"),
                 "umad2sim": find_umad2sim(args.umad2sim),
                 "ibfab": find_ibfab(args.ibfab),
                 "fabric": args.fabric}
        for spec in args.specs:
            measure(spec, args, tools)
    except SetupError as e:
        print(f"anchor: error: {e}", file=sys.stderr)
        return 2
    except RunError as e:
        print(f"anchor: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
