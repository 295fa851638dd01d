#!/bin/sh
# Runs in both VMs of the pair (scripts/rxe-vm/run.sh --pair): b serves
# ibv_rc_pingpong on its rxe0, a exchanges 100 messages with it from its own
# rxe0, across qemu's socket network. Exit 0 when the exchange succeeds.
if [ "$IBFAB_VM_ROLE" = b ]; then
  timeout 90 ibv_rc_pingpong -d rxe0 -g "$IBFAB_VM_RXE0_GID" -n 100
  exit $?
fi
# The server in b may not listen yet (b boots on its own clock): an attempt
# refused is run again, within 60 s.
deadline=$(($(cut -d. -f1 /proc/uptime) + 60))
until timeout 30 ibv_rc_pingpong -d rxe0 -g "$IBFAB_VM_RXE0_GID" -n 100 "$IBFAB_VM_PEER_IP" >/tmp/client 2>&1; do
  if ! grep -q "Couldn't connect" /tmp/client || [ "$(cut -d. -f1 /proc/uptime)" -ge $deadline ]; then
    cat /tmp/client
    exit 1
  fi
  usleep 200000
done
cat /tmp/client
grep -q '^100 iters' /tmp/client && grep -q "remote address: .* GID ::ffff:$IBFAB_VM_PEER_IP\$" /tmp/client
