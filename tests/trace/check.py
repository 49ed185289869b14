#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check.py - the tracer's tests (bip_trace(7)), one per run:

  check.py otf2 BIPLOAD PROG ring|allreduce NP
      bipload -sz NP --trace DIR PROG ring|allreduce ROUNDS; otf2-print
      reads DIR/traces.otf2 (skipped, exit 77, without otf2-print), and per
      rank the archive has exactly ROUNDS entries and exits of MPI_Send and
      MPI_Recv (ring) or MPI_Allreduce (allreduce), as many MpiSend events on
      MPI_COMM_WORLD, all to the right neighbour with the round's tag and 8
      bytes, and MpiRecv events from the left one (ring), or ROUNDS
      collective begins and ALLREDUCE ends of 4 bytes (allreduce), and
      nothing of the sort for any other call
  check.py json ...
      the same counts in DIR.json (json module), and every flow start
      ("ph":"s") has one flow end ("ph":"f") with its id on another
      process, at a later or equal time; in the ring, at least ROUNDS
      flows go from each rank to its right neighbour
  check.py faulty BIPLOAD PROG ring NP
      as json, over the simulated board losing, corrupting and doubling 5 %
      of the packets each (BIP_NIC=lanai): the reliability layer resends
      them and the trace is exact (monitor/faulty sees the retransmissions)
  check.py progress BIPLOAD PROG ring NP
      as json, with BIP's progress thread (BIP_PROGRESS_THREAD=1), where
      messages arrive outside the ranks' MPI calls
  check.py clusters BIPLOAD PROG ring|allreduce NP
      as json, the ranks alternately in two clusters of this host joined by
      a gateway: the traffic crosses the relays, which are not traced
  check.py timeout BIPLOAD PROG hang NP
      bipload --timeout 3 stops the ring's hanging MPI_Recv: bipload fails,
      but DIR.json holds each rank's ROUNDS MPI_Send and ROUNDS + 1 MPI_Recv
      (the last one cut at the signal)
  check.py off BIPLOAD PROG ring NP
      the ring without --trace: it succeeds and writes no trace
  check.py nolib BIPLOAD PROG ring NP
      BIP_TRACE set (-env) without the library: the ring succeeds, and
      BIP_TRACE's directory is not made
  check.py baddir BIPLOAD PROG ring NP
      --trace in a directory that does not exist: bipload fails before
      starting anything, saying which directory
  check.py manual BIPLOAD PROG ring NP BIPTRACE
      the way of another launcher (srun): LD_PRELOAD=$(biptrace --lib) and
      BIP_TRACE=DIR given as the job's environment (-env), no --trace; the
      ranks make DIR, biptrace DIR merges, and DIR.json is as in "json"
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

ROUNDS = 5


def fail(msg):
    print('check.py: FAIL: ' + msg)
    sys.exit(1)


def run(cmd, expect_ok=True, env=None, cwd=None):
    print('$ ' + ' '.join(cmd))
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                       cwd=cwd)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    if expect_ok and p.returncode != 0:
        fail('exit status %d' % p.returncode)
    return p


def expected(prog, np):
    """Per rank: {region: calls}, and the peers."""
    if prog in ('ring', 'hang'):
        return {'MPI_Send': ROUNDS, 'MPI_Recv': ROUNDS + (prog == 'hang')}
    return {'MPI_Allreduce': ROUNDS}


def traced_job(bipload, prog, kind, np, workdir, extra=(), env=None, expect_ok=None):
    trace = os.path.join(workdir, 'job')
    cmd = [bipload, '-q', '-sz', str(np), '--trace', trace] + list(extra) + [prog, kind,
                                                                            str(ROUNDS)]
    return trace, run(cmd, expect_ok=not extra if expect_ok is None else expect_ok, env=env,
                      cwd=workdir)


