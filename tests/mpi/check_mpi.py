#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run an MPI program under libtracer.so and check its archive with the
reference reader (otf2-print and the otf2 Python bindings).

usage: check_mpi.py --lib LIB --prog PROG --np N --mode MODE --out DIR [--mpirun MPIRUN --mpi ompi|mpich]

Checks (all modes): otf2-print -Werror clean, no [OTF2] complaints, one
location group "MPI Rank r" per rank, unified definitions without
duplicates, every send matched by exactly one receive (comm, sender,
receiver, tag, length) with the receive not earlier than the send after
clock correction, every collective on every member in the same order.
Mode-specific checks: see MODES below.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

import otf2
from otf2.enums import GroupType

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402
import tracecheck  # noqa: E402

ck = rc.Checker()
fail, expect = ck.fail, ck.expect


# partial mode: ranks whose definitions tracer-merge could not use
PARTIAL = set()


def run(args, traced=True, extra=()):
    out = args.out
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    env_vars = ["TRACER_OUTPUT=" + out, "TRACER_VERBOSE=1"] + list(extra) + list(args.args_env)
    return rc.run_mpi(args.mpirun, args.np, [args.prog] + args.args, env_vars,
                      lib=args.lib if traced else None, mpi=args.mpi, cwd=args.workdir or None)


def check_layout(out):
    """One anchor in the archive directory (the per-rank archives are below
    ranks/), plain files only: any copy tool keeps the archive readable."""
    anchors = sorted(f for f in os.listdir(out) if f.endswith(".otf2"))
    expect(anchors == ["traces.otf2"], "anchors in %s: %r" % (out, anchors))
    for root, dirs, files in os.walk(out):
        for f in dirs + files:
            p = os.path.join(root, f)
            expect(not os.path.islink(p), "symbolic link in the archive: %s" % p)
            if f.endswith(".otf2"):
                expect(os.path.getsize(p) > 64, "anchor %s has %d bytes" % (p, os.path.getsize(p)))


class Trace:
    def __init__(self, anchor):
        self.sends = []       # (comm, src, dst, tag, len, time, kind)
        self.recvs = []
        self.colls = collections.defaultdict(list)   # (comm name, rank) -> [op]
        self.nbc_req = collections.Counter()
        self.nbc_done = collections.Counter()
        self.events = collections.Counter()
        self.rank_of_group = {}
        self.threads = collections.Counter()
        self.comm_create = collections.Counter()
        self.comm_destroy = collections.Counter()
        self.rma = collections.Counter()
        self.intercomm = collections.Counter()
        self.coll_recs = []
        with otf2.reader.open(anchor) as tr:
            d = tr.definitions
            self.defs = d
            locs_group = [g for g in d.groups if g.group_type == GroupType.COMM_LOCATIONS
                          and g.paradigm == otf2.enums.Paradigm.MPI]
            if len(locs_group) != 1:
                fail("expected one COMM_LOCATIONS group, got %d" % len(locs_group))
            self.world = locs_group[0].members if locs_group else ()
            for r, loc in enumerate(self.world):
                self.rank_of_group[loc.group] = r
                want_name = "MPI Rank (not in this archive)" if r in PARTIAL else "MPI Rank %d" % r
                if loc.group.name != want_name:
                    fail("location group of rank %d is named %r" % (r, loc.group.name))
            for loc in d.locations:
                self.threads[self.rank_of_group.get(loc.group, -1)] += 1
            self.check_defs(d)
            self.clock = d.clock_properties
            self.first, self.last = None, None
            for loc, ev in tr.events:
                name = type(ev).__name__
                self.events[name] += 1
                if self.first is None or ev.time < self.first:
                    self.first = ev.time
                if self.last is None or ev.time > self.last:
                    self.last = ev.time
                me = self.rank_of_group.get(loc.group)
                if me is None:
                    fail("event on a location outside the MPI ranks: %s" % loc.name)
                    continue
                if name.startswith("Mpi") and isinstance(getattr(ev, "communicator", None),
                                                         otf2.definitions.InterComm):
                    # python3-otf2 3.0.2 decodes InterComm definitions with
                    # shifted fields: its ranks cannot be resolved here
                    # (otf2-print checks the records).
                    self.intercomm[name] += 1
                    continue
                if name in ("MpiSend", "MpiIsend"):
                    c = ev.communicator
                    self.sends.append((c.name, me, self.peer(c, ev.receiver, me), ev.msg_tag,
                                       ev.msg_length, ev.time, name))
                elif name in ("MpiRecv", "MpiIrecv"):
                    c = ev.communicator
                    self.recvs.append((c.name, self.peer(c, ev.sender, me), me, ev.msg_tag,
                                       ev.msg_length, ev.time, name))
                elif name == "MpiCollectiveEnd":
                    op = str(ev.collective_op).split(".")[-1]
                    self.colls[(ev.communicator.name, me)].append(op)
                    self.coll_recs.append((ev.communicator.name, me, op, ev.root, ev.size_sent,
                                           ev.size_received))
                elif name == "NonBlockingCollectiveRequest":
                    self.nbc_req[(loc.group.name, loc.name, ev.request_id)] += 1
                elif name == "NonBlockingCollectiveComplete":
                    self.nbc_done[(loc.group.name, loc.name, ev.request_id)] += 1
                    self.colls[(ev.communicator.name, me)].append("I" + str(ev.collective_op).split(".")[-1])
                elif name == "CommCreate":
                    self.comm_create[ev.communicator.name] += 1
                elif name == "CommDestroy":
                    self.comm_destroy[ev.communicator.name] += 1
                elif name.startswith("Rma"):
                    self.rma[name] += 1

    def check_clock(self, where):
        if self.first is not None:
            try:
                tracecheck.check_time_range(self.clock, self.first, self.last, where)
            except tracecheck.CheckError as e:
                fail(str(e))

    def peer(self, comm, idx, me):
        """World rank of rank idx of comm (remote group for intercomms)."""
        if isinstance(comm, otf2.definitions.InterComm):
            a = [self.rank_of_group[l.group] for l in comm.groupA.members]
            b = [self.rank_of_group[l.group] for l in comm.groupB.members]
            other = b if me in a else a
            return other[idx] if idx < len(other) else -1
        members = comm.group.members
        if comm.group.group_type == GroupType.COMM_SELF:
            return me
        if idx >= len(members):
            fail("rank %d out of range for comm %s" % (idx, comm.name))
            return -1
        return self.rank_of_group[members[idx].group]

    def check_defs(self, d):
        seen = collections.Counter(s for s in d.strings)
        dup = [s for s, n in seen.items() if n > 1]
        if dup:
            fail("duplicate strings: %r" % dup[:5])
        regs = collections.Counter((r.name, r.paradigm) for r in d.regions)
        dup = [r for r, n in regs.items() if n > 1]
        if dup:
            fail("duplicate regions: %r" % dup[:5])
        comms = collections.Counter(c.name for c in d.comms)
        full = collections.Counter(
            (c.name, tuple((m.group.name, m.name) for m in getattr(c, "group", c).members)
             if not isinstance(c, otf2.definitions.InterComm) else c.groupA)
            for c in d.comms)
        dup = [c for c, n in full.items() if n > 1]
        dup += [c for c, n in comms.items() if n > 1 and c.startswith("MPI")]
        if dup:
            fail("duplicate comms: %r" % dup[:5])
        groups = collections.Counter((g.name, g.group_type, tuple((getattr(getattr(m, "group", None), "name", ""), getattr(m, "name", m)) for m in g.members))
                                     for g in d.groups)
        dup = [g for g, n in groups.items() if n > 1]
        if dup:
            fail("duplicate groups: %r" % dup[:5])
        for name in ("MPI_COMM_WORLD", "MPI_COMM_SELF"):
            if name not in comms:
                fail("no %s comm" % name)

    def members(self, comm_name):
        for c in self.defs.comms:
            if c.name == comm_name:
                if isinstance(c, otf2.definitions.InterComm):
                    return sorted(self.rank_of_group[l.group] for l in c.groupA.members + c.groupB.members)
                if c.group.group_type == GroupType.COMM_SELF:
                    return None
                return [self.rank_of_group[l.group] for l in c.group.members]
        return None


