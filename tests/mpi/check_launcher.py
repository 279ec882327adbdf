#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The MPI launcher itself under the tracer: `tracer-run -o DIR mpirun -np 2
PROG` and plain LD_PRELOAD on the launcher. The launcher (and its helper
daemons) are never traced, so the run is the ranks': the same stdout and exit
status as untraced, one tracer: line naming DIR/traces.otf2 with 2 MPI ranks
(not a part file of the launcher's process tree), no procs/ left in DIR (the
launcher's own events and live files), and the archive passes the reference
reader (otf2-print -Werror, python3-otf2) and the shared checks.

usage: check_launcher.py --lib LIB --tracer-run TRACER_RUN --mpirun MPIRUN --mpi ompi|mpich --prog PROG --out DIR
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402


def check_archive(ck, what, out, p, plain):
    rc.compare(ck, plain, p)
    lines = rc.tracer_lines(p.stderr)
    anchor = os.path.join(out, "traces.otf2")
    ck.expect(len(lines) == 1 and lines[0].startswith("tracer: archive %s: 2 MPI ranks" % anchor),
              "%s: want one line naming %s with 2 MPI ranks, got %r" % (what, anchor, lines))
    left = sorted(f for f in os.listdir(out) if f not in ("traces.otf2", "traces.def", "traces", "ranks",
                                                           "tracer.log")) if os.path.isdir(out) else []
    ck.expect(not left, "%s: left in %s: %r (the launcher was traced)" % (what, out, left))
    tr = rc.check_mpi_archive(ck, what, anchor, 2)
    if tr:
        print("%s: read back: %s" % (what, tr))


def main():
    a = rc.launcher_args()
    env = rc.ROOT_ENV
    argv = rc.mpi_launch(a.mpirun, a.mpi, 2, []) + [a.prog]
    ck = rc.Checker()
    plain = rc.run_untraced(argv, env, timeout=120)
    ck.expect(plain.returncode == 0, "untraced run: exit %d, %r" % (plain.returncode, plain.stderr))

    out = a.out + "_run"
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    p = rc.run_untraced([a.tracer_run, "-o", out] + argv, env, timeout=120, echo=True)
    check_archive(ck, "tracer-run mpirun", out, p, plain)

    out = a.out + "_preload"
    p, _ = rc.run_traced(argv, a.lib, out, env, timeout=120)
    check_archive(ck, "LD_PRELOAD on mpirun", out, p, plain)
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
