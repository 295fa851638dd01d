#!/usr/bin/env python3
"""Runs the transcripts of a Markdown file and checks that they still say
what the file says (docs that are checked, issue 14).

usage: transcripts.py [--build DIR] [--update] FILE.md...

A transcript is a fenced block whose lines start with "$ ": each such line
is a command, run by bash in a fresh directory that shows the repository's
files (symbolic links, `build` to DIR, default: the repository's build),
so that what a command writes goes there; and the lines after it, up to the next command, are
what it prints (stdout and stderr together). Rules:
  - A line "..." (any indentation) stands for any number of lines.
  - Figures of the machine, not of the program, are masked on both sides:
    wall-clock times ("0.013 s wall", "4.18 seconds", Mbit/sec, usec/iter),
    the socket path `ibfab serve` prints.
  - A command with no lines after it is run and must succeed; what it
    prints is not shown, so it is not compared.
  - A command that ends with "&" runs in the background: the lines after it
    are waited for (60 s), in order, in what it prints. When the block ends,
    a background `ibfab serve` is stopped; any other background program must
    have exited with status 0 (60 s).
  - A foreground command that follows a background program other than
    `ibfab serve` (whose "ready" says it serves) is run again while it
    fails, for up to 60 s: a server may print its first line before it
    listens, and the reader types the client once the server is up.
  - Every foreground command must exit with status 0, or with N when it
    ends with the comment "# exit status N" (a failure the file shows).
Each block runs with XDG_RUNTIME_DIR and TMPDIR in a fresh directory, so
that its `ibfab serve` has a socket of its own, and with the build's
tools/ first on PATH, so that `ibfab` alone is the one just built (as it
is the installed one after `apt-get install ./ibfab_*.deb`).

A block preceded by "<!-- excerpt of PATH -->" is not a transcript but an
excerpt: each of its lines must appear in the file PATH, in order ("..."
stands for the lines left out).

--update rewrites, in place, the shown output of every foreground command
whose expected lines hold no "...", with what it printed now.

Exit status: 0 when every transcript and excerpt holds, 1 otherwise, 2 for
bad usage.
"""
import argparse
import os
import pty
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEADLINE_S = 60
BACKGROUND = re.compile(r"&\s*(#.*)?$")  # a command's final "&", a comment after it
EXIT_STATUS = re.compile(r"#\s*exit status (\d+)\s*$")  # the status a command must end with

# Machine figures, masked on both sides of a comparison.
MASKS = [
    (re.compile(r"\d+\.\d+ s wall"), "T s wall"),
    (re.compile(r"\d+ bytes in [\d.]+ seconds = [\d.]+ Mbit/sec"), "B bytes in T seconds = R Mbit/sec"),
    (re.compile(r"\d+ iters in [\d.]+ seconds = [\d.]+ usec/iter"), "N iters in T seconds = L usec/iter"),
    (re.compile(r"^socket \S+$"), "socket PATH"),
]


def mask(line):
    line = line.rstrip()
    for pattern, replacement in MASKS:
        line = pattern.sub(replacement, line)
    return line


def is_serve(command):
    return re.search(r"\bibfab serve\b", command) is not None


def is_ellipsis(line):
    return line.strip() == "..."


def matches(expected, actual):
    """Whether the lines `actual` are `expected`, "..." standing for any run of lines."""
    exp = [mask(e) for e in expected]
    act = [mask(a) for a in actual]
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(exp):
            r = j == len(act)
        elif is_ellipsis(exp[i]):
            r = any(go(i + 1, k) for k in range(j, len(act) + 1))
        else:
            r = j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return go(0, 0)


class Block:
    """A fenced block: its lines, where they start in the file, and the comment before it."""

    def __init__(self, start, lines, note):
        self.start = start  # index of the first line inside the fence
        self.lines = lines
        self.note = note


def blocks_of(text_lines):
    out = []
    i = 0
    while i < len(text_lines):
        if text_lines[i].startswith("```"):
            j = i + 1
            while j < len(text_lines) and not text_lines[j].startswith("```"):
                j += 1
            k = i - 1
            while k >= 0 and not text_lines[k].strip():
                k -= 1
            note = text_lines[k].strip() if k >= 0 and text_lines[k].strip().startswith("<!--") else ""
            out.append(Block(i + 1, text_lines[i + 1:j], note))
            i = j + 1
        else:
            i += 1
    return out


class Step:
    def __init__(self, command, expected, line):
        self.command = command
        self.expected = expected  # lines shown after the command
        self.line = line  # index in the file of the command's line


def steps_of(block):
    steps = []
    for n, line in enumerate(block.lines):
        if line.startswith("$ "):
            steps.append(Step(line[2:], [], block.start + n))
        elif steps:
            steps[-1].expected.append(line)
    return steps


