#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The network side of attack.sh, run as the second user.

  attacker.py silent HOST PORT SECONDS     connect, say nothing, hold it open
  attacker.py garbage HOST PORT            connect, send random bytes
  (every mode that connects touches the file in ATTACKER_CONNECTED, when
  set, once it is connected)
  attacker.py proxy LPORT HOST PORT FILE   accept a client on LPORT, relay
                                           it to HOST:PORT both ways, and
                                           record what the client sent in FILE;
                                           relay the next clients unrecorded
  attacker.py replay HOST PORT FILE        connect and send FILE's bytes
  attacker.py unix-silent NAME             connect to the abstract UNIX socket
                                           NAME, say nothing, hold it open 10 s
  attacker.py unix-garbage NAME            connect to it, send random bytes

Every mode stops by itself within its time limit; connections go to the
loopback address the test gives, nowhere else.
"""
import os
import select
import socket
import sys
import time


def connect(host, port, deadline):
    while True:
        try:
            s = socket.create_connection((host, port), timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    mark = os.environ.get("ATTACKER_CONNECTED")
    if mark:
        open(mark, "w").close()
    return s


def silent(host, port, seconds):
    s = connect(host, int(port), time.monotonic() + 20)
    time.sleep(float(seconds))
    s.close()


def garbage(host, port):
    s = connect(host, int(port), time.monotonic() + 20)
    try:
        s.sendall(os.urandom(4096))
        s.settimeout(5)
        s.recv(4096)
    except OSError:
        pass
    s.close()


def relay(client, host, port):
    """Relay client to HOST:PORT both ways; return what the client sent."""
    server = connect(host, int(port), time.monotonic() + 20)
    sent = bytearray()
    deadline = time.monotonic() + 30
    peers = {client: server, server: client}
    while peers and time.monotonic() < deadline:
        ready, _, _ = select.select(list(peers), [], [], 0.5)
        for s in ready:
            if s not in peers:
                continue  # its other end closed in this same round
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                other = peers.pop(s)
                peers.pop(other, None)
                continue
            if s is client:
                sent += data
            try:
                peers[s].sendall(data)
            except OSError:
                pass
    client.close()
    server.close()
    return sent


def proxy(lport, host, port, path):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(lport)))
    ls.listen(4)
    ls.settimeout(30)
    client, _ = ls.accept()
    os.environ.pop("ATTACKER_CONNECTED", None)
    sent = relay(client, host, port)
    with open(path, "wb") as f:
        f.write(sent)
    # A job may exchange more than once (the ofi driver's barrier after
    # the addresses): relay the later connections too, unrecorded, until
    # none comes for 3 s.
    ls.settimeout(3)
    while True:
        try:
            client, _ = ls.accept()
        except OSError:
            break
        relay(client, host, port)


def replay(host, port, path):
    with open(path, "rb") as f:
        data = f.read()
    s = connect(host, int(port), time.monotonic() + 20)
    try:
        s.sendall(data)
        s.settimeout(5)
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()


def unix_connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect("\0" + name)
    mark = os.environ.get("ATTACKER_CONNECTED")
    if mark:
        open(mark, "w").close()
    return s


def unix_silent(name):
    s = unix_connect(name)
    time.sleep(10)
    s.close()


def unix_garbage(name):
    s = unix_connect(name)
    try:
        s.sendall(os.urandom(4096))
        s.recv(4096)
    except OSError:
        pass
    s.close()


def main():
    modes = {"silent": silent, "garbage": garbage, "proxy": proxy, "replay": replay,
             "unix-silent": unix_silent, "unix-garbage": unix_garbage}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    modes[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
