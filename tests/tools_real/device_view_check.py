#!/usr/bin/env python3
"""Checks, from inside `ibfab exec --node H`, that the host's device is where
programs look for it outside libibverbs, and says what libibverbs says.

usage: device_view_check.py IFNAME IPV4/LEN IPV6/LEN

Reads /sys/class/infiniband/ibfab0/..., /sys/class/infiniband_verbs,
/sys/class/infiniband_mad and /dev/infiniband (character devices as root,
whose open fails as without the kernel modules), and compares them with
`ibv_devinfo -v` (GUIDs, port state, physical state, LIDs, LMC, link
layer, GID 0, rate) and with `smpquery pkeys` (the P_Key table the SM set);
then checks that the device's net interface (device/net/IFNAME) carries
exactly the host's addresses from the engine's plan (`ip -j addr`).
Prints one line per check and "device view: all N checks passed", or the
failures and exit status 1.
"""
import errno
import ipaddress
import json
import os
import re
import stat
import subprocess
import sys

DEV = "/sys/class/infiniband/ibfab0"
failures = []
passed = 0


def check(name, got, want):
    global passed
    if got == want:
        passed += 1
        print(f"ok   {name}: {got!r}")
    else:
        failures.append(name)
        print(f"FAIL {name}: {got!r}, expected {want!r}")


def read(path):
    try:
        with open(path) as f:
            return f.read().rstrip("\n")
    except OSError as e:
        return f"<{e.strerror}>"


def devinfo():
    """ibv_devinfo -v's 'key: value' lines (the first of each key), and its GIDs."""
    out = subprocess.run(["ibv_devinfo", "-v"], capture_output=True, text=True, check=True).stdout
    fields, gids = {}, {}
    for line in out.splitlines():
        m = re.match(r"\s*GID\[\s*(\d+)\]:\s+(\S+)", line)
        if m:
            gids[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"\s*([a-z_]+):\s+(.*\S)", line)
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2)
    return fields, gids


def main():
    ifname, ipv4, ipv6 = sys.argv[1:4]
    info, gids = devinfo()
    # The device and its classes.
    check("/sys/class/infiniband", sorted(os.listdir("/sys/class/infiniband")), ["ibfab0"])
    check("infiniband_verbs/uverbs0/ibdev", read("/sys/class/infiniband_verbs/uverbs0/ibdev"), "ibfab0")
    check("infiniband_mad/umad0/ibdev", read("/sys/class/infiniband_mad/umad0/ibdev"), "ibfab0")
    check("infiniband_mad/umad0/port", read("/sys/class/infiniband_mad/umad0/port"), "1")
    for name in ("uverbs0", "umad0", "issm0", "rdma_cm"):
        path = "/dev/infiniband/" + name
        kind = "missing"
        if os.path.exists(path):
            kind = "char device" if stat.S_ISCHR(os.stat(path).st_mode) else "file"
        check(path, kind, "char device" if os.geteuid() == 0 else "file")
        if kind == "char device":  # no driver behind it, as on a host without the modules
            try:
                os.close(os.open(path, os.O_RDWR))
                opened = "opened"
            except OSError as e:
                opened = errno.errorcode.get(e.errno, str(e.errno))
            check(f"open {path}", opened, "ENODEV" if name == "rdma_cm" else "ENXIO")
    # The node and port against ibv_devinfo.
    check("node_guid", read(DEV + "/node_guid"), info["node_guid"])
    check("sys_image_guid", read(DEV + "/sys_image_guid"), info["sys_image_guid"])
    check("node_type", read(DEV + "/node_type"), "1: CA")
    port = DEV + "/ports/1/"
    state = re.match(r"PORT_(\w+) \((\d+)\)", info["state"])
    check("ports/1/state", read(port + "state"), f"{state.group(2)}: {state.group(1)}")
    phys = re.match(r"(\w+) \((\d+)\)", info["phys_state"])
    check("ports/1/phys_state", read(port + "phys_state"),
          f"{phys.group(2)}: " + {"LINK_UP": "LinkUp", "POLLING": "Polling", "DISABLED": "Disabled"}[phys.group(1)])
    check("ports/1/lid", int(read(port + "lid"), 16), int(info["port_lid"]))
    check("ports/1/sm_lid", int(read(port + "sm_lid"), 16), int(info["sm_lid"]))
    check("ports/1/lid_mask_count", int(read(port + "lid_mask_count")), int(info["port_lmc"], 16))
    check("ports/1/link_layer", read(port + "link_layer"), info["link_layer"])
    gid = read(port + "gids/0")
    check("ports/1/gids/0", gid, gids[0])
    width = re.match(r"(\d+)X", info["active_width"]).group(1)
    lane = float(re.match(r"([\d.]+) Gbps", info["active_speed"]).group(1))
    rate = read(port + "rate")
    check("ports/1/rate (width)", re.search(r"\((\d+)X", rate).group(1), width)
    gbps = float(rate.split()[0])
    check("ports/1/rate (about width x lane speed)", abs(gbps - int(width) * lane) <= 0.1 * gbps, True)
    # The P_Key table against the SM's, read with an SMP.
    lid = info["port_lid"]
    out = subprocess.run(["smpquery", "pkeys", lid, "1"], capture_output=True, text=True).stdout
    table = [int(v, 16) for v in re.findall(r"\d+: (0x[0-9a-f]{4})", out)]
    check("smpquery pkeys answered", len(table) > 0, True)
    for i, value in enumerate(table[:8]):
        check(f"ports/1/pkeys/{i}", read(port + f"pkeys/{i}"), f"0x{value:04x}")
    # The net interface and its addresses.
    check("device/net", sorted(os.listdir(DEV + "/device/net")), [ifname])
    check(f"device/net/{ifname} is /sys/class/net/{ifname}",
          os.path.realpath(DEV + f"/device/net/{ifname}") == os.path.realpath(f"/sys/class/net/{ifname}"), True)
    check(f"{ifname} operstate", read(f"/sys/class/net/{ifname}/operstate"), "up")
    addrs = json.loads(subprocess.run(["ip", "-j", "addr", "show", ifname], capture_output=True, text=True,
                                      check=True).stdout)[0]["addr_info"]
    have = {f"{a['local']}/{a['prefixlen']}" for a in addrs}
    check(f"{ifname} IPv4", ipv4 in have, True)
    check(f"{ifname} IPv6", ipv6 in have, True)
    # ipoib's: fe80::/64 and the port GUID with the universal/local bit flipped.
    guid = int(ipaddress.IPv6Address(gid)) & ((1 << 64) - 1)
    link_local = f"{ipaddress.IPv6Address((0xFE80 << 112) | (guid ^ (0x02 << 56)))}/64"
    check(f"{ifname} link-local from the port GUID", link_local in have, True)
    check(f"{ifname} addresses", len(have), 3)
    if failures:
        print(f"device view: {len(failures)} checks failed: {', '.join(failures)}")
        return 1
    print(f"device view: all {passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
