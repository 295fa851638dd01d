#!/usr/bin/env python3
"""compare.policy: `ibfab run --compare min-max-hop,least-loaded` on
scenarios/policy-compare.yaml, its figures checked against figures derived
outside the code that prints them.

usage: compare_policy.py IBFAB SCENARIO

- The comparison must exit 0, and both runs meet every expectation.
- min-max-hop (OpenSM's root choice): on a two-level fat tree every spine is
  two hops from every host and a leaf three from a host of another leaf, so
  every tree is rooted at one spine (the first, as OpenSM breaks the tie) and
  made of each member's cable and each member leaf's cable to that spine.
  From the scenario's joins and the cabling (`ibfab topo gen`), that gives
  the trees, the MFT entries, the busiest switch's entries, the depth and
  the link load (maximum and mean over every cable between two switches,
  used or not) the run must print.
- Both policies: the link loads the run prints are those of the trees its
  MFTs hold, read from the Graphviz files `ibfab run --dot` writes for the
  same scenario under each policy.
- least-loaded spreads the roots: its busiest cable carries fewer trees than
  min-max-hop's, and its busiest switch holds fewer MFT entries.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile


def figures(text):
    """{figure: (min-max-hop value, least-loaded value)} from the comparison table."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\S.*?)\s{2,}(\S+)\s+(\S+)\s*$", line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def cabling(ibfab, spec):
    """(leaf of each host, the switches, number of cables between two
    switches), from `ibfab topo gen`."""
    text = subprocess.run([ibfab, "topo", "gen", spec], check=True, stdout=subprocess.PIPE, text=True).stdout
    switches, links, node = set(), set(), None
    for line in text.splitlines():
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
        if m:
            node = m.group(2)
            if m.group(1) == "Switch":
                switches.add(node)
            continue
        m = re.match(r'^\[(\d+)\]\S*\s+"([^"]+)"\[(\d+)\]', line)
        if m and node:
            links.add(frozenset([(node, int(m.group(1))), (m.group(2), int(m.group(3)))]))
    leaf_of = {}
    for link in links:
        (a, _), (b, _) = sorted(link)
        if (a in switches) != (b in switches):
            host, leaf = (b, a) if a in switches else (a, b)
            leaf_of[host] = leaf
    return leaf_of, switches, sum(1 for link in links if all(n in switches for n, _ in link))


def dot_loads(ibfab, scenario, root_policy, switches):
    """Trees per inter-switch cable of the trees the MFTs hold, from
    `ibfab run --dot`."""
    with tempfile.TemporaryDirectory() as d:
        with open(scenario) as f:
            text = f.read()
        text = re.sub(r"mcast-root: [\w-]+", f"mcast-root: {root_policy}", text)
        text = re.sub(r"(?m)^fingerprint:.*$", "", text)
        copy = os.path.join(d, "scenario.yaml")
        with open(copy, "w") as f:
            f.write(text)
        os.mkdir(os.path.join(d, "dot"))
        r = subprocess.run([ibfab, "run", "--dot", os.path.join(d, "dot"), copy], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0 or r.stdout.split()[-1:] != ["PASS"]:
            raise SystemExit(f"ibfab run --dot under {root_policy} failed ({r.returncode}):\n{r.stdout[-2000:]}")
        load = collections.Counter()
        files = glob.glob(os.path.join(d, "dot", "*.dot"))
        for path in files:
            with open(path) as f:
                for a, b in re.findall(r'"([^"]+)" -- "([^"]+)" \[color="#e76f51"', f.read()):
                    if a in switches and b in switches:
                        load[frozenset((a, b))] += 1
        return len(files), load


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ibfab, scenario = sys.argv[1], sys.argv[2]
    r = subprocess.run([ibfab, "run", "--compare", "min-max-hop,least-loaded", scenario],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    bad = []
    if r.returncode != 0:
        bad.append(f"ibfab run --compare exited {r.returncode}")
    got = figures(r.stdout)
    with open(scenario) as f:
        text = f.read()
    spec = re.search(r"(?m)^topology:\s*(\S+)", text).group(1)
    groups = collections.defaultdict(set)
    for node, mgid in re.findall(r'join: \{node: (\w+), mgid: "([^"]+)"\}', text):
        groups[mgid].add(node)
    expectations = len(re.findall(r"expect:", text))
    leaf_of, switches, cables = cabling(ibfab, spec)

    # min-max-hop, from the joins and the cabling alone.
    leaves_of = {g: {leaf_of[h] for h in members} for g, members in groups.items()}
    groups_on_leaf = collections.Counter(leaf for ls in leaves_of.values() for leaf in ls)
    uses = sum(len(ls) for ls in leaves_of.values())  # one leaf-to-root cable per member leaf
    expected = {
        "multicast trees": str(len(groups)),
        "MFT entries in use": str(sum(1 + len(ls) for ls in leaves_of.values())),
        "MFT entries on the busiest switch": str(len(groups)),  # the root spine is in every tree
        "tree depth max": "1",
        "link load max (trees per cable)": str(max(groups_on_leaf.values())),
        "link load mean": f"{uses / cables:.2f}",
    }
    for name, want in expected.items():
        have = got.get(name, (None, None))[0]
        if have != want:
            bad.append(f"min-max-hop: {name} = {have}, derived {want}")

    for column, policy in ((0, "min-max-hop"), (1, "least-loaded")):
        if got.get("result", ("", ""))[column] != "PASS":
            bad.append(f"{policy}: result {got.get('result')}")
        met = got.get("expectations met", ("", ""))[column]
        done, _, total = met.partition("/")
        if not done.isdigit() or done != total or int(total) < expectations:
            bad.append(f"{policy}: expectations met {met}")
        trees, load = dot_loads(ibfab, scenario, policy, switches)
        printed = got.get("link load max (trees per cable)", (None, None))[column]
        if trees != len(groups) or printed != str(max(load.values())):
            bad.append(f"{policy}: link load max {printed}, the {trees} trees of its MFTs give {max(load.values())}")
        mean = f"{sum(load.values()) / cables:.2f}"
        if got.get("link load mean", (None, None))[column] != mean:
            bad.append(f"{policy}: link load mean {got.get('link load mean')}, its MFTs give {mean}")

    mm, ll = got.get("link load max (trees per cable)", ("0", "0"))
    if not int(ll) < int(mm):
        bad.append(f"least-loaded's busiest cable carries {ll} trees, min-max-hop's {mm}")
    mm, ll = got.get("MFT entries on the busiest switch", ("0", "0"))
    if not int(ll) < int(mm):
        bad.append(f"least-loaded's busiest switch holds {ll} MFT entries, min-max-hop's {mm}")
    for line in bad:
        print("WRONG:", line)
    print(f"{len(bad)} figures wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
