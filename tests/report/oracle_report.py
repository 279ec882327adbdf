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


KINDS = ('late_sender', 'late_receiver', 'wait_nxn', 'late_broadcast', 'early_reduce')


def waits(anchor, window=None, ranks=None, threads=None):
    """Who waits on whom and the critical path, from the reference reader's
    events, for `tracer report` with a selection: window (from, to) in ticks
    (--from/--to: the events inside count, regions are entered and left
    outside it at its edge), ranks / threads (--rank / --thread: the other
    locations' events are not read). Every wait state is one record (waiting
    location, location waited for, kind, begin, end, whether the wait ended
    with the other's event); the pairs are their sums. Returns dict(locs=
    {id: {kind: time}}, records=[...], pairs={(waiter, waits_for): {kind:
    [time, count]}}, path=... or None)."""
    lo, hi = window if window else (0, 2 ** 64)
    with otf2.reader.open(anchor) as tr:
        defs = tr.definitions
        sel = [l for l in defs.locations
               if (not ranks and not threads) or l.group._ref in (ranks or ()) or l._ref in (threads or ())]
        ids = [l._ref for l in sel]
        group = {l._ref: l.group._ref for l in sel}
        st = {i: dict(stack=[], first=None, last=0, ls_call=None, ls_rec=None, fig=dict.fromkeys(KINDS, 0),
                      timeline=[]) for i in ids}
        records = []
        queues = collections.defaultdict(list)     # message key -> [side, [unmatched ends]]
        seqs = collections.Counter()
        ops = {}
        sends = colls = 0

        def lr_done(b):
            # a blocking send whose call left and whose receive began
            if b['leave'] is None or b['recv'] is None or b['recv'] <= b['enter']:
                return
            end = min(b['recv'], b['leave'])
            st[b['loc']]['fig']['late_receiver'] += end - b['enter']
            if end > b['enter']:
                records.append(dict(waiter=b['loc'], waited=b['rloc'], kind='late_receiver', begin=b['enter'],
                                    end=end, jump=b['recv'] <= b['leave']))

        def pop_to(S, k, t):
            while len(S['stack']) > k:
                fr = S['stack'].pop()
                if fr['bsend'] is not None:
                    fr['bsend']['leave'] = t
                    lr_done(fr['bsend'])

        for loc, ev in tr.events:
            if loc._ref not in st:
                continue
            S, t = st[loc._ref], ev.time
            inside = lo <= t < hi
            tc = t if inside else (lo if t < lo else hi)
            if inside:
                S['first'] = t if S['first'] is None else S['first']
                S['last'] = t
            region = None
            if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                region = ev.region._ref
            elif isinstance(ev, (otf2.events.CallingContextEnter, otf2.events.CallingContextLeave)):
                region = ev.calling_context.region._ref
            if region is not None:
                if isinstance(ev, (otf2.events.Enter, otf2.events.CallingContextEnter)):
                    S['stack'].append(dict(region=region, enter=tc, bsend=None))
                else:
                    k = max((i for i, fr in enumerate(S['stack']) if fr['region'] == region), default=None)
                    if k is not None:
                        pop_to(S, k, tc)
                S['timeline'].append((t, S['stack'][-1]['region'] if S['stack'] else None))
                continue
            S['timeline'].append((t, S['stack'][-1]['region'] if S['stack'] else None))
            if isinstance(ev, otf2.events.MpiCollectiveEnd):
                colls += inside
                op = str(ev.collective_op).split('.')[-1]
                if not S['stack'] or op not in NXN | ONE_TO_N | N_TO_ONE:
                    continue
                comm = ev.communicator
                n = seqs[(loc._ref, comm._ref)]
                seqs[(loc._ref, comm._ref)] += 1
                size = len(comm.group.members)
                if size < 2:
                    continue
                o = ops.setdefault((comm._ref, n), dict(op=op, root=ev.root, members=[]))
                o['members'].append(dict(loc=loc._ref, enter=S['stack'][-1]['enter'], inside=inside))
                if len(o['members']) == size:
                    del ops[(comm._ref, n)]
                    collective(o, comm, st, group, records)
                continue
            if not inside or not isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend, otf2.events.MpiRecv,
                                                 otf2.events.MpiIrecv)):
                continue
            send = isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend))
            sends += send
            members = ev.communicator.group.members
            peer = ev.receiver if send else ev.sender
            if peer >= len(members):
                continue
            pg = members[peer].group._ref
            begin = S['stack'][-1]['enter'] if S['stack'] else t
            bs = None
            if isinstance(ev, otf2.events.MpiSend) and S['stack'] and S['stack'][-1]['bsend'] is None:
                bs = S['stack'][-1]['bsend'] = dict(loc=loc._ref, enter=begin, leave=None, recv=None, rloc=None)
            key = (group[loc._ref], pg) if send else (pg, group[loc._ref])
            q = queues[key + (ev.communicator._ref, ev.msg_tag)]
            side = 'send' if send else 'recv'
            if not q or q[0] == side or not q[1]:
                if not q:
                    q.extend([side, []])
                q[0] = side
                q[1].append((begin, loc._ref, bs))
                continue
            o_begin, o_loc, o_bs = q[1].pop(0)
            s_begin, s_loc, r_begin, r_loc = (begin, loc._ref, o_begin, o_loc) if send else \
                (o_begin, o_loc, begin, loc._ref)
            if s_begin > r_begin:
                R, w = st[r_loc], s_begin - r_begin
                if R['ls_call'] == r_begin:        # the same receiving call: its latest sender
                    if w > R['ls_rec']['time']:
                        R['fig']['late_sender'] += w - R['ls_rec']['time']
                        R['ls_rec'].update(waited=s_loc, time=w, end=s_begin)
                else:
                    R['ls_call'] = r_begin
                    R['ls_rec'] = dict(waiter=r_loc, waited=s_loc, kind='late_sender', begin=r_begin, end=s_begin,
                                       time=w, jump=True)
                    R['fig']['late_sender'] += w
                    records.append(R['ls_rec'])
            b = bs if send else o_bs
            if b is not None:
                b['recv'], b['rloc'] = r_begin, r_loc
                lr_done(b)
        for i in ids:
            S = st[i]
            while S['stack']:
                pop_to(S, len(S['stack']) - 1, max(S['stack'][-1]['enter'], S['last']))
    for x in records:
        x.setdefault('time', x['end'] - x['begin'])
    records = [x for x in records if x['time'] > 0 and x['waiter'] != x['waited']]
    pairs = {}
    for x in records:
        p = pairs.setdefault((x['waiter'], x['waited']), {k: [0, 0] for k in KINDS})
        p[x['kind']][0] += x['time']
        p[x['kind']][1] += 1
    path = None
    if sends or colls or records:
        path = critical_path(ids, st, records)
    return dict(locs={i: st[i]['fig'] for i in ids}, records=records, pairs=pairs, path=path)


