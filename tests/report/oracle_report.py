#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""oracle_report.py - the figures of `tracer report --json`, computed from
the events the reference reader (python3-otf2) delivers, independently of
our reader. Same rules as docs/report.md: calls per Enter; exclusive time =
duration minus the children's; inclusive time over the outermost activation
of a region only; min/max over each call's duration; a Leave closes the
innermost open activation of its region (and everything above it); a Leave
without an open activation is ignored; activations still open close at the
location's last event. Lock wait = time from the Enter of the innermost open
region to ThreadAcquireLock/OmpAcquireLock."""
import collections

import otf2


def compute(anchor):
    with otf2.reader.open(anchor) as tr:
        defs = tr.definitions
        locs = {}
        for loc in defs.locations:
            locs[loc._ref] = dict(id=loc._ref, name=loc.name, process=loc.group._ref, events=0,
                                  first=None, last=None, regions=collections.defaultdict(
                                      lambda: dict(calls=0, incl=0, excl=0, min=None, max=0)),
                                  stack=[], active=collections.Counter(), busy=0)
        enters = 0
        sends = collections.Counter()
        # locks: (process, id) -> [acquisitions, wait, max, {location: wait}]
        locks = {}
        defs_regions = {rg._ref: rg.name for rg in defs.regions}
        lock_address = compute.lock_address = {}   # (process, id) -> TRACER::LOCK_ADDRESS
        samples = collections.Counter()     # calling context ref -> samples
        coll = {}                           # comm ref -> [operations, time, calls, first location]
        queues = collections.defaultdict(collections.deque)  # message key -> unmatched ends
        pop.locs = locs
        for L in locs.values():
            L['late_sender'] = 0
            L['late_receiver'] = 0
            L['tasks'] = [0, 0, 0]
            L['mcur'] = {}
        compute.metrics = collections.defaultdict(lambda: [0, 0.0])  # (region, member)
        coll_begin = {}
        send_bytes = collections.Counter()
        waits = dict(seq=collections.Counter(), ops={}, locs=locs)
        for L in locs.values():
            L['wait_nxn'] = L['late_broadcast'] = L['early_reduce'] = 0
        for loc, ev in tr.events:
            L = locs[loc._ref]
            t = ev.time
            L['events'] += 1
            if L['first'] is None:
                L['first'] = t
            L['last'] = t
            if isinstance(ev, otf2.events.Enter):
                enters += 1
                enter(L, ev.region._ref, t)
            elif isinstance(ev, otf2.events.Leave):
                leave(L, ev.region._ref, t)
            elif isinstance(ev, otf2.events.ThreadTaskCreate):
                L['tasks'][0] += 1
            elif isinstance(ev, otf2.events.ThreadTaskSwitch):
                L['tasks'][1] += 1
            elif isinstance(ev, otf2.events.ThreadTaskComplete):
                L['tasks'][2] += 1
            elif isinstance(ev, otf2.events.Metric):
                m = ev.metric
                members = m.members if hasattr(m, 'members') else m.metric_class.members
                for mem, v in zip(members, ev.values):
                    L['mcur'][mem._ref] = float(v)
            elif isinstance(ev, otf2.events.MpiCollectiveBegin):
                coll_begin[L['id']] = t
            elif isinstance(ev, otf2.events.MpiCollectiveEnd):
                wait_states(L, ev, waits)
                b = coll_begin.pop(L['id'], None)
                if b is not None:
                    # [operations (every rank's end), time, calls (the ends
                    # of the first location that ended one on it), that location]
                    c = coll.setdefault(ev.communicator._ref, [0, 0, 0, L['id']])
                    c[0] += 1
                    c[1] += t - b
                    c[2] += c[3] == L['id']
            elif isinstance(ev, otf2.events.CallingContextEnter):
                enter(L, ev.calling_context.region._ref, t)
                enters += 1
            elif isinstance(ev, otf2.events.CallingContextLeave):
                leave(L, ev.calling_context.region._ref, t)
            elif isinstance(ev, otf2.events.CallingContextSample):
                samples[ev.calling_context] += 1
            elif isinstance(ev, (otf2.events.ThreadAcquireLock, otf2.events.OmpAcquireLock)):
                w = t - L['stack'][-1][1] if L['stack'] and t > L['stack'][-1][1] else 0
                if L['stack'] and defs_regions.get(L['stack'][-1][0], '').startswith('pthread_cond_'):
                    w = 0   # a condition wait reacquiring its mutex: not a lock wait
                k = locks.setdefault((L['process'], ev.lock_id), [0, 0, 0, collections.Counter()])
                if ev.attributes and (L['process'], ev.lock_id) not in lock_address:
                    for a, v in ev.attributes.items():
                        if a.name == 'TRACER::LOCK_ADDRESS':
                            lock_address[(L['process'], ev.lock_id)] = v
                k[0] += 1
                k[1] += w
                k[2] = max(k[2], w)
                k[3][L['id']] += w
            if isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend, otf2.events.MpiRecv,
                               otf2.events.MpiIrecv)):
                late_sender(locs, queues, L, ev)
            if isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                sends[L['process']] += 1
                send_bytes[L['process']] += ev.msg_length
        for L in locs.values():
            while L['stack']:
                pop(L, L['last'])
        compute.locks = locks
        compute.classes = {}
        for g in defs.groups:
            if g.group_type == otf2.GroupType.REGIONS:
                refs = [m._ref for m in g.members]
                compute.classes[g._ref] = [
                    sum(L['regions'][r]['calls'] for L in locs.values() for r in refs if r in L['regions']),
                    sum(L['regions'][r]['excl'] for L in locs.values() for r in refs if r in L['regions'])]
        compute.collectives = coll
        fn_self, fn_total = collections.Counter(), collections.Counter()
        for cc, n in samples.items():
            fn_self[cc.region._ref] += n
            seen = set()
            while cc is not None:
                if cc.region._ref not in seen:
                    seen.add(cc.region._ref)
                    fn_total[cc.region._ref] += n
                cc = cc.parent
        compute.samples = (sum(samples.values()), fn_self, fn_total)
        return locs, enters, sends, send_bytes


NXN = {'BARRIER', 'ALLGATHER', 'ALLGATHERV', 'ALLTOALL', 'ALLTOALLV', 'ALLTOALLW', 'ALLREDUCE',
       'REDUCE_SCATTER', 'REDUCE_SCATTER_BLOCK'}
ONE_TO_N = {'BCAST', 'SCATTER', 'SCATTERV'}
N_TO_ONE = {'GATHER', 'GATHERV', 'REDUCE'}


def wait_states(L, ev, w):
    """the k-th MpiCollectiveEnd of every member of a communicator is one
    operation; with every member's call Enter: wait at NxN (until the last
    member enters), late broadcast (non-roots until the root enters), early
    reduce (the root until the last other member enters)"""
    op = str(ev.collective_op).split('.')[-1]
    if not L['stack'] or op not in NXN | ONE_TO_N | N_TO_ONE:
        return
    comm = ev.communicator
    seq = w['seq'][(L['id'], comm._ref)]
    w['seq'][(L['id'], comm._ref)] += 1
    members = comm.group.members
    if len(members) < 2:
        return
    o = w['ops'].setdefault((comm._ref, seq), dict(op=op, root=ev.root, ends=[]))
    o['ends'].append((L['id'], L['stack'][-1][1]))
    if len(o['ends']) < len(members):
        return
    del w['ops'][(comm._ref, seq)]
    locs = w['locs']
    last = max(e for _, e in o['ends'])
    root = None
    if op not in NXN and o['root'] < len(members):
        rg = members[o['root']].group._ref
        root = next((i for i, (l, _) in enumerate(o['ends']) if locs[l]['process'] == rg), None)
    for i, (l, e) in enumerate(o['ends']):
        if op in NXN:
            locs[l]['wait_nxn'] += last - e
        elif op in ONE_TO_N and root is not None and i != root and o['ends'][root][1] > e:
            locs[l]['late_broadcast'] += o['ends'][root][1] - e
        elif op in N_TO_ONE and root is not None and i == root:
            others = [x for j, (_, x) in enumerate(o['ends']) if j != root]
            if others and max(others) > e:
                locs[l]['early_reduce'] += max(others) - e


def late_sender(locs, queues, L, ev):
    """receives matched in order with sends per (sender process, receiver
    process, comm, tag); late sender = send call's enter - receive call's
    enter; late receiver (blocking MpiSend) = min(receive enter, send leave)
    - send enter"""
    send = isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend))
    peer = ev.receiver if send else ev.sender
    members = ev.communicator.group.members
    if peer >= len(members):
        return
    pg = members[peer].group._ref
    start = L['stack'][-1][1] if L['stack'] else ev.time
    bs = None
    if isinstance(ev, otf2.events.MpiSend) and L['stack'] and L['stack'][-1][4] is None:
        bs = dict(loc=L['id'], enter=start, leave=None, recv=None)
        L['stack'][-1][4] = bs
    key = (L['process'], pg, ev.communicator._ref, ev.msg_tag) if send else \
        (pg, L['process'], ev.communicator._ref, ev.msg_tag)
    q = queues[key]
    side = 's' if send else 'r'
    if q and q[0][0] != side:
        other = q.popleft()
        recv_enter, send_enter, rl = (other[1], start, other[2]) if send else (start, other[1], L['id'])
        if send_enter > recv_enter:
            # one wait per receiving call (the receives completed by one
            # MPI_Waitall): its longest, charged once
            R, w = locs[rl], send_enter - recv_enter
            if R.get('ls_call') == recv_enter:
                R['late_sender'] += max(0, w - R['ls_max'])
                R['ls_max'] = max(R['ls_max'], w)
            else:
                R['ls_call'], R['ls_max'] = recv_enter, w
                R['late_sender'] += w
        b = bs if send else other[3]
        if b is not None:
            b['recv'] = recv_enter
            bsend_try(locs, b)
    else:
        q.append((side, start, L['id'], bs))


def bsend_try(locs, b):
    if b['leave'] is None or b['recv'] is None:
        return
    if b['recv'] > b['enter']:
        locs[b['loc']]['late_receiver'] += min(b['recv'], b['leave']) - b['enter']


def enter(L, r, t):
    L['stack'].append([r, t, 0, dict(L['mcur']), None])
    L['active'][r] += 1
    L['regions'][r]['calls'] += 1


def leave(L, r, t):
    idx = [i for i, f in enumerate(L['stack']) if f[0] == r]
    if idx:
        while len(L['stack']) > idx[-1]:
            pop(L, t)


def pop(L, t):
    r, t0, child, mstart, bs = L['stack'].pop()
    if bs is not None:
        bs['leave'] = t
        bsend_try(pop.locs, bs)
    d = t - t0
    s = L['regions'][r]
    s['excl'] += d - child
    L['active'][r] -= 1
    if L['active'][r] == 0:
        s['incl'] += d
        for mem, v0 in mstart.items():
            if mem in L['mcur']:
                x = compute.metrics[(r, mem)]
                x[0] += 1
                x[1] += L['mcur'][mem] - v0
    s['min'] = d if s['min'] is None else min(s['min'], d)
    s['max'] = max(s['max'], d)
    if L['stack']:
        L['stack'][-1][2] += d
    else:
        L['busy'] += d