def check_matching(t, slack=0):
    """Every send matches one receive; no receive before its send. slack:
    the clock-synchronisation uncertainty (ticks) a receive may precede its
    send by (0: none)."""
    q = collections.defaultdict(list)
    for s in t.sends:
        q[s[:5]].append(s)
    rq = collections.defaultdict(list)
    for r in t.recvs:
        rq[r[:5]].append(r)
    for k in set(q) | set(rq):
        ns, nr = len(q.get(k, [])), len(rq.get(k, []))
        if ns != nr:
            fail("%d sends vs %d receives for (comm, src, dst, tag, len) = %r" % (ns, nr, k))
            continue
        # MPI does not overtake: the i-th send of a key matches the i-th receive.
        for s, r in zip(sorted(q[k], key=lambda x: x[5]), sorted(rq[k], key=lambda x: x[5])):
            if r[5] + slack < s[5]:
                fail("receive at %d before its send at %d: %r" % (r[5], s[5], k))
    for s in t.sends:
        if s[2] < 0:
            fail("send to unknown rank: %r" % (s,))
    for r in t.recvs:
        if r[1] < 0:
            fail("receive from unresolved rank: %r" % (r,))


def check_collectives(t):
    by_comm = collections.defaultdict(dict)
    for (comm, rank), ops in t.colls.items():
        by_comm[comm][rank] = ops
    for comm, per_rank in by_comm.items():
        members = t.members(comm)
        if members is None:
            continue
        missing = set(members) - set(per_rank)
        if missing:
            fail("collectives on %s missing on ranks %s" % (comm, sorted(missing)))
        seqs = {tuple(v) for v in per_rank.values()}
        if len(seqs) != 1:
            fail("collective sequences differ on %s: %r" % (comm, per_rank))
    for k in t.nbc_req:
        if t.nbc_done.get(k) != 1:
            fail("non-blocking collective request %r not completed once" % (k,))