def collective(o, comm, st, group, records):
    """the waits of one collective operation, every member's call Enter known"""
    m = o['members']
    last = max(m, key=lambda x: x['enter'])        # (the first of equal ones)
    root = None
    if o['op'] not in NXN and o['root'] < len(comm.group.members):
        rg = comm.group.members[o['root']].group._ref
        root = next((x for x in m if group[x['loc']] == rg), None)
    others = [x for x in m if x is not root]
    for x in m:
        if not x['inside']:
            continue
        if o['op'] in NXN:
            st[x['loc']]['fig']['wait_nxn'] += last['enter'] - x['enter']
            who, kind, end = last, 'wait_nxn', last['enter']
        elif o['op'] in ONE_TO_N and root is not None and x is not root and root['enter'] > x['enter']:
            st[x['loc']]['fig']['late_broadcast'] += root['enter'] - x['enter']
            who, kind, end = root, 'late_broadcast', root['enter']
        elif o['op'] in N_TO_ONE and x is root and others and max(y['enter'] for y in others) > x['enter']:
            who = max(others, key=lambda y: y['enter'])
            st[x['loc']]['fig']['early_reduce'] += who['enter'] - x['enter']
            kind, end = 'early_reduce', who['enter']
        else:
            continue
        records.append(dict(waiter=x['loc'], waited=who['loc'], kind=kind, begin=x['enter'], end=end, jump=True))


def critical_path(ids, st, records):
    """backwards from the last event of the location that ends last: a
    location is on the path until its latest wait state (the records that
    ended with the other's event) that ended by then; there the path goes to
    the location waited for at the wait's end; each wait state once; down to
    the first event. Region times: the innermost region of each stretch
    between two events of the location, over the segments."""
    have = [i for i in ids if st[i]['first'] is not None]
    start = min(st[i]['first'] for i in have)
    end = max(st[i]['last'] for i in have)
    end_loc = next(i for i in ids if st[i]['first'] is not None and st[i]['last'] == end)
    todo = {i: sorted(((x['end'], x['waited'], KINDS.index(x['kind'])) for x in records
                       if x['waiter'] == i and x['jump']), reverse=True) for i in ids}
    segs, cur, t, jumps = [], end_loc, end, 0
    while True:
        q = todo[cur]
        while q and q[0][0] > t:
            q.pop(0)
        if not q or q[0][0] <= start:
            segs.append((cur, start, t))
            break
        e, who, _ = q.pop(0)
        segs.append((cur, e, t))
        t = e
        if who != cur:
            cur, jumps = who, jumps + 1
    segs = sorted(s for s in segs if s[2] > s[1])
    loc_time = collections.Counter()
    reg_time = collections.Counter()
    for loc, a, b in segs:
        loc_time[loc] += b - a
        tl = st[loc]['timeline']
        edges = [(0, None)] + tl + [(2 ** 64, None)]
        for (t0, r), (t1, _) in zip(edges, edges[1:]):
            x, y = max(a, t0), min(b, t1)
            if y > x:
                reg_time[r] += y - x
    outside = reg_time.pop(None, 0)
    return dict(start=start, end=end, end_location=end_loc, jumps=jumps,
                segments=sorted(([l, a, b] for l, a, b in segs), key=lambda s: s[1]),
                locations=dict(loc_time), regions=dict(reg_time), outside=outside)
