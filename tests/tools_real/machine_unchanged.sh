#!/bin/sh
# `ibfab exec` shows a host's device without changing the machine: runs
# served.py (a program under `ibfab exec` on two hosts, which must see
# /dev/infiniband and /sys/class/infiniband/ibfab0) and checks that the
# machine's /dev, /sys/class, network interfaces, routes and mounts are
# the same before and after.
#   machine_unchanged.sh IBFAB SERVED_PY
set -eu
ibfab=$1
served=$2
state() {
  ls -A /dev /sys/class
  ip -o link | cut -d: -f2
  ip -o addr | awk '{print $2, $4}'
  ip route
  findmnt -rn -o TARGET,FSTYPE | sort
}
before=$(state)
"$served" "$ibfab" fat-tree:2:4 H1,H2 "^uverbs0$|||^ibfab0$" --copies 2 -- \
  sh -c 'ls /dev/infiniband && ls /sys/class/infiniband'
after=$(state)
if [ "$before" != "$after" ]; then
  echo "the machine changed:"
  printf '%s\n' "$before" > /tmp/ibfab-machine-before.$$
  printf '%s\n' "$after" | diff /tmp/ibfab-machine-before.$$ - || true
  rm -f /tmp/ibfab-machine-before.$$
  exit 1
fi
echo "the machine's /dev, /sys/class, interfaces, routes and mounts: unchanged"
