#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A proxy for bipload's tests that speaks bipload_proxy.h's protocol by
hand, well or badly: bipload must believe nothing it should not.

  BIPTEST_PROXY_MODE=MODE fakeproxy.py   (BIPLOAD_PROXY; the remote shell runs it)

Every mode reads the job description, answers with the marker and a hello,
then for each node of the description:
  good       started, "hello from N" on stdout, exit 0; then done
  exit3      started, exit status 3 for node 1; then done
  othernode  output for a node that is not its own
  twice      the end of a node twice
  long       a frame longer than the protocol allows
  nohello    output before its hello
  garbage    random bytes after its hello
  pmrec      a process channel's record, in a job that gives none
  grew       a new process's start, for a node that did not join
Then it waits for its stdin to end, at most 30 s.
"""
import os
import struct
import sys
import time

BPF_JOB, BPF_HELLO, BPF_STARTED, BPF_OUT, BPF_EXIT, BPF_DONE = 1, 16, 17, 18, 19, 21
BPF_PMREC, BPF_GREW = 22, 23


def frame(t, node, data=b""):
    os.write(1, struct.pack(">III", t, node, len(data)) + data)


def read_job():
    head = b""
    while len(head) < 12:
        head += os.read(0, 12 - len(head))
    t, _, n = struct.unpack(">III", head)
    body = b""
    while len(body) < n:
        body += os.read(0, n - len(body))
    assert t == BPF_JOB
    return [int(r[1:].split(b" ")[0]) for r in body.split(b"\0") if r.startswith(b"N")]


def main():
    mode = os.environ.get("BIPTEST_PROXY_MODE", "good")
    nodes = read_job()
    os.write(1, b"bipload-proxy 1 ready\n")
    if mode == "nohello":
        frame(BPF_OUT, nodes[0], b"\1early\n")
    frame(BPF_HELLO, 0, struct.pack(">I", os.getpid()) + b"fake")
    for k, node in enumerate(nodes):
        frame(BPF_STARTED, node, struct.pack(">I", 4000 + node))
        if mode == "othernode":
            frame(BPF_OUT, 999, b"\1not mine\n")
        elif mode == "long":
            os.write(1, struct.pack(">III", BPF_OUT, node, 1 << 30))
        elif mode == "garbage":
            os.write(1, os.urandom(4096))
        elif mode == "pmrec":
            frame(BPF_PMREC, node, b"grow\0" + b"1\0" * 2)
        elif mode == "grew":
            frame(BPF_GREW, node, struct.pack(">II", 4100 + node, 0))
        frame(BPF_OUT, node, b"\1hello from %d\n" % node)
        frame(BPF_OUT, node, b"\1")
        frame(BPF_OUT, node, b"\2")
        frame(BPF_EXIT, node, struct.pack(">I", (3 << 8) if mode == "exit3" and node == 1 else 0))
        if mode == "twice":
            frame(BPF_EXIT, node, struct.pack(">I", 0))
    frame(BPF_DONE, 0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and os.read(0, 65536):
        pass


if __name__ == "__main__":
    main()
