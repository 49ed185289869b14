#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tests of bipload --monitor (bipload_monitor.c), each a job of the
ring program (ring.c: every node sends only to its right neighbour):

  monitor.py http    BUILD   the server: 403 without the token, with a
                             wrong one, and on a target that is not the
                             page's; 400/405/431 for malformed, other and
                             oversized requests; the JSON state with the
                             token: the ranks and a ring-shaped matrix
  monitor.py browser BUILD   headless Chromium loads the page during the
                             job; its DOM's heat map shows traffic between
                             neighbours only; a screenshot goes to
                             monitor.png in the directory of argument 3
                             (meson gives the build's meson-logs; given
                             bench/results, it is the README's picture); with --trace, it links the
                             trace's two files; over the DevTools protocol, the
                             live page updates, and once the job has ended
                             it says so and keeps the ring it showed
  monitor.py faulty  BUILD   the ring over the simulated board with a wire
                             that loses, corrupts and duplicates: the
                             retransmission counters of the JSON state move
  monitor.py clusters BUILD  the ring over two clusters joined by a
                             gateway (bipconf(5)), nodes alternating: the
                             program's matrix is the ring's, the state
                             names the gateway and its two relays, and the
                             relays' rows show what they passed on
  monitor.py remote  BUILD   half the nodes on another "host" (a remote
                             shell that runs the command here): their
                             proxy reads their pages and sends MONITOR
                             frames; the matrix is the ring's in full and
                             every rank is monitored

No check depends on timing: each polls until what it waits for has come,
within a generous limit, and only then stops the job (the ring's stop
file).  Exit 77: skipped (the reason on stderr)."""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

NODES = 4
LIMIT = 120  # seconds for the data to come, far above what it needs


JOBS = []
BROWSERS = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    for job in JOBS:
        if job.proc.poll() is None:
            job.proc.kill()  # its processes die with it
    sys.exit(1)


class Job:
    """bipload --monitor -sz NODES ring STOPFILE, its URL read from stderr."""

    def __init__(self, build, env=None, nodes=NODES, args=None, setup=None):
        self.tmp = tempfile.mkdtemp(prefix="bipmon.")
        self.stop = os.path.join(self.tmp, "stop")
        e = dict(os.environ)
        e.update(env or {})
        if setup:
            setup(self.tmp)
        self.proc = subprocess.Popen(
            [os.path.join(build, "scripts", "bipload"), "--monitor", "-q", "-sz", str(nodes)] +
            (args or []) +
            [os.path.join(build, "tests", "monitor", "ring"), self.stop, str(4 * LIMIT)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, text=True, cwd=self.tmp)
        JOBS.append(self)
        line = self.proc.stderr.readline()
        m = re.match(r"bipload: monitor at (http://127\.0\.0\.1:(\d+)/)\?token=([0-9a-f]+)$",
                     line.strip())
        if not m:
            self.proc.kill()
            fail("no monitor URL on bipload's stderr: %r" % line)
        self.base, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        if len(self.token) < 32:
            fail("a token of %d hex digits" % len(self.token))
        self.url = self.base + "?token=" + self.token

    def state(self):
        with urllib.request.urlopen(self.base + "state?token=" + self.token, timeout=10) as r:
            if r.status != 200 or "json" not in r.headers.get("Content-Type", ""):
                fail("state: HTTP %d %s" % (r.status, r.headers.get("Content-Type")))
            return json.load(r)

    def wait_state(self, ready, what):
        deadline = time.monotonic() + LIMIT
        s = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                fail("the job ended before %s: %s" % (what, self.proc.stderr.read()))
            s = self.state()
            if ready(s):
                return s
            time.sleep(0.25)
        fail("no %s within %d s; last state: %s" % (what, LIMIT, json.dumps(s)[:2000]))

    def finish(self):
        open(self.stop, "w").close()
        try:
            out, err = self.proc.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("the ring did not stop")
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.proc.returncode != 0:
            fail("bipload exited %d: %s %s" % (self.proc.returncode, out, err))


def raw(port, data, read_all=True):
    """Send data as is; the status code of the answer (0: none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        got = b""
        while read_all:
            try:
                b = s.recv(65536)
            except OSError:
                break
            if not b:
                break
            got += b
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", got)
    return int(m.group(1)) if m else 0


def ring_ok(s, n, extra=0):
    """1 if every node has sent to its right neighbour and to no other
    (among the first n; extra: the relays after them)."""
    m = s["matrix"]
    if len(m) != n + extra:
        return False
    for i in range(n):
        for j in range(n):
            if (j == (i + 1) % n) != (m[i][j] > 0):
                return False
    return True


def check_ring(m, n, where):
    for i in range(n):
        for j in range(n):
            if j == (i + 1) % n and not m[i][j] > 0:
                fail("%s: no bytes from %d to its neighbour %d" % (where, i, j))
            if j != (i + 1) % n and m[i][j] != 0:
                fail("%s: %d bytes from %d to %d, not neighbours" % (where, m[i][j], i, j))


def status_of(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_http(build):
    job = Job(build)
    bad = job.token[:-1] + ("0" if job.token[-1] != "0" else "1")
    for path, what in [("/", "no token"), ("/state", "no token"),
                       ("/?token=" + bad, "a wrong token"),
                       ("/state?token=" + bad, "a wrong token"),
                       ("/state?token=" + job.token[:-2], "a short token"),
                       ("/state?token=" + job.token + "00", "a long token"),
                       ("/favicon.ico", "no token")]:
        code = status_of(job.base[:-1] + path)
        if code != 403:
            fail("GET %s (%s): HTTP %d, expected 403" % (path.split("?")[0], what, code))
    if status_of(job.base + "nothing?token=" + job.token) != 404:
        fail("an unknown target with the token is not 404")
    for data, want, what in [
            (b"garbage\r\n\r\n", 400, "a request line of one word"),
            (b"GET /state?token=%s\r\n\r\n" % job.token.encode(), 400, "no HTTP version"),
            (b"POST /state?token=%s HTTP/1.1\r\n\r\n" % job.token.encode(), 405, "a POST"),
            (b"GET /state?token=x HTTP/1.1\r\n\x00\r\n\r\n", 400, "a NUL byte"),
            (b"GET /?token=" + b"a" * 10000 + b" HTTP/1.1\r\n\r\n", 431, "10000 bytes")]:
        code = raw(job.port, data)
        if code != want:
            fail("%s: HTTP %d, expected %d" % (what, code, want))
    # A client that connects and says nothing does not stop the others.
    idle = [socket.create_connection(("127.0.0.1", job.port)) for _ in range(3)]
    s = job.wait_state(lambda s: ring_ok(s, NODES), "ring-shaped matrix")
    for c in idle:
        c.close()
    if s["nodes"] != NODES or len(s["ranks"]) != NODES:
        fail("%d ranks in the state, %d nodes" % (len(s["ranks"]), NODES))
    for i, r in enumerate(s["ranks"]):
        if r["node"] != i or not r["host"] or r["relay"] or not r["local"]:
            fail("rank %d: %s" % (i, r))
    check_ring(s["matrix"], NODES, "JSON")
    if s.get("trace", "missing") is not None:
        fail("a job without --trace has a trace in its state: %r" % s.get("trace", "missing"))
    for i in range(NODES):
        c = s["counters"][i]
        sent = sum(s["matrix"][i])
        if c["bytes_sent"] < sent or c["short_sent"] < 1:
            fail("node %d: bytes_sent %d below its row's %d" % (i, c["bytes_sent"], sent))
    if status_of(job.base + "?token=" + job.token) != 200:
        fail("the page with the token is not 200")
    job.finish()
    print("http: 403 without the right token, 400/405/431/404 as expected, ring matrix ok")


def find_chromium():
    for name in ["chromium", "chromium-browser", "google-chrome"]:
        p = shutil.which(name)
        if p:
            return p
    return None


def chromium_args(chrome, profile):
    return [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-dev-shm-usage", "--user-data-dir=" + profile]


class DevTools:
    """A page of a headless Chromium, driven over the DevTools protocol (a
    WebSocket, spoken here with the standard library only)."""

    def __init__(self, chrome, profile, url):
        self.proc = subprocess.Popen(chromium_args(chrome, profile) +
                                     ["--remote-debugging-port=0", url],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        BROWSERS.append(self.proc)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + LIMIT
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                fail("chromium's DevTools did not start")
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        ws = None
        while ws is None:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                ws = pages[0]["webSocketDebuggerUrl"]
            elif time.monotonic() > deadline:
                fail("no page in chromium")
            else:
                time.sleep(0.1)
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", ws)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" %
                           (m.group(3), m.group(1), m.group(2), key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = self.sock.recv(1)
            if not b:
                fail("DevTools closed the WebSocket handshake")
            head += b
        if not head.startswith(b"HTTP/1.1 101"):
            fail("DevTools handshake: %r" % head[:100])
        self.next_id = 0

    def _recv_exact(self, n):
        got = b""
        while len(got) < n:
            b = self.sock.recv(n - len(got))
            if not b:
                fail("DevTools closed the WebSocket")
            got += b
        return got

    def _frame(self):
        """The payload of the next whole message (fragments joined)."""
        data = b""
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._recv_exact(8))[0]
            data += self._recv_exact(n)
            if b0 & 0x80:
                return data

    def evaluate(self, expr):
        self.next_id += 1
        msg = json.dumps({"id": self.next_id, "method": "Runtime.evaluate",
                          "params": {"expression": expr, "returnByValue": True}}).encode()
        mask = os.urandom(4)
        head = bytes([0x81])
        if len(msg) < 126:
            head += bytes([0x80 | len(msg)])
        else:
            head += bytes([0x80 | 126]) + struct.pack(">H", len(msg))
        self.sock.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(msg)))
        while True:
            r = json.loads(self._frame())
            if r.get("id") == self.next_id:
                # None while the page is not there yet (an exception).
                return r.get("result", {}).get("result", {}).get("value")

    def close(self):
        self.sock.close()
        self.proc.kill()
        self.proc.wait()


# What the page shows, read in the page itself.
PAGE_STATE = """document.getElementById("status") && JSON.stringify({
  updates: Number(document.body.dataset.updates),
  status: document.getElementById("status").textContent,
  cells: Array.from(document.querySelectorAll("rect.cell")).map(
    r => [Number(r.dataset.from), Number(r.dataset.to), Number(r.dataset.bytes)])})"""


def page_matrix(st):
    m = [[None] * NODES for _ in range(NODES)]
    for i, j, v in st["cells"]:
        if i < NODES and j < NODES:
            m[i][j] = v
    return m


def test_browser(build, shot_dir):
    chrome = find_chromium()
    if not chrome:
        print("SKIP: no chromium here (apt-get install chromium)", file=sys.stderr)
        sys.exit(77)
    profile = tempfile.mkdtemp(prefix="bipmon-chrome.")
    try:
        probe = subprocess.run(chromium_args(chrome, profile) + ["--dump-dom", "data:text/html,<p>x</p>"],
                               capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("SKIP: chromium cannot run here: %s" % e, file=sys.stderr)
        sys.exit(77)
    if "<p>x</p>" not in probe.stdout:
        print("SKIP: chromium cannot run here: %s" % probe.stderr[-500:], file=sys.stderr)
        sys.exit(77)
    job = Job(build, args=["--trace", "trace"])
    # The wrong token from the browser too.
    bad = subprocess.run(chromium_args(chrome, profile) + ["--dump-dom", job.base + "?token=0"],
                         capture_output=True, text=True, timeout=120)
    if "forbidden" not in bad.stdout or "heat" in bad.stdout:
        fail("the page with a wrong token: %r" % bad.stdout[:300])
    if status_of(job.base + "?token=0") != 403:
        fail("a wrong token is not 403")
    deadline = time.monotonic() + LIMIT
    cells = {}
    dom = ""
    while time.monotonic() < deadline:
        r = subprocess.run(chromium_args(chrome, profile) +
                           ["--virtual-time-budget=3000", "--dump-dom", job.url],
                           capture_output=True, text=True, timeout=120)
        dom = r.stdout
        cells = {}
        for m in re.finditer(r'<rect[^>]*class="cell"[^>]*>', dom):
            a = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(0)))
            cells[(int(a["data-from"]), int(a["data-to"]))] = int(a["data-bytes"])
        if len(cells) == NODES * NODES and all(
                cells[(i, (i + 1) % NODES)] > 0 for i in range(NODES)):
            break
        time.sleep(0.5)
    else:
        fail("the page's heat map never showed the ring: %d cells; DOM: %s" %
             (len(cells), dom[:1500]))
    m = [[cells[(i, j)] for j in range(NODES)] for i in range(NODES)]
    check_ring(m, NODES, "the page's heat map")
    if 'data-updates="0"' in dom or "series" not in dom:
        fail("the page drew no state or no throughput plot")
    for word in ["retransmits", "send_stalls", "monitored"]:
        if word not in dom:
            fail("the page has no %s" % word)
    # --trace: the page names the trace's two files as links.
    links = re.findall(r'<a [^>]*class="tracefile"[^>]*>([^<]*)</a>', dom)
    want = [os.path.realpath(os.path.join(job.tmp, "trace")) + x
            for x in (".json", "/traces.otf2")]
    if [os.path.realpath(x) for x in links] != want:
        fail("the page's trace links %s, expected %s" % (links, want))
    out = os.path.join(shot_dir, "monitor.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    shot = subprocess.run(chromium_args(chrome, profile) +
                          ["--virtual-time-budget=3000", "--window-size=1200,1100",
                           "--screenshot=" + out, job.url],
                          capture_output=True, text=True, timeout=120)
    if shot.returncode != 0 or not os.path.exists(out):
        fail("no screenshot: %s" % shot.stderr[-500:])
    # The live page, over DevTools: it updates while the job runs, and
    # keeps its last state once bipload stops answering.
    page = DevTools(chrome, tempfile.mkdtemp(prefix="bipmon-chrome.", dir=profile), job.url)
    deadline = time.monotonic() + LIMIT
    first = None
    while True:
        st = json.loads(page.evaluate(PAGE_STATE) or '{"updates": 0, "status": ""}')
        if st["updates"] > 0 and first is None:
            first = st["updates"]
        if first is not None and st["updates"] > first:
            break
        if time.monotonic() > deadline:
            fail("the live page did not update twice: %s" % st["status"])
        time.sleep(0.25)
    job.finish()
    while True:
        st = json.loads(page.evaluate(PAGE_STATE) or '{"updates": 0, "status": ""}')
        if "ended" in st["status"]:
            break
        if time.monotonic() > deadline:
            fail("the page never said the job ended: %s" % st["status"])
        time.sleep(0.25)
    m = page_matrix(st)
    check_ring(m, NODES, "the page after the job's end")
    page.close()
    shutil.rmtree(profile, ignore_errors=True)
    print("browser: the heat map shows the ring only; wrong token 403; the page kept its "
          "last state (%d updates) after the end; screenshot %s" % (st["updates"], out))


def test_faulty(build):
    env = {"BIP_NIC": "lanai", "BIP_LANAI_LOSS": "0.1", "BIP_LANAI_CORRUPT": "0.1",
           "BIP_LANAI_DUPLICATE": "0.1"}
    job = Job(build, env)

    def moved(s):
        total = sum(c["retransmits"] for c in s["counters"])
        return ring_ok(s, NODES) and total > 0
    s = job.wait_state(moved, "retransmissions")
    rx = [c["retransmits"] for c in s["counters"]]
    path_rx = sum(p["retransmits"] for c in s["counters"] for p in c["path"])
    if path_rx == 0:
        fail("retransmits %s but none on any path" % rx)
    check_ring(s["matrix"], NODES, "JSON over the faulty board")
    job.finish()
    print("faulty: retransmits per node %s, corrupt %s" %
          (rx, [c["corrupt"] for c in s["counters"]]))


def test_remote(build):
    def remote_shell(tmp):
        with open(os.path.join(tmp, "remote"), "w") as f:
            f.write('#!/bin/sh\nshift\nexec "$@"\n')
        os.chmod(os.path.join(tmp, "remote"), 0o755)
    half = NODES // 2
    job = Job(build, args=["--rsh", "./remote", "--host",
                           "localhost:%d,remote-x:%d" % (half, NODES - half)],
              setup=remote_shell)
    s = job.wait_state(lambda s: ring_ok(s, NODES), "ring-shaped matrix")
    check_ring(s["matrix"], NODES, "JSON with a proxy")
    hosts = [r["host"] for r in s["ranks"]]
    if hosts[half:] != ["remote-x"] * (NODES - half):
        fail("hosts %s" % hosts)
    if not all(r["local"] for r in s["ranks"]):
        fail("ranks not monitored: %s" % s["ranks"])
    job.finish()
    print("remote: the ring matrix in full, nodes %d.. through the proxy" % half)


def test_clusters(build):
    host = socket.gethostname()
    if host == "localhost":
        print("SKIP: this host is called localhost", file=sys.stderr)
        sys.exit(77)

    def conf(tmp):
        lines = [str(NODES)]
        for i in range(NODES):
            lines.append("%s 0" % (host if i % 2 == 0 else "localhost"))
            lines += ["256"] * NODES
        lines += ["cluster A shm " + host, "cluster B shm localhost",
                  "gateway A:%s B:localhost ofi" % host]
        with open(os.path.join(tmp, "conf"), "w") as f:
            f.write("\n".join(lines) + "\n")

    job = Job(build, args=["-f", "conf"], setup=conf)

    def ready(s):
        m = s["matrix"]
        return (ring_ok(s, NODES, 2) and sum(m[NODES]) > 0 and sum(m[NODES + 1]) > 0)
    s = job.wait_state(ready, "the ring and its relays' traffic")
    m = s["matrix"]
    check_ring([row[:NODES] for row in m[:NODES]], NODES, "JSON over two clusters")
    ranks = s["ranks"]
    if [r["cluster"] for r in ranks[:NODES]] != ["A", "B"] * (NODES // 2):
        fail("clusters %s" % [r["cluster"] for r in ranks])
    if not (ranks[NODES]["relay"] and ranks[NODES + 1]["relay"]):
        fail("no relays after the program's nodes: %s" % ranks)
    g = s["gateways"]
    if len(g) != 1 or sorted(g[0]["relays"]) != [NODES, NODES + 1] or \
            g[0]["clusters"] != ["A", "B"]:
        fail("gateways %s" % g)
    # A relay passes on to the other relay, across the gateway, and to the
    # nodes of its own cluster, never straight to the other cluster's.
    for r in (NODES, NODES + 1):
        other = NODES + NODES + 1 - r
        if not m[r][other]:
            fail("relay %d passed nothing to relay %d" % (r, other))
        for j in range(NODES):
            if m[r][j] and ranks[j]["cluster"] != ranks[r]["cluster"]:
                fail("relay %d passed %d bytes to %d of the other cluster" % (r, m[r][j], j))
    job.finish()
    print("clusters: the ring, gateway A-B, relays %s passed %s bytes" %
          (g[0]["relays"], [sum(m[NODES]), sum(m[NODES + 1])]))


def main():
    try:
        run(sys.argv[1], sys.argv[2])
    finally:
        for job in JOBS:
            if job.proc.poll() is None:
                job.proc.kill()  # its processes die with it
        for b in BROWSERS:
            if b.poll() is None:
                b.kill()
                b.wait()


def run(mode, build):
    if mode == "http":
        test_http(build)
    elif mode == "browser":
        test_browser(build, sys.argv[3])
    elif mode == "faulty":
        test_faulty(build)
    elif mode == "clusters":
        test_clusters(build)
    elif mode == "remote":
        test_remote(build)
    else:
        fail("unknown mode " + mode)


main()