def mode_p2p(t, n):
    ev = t.events
    expect(ev["MpiRequestCancelled"] == n, "expected %d cancelled requests, got %d" % (n, ev["MpiRequestCancelled"]))
    expect(ev["MpiIrecvRequest"] >= ev["MpiIrecv"], "more MpiIrecv than MpiIrecvRequest")
    expect(ev["MpiIsendComplete"] == ev["MpiIsend"], "MpiIsend %d vs MpiIsendComplete %d" % (ev["MpiIsend"], ev["MpiIsendComplete"]))
    # ring: 3 blocking + sendrecv + replace per rank on tags 10..14
    for tag in (10, 11, 12, 13, 14, 22, 30, 31, 32, 40, 41):
        got = [s for s in t.sends if s[3] == tag]
        want = n * (3 if tag == 22 else 1)
        expect(len(got) == want, "tag %d: %d sends, want %d" % (tag, len(got), want))
    anys = [r for r in t.recvs if r[2] == 0 and r[3] == 60 + r[1]]
    expect(sorted(r[1] for r in anys) == list(range(1, n)), "ANY_SOURCE/ANY_TAG receives at rank 0: %r" % anys)
    for r in anys:
        expect(r[4] == 4 * r[1], "ANY_SOURCE receive from %d has length %d" % (r[1], r[4]))
    anys = [r for r in t.recvs if r[2] == 0 and r[3] == 19]
    # (ranks 1..3 only: the program pre-posts at most 3)
    expect(sorted(r[1] for r in anys) == list(range(1, min(n, 4))), "ANY_SOURCE Irecv at rank 0: %r" % anys)
    for r in anys:
        expect(r[4] == 8 * r[1] and r[6] == "MpiIrecv", "ANY_SOURCE Irecv from %d: %r" % (r[1], r))
    expect(not [s for s in t.sends if s[3] == 50], "send to MPI_PROC_NULL recorded")


def mode_coll(t, n):
    ops = collections.Counter(op for (c, r), v in t.colls.items() if c == "MPI_COMM_WORLD" for op in v)
    for op in ("BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER", "ALLGATHERV",
               "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "REDUCE", "ALLREDUCE", "REDUCE_SCATTER",
               "REDUCE_SCATTER_BLOCK", "SCAN", "EXSCAN", "IBARRIER", "IBCAST", "IALLREDUCE",
               "IALLTOALL", "IGATHER", "IREDUCE", "ISCAN"):
        cnt = ops[op]
        expect(cnt >= n, "collective %s on MPI_COMM_WORLD: %d records, want >= %d" % (op, cnt, n))
    names = [c.name for c in t.defs.comms]
    for how in ("MPI_Comm_split", "MPI_Comm_dup", "MPI_Comm_idup", "MPI_Cart_create"):
        got = [x for x in names if x.startswith(how + " [")]
        expect(got, "no communicator from %s in %r" % (how, names))
    splits = [x for x in names if x.startswith("MPI_Comm_split [")]
    expect(len(splits) == min(2, n), "expected %d split comms, got %r" % (min(2, n), splits))
    for c, k in t.comm_create.items():
        m = t.members(c)
        if m is not None:
            expect(k == len(m), "CommCreate of %s on %d ranks, has %d members" % (c, k, len(m)))
        expect(t.comm_destroy.get(c, 0) in (0, k), "CommDestroy count of %s" % c)
    dupsend = [s for s in t.sends if s[0].startswith("MPI_Comm_dup [")]
    expect(dupsend or n < 3, "no traffic on the duplicated communicator")
    expect(len(list(t.defs.cart_topologies)) == 1, "expected one cartesian topology")
    # bytes per rank: MPI_Bcast(4 ints, root 0), MPI_Gather(4 ints, root n-1),
    # MPI_Allreduce(4 ints)
    w = [c for c in t.coll_recs if c[0] == "MPI_COMM_WORLD"]
    for comm, me, op, root, sent, recvd in w:
        if op == "BCAST":
            expect(root == 0 and sent == (16 * n if me == 0 else 0) and recvd == 16,
                   "Bcast record of rank %d: root %d sent %d recvd %d" % (me, root, sent, recvd))
        if op == "GATHER":
            expect(root == n - 1 and sent == 16 and recvd == (16 * n if me == n - 1 else 0),
                   "Gather record of rank %d: root %d sent %d recvd %d" % (me, root, sent, recvd))
        if op == "ALLREDUCE":
            expect(sent == 16 * n and recvd == 16 * n and root == 0xffffffff,
                   "Allreduce record of rank %d: root %d sent %d recvd %d" % (me, root, sent, recvd))


def mode_rma(t, n):
    r = t.rma
    expect(r["RmaWinCreate"] == 2 * n and r["RmaWinDestroy"] == 2 * n, "window create/destroy: %r" % r)
    expect(r["RmaPut"] == 4 * n and r["RmaGet"] == 2 * n, "puts/gets: %r" % r)
    expect(r["RmaAtomic"] == 3 * n, "atomics: %r" % r)
    # MPI_Rput/MPI_Rget complete at their Wait/Test, the others at the next sync
    expect(r["RmaOpCompleteNonBlocking"] == 2 * n, "request-based completions: %r" % r)
    expect(r["RmaOpCompleteBlocking"] == r["RmaPut"] + r["RmaGet"] + r["RmaAtomic"] - 2 * n, "completions: %r" % r)
    expect(r["RmaAcquireLock"] >= n and r["RmaReleaseLock"] == r["RmaAcquireLock"], "locks: %r" % r)
    expect(len(list(t.defs.rma_wins)) == 2, "expected 2 unified windows, got %d" % len(list(t.defs.rma_wins)))


