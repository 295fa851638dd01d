#!/usr/bin/env python3
"""Runs rdma-core's whole Python test suite (python3-pyverbs) on a served host and judges it.

usage: rdma_core_suite.py IBFAB SKIPS WAITING [--topology T] [--node N] [TEST...]

Starts `IBFAB serve --topology T` (fat-tree:2:4 unless told) on a private
socket, runs every test of rdma-core's suite (or the TESTs named, as
unittest names them: test_mr, test_mr.MRTest.test_mr_rereg_pd) under
`IBFAB exec --node N` (H2 unless told), each test's outcome recorded by
unittest itself (not read back from its printout), and passes only when:

- no test fails or errors, except those in WAITING;
- every skipped test is skipped with a message that an entry of SKIPS allows
  for it (the device honestly lacks what the test needs), or is in WAITING;
- no test in WAITING passes (it is done: take it off the list).

SKIPS holds one entry a line: `TEST | MESSAGE | WHY`, TEST an fnmatch
pattern over the test's name (test_mr.MWTest.*), MESSAGE a regular
expression the skip message must match (re.search), WHY what the device
lacks. WAITING holds the tests that wait for parts of ibfab not built yet:
`OWNER | TEST | WHAT`, OWNER the part (rdma_cm RC, XRC, ...), WHAT a regular
expression its error, failure or skip message matches today. Lines starting
with # and blank lines are ignored; a malformed line is an error (exit 2,
the file and line named). The waiting tests are listed on every run, loudly.

Exit status: 0 passed, 1 failed, 2 bad arguments or lists.

Run with --inside RESULTS [TEST...] (by itself, under `ibfab exec`, with
Debian's /usr/bin/python3, for which pyverbs is built): runs the suite from a
private copy of /usr/share/doc/rdma-core/tests and writes each test's
outcome to RESULTS as JSON.
"""
import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SUITE = "/usr/share/doc/rdma-core/tests"
SUITE_TIMEOUT = 780  # seconds for the whole suite (CTest's TIMEOUT is 900); about two minutes on two idle cores


# --- inside: run the suite, record outcomes ------------------------------------------------------

