#!/usr/bin/env python3
"""One TCP message between two programs, for the hosts' network test.

usage: tcp_peer.py listen ADDRESS PORT   (prints "listening", then
                                          "got TEXT from PEER" and exits)
       tcp_peer.py send ADDRESS PORT TEXT (prints "sent")
"""
import socket
import sys


def main():
    mode, address, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "listen":
        s = socket.socket()
        s.bind((address, port))
        s.listen()
        print("listening", flush=True)
        s.settimeout(60)
        c, peer = s.accept()
        print(f"got {c.recv(256).decode()} from {peer[0]}", flush=True)
    else:
        with socket.create_connection((address, port), timeout=10) as c:
            c.sendall(sys.argv[4].encode())
        print("sent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
