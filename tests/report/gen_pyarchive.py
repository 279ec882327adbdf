#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gen_pyarchive.py DIR [EVENTS_PER_THREAD]

Writes an archive with the reference writer (python3-otf2 / libotf2): two
processes with two threads each, nested regions (recursion included), MPI
point-to-point messages and a collective, a metric, attributes, a
parameter, irregular times. Used to test our reader and `tracer report`
against numbers the reference reader computes.
"""
import random
import shutil
import sys

import otf2
from otf2.enums import Type, RegionRole, Paradigm, GroupType, GroupFlag, CollectiveOp


def main():
    path = sys.argv[1]
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    shutil.rmtree(path, ignore_errors=True)
    rnd = random.Random(14)
    with otf2.writer.open(path, timer_resolution=1000000000) as tr:
        d = tr.definitions
        node = d.system_tree_node("node")
        names = ["main", "compute", "solve", "recurse", "io_write", "MPI_Send",
                 "MPI_Recv", "MPI_Barrier"]
        regs = {n: d.region(n, region_role=RegionRole.FUNCTION,
                            paradigm=Paradigm.MPI if n.startswith("MPI_") else Paradigm.USER)
                for n in names}
        attr = d.attribute("bytes", "payload size", Type.UINT64)
        param = d.parameter("iteration", otf2.ParameterType.INT64)
        metric = d.metric("cycles", unit="1")
        procs = [d.location_group("rank %d" % r, system_tree_parent=node) for r in range(2)]
        writers = []
        for r, p in enumerate(procs):
            for t in range(2):
                writers.append((r, tr.event_writer("rank %d thread %d" % (r, t), group=p)))
        locs = d.group("all", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                       group_flags=GroupFlag.NONE,
                       members=[w._location for r, w in writers if w._location.name.endswith(" 0")])
        grp = d.group("world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                      group_flags=GroupFlag.NONE, members=[0, 1])
        comm = d.comm("MPI_COMM_WORLD", grp)
        for r, w in writers:
            t = 1000 + rnd.randrange(100)
            main_thread = w._location.name.endswith(" 0")
            w.enter(t, regs["main"])
            n = 0
            it = 0
            while n < per:
                t += rnd.randrange(1, 50)
                w.parameter_int(t, param, it)
                w.enter(t, regs["compute"], {attr: it})
                t += rnd.randrange(1, 300)
                depth = rnd.randrange(1, 4)
                for _ in range(depth):
                    w.enter(t, regs["recurse"])
                    t += rnd.randrange(0, 20)
                w.metric(t, metric, float(rnd.randrange(1000)))
                for _ in range(depth):
                    t += rnd.randrange(0, 20)
                    w.leave(t, regs["recurse"])
                w.enter(t, regs["solve"])
                t += rnd.randrange(1, 500)
                w.leave(t, regs["solve"])
                t += rnd.randrange(1, 30)
                w.leave(t, regs["compute"])
                if main_thread:
                    peer = 1 - r
                    rr = "MPI_Send" if (it + r) % 2 == 0 else "MPI_Recv"
                    w.enter(t, regs[rr])
                    t += rnd.randrange(1, 100)
                    if rr == "MPI_Send":
                        w.mpi_send(t, peer, comm, it % 7, 8 * (it % 13))
                    else:
                        w.mpi_recv(t, peer, comm, it % 7, 8 * (it % 13))
                    t += rnd.randrange(1, 100)
                    w.leave(t, regs[rr])
                    if it % 10 == 0:
                        w.enter(t, regs["MPI_Barrier"])
                        w.mpi_collective_begin(t)
                        t += rnd.randrange(1, 1000)
                        w.mpi_collective_end(t, CollectiveOp.BARRIER, comm, 0xffffffff, 0, 0)
                        w.leave(t, regs["MPI_Barrier"])
                else:
                    w.enter(t, regs["io_write"])
                    t += rnd.randrange(1, 200)
                    w.leave(t, regs["io_write"])
                n += 20 + 4 * depth
                it += 1
            t += 10
            w.leave(t, regs["main"])
        del locs


if __name__ == '__main__':
    main()