def run_inside(results_path, names):
    import unittest
    from importlib.machinery import SourceFileLoader

    work = tempfile.mkdtemp(prefix="ibfab-rdma-core-suite.")
    try:
        tests_dir = os.path.join(work, "tests")
        shutil.copytree(SUITE, tests_dir)
        for fn in os.listdir(tests_dir):
            if fn.endswith(".gz"):
                with gzip.open(os.path.join(tests_dir, fn), "rb") as src, \
                        open(os.path.join(tests_dir, fn[:-3]), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.unlink(os.path.join(tests_dir, fn))
        # As run_tests.py: its folder first on the path, the package loaded from its __init__.py.
        sys.path.insert(0, tests_dir)
        sys.argv = [os.path.join(tests_dir, "run_tests.py")]
        from args_parser import parser
        parser.parse_args()
        tests = SourceFileLoader("tests", os.path.join(tests_dir, "__init__.py")).load_module()
        loader = unittest.defaultTestLoader
        suite = loader.loadTestsFromNames(names, tests) if names else loader.loadTestsFromModule(tests)

        outcomes = {}

        def name(test):
            tid = test.id()
            return tid[len("tests."):] if tid.startswith("tests.") else tid

        class Recording(unittest.TextTestResult):
            def startTest(self, test):
                self._began = time.monotonic()
                super().startTest(test)

            def _record(self, test, status, message=""):
                prior = outcomes.get(name(test))
                if prior and prior["status"] in ("error", "fail"):
                    return  # a subtest's failure stands
                outcomes[name(test)] = {"status": status, "message": message,
                                        "seconds": round(time.monotonic() - getattr(self, "_began", time.monotonic()), 2)}

            def addSuccess(self, test):
                super().addSuccess(test)
                if name(test) not in outcomes:
                    self._record(test, "ok")

            def addSkip(self, test, reason):
                super().addSkip(test, reason)
                self._record(test, "skip", reason)

            def addError(self, test, err):
                super().addError(test, err)
                self._record(test, "error", self._exc_info_to_string(err, test))

            def addFailure(self, test, err):
                super().addFailure(test, err)
                self._record(test, "fail", self._exc_info_to_string(err, test))

            def addSubTest(self, test, subtest, err):
                super().addSubTest(test, subtest, err)
                if err is not None:
                    failed = issubclass(err[0], test.failureException)
                    self._record(test, "fail" if failed else "error", self._exc_info_to_string(err, test))

            def addExpectedFailure(self, test, err):
                super().addExpectedFailure(test, err)
                self._record(test, "ok", "expected failure")

            def addUnexpectedSuccess(self, test):
                super().addUnexpectedSuccess(test)
                self._record(test, "fail", "unexpected success")

        runner = unittest.TextTestRunner(verbosity=2, resultclass=Recording)
        runner.run(suite)
        with open(results_path, "w") as f:
            json.dump(outcomes, f, indent=1, sort_keys=True)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- outside: the lists ---------------------------------------------------------------------------

class ListError(Exception):
    pass


def read_list(path, fields, regex_field):
    """The entries of SKIPS or WAITING: (line number, [fields...]), the regular expression checked."""
    entries = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = [p.strip() for p in text.split(" | ")]
            if len(parts) != fields or not all(parts):
                raise ListError(f"{path}:{number}: expected {fields} fields separated by ' | ', got: {text}")
            regex = parts[regex_field]
            try:
                re.compile(regex)
            except re.error as e:
                raise ListError(f"{path}:{number}: bad regular expression {regex!r}: {e}")
            entries.append((number, parts))
    return entries


def read_skips(path):
    return [(n, {"test": p[0], "message": p[1], "why": p[2]}) for n, p in read_list(path, 3, 1)]


def read_waiting(path):
    return [(n, {"owner": p[0], "test": p[1], "what": p[2]}) for n, p in read_list(path, 3, 2)]


def judge(outcomes, skips, waiting, skips_path, waiting_path):
    """(problems, waiting_report, unused entries) for the outcomes against the lists."""
    problems, waited, used_skips, used_waiting = [], [], set(), set()
    for test in sorted(outcomes):
        o = outcomes[test]
        wait = next(((n, w) for n, w in waiting if fnmatch.fnmatchcase(test, w["test"])), None)
        if wait:
            n, w = wait
            used_waiting.add(n)
            if o["status"] == "ok":
                problems.append(f"{test}: passes, but {waiting_path}:{n} says it waits for {w['owner']}: "
                                "take it off that list")
            elif not re.search(w["what"], o["message"]):
                problems.append(f"{test}: {o['status']} in a way {waiting_path}:{n} does not expect "
                                f"({w['what']!r}): {last_line(o['message'])}")
            else:
                waited.append((w["owner"], test, o["status"], last_line(o["message"])))
            continue
        if o["status"] == "ok":
            continue
        if o["status"] == "skip":
            allow = next((n for n, s in skips
                          if fnmatch.fnmatchcase(test, s["test"]) and re.search(s["message"], o["message"])), None)
            if allow is None:
                problems.append(f"{test}: skipped for a reason {skips_path} does not allow: {o['message']!r}")
            else:
                used_skips.add(allow)
            continue
        problems.append(f"{test}: {o['status'].upper()}: {last_line(o['message'])}\n{indent(o['message'])}")
    unused = [f"{skips_path}:{n}: {s['test']} | {s['message']}" for n, s in skips if n not in used_skips]
    unused += [f"{waiting_path}:{n}: {w['owner']} | {w['test']}" for n, w in waiting if n not in used_waiting]
    return problems, waited, unused


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def indent(text):
    return "".join("    " + line + "\n" for line in text.strip().splitlines()[-12:])


# --- outside: serve, run, judge ------------------------------------------------------------------

def wait_for_line(stream, pattern, timeout):
    """Whether `stream` prints a line matching pattern within timeout seconds (read on a thread)."""
    seen = threading.Event()
    lines = []

    def read():
        for line in stream:
            lines.append(line)
            if re.search(pattern, line):
                seen.set()
        seen.set()  # the end of the output: nothing more will match

    threading.Thread(target=read, daemon=True).start()
    seen.wait(timeout)
    return any(re.search(pattern, line) for line in lines), lines


def main(argv):
    if len(argv) >= 2 and argv[1] == "--inside":
        if len(argv) < 3:
            print(__doc__)
            return 2
        return run_inside(argv[2], argv[3:])
    args = argv[1:]
    options = {"--topology": "fat-tree:2:4", "--node": "H2"}
    rest = []
    i = 0
    while i < len(args):
        if args[i] in options and i + 1 < len(args):
            options[args[i]] = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    if len(rest) < 3:
        print(__doc__)
        return 2
    ibfab, skips_path, waiting_path, names = os.path.abspath(rest[0]), rest[1], rest[2], rest[3:]
    try:
        skips = read_skips(skips_path)
        waiting = read_waiting(waiting_path)
    except (OSError, ListError) as e:
        print(f"error: {e}")
        return 2
    if not os.path.isfile(os.path.join(SUITE, "run_tests.py")):
        print("rdma-core's tests are not installed: install python3-pyverbs (scripts/setup-deps.sh)")
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "ibfab.sock")
        results = os.path.join(tmp, "results.json")
        serve = subprocess.Popen([ibfab, "serve", "--topology", options["--topology"], "--socket", sock],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            ready, serve_lines = wait_for_line(serve.stdout, "^ready$", 60)
            if not ready:
                print("serve did not get ready:\n" + "".join(serve_lines[-30:]))
                return 1
            started = time.monotonic()
            run = subprocess.run([ibfab, "exec", "--socket", sock, "--node", options["--node"], "--",
                                  "/usr/bin/python3", os.path.abspath(__file__), "--inside", results] + names,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 timeout=SUITE_TIMEOUT, cwd=tmp)
            took = time.monotonic() - started
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            print(out[-20000:])
            print(f"FAILED: the suite did not finish within {SUITE_TIMEOUT} s")
            return 1
        finally:
            serve.terminate()
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()
        try:
            with open(results) as f:
                outcomes = json.load(f)
        except (OSError, ValueError):
            print(run.stdout[-20000:])
            print(f"FAILED: the suite wrote no results (exit status {run.returncode})")
            return 1

    counts = {}
    for o in outcomes.values():
        counts[o["status"]] = counts.get(o["status"], 0) + 1
    print(f"rdma-core's suite on {options['--node']} of {options['--topology']}: {len(outcomes)} tests in "
          f"{took:.0f} s: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)))
    problems, waited, unused = judge(outcomes, skips, waiting, skips_path, waiting_path)
    if waited:
        print(f"\n!!! {len(waited)} TESTS EXPECTED TO FAIL UNTIL OTHER PARTS LAND ({waiting_path}; "
              "take each off as its part is merged):")
        for owner in sorted({w[0] for w in waited}):
            print(f"!!!   until {owner}:")
            for _, test, status, message in (w for w in waited if w[0] == owner):
                print(f"!!!     {test}: {status}: {message}")
    if unused and not names:
        print("\nentries that matched no test this run (a machine with a GPU, huge pages... runs them;"
              " otherwise stale):")
        for u in unused:
            print(f"  {u}")
    if problems:
        print(f"\nFAILED: {len(problems)} problem(s):")
        for p in problems:
            print(f"  {p}")
        return 1
    print("\nPASSED: no failures or errors; every skip allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