def two_clusters(workdir, np):
    """A configuration of np nodes, alternately on two names of this host,
    each its own cluster, joined by a gateway (relays over ofi)."""
    host = socket.gethostname()
    if host == 'localhost':
        print('check.py: this host is called localhost: skipped')
        sys.exit(77)
    lines = [str(np)]
    for i in range(np):
        lines.append('%s 0' % (host if i % 2 == 0 else 'localhost'))
        lines += ['256'] * np
    lines += ['cluster A shm ' + host, 'cluster B shm localhost',
              'gateway A:%s B:localhost ofi' % host]
    with open(os.path.join(workdir, 'conf'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return ['-f', 'conf']


def check_otf2(trace, kind, np):
    otf2_print = shutil.which('otf2-print')
    if not otf2_print:
        print('check.py: otf2-print (Debian: otf2-tools) is missing: OTF2 part skipped')
        sys.exit(77)
    archive = trace + '/traces.otf2'
    p = subprocess.run([otf2_print, archive], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or '[OTF2]' in p.stderr + p.stdout:
        sys.stdout.write(p.stderr)
        fail('otf2-print %s: status %d' % (archive, p.returncode))
    line_re = re.compile(r'^(\w+)\s+(\d+)\s+(\d+)\s*(.*)$')
    per = {r: {'enter': {}, 'leave': {}, 'send': [], 'recv': [], 'cbegin': 0, 'cend': []}
           for r in range(np)}
    for line in p.stdout.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        ev, loc, rest = m.group(1), int(m.group(2)), m.group(4)
        if loc not in per:
            fail('an event of location %d' % loc)
        d = per[loc]
        if ev in ('ENTER', 'LEAVE'):
            region = re.search(r'Region: "([^"]+)"', rest).group(1)
            key = 'enter' if ev == 'ENTER' else 'leave'
            d[key][region] = d[key].get(region, 0) + 1
        elif ev in ('MPI_SEND', 'MPI_RECV') and '"MPI_COMM_WORLD"' in rest:
            peer = int(re.search(r'(?:Receiver|Sender): (\d+)', rest).group(1))
            tag = int(re.search(r'Tag: (\d+)', rest).group(1))
            length = int(re.search(r'Length: (\d+)', rest).group(1))
            d['send' if ev == 'MPI_SEND' else 'recv'].append((peer, tag, length))
        elif ev in ('MPI_ISEND', 'MPI_IRECV'):
            fail('rank %d: %s, which the program does not call' % (loc, ev))
        elif ev == 'MPI_COLLECTIVE_BEGIN':
            d['cbegin'] += 1
        elif ev == 'MPI_COLLECTIVE_END':
            d['cend'].append(rest)
    exp = expected(kind, np)
    for r in range(np):
        d = per[r]
        for region, n in exp.items():
            if d['enter'].get(region, 0) != n or d['leave'].get(region, 0) != n:
                fail('rank %d: %s entered %d and left %d times, expected %d' %
                     (r, region, d['enter'].get(region, 0), d['leave'].get(region, 0), n))
        for region in ('MPI_Init', 'MPI_Finalize'):
            if d['enter'].get(region) != 1 or d['leave'].get(region) != 1:
                fail('rank %d: %s not entered and left once' % (r, region))
        if kind == 'ring':
            right, left = (r + 1) % np, (r + np - 1) % np
            want_send = [(right, i, 8) for i in range(ROUNDS)]
            want_recv = [(left, i, 8) for i in range(ROUNDS)]
            if d['send'] != want_send:
                fail('rank %d: MpiSend %s, expected %s' % (r, d['send'], want_send))
            if d['recv'] != want_recv:
                fail('rank %d: MpiRecv %s, expected %s' % (r, d['recv'], want_recv))
            if d['cbegin'] or d['cend']:
                fail('rank %d: collective events in a ring' % r)
        else:
            if d['send'] or d['recv']:
                fail('rank %d: MPI messages on MPI_COMM_WORLD in an allreduce loop' % r)
            if d['cbegin'] != ROUNDS or len(d['cend']) != ROUNDS:
                fail('rank %d: %d collective begins, %d ends, expected %d' %
                     (r, d['cbegin'], len(d['cend']), ROUNDS))
            for rest in d['cend']:
                if not re.search(r'Operation: ALLREDUCE, Communicator: "MPI_COMM_WORLD".*'
                                 r'Sent: 4, Received: 4', rest):
                    fail('rank %d: collective end %s' % (r, rest))
    print('check.py: %s: %d ranks, OTF2 events as expected' % (archive, np))


def load_json(trace):
    path = trace + '.json'
    try:
        with open(path) as f:
            return json.load(f)['traceEvents']
    except (OSError, ValueError, KeyError) as e:
        fail('%s: %s' % (path, e))


def check_flows(events, np, kind):
    starts, ends = {}, {}
    for e in events:
        if e.get('ph') == 's':
            if e['id'] in starts:
                fail('flow %s started twice' % e['id'])
            starts[e['id']] = e
        elif e.get('ph') == 'f':
            if e['id'] in ends:
                fail('flow %s ended twice' % e['id'])
            if e.get('bp') != 'e':
                fail('flow end %s not bound to its enclosing slice' % e['id'])
            ends[e['id']] = e
    if not starts:
        fail('no flow')
    if set(starts) != set(ends):
        fail('flows %s have no end, %s no start' %
             (sorted(set(starts) - set(ends))[:10], sorted(set(ends) - set(starts))[:10]))
    pairs = {}
    for i, s in starts.items():
        f = ends[i]
        if f['pid'] == s['pid']:
            fail('flow %s from rank %d to itself' % (i, s['pid']))
        pairs[(s['pid'], f['pid'])] = pairs.get((s['pid'], f['pid']), 0) + 1
    if kind in ('ring', 'hang'):
        for r in range(np):
            right = (r + 1) % np
            if np > 1 and pairs.get((r, right), 0) < ROUNDS:
                fail('%d flows from rank %d to rank %d, expected at least %d' %
                     (pairs.get((r, right), 0), r, right, ROUNDS))
    return len(starts)


def check_json(trace, kind, np):
    events = load_json(trace)
    exp = expected(kind, np)
    calls = {r: {} for r in range(np)}
    args = {r: [] for r in range(np)}
    for e in events:
        if e.get('ph') != 'X':
            continue
        if e['pid'] not in calls:
            fail('a call of process %s' % e['pid'])
        calls[e['pid']][e['name']] = calls[e['pid']].get(e['name'], 0) + 1
        args[e['pid']].append((e['name'], e['args']))
    for r in range(np):
        for region, n in exp.items():
            if calls[r].get(region, 0) != n:
                fail('rank %d: %d %s, expected %d' % (r, calls[r].get(region, 0), region, n))
        if kind in ('ring', 'hang'):
            right, left = (r + 1) % np, (r + np - 1) % np
            sends = [a for name, a in args[r] if name == 'MPI_Send']
            recvs = [a for name, a in args[r] if name == 'MPI_Recv']
            for i, a in enumerate(sends):
                if (a['dest'], a['sendtag'], a['sent_bytes']) != (right, i, 8):
                    fail('rank %d: MPI_Send %d: %s' % (r, i, a))
            for i, a in enumerate(recvs[:ROUNDS]):
                if (a['source'], a['recvtag'], a['received_bytes']) != (left, i, 8):
                    fail('rank %d: MPI_Recv %d: %s' % (r, i, a))
        else:
            for name, a in args[r]:
                if name == 'MPI_Allreduce' and (a['sent_bytes'], a['received_bytes'],
                                                a['comm']) != (4, 4, 'MPI_COMM_WORLD'):
                    fail('rank %d: MPI_Allreduce %s' % (r, a))
    nflows = check_flows(events, np, kind) if np > 1 else 0
    print('check.py: %s.json: %d ranks, calls as expected, %d flows each with its end' %
          (trace, np, nflows))


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit('usage: check.py otf2|json|faulty|progress|clusters|timeout|off|nolib|baddir|manual '
                 'BIPLOAD PROG KIND '
                 'NP [BIPTRACE]')
    what, bipload, prog, kind, np = sys.argv[1:6]
    bipload, prog = os.path.abspath(bipload), os.path.abspath(prog)
    np = int(np)
    workdir = tempfile.mkdtemp(prefix='biptrace-test-')
    try:
        if what in ('otf2', 'json'):
            trace, _ = traced_job(bipload, prog, kind, np, workdir)
            if os.path.exists(trace + '/ranks'):
                fail('%s/ranks is left after a merge' % trace)
            if what == 'otf2':
                check_otf2(trace, kind, np)
            else:
                check_json(trace, kind, np)
        elif what == 'faulty':
            # Packets lost, corrupt and doubled on the simulated board: the
            # reliability layer resends them, and the trace stays exact.
            env = {'BIP_NIC': 'lanai', 'BIP_LANAI_LOSS': '5', 'BIP_LANAI_CORRUPT': '5',
                   'BIP_LANAI_DUPLICATE': '5'}
            trace, _ = traced_job(bipload, prog, kind, np, workdir, env=env)
            check_json(trace, kind, np)
        elif what == 'progress':
            # Arrivals in BIP's progress thread, outside any MPI call of
            # theirs, read the clock (trace.h): the flows stay in order.
            trace, _ = traced_job(bipload, prog, kind, np, workdir,
                                  env={'BIP_PROGRESS_THREAD': '1'})
            check_json(trace, kind, np)
        elif what == 'clusters':
            # The ranks of two clusters talk through the gateway's relays,
            # which are not traced: the ranks' events and flows are exact.
            trace, _ = traced_job(bipload, prog, kind, np, workdir, two_clusters(workdir, np),
                                  expect_ok=True)
            check_json(trace, kind, np)
        elif what == 'timeout':
            trace, p = traced_job(bipload, prog, kind, np, workdir, ['--timeout', '3'])
            if p.returncode == 0:
                fail('the hanging job succeeded')
            check_json(trace, kind, np)
        elif what == 'off':
            run([bipload, '-q', '-sz', str(np), prog, kind, str(ROUNDS)])
            left = os.listdir(workdir)
            if left:
                fail('files without --trace: %s' % left)
        elif what == 'nolib':
            trace = os.path.join(workdir, 'job')
            run([bipload, '-q', '-sz', str(np), '-env', 'BIP_TRACE=' + trace, prog, kind,
                 str(ROUNDS)])
            if os.path.exists(trace) or os.path.exists(trace + '.json'):
                fail('a trace without the tracer')
        elif what == 'baddir':
            marker = os.path.join(workdir, 'started')
            trace = os.path.join(workdir, 'no-such-dir', 'job')
            p = run([bipload, '-q', '-sz', str(np), '--trace', trace, '/bin/sh', '-c',
                     'touch ' + marker], expect_ok=False)
            if p.returncode == 0:
                fail('bipload succeeded')
            if os.path.dirname(trace) not in p.stderr or '--trace' not in p.stderr:
                fail('the message does not name --trace and the directory')
            if os.path.exists(marker):
                fail('the job started')
        elif what == 'manual':
            biptrace = sys.argv[6]
            lib = run([biptrace, '--lib']).stdout.strip()
            trace = os.path.join(workdir, 'job')
            run([bipload, '-q', '-sz', str(np), '-env', 'LD_PRELOAD=' + lib,
                 '-env', 'BIP_TRACE=' + trace, prog, kind, str(ROUNDS)])
            if not os.path.isdir(trace + '/ranks'):
                fail('the ranks did not make %s/ranks' % trace)
            run([biptrace, trace])
            check_json(trace, kind, np)
        else:
            sys.exit('check.py: unknown check ' + what)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print('check.py: %s: passed' % what)


main()
