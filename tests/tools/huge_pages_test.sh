#!/bin/sh
# use_huge_pages: the heap is on transparent huge pages where the kernel
# offers them, and the program's environment is the one it was given
# (GLIBC_TUNABLES unset or as set, no marker left), for children to inherit.
probe=$1 malloc=$2  # malloc: glibc, or sanitizer (no tunables: the heap is not checked)
fail() { echo "FAIL: $*"; exit 1; }
offers=1
grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && offers=0
out=$(env -u GLIBC_TUNABLES "$probe") || fail "probe exited $?"
echo "$out"
echo "$out" | grep -qx 'tunables=(unset)' || fail "GLIBC_TUNABLES not put back (unset)"
echo "$out" | grep -qx 'marker=gone' || fail "the marker is left in the environment"
if [ $offers = 1 ] && [ "$malloc" = glibc ]; then
  kb=$(echo "$out" | sed -n 's/^huge_kb=//p')
  [ "${kb:-0}" -gt 0 ] || fail "no huge pages under 64 MiB of heap"
fi
out=$(GLIBC_TUNABLES=glibc.malloc.check=0 "$probe") || fail "probe exited $?"
echo "$out" | grep -qx 'tunables=glibc.malloc.check=0' || fail "GLIBC_TUNABLES not put back as given"
out=$(env -u GLIBC_TUNABLES IBFAB_HUGE_PAGES=0 "$probe") || fail "probe exited $?"
echo "$out" | grep -qx 'huge_kb=0' || fail "IBFAB_HUGE_PAGES=0 still used huge pages"
echo ok