class Background:
    def __init__(self, command, proc, terminal):
        self.command = command
        self.proc = proc
        self.terminal = terminal  # the controlling side of its pseudo-terminal
        self.lines = []
        self.partial = b""
        self.sel = selectors.DefaultSelector()
        self.sel.register(terminal, selectors.EVENT_READ)

    def read_until(self, wanted, deadline):
        """Reads until the masked lines `wanted` appear in order; whether they did."""
        want = [mask(w) for w in wanted if not is_ellipsis(w)]
        got = 0
        seen = 0
        while True:
            while seen < len(self.lines) and got < len(want):
                if mask(self.lines[seen]) == want[got]:
                    got += 1
                seen += 1
            if got == len(want):
                return True
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(timeout=left):
                return False
            try:
                data = os.read(self.terminal, 65536)
            except OSError:  # EIO: every writer has gone
                data = b""
            if not data:
                return False
            self.partial += data.replace(b"\r\n", b"\n")
            *done, self.partial = self.partial.split(b"\n")
            self.lines += [d.decode(errors="replace") for d in done]

    def stop(self):
        self.sel.close()
        os.close(self.terminal)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def workspace(build):
    """A fresh directory that looks like the repository's root, `build` being BUILD."""
    tmp = tempfile.mkdtemp(prefix="ibfab-transcript-")
    for name in os.listdir(ROOT):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(ROOT, name), os.path.join(tmp, name))
    os.symlink(os.path.abspath(build), os.path.join(tmp, "build"))
    return tmp


def run_block(block, build, failures, updates, where):
    env = dict(os.environ)
    cwd = workspace(build)
    runtime = os.path.join(cwd, "run")
    os.mkdir(runtime, 0o700)
    env["XDG_RUNTIME_DIR"] = runtime
    env["TMPDIR"] = runtime
    # `ibfab` alone is the build's, as the installed package's would be.
    env["PATH"] = os.path.join(os.path.abspath(build), "tools") + os.pathsep + env.get("PATH", "")
    background = []
    waiting_server = False  # a background program with no readiness line runs
    try:
        for step in steps_of(block):
            command = step.command
            here = f"{where}:{step.line + 1}"
            in_background = BACKGROUND.search(command)
            if in_background:
                # On a terminal, as the reader runs it: stdio line-buffered, lines seen as printed.
                controller, terminal = pty.openpty()
                proc = subprocess.Popen(["bash", "-c", command[:in_background.start()]], cwd=cwd, env=env,
                                        stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                                        start_new_session=True)
                os.close(terminal)
                bg = Background(step.command, proc, controller)
                background.append(bg)
                if step.expected and not bg.read_until(step.expected, time.monotonic() + DEADLINE_S):
                    failures.append(f"{here}: `{step.command}` did not print, within {DEADLINE_S} s:\n"
                                    + "\n".join(step.expected) + "\nit printed:\n" + "\n".join(bg.lines))
                    return
                waiting_server = not is_serve(step.command)
                continue
            wanted = EXIT_STATUS.search(command)
            want = int(wanted.group(1)) if wanted else 0
            deadline = time.monotonic() + DEADLINE_S
            while True:
                try:
                    r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, timeout=300)
                except subprocess.TimeoutExpired:
                    failures.append(f"{here}: `{step.command}` ran for more than 300 s")
                    return
                if r.returncode == 0 or not waiting_server or time.monotonic() > deadline:
                    break
            waiting_server = False
            actual = r.stdout.decode(errors="replace").splitlines()
            if r.returncode != want:
                failures.append(f"{here}: `{step.command}` exited {r.returncode}, not {want}:\n"
                                + "\n".join(actual[-30:]))
                continue
            if not step.expected:
                continue
            if not matches(step.expected, actual):
                if not any(is_ellipsis(e) for e in step.expected):
                    updates.append((step, actual))
                failures.append(f"{here}: `{step.command}` printed something else.\nthe file says:\n"
                                + "\n".join(step.expected) + "\nit printed:\n" + "\n".join(actual))
        for bg in background:
            if is_serve(bg.command):
                continue
            try:
                status = bg.proc.wait(timeout=DEADLINE_S)
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: `{bg.command}` was still running {DEADLINE_S} s after the block")
                continue
            if status != 0:
                bg.read_until([], time.monotonic())
                failures.append(f"{where}: `{bg.command}` exited {status}:\n" + "\n".join(bg.lines[-30:]))
    finally:
        for bg in reversed(background):
            bg.stop()
        shutil.rmtree(cwd, ignore_errors=True)


def check_excerpt(block, path, failures, where):
    try:
        with open(os.path.join(ROOT, path)) as f:
            source = f.read().splitlines()
    except OSError as e:
        failures.append(f"{where}: the excerpt's file {path}: {e.strerror}")
        return
    at = 0
    for n, line in enumerate(block.lines):
        if is_ellipsis(line):
            continue
        while at < len(source) and source[at].rstrip() != line.rstrip():
            at += 1
        if at == len(source):
            failures.append(f"{where}:{block.start + n + 1}: not in {path} (in this order): {line}")
            return
        at += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--update", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    failures = []
    for name in a.files:
        path = os.path.join(ROOT, name) if not os.path.isabs(name) else name
        with open(path) as f:
            text = f.read().splitlines()
        updates = []
        checked = 0
        for block in blocks_of(text):
            m = re.match(r"<!-- excerpt of (\S+) -->", block.note)
            if m:
                check_excerpt(block, m.group(1), failures, name)
                checked += 1
            elif any(line.startswith("$ ") for line in block.lines):
                run_block(block, a.build, failures, updates, name)
                checked += 1
        print(f"{name}: {checked} transcripts and excerpts checked")
        if a.update and updates:
            for step, actual in sorted(updates, key=lambda u: -u[0].line):
                first = step.line + 1
                text[first:first + len(step.expected)] = actual
            with open(path, "w") as f:
                f.write("\n".join(text) + "\n")
            print(f"{name}: {len(updates)} outputs rewritten")
    for f in failures:
        print("FAILED: " + f + "\n")
    print("passed" if not failures else f"{len(failures)} transcript(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