def mode_threads(t, n):
    pairs = n - n % 2
    for tag in (100, 101, 200, 201):
        got = [s for s in t.sends if s[3] == tag]
        expect(len(got) == 5 * (pairs // 2), "tag %d: %d sends" % (tag, len(got)))
    for r in range(pairs):
        expect(t.threads[r] >= 3, "rank %d has %d locations, want >= 3" % (r, t.threads[r]))


def mode_late(t, n):
    """mpi_late.c: what a rank defines after MPI_Finalize (its file's I/O
    handles, a thread) is in the unified archive under its own names: every
    rank writes only its own /tmp/tracer-late-<pid>-r<rank>.txt, and has a
    second location whose lock acquisition and stdout write are there (before:
    the handles came out as other handles, "stdin" and "stdout", and the
    thread's location was missing)."""
    import re
    anchor = os.path.join(ARGS.out, "traces.otf2")
    files = collections.defaultdict(set)   # rank -> late files its handles name
    locks = collections.Counter()         # rank -> lock acquisitions off the master
    with otf2.reader.open(anchor) as tr:
        for loc, ev in tr.events:
            m = re.match(r"MPI Rank (\d+)$", loc.group.name)
            me = int(m.group(1)) if m else None
            name = type(ev).__name__
            if name in ("IoCreateHandle", "IoOperationBegin"):
                m = re.search(r"tracer-late-\d+-r(\d+)\.txt$", ev.handle.file.name if ev.handle.file else "")
                if m:
                    files[me].add(int(m.group(1)))
            elif name == "ThreadAcquireLock" and loc.name != "Master thread":
                locks[me] += 1
    for r in range(n):
        expect(files[r] == {r}, "rank %d: the handles of its late file name the files of ranks %s" %
               (r, sorted(files[r])))
        expect(t.threads[r] >= 2, "rank %d has %d locations, want its thread's too" % (r, t.threads[r]))
        expect(locks[r] == 1, "rank %d: %d lock acquisitions on its late thread, want 1" % (r, locks[r]))
    # its mutex, first taken after MPI_Finalize, has its site (wrappers/pthread/pthread_site.c) on each
    # rank's master location: the offset of the program's symbol `mu` (binutils nm)
    defs = subprocess.run(["otf2-print", "-G", anchor], stdout=subprocess.PIPE, universal_newlines=True).stdout
    sites = re.findall(r'Location: "[^"]*" <(\d+)>, Name: "TRACER::LOCK_SITE::\d+" <\d+>, Type: STRING, '
                       r'Value: "0x([0-9a-f]+) (/[^"]*)" <\d+>', defs)
    rank_of = {int(m.group(1)): int(m.group(2)) for m in
               re.finditer(r'^LOCATION +(\d+) .*Group: "MPI Rank (\d+)"', defs, re.M)}
    for r in range(n):
        mine = [(int(off, 16), path) for loc, off, path in sites if rank_of.get(int(loc)) == r]
        expect(len(mine) == 1, "rank %d: lock sites %r, want the one of its late mutex" % (r, mine))
        if mine:
            nm = subprocess.run(["nm", mine[0][1]], stdout=subprocess.PIPE, universal_newlines=True).stdout
            mu = [int(l.split()[0], 16) for l in nm.splitlines() if l.endswith(" mu")]
            expect(mu == [mine[0][0]], "rank %d: the site %r, nm's mu at %r" % (r, mine[0], mu))


def mode_intercomm(anchor, n):
    """python3-otf2 3.0.2 cannot read InterComm: check with otf2-print."""
    p = subprocess.run(["otf2-print", anchor], stdout=subprocess.PIPE, universal_newlines=True)
    defs = subprocess.run(["otf2-print", "-G", anchor], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout
    ic = [l for l in defs.splitlines() if l.startswith("INTER_COMM")]
    expect(len(ic) == 1, "expected one unified INTER_COMM, got %r" % ic)
    for rec in ("MPI_SEND", "MPI_RECV"):
        got = [l for l in p.stdout.splitlines() if l.startswith(rec + " ") and "MPI_Intercomm_create" in l]
        expect(len(got) == 1, "%s on the intercommunicator: %r" % (rec, got))


def mode_fortran(t, n):
    """Fortran program: one unified archive (MPI_Init/MPI_Finalize seen)."""
    regions = {r.name for r in t.defs.regions}
    expect("MPI_Init" in regions and "MPI_Finalize" in regions, "MPI_Init/MPI_Finalize regions missing")
    expect(len([g for g in t.defs.location_groups if g.name.startswith("MPI Rank ")]) == n,
           "expected %d MPI ranks in one archive" % n)
    if "08" not in os.path.basename(sys.argv[sys.argv.index("--prog") + 1]):
        # mpif.h program: the point-to-point and collective calls are recorded
        for tag, k in ((10, n), (11, n), (12, n), (13, n), (14, n)):
            got = [s for s in t.sends if s[3] == tag]
            expect(len(got) == k, "tag %d: %d sends, want %d" % (tag, len(got), k))
        anys = [r for r in t.recvs if r[2] == 0 and r[3] == 60 + r[1]]
        expect(sorted(r[1] for r in anys) == list(range(1, n)), "ANY_SOURCE receives: %r" % anys)
        ops = collections.Counter(op for (c, r), v in t.colls.items() for op in v)
        for op, k in (("BCAST", n), ("ALLREDUCE", 2 * n), ("BARRIER", n)):
            expect(ops[op] == k, "%s: %d records" % (op, ops[op]))
        for c in t.coll_recs:
            if c[2] == "ALLREDUCE" and c[0] == "MPI_COMM_WORLD":
                expect(c[4] == 4 * n and c[5] == 4 * n, "Fortran Allreduce (MPI_IN_PLACE) bytes: %r" % (c,))
        splits = [c.name for c in t.defs.comms if c.name.startswith("MPI_Comm_split [")]
        expect(len(splits) == min(2, n), "Fortran MPI_Comm_split communicators: %r" % splits)
        expect(sum(t.comm_create.values()) == n and sum(t.comm_destroy.values()) == n,
               "CommCreate/Destroy from Fortran: %r %r" % (t.comm_create, t.comm_destroy))
        if n >= 3:
            expect([s for s in t.sends if s[0].startswith("MPI_Comm_split [") and s[3] == 15],
                   "no traffic on the Fortran split communicator")
    elif ARGS.mpi == "ompi":
        # use mpi_f08: Allreduce on every rank, through ompi_allreduce_f
        # (MPICH's mpi_f08 calls PMPI_* directly: only its Init/Finalize
        # are wrapped, the unified archive above is what it checks)
        ops = collections.Counter(op for (c, r), v in t.colls.items() for op in v)
        expect(ops["ALLREDUCE"] == n, "f08 Allreduce: %d records" % ops["ALLREDUCE"])


def mode_mpi4py(t, n):
    """mpi4py (libmpi opened by Python with dlopen): the calls are traced."""
    regions = {r.name for r in t.defs.regions}
    for r in ("MPI_Init_thread", "MPI_Finalize", "MPI_Allreduce", "MPI_Barrier"):
        expect(r in regions, "region %s missing from %r" % (r, sorted(x for x in regions if x.startswith("MPI"))))
    expect(len([s for s in t.sends if s[3] == 7]) == n, "sendrecv ring: %r" % [s for s in t.sends if s[3] == 7])


def compare_untraced(args, p):
    """The traced run's stdout and exit status equal the untraced run's;
    with TRACER_MPI=0 too (no MPI code path of the tracer runs)."""
    out = args.out
    for label, traced, extra in (("untraced", False, ()), ("TRACER_MPI=0", True, ("TRACER_MPI=0",))):
        args.out = out + "." + label.split("=")[0].lower()
        q = run(args, traced, extra)
        expect(q.returncode == p.returncode, "%s exit %d, traced %d" % (label, q.returncode, p.returncode))
        expect(q.stdout == p.stdout, "%s stdout %r, traced %r" % (label, q.stdout, p.stdout))
        err = rc.without_tracer_lines(q.stderr)
        expect(not err, "%s: stderr %r" % (label, err))
        shutil.rmtree(args.out, ignore_errors=True)
    args.out = out


def read_ppm(path):
    """(width, height, bytes) of a binary PPM (P6, maxval 255)."""
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError("not a P6 PPM")
    return int(fields[1]), int(fields[2]), data[pos + 1:]


def vite_bars(anchor, shot, script):
    """ViTE on anchor under Xvfb, one screenshot: (colours, bars crossing
    the middle of the timeline, x), or None (a failure said)."""
    p = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "sh", script, anchor, shot],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    print("vite:", p.stdout.strip())
    expect("alive" in p.stdout, "ViTE did not stay up on %s: %s" % (anchor, p.stdout.strip()))
    if os.path.exists(shot + ".log"):
        log = open(shot + ".log", errors="replace").read()
        expect("Segmentation" not in log, "ViTE crashed: %s" % log[-500:])
    try:
        w, h, px = read_ppm(shot)
    except (OSError, ValueError, IndexError) as e:
        fail("no screenshot %s: %s" % (shot, e))
        return None
    colours = {px[i:i + 3] for i in range(0, len(px), 3 * 97)}
    expect(len(colours) >= 8, "screenshot nearly uniform (%d colours): nothing drawn" % len(colours))
    # the timeline (right 60% of the window): the master thread of every rank
    # is busy from MPI_Init to MPI_Finalize, a horizontal bar; count the bars
    # crossing a vertical line in the middle of the trace
    def column(x):
        return [px[3 * (y * w + x):3 * (y * w + x) + 3] for y in range(h)]
    # the background: the most common colour over the timeline (several
    # columns; where the thread bars are long, one column may hold more
    # bar than background)
    bg = collections.Counter(c for f in (0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)
                             for c in column(int(w * f))[h // 8:h * 3 // 4]).most_common(1)[0][0]

    def bars(x):
        col = column(x)
        runs, inside, length = 0, False, 0
        for y in range(h // 8, h * 3 // 4):
            c = col[y]
            dark = c != bg
            if dark:
                length += 1
            elif inside and length >= 10:
                runs += 1
            if not dark:
                length = 0
            inside = dark
        return runs
    # several columns (where a column meets a state change of one rank, two
    # rows can join): the most bars any of them crosses
    runs, x = max((bars(int(w * f)), int(w * f)) for f in (0.35, 0.45, 0.55, 0.65, 0.75))
    return colours, runs, x


def mode_vite(t, n):
    """ViTE (libotf2 3.0.2; it takes a rank number for a location id when
    it cannot use a COMM_GROUP) opens the archive under Xvfb, stays up and
    draws a bar for every rank's master thread."""
    mode_threads(t, n)
    anchor = os.path.join(ARGS.out, "traces.otf2")
    shot = os.path.join(ARGS.out + ".vite.ppm")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vite_shot.sh")
    # under load ViTE can stall for seconds mid-drawing (two equal grabs a
    # second apart, a half-drawn timeline): a new ViTE, at most 3 times
    for attempt in range(3):
        got = vite_bars(anchor, shot, script)
        if got is None:
            return
        colours, runs, x = got
        if runs >= n:
            break
        print("vite: %d bars at x=%d, want %d: again (attempt %d)" % (runs, x, n, attempt + 2))
    print("vite: %d colours, %d bars at x=%d" % (len(colours), runs, x))
    expect(runs >= n, "ViTE drew %d rank bars, want %d" % (runs, n))


POLLS = ("MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Improbe")


def mode_poll(t, n):
    """Polling loops: with TRACER_MPI_POLLING=fold (default) only the polls
    that complete something are regions, the others are counted by the
    "MPI polling" Metric records; with all, every poll is a region."""
    m = re.findall(r"^polls 0 (\d+) (\d+)$", STDERR, re.M)
    expect(len(m) == 1, "no poll counts from rank 0 in stderr")
    if not m:
        return
    miss, hit = int(m[0][0]), int(m[0][1])
    expect(miss > 20, "the program polled only %d times in vain: the check has no teeth" % miss)
    tr = tracecheck.load(os.path.join(ARGS.out, "traces.otf2"))
    enters = sum(tr.count("Enter", region=r) for r in POLLS)
    metrics = [e for l in tr.locations for e in l.events if e.kind == "Metric"
               and e.ev.metric.members[0].name == "MPI polls folded"]
    folded = sum(e.ev.values[0] for e in metrics)
    spent = sum(e.ev.values[1] for e in metrics)
    print("polls: %d in vain, %d completing; %d poll regions, %d Metric records folding %d polls (%d ns)"
          % (miss, hit, enters, len(metrics), folded, spent))
    if "TRACER_MPI_POLLING=all" in ARGS.args_env:
        expect(enters == miss + hit, "all: %d poll regions, want %d" % (enters, miss + hit))
        expect(not metrics, "all: %d polling Metric records" % len(metrics))
    else:
        expect(enters == hit, "fold: %d poll regions, want %d (the completing ones)" % (enters, hit))
        expect(folded == miss, "fold: Metric records count %d folded polls, want %d" % (folded, miss))
        expect(len(metrics) <= hit + 2, "fold: %d Metric records for %d completing polls" % (len(metrics), hit))
        expect(spent > 0, "fold: no polling time recorded")
        # tracer report sums the folded polls (relative metrics): its totals
        # are the Metric records' sums read by the reference reader
        tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(ARGS.lib))), "bin", "tracer")
        if os.path.exists(tool):
            p = subprocess.run([tool, "report", "--json", ARGS.out], stdout=subprocess.PIPE, text=True)
            tot = {x["name"]: x["total"] for x in json.loads(p.stdout).get("metric_totals", [])}
            expect(tot.get("MPI polls folded") == folded and tot.get("MPI polling time") == spent,
                   "tracer report's metric totals %r, the records: %d polls, %d ns" % (tot, folded, spent))


def mode_hpcc(t, n):
    """Debian's hpcc (HPL, PTRANS, MPIRandomAccess, FFT, b_eff ... with
    polling loops): its own verification passes traced, and the archive stays
    small because unsuccessful polls are folded (issue: 3.4 million events
    at 4 ranks, Ns=400, before)."""
    total = sum(t.events.values())
    print("hpcc: %d events" % total)
    expect(total <= 1000000, "hpcc at %d ranks: %d events, want at most 1,000,000" % (n, total))
    outf = os.path.join(ARGS.workdir, "hpccoutf.txt")
    res = open(outf).read() if os.path.exists(outf) else ""
    expect("Success=1" in res, "hpcc did not report Success=1 (%s)" % outf)
    for k in ("MPIRandomAccess_GUPs", "HPL_Tflops"):
        m = re.search(r"^%s=(\S+)" % k, res, re.M)
        print("hpcc: %s" % (m.group(0) if m else k + " missing"))


MODES = {"late": mode_late, "hpcc": mode_hpcc, "poll": mode_poll, "vite": mode_vite, "mpi4py": mode_mpi4py, "fortran": mode_fortran, "intercomm": None, "p2p": mode_p2p, "coll": mode_coll, "rma": mode_rma, "threads": mode_threads, "abort": None, "crash": None, "partial": None, "foreign": None}


def mode_partial(args, p):
    """A crashed run (last rank SIGSEGV) where rank 1's definitions are
    missing, then truncated: tracer-merge says so in one line and merges
    the other ranks."""
    if p.returncode == 0:
        fail("mpirun exited 0 although a rank crashed")
    anchor = os.path.join(args.out, "traces.otf2")
    tdefs = os.path.join(args.out, "ranks", "rank1.tdefs")
    if not os.path.exists(tdefs):
        fail("rank 1 wrote no %s" % tdefs)
        return
    data = open(tdefs, "rb").read()
    PARTIAL.add(1)
    for variant in ("missing", "truncated"):
        for f in ("traces.otf2", "traces.def"):
            if os.path.exists(os.path.join(args.out, f)):
                os.remove(os.path.join(args.out, f))
        shutil.rmtree(os.path.join(args.out, "traces"), ignore_errors=True)
        if variant == "missing":
            os.remove(tdefs)
        else:
            with open(tdefs, "wb") as f:
                f.write(data[:len(data) // 2])
        m = subprocess.run([args.merge, args.out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        print(variant, "merge:", m.stdout.strip(), m.stderr.strip())
        expect(m.returncode == 0, "%s: tracer-merge exit %d" % (variant, m.returncode))
        said = [l for l in m.stderr.splitlines() if l.startswith("tracer-merge: rank 1:")]
        expect(len(said) == 1, "%s: want one 'tracer-merge: rank 1:' line, got %r" % (variant, m.stderr))
        expect("%d of %d ranks" % (args.np - 1, args.np) in m.stdout, "%s: summary %r" % (variant, m.stdout))
        if not os.path.exists(anchor):
            fail("%s: no archive at %s" % (variant, anchor))
            continue
        rc.otf2_print(ck, anchor, werror=True)
        t = Trace(anchor)
        t.check_clock(variant)
        expect(len(t.world) == args.np, "%s: COMM_LOCATIONS has %d members" % (variant, len(t.world)))
        for r in range(args.np):
            have = any(s[1] == r for s in t.sends)
            expect(have == (r != 1), "%s: rank %d events %s" % (variant, r, "present" if have else "missing"))
        print(variant, "events:", dict(t.events))
    sys.exit(ck.done())


def mode_foreign(args, p):
    """A program of one MPI started by the other MPI's launcher: whatever
    the MPI makes of it (Open MPI and MPICH each run every process as a
    singleton), the traced run prints and exits as the untraced one, and
    each process says in one line that it left MPI untraced."""
    out = args.out
    for attempt in range(3):
        args.out = out + ".untraced"
        q = run(args, False)
        args.out = out
        # Open MPI singletons started at the same moment race for their
        # session directory (/tmp/ompi.<host>.<uid>: "mkdir ... File
        # exists", orte_init failed), traced or not: Open MPI's own start-up
        # failure, not the tracer's; both runs are made again
        lost = [r for r in (p, q) if "orte_init failed" in r.stderr and "session_dir" in r.stderr]
        if not lost or attempt == 2:
            break
        print("foreign: Open MPI's singleton start-up lost its session-directory race; both runs again")
        p = run(args)
    said = [l for l in p.stderr.splitlines() if "the launcher of another MPI?" in l]
    expect(len(said) == args.np, "want one line per process about the other MPI's launcher, got %r" % said)
    expect(q.returncode == p.returncode, "untraced exit %d, traced %d" % (q.returncode, p.returncode))
    expect(sorted(q.stdout.splitlines()) == sorted(p.stdout.splitlines()),
           "untraced stdout %r, traced %r" % (q.stdout, p.stdout))
    err = rc.without_tracer_lines(p.stderr)
    expect(err == q.stderr.splitlines(), "stderr: traced %r, untraced %r" % (err, q.stderr))
    expect(p.returncode >= 0, "killed by signal %d" % -p.returncode)
    sys.exit(ck.done())


def check_summary(stderr, t, np):
    """One exit line for the whole run (printed by the rank that ends
    last): every rank, every location and every event of the archive."""
    lines = [l for l in stderr.splitlines() if l.startswith("tracer: archive ")]
    expect(len(lines) == 1, "want one 'tracer: archive' line for the run, got %r" % lines)
    if len(lines) != 1:
        return
    m = re.search(r": (\d+) MPI ranks, (\d+) locations, (\d+) events, (\d+) bytes", lines[0])
    expect(m is not None, "exit line %r lacks 'N MPI ranks, L locations, E events, B bytes'" % lines[0])
    if m is None:
        return
    ranks, locs, events = int(m.group(1)), int(m.group(2)), int(m.group(3))
    total = sum(t.events.values())
    nlocs = len(t.defs.locations)
    expect(ranks == np, "exit line says %d MPI ranks, want %d" % (ranks, np))
    expect(locs == nlocs, "exit line says %d locations, the archive has %d" % (locs, nlocs))
    # the rank that ends last counts every rank's events at its exit
    # (Leave of MPI_Finalize, ProgramEnd and everything else after it included)
    expect(events == total, "exit line says %d events, the archive has %d" % (events, total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--mode", required=True, choices=sorted(MODES))
    ap.add_argument("--out", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpi", default="ompi", choices=("ompi", "mpich"),
                    help="the MPI of the program and of --mpirun (its command line)")
    ap.add_argument("--merge", default="")
    ap.add_argument("--workdir", default="", help="the program's working directory")
    ap.add_argument("--env", dest="args_env", action="append", default=[],
                    help="VAR=VALUE exported to the ranks")
    ap.add_argument("args", nargs="*")
    args = ap.parse_args()
    global ARGS, STDERR
    ARGS = args
    p = run(args)
    STDERR = p.stderr
    anchor = os.path.join(args.out, "traces.otf2")
    if args.mode == "mpi4py":
        compare_untraced(args, p)
    t = None
    if args.mode == "foreign":
        mode_foreign(args, p)
        return
    if args.mode == "partial":
        mode_partial(args, p)
        return
    if args.mode in ("abort", "crash"):
        if p.returncode == 0:
            fail("mpirun exited 0 although a rank %s" % ("aborted" if args.mode == "abort" else "crashed"))
        said = [l for l in p.stderr.splitlines() if "is being merged from every rank's archive" in l]
        expect(len(said) == 1, "want one line saying where the merged archive goes, got %r" % said)
        if args.merge:
            # plain mpirun: the first rank to end without MPI_Finalize started
            # tracer-merge (detached): it waits for the killed ranks'
            # archives, then writes traces.otf2.
            for _ in range(400):
                if os.path.exists(anchor) and not os.path.exists(os.path.join(args.out, "ranks", ".tracer-merge.lock")):
                    break
                time.sleep(0.1)
            log = os.path.join(args.out, "ranks", "tracer-merge.log")
            if os.path.exists(log):
                print("tracer-merge.log:", open(log).read().strip())
            if not os.path.exists(anchor):
                fail("the merge started by the ranks did not write %s" % anchor)
        if args.mpi == "mpich":
            # Hydra kills the other ranks with SIGKILL at once: the ranks
            # that could write nothing are left out of the merge
            for r in range(args.np - 1):
                if not os.path.exists(os.path.join(args.out, "ranks", "rank%d.tdefs" % r)):
                    PARTIAL.add(r)
            print("ranks killed before writing (Hydra's SIGKILL):", sorted(PARTIAL))
    elif p.returncode != 0 and args.mode != "crash":
        fail("mpirun exit %d" % p.returncode)
    if not os.path.exists(anchor):
        fail("no archive at %s" % anchor)
    else:
        check_layout(args.out)
        rc.otf2_print(ck, anchor, werror=True)
        if args.mode == "intercomm":
            mode_intercomm(anchor, args.np)
        else:
            t = Trace(anchor)
    if t is not None:
        t.check_clock(anchor)
        expect(len(t.world) == args.np, "COMM_LOCATIONS has %d members, want %d" % (len(t.world), args.np))
        if args.mode in ("abort", "crash"):
            for r in range(args.np):
                if r not in PARTIAL:
                    expect(any(s[1] == r for s in t.sends), "no events of rank %d in the merged archive" % r)
            t.sends = [s for s in t.sends if s[1] not in PARTIAL and s[2] not in PARTIAL]
            t.recvs = [s for s in t.recvs if s[1] not in PARTIAL and s[2] not in PARTIAL]
            check_matching(t)
            # semantically complete: the ranks ended by mpirun inside MPI_Barrier (SIGTERM, or SIGKILL and
            # recovery) have every region closed and their collective ended (MpiCollectiveEnd, an
            # attribute saying it was cut) or left out; the ranks that ran on are whole
            tr = tracecheck.load(anchor)
            try:
                tracecheck.check_nesting(tr)
            except tracecheck.CheckError as e:
                fail("%s mode: %s" % (args.mode, e))
            if args.mode == "abort":
                # the aborting rank (the last) closed MPI_Abort and wrote ProgramEnd
                last = [l for l in tr.locations if l.group == "MPI Rank %d" % (args.np - 1)
                        and l.name == "Master thread"]
                kinds = [(e.kind, e.region) for e in last[0].events[-3:]] if last else []
                expect(kinds[-2:] == [("Leave", "MPI_Abort"), ("ProgramEnd", None)],
                       "aborting rank ends with %r, want Leave MPI_Abort, ProgramEnd" % kinds)
                if last and last[0].events[-1].kind == "ProgramEnd":
                    expect(last[0].events[-1].ev.exit_status == 3, "ProgramEnd exit status %d, want 3"
                           % last[0].events[-1].ev.exit_status)
        else:
            check_matching(t)
            check_collectives(t)
            MODES[args.mode](t, args.np)
            check_summary(p.stderr, t, args.np)
        print("events:", dict(t.events))
    sys.exit(ck.done())


if __name__ == "__main__":
    main()
