#!/usr/bin/env python3
"""man.*: the man pages `ibfab man-pages DIR` writes (tools/cli/man_page.h).

usage: man_pages_test.py agree|lint IBFAB

agree: the pages are ibfab.1 and ibfab-CMD.1 for each command `ibfab --help`
lists, and no others. Every command, every level down (the subcommands
each --help lists, walked), finds what its --help prints on its page, in
the place for it: its usage line in SYNOPSIS; its description, line for
line, in DESCRIPTION (or its subsection, .SS "ibfab CMD SUB", on its
command's page); each option and positional as an entry (.TP) under the
same names whose text is the help's description, line for line, in
OPTIONS (or its subsection); each subcommand as an entry of COMMANDS on
the root's page, as a subsection holding its description on a command's;
each exit status of the footer as an entry of EXIT STATUS. The checker
must then find a page with one description line dropped wrong.

lint: groff (-man -Tutf8 -ww -z) and man (--warnings -l) read every page
without a word on stderr, and groff does warn of a page that is wrong.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HELP_COLUMN = 30  # where CLI11's --help starts a description


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def parse_help(out):
    """--help's text as {description, usage, sections: {heading: [entry]},
    statuses: [(code, meaning)]}; an entry is (names, lines, first) where
    `first` is the description's first line when the entry's line may hold
    it or may be all names and type (CLI11 pads the names to column 30 and
    puts a longer one's description on the next line, so a line whose
    column 29 is a space and 30 is not reads either way)."""
    h = {"description": [], "usage": None, "sections": {}, "statuses": []}
    heading = None
    entry = None
    for line in out.split("\n"):
        if h["usage"] is None:
            if line.startswith("Usage:"):
                h["usage"] = line[len("Usage:"):].strip()
            else:
                h["description"].append(line.rstrip())
            continue
        if not line.strip():
            continue
        if not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
            h["sections"].setdefault(heading, [])
            continue
        if heading == "Exit status":
            m = re.match(r"^\s+(\d+)\s+(.*)$", line)
            assert m, "footer line: " + line
            h["statuses"].append((m.group(1), m.group(2)))
        elif line.startswith(" " * HELP_COLUMN):
            entry[1].append(line[HELP_COLUMN:].rstrip())
        else:
            assert line.startswith("  ") and line[2] != " ", "entry line: " + line
            names = line[2:].split(" ")[0].split(",")
            entry = (names, [], None)
            rest = line[HELP_COLUMN:].rstrip()
            if len(line) > HELP_COLUMN and line[HELP_COLUMN - 2:HELP_COLUMN] == "  ":
                entry[1].append(rest)
            elif len(line) > HELP_COLUMN and line[HELP_COLUMN - 1] == " " and line[HELP_COLUMN] != " ":
                entry = (names, [], rest)
            h["sections"][heading].append(entry)
    while h["description"] and not h["description"][-1]:
        h["description"].pop()
    return h


def unroff(s):
    """A roff text line as it reads: fonts dropped, escapes undone."""
    plain = {"&": "", "-": "-", "(rs": "\\", "(dq": '"', "e": "\\"}
    return re.sub(
        r"\\(f[BIRP]|&|-|\(rs|\(dq|e|\[u[0-9A-F]{4,6}\])",
        lambda m: plain.get(m.group(1), "") if not m.group(1).startswith("[u") else chr(int(m.group(1)[2:-1], 16)),
        s)


def parse_page(roff):
    """A page as {part: {lead, text, entries}}: a part is an .SH section, or a
    command's subsection (.SS "ibfab ..."; other .SS headings, option
    groups, stay in their part); `lead` its text lines before its first
    request, `text` all its text lines, `entries` (names, lines) for each
    .TP: the names the tag starts with (", " between them), the text lines
    after it up to the next request (.nf and .fi, around unfilled lines,
    are no break)."""
    parts = {}
    part = None
    entry = None
    lines = roff.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = re.match(r'^\.(SH|SS) "?(.*?)"?$', line)
        if m and (m.group(1) == "SH" or unroff(m.group(2)).startswith("ibfab ")):
            part = parts.setdefault(unroff(m.group(2)), {"lead": [], "text": [], "entries": [], "open": True})
            entry = None
            continue
        if part is None:
            continue
        if line in (".nf", ".fi"):  # unfilled lines (an indented synopsis or example) are text too
            continue
        if line.startswith("."):
            part["open"] = False
            entry = None
            if line == ".TP" and i < len(lines):
                tag = unroff(re.sub(r"^\.[BI] ", "", lines[i]))
                i += 1
                names = re.match(r"^([^\s,]+(?:, [^\s,]+)*)", tag).group(1).split(", ")
                entry = (names, [])
                part["entries"].append(entry)
            continue
        text = unroff(line)
        part["text"].append(text)
        if part["open"]:
            part["lead"].append(text)
        if entry is not None:
            entry[1].append(text)
    return parts


def help_of(ibfab, words):
    r = run([ibfab, *words, "--help"])
    if r.returncode != 0:
        raise SystemExit(f"FAILED: ibfab {' '.join(words)} --help exited {r.returncode}: {r.stderr}")
    return parse_help(r.stdout)


def check_entries(where, helped, entries, fail):
    """Each entry --help prints is one of `entries`, under the same names,
    with the same lines."""
    for names, lines, first in helped:
        found = [e for e in entries if e[0] == names]
        if not found:
            fail(f"{where}: no entry for {','.join(names)}")
            continue
        page_lines = [l.strip() for l in found[0][1]]
        want = [l.strip() for l in lines]
        if first is not None and page_lines != want:
            want = [first.strip()] + want
        if page_lines != want:
            fail(f"{where}: {','.join(names)} says {page_lines}, --help {want}")


def check_command(ibfab, words, pages, fail):
    """What `ibfab WORDS --help` prints, on the page it belongs to."""
    h = help_of(ibfab, words)
    name = " ".join(["ibfab", *words])
    page_file = "ibfab.1" if not words else f"ibfab-{words[0]}.1"
    page = pages.get(page_file)
    if page is None:
        fail(f"{name}: no page {page_file}")
        return
    own_page = len(words) <= 1
    where = f"{page_file} ({name})"
    part = page.get("DESCRIPTION" if own_page else name)
    if part is None:
        fail(f"{where}: no {'DESCRIPTION' if own_page else 'subsection'}")
        return
    if [l.strip() for l in part["lead"]] != [l.strip() for l in h["description"]]:
        fail(f"{where}: description {part['lead']}, --help {h['description']}")
    synopsis = page.get("SYNOPSIS", {"text": []})["text"]
    if h["usage"] not in [l.strip() for l in synopsis]:
        fail(f"{where}: usage '{h['usage']}' not in SYNOPSIS {synopsis}")
    options = page.get("OPTIONS") if own_page else part
    for heading, helped in h["sections"].items():
        if heading == "Subcommands":
            continue
        check_entries(f"{where} {heading}", helped, (options or {"entries": []})["entries"], fail)
    statuses = [([code], [meaning], None) for code, meaning in h["statuses"]]
    if not statuses:
        fail(f"{name}: --help shows no exit status")
    check_entries(f"{where} EXIT STATUS", statuses, page.get("EXIT STATUS", {"entries": []})["entries"], fail)
    for sub_names, sub_lines, sub_first in h["sections"].get("Subcommands", []):
        sub = sub_names[0]
        if not words:
            check_entries(f"{where} COMMANDS", [([sub], sub_lines, sub_first)],
                          page.get("COMMANDS", {"entries": []})["entries"], fail)
        else:
            sub_part = page.get(f"{name} {sub}")
            if sub_part is None:
                fail(f"{where}: no subsection for {name} {sub}")
            elif not all(l.strip() in [t.strip() for t in sub_part["lead"]]
                         for l in ([sub_first] if sub_first else []) + sub_lines if l.strip()):
                fail(f"{where}: {name} {sub}'s subsection lacks {sub_lines}")
        check_command(ibfab, [*words, sub], pages, fail)


def check_pages(ibfab, directory):
    """The failures of the pages in `directory` against --help."""
    failures = []
    pages = {f: parse_page(open(os.path.join(directory, f), encoding="utf-8").read())
             for f in sorted(os.listdir(directory))}
    commands = [e[0][0] for e in help_of(ibfab, [])["sections"].get("Subcommands", [])]
    expected = sorted(["ibfab.1"] + [f"ibfab-{c}.1" for c in commands])
    if sorted(pages) != expected:
        failures.append(f"pages {sorted(pages)}, expected {expected}")
    check_command(ibfab, [], pages, failures.append)
    return failures


def write_pages(ibfab, directory):
    r = run([ibfab, "man-pages", directory])
    if r.returncode != 0:
        raise SystemExit(f"FAILED: ibfab man-pages exited {r.returncode}: {r.stderr}")
    return sorted(os.listdir(directory))


def agree(ibfab, tmp):
    pages = os.path.join(tmp, "man")
    files = write_pages(ibfab, pages)
    failures = check_pages(ibfab, pages)
    for f in failures:
        print("FAILED:", f)
    if failures:
        return 1
    # The checker itself: a page missing one option's description line fails.
    wrong = os.path.join(tmp, "wrong")
    shutil.copytree(pages, wrong)
    victim = os.path.join(wrong, files[-1])
    lines = open(victim, encoding="utf-8").read().split("\n")
    tp = [i for i, l in enumerate(lines) if l == ".TP"]
    del lines[tp[1] + 2]
    open(victim, "w", encoding="utf-8").write("\n".join(lines))
    if not check_pages(ibfab, wrong):
        print(f"FAILED: the checker passes {files[-1]} without line {tp[1] + 3}")
        return 1
    print(f"passed: {len(files)} pages ({', '.join(files)}) say what --help says")
    return 0


def lint_one(path, env):
    """What groff and man say on stderr of the page at `path`."""
    said = []
    for argv in (["groff", "-man", "-Tutf8", "-ww", "-z", path], ["man", "--warnings", "-l", path]):
        r = run(argv, env=env)
        if r.returncode != 0 or r.stderr:
            said.append(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
    return said


def lint(ibfab, tmp):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat", PAGER="cat")
    # groff must speak of a page that is wrong: an undefined request.
    bad = os.path.join(tmp, "bad.1")
    open(bad, "w").write('.TH BAD 1\n.SH NAME\nbad \\- wrong\n.XX undefined\n')
    if not lint_one(bad, env):
        print("FAILED: groff and man read a page with an undefined request without a warning")
        return 1
    pages = os.path.join(tmp, "man")
    files = write_pages(ibfab, pages)
    failures = [f"{f}: {said}" for f in files for said in lint_one(os.path.join(pages, f), env)]
    for f in failures:
        print("FAILED:", f)
    if failures:
        return 1
    print(f"passed: groff and man read {len(files)} pages without a warning")
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("agree", "lint"):
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        return (agree if sys.argv[1] == "agree" else lint)(sys.argv[2], tmp)


if __name__ == "__main__":
    sys.exit(main())
