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
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402


def check_archive(ck, what, out, p, plain):
    rc.compare(ck, plain, p)
    lines = rc.tracer_lines(p.stderr)
    anchor = os.path.join(out, "traces.otf2")
    ck.expect(len(lines) == 1 and lines[0].startswith("tracer: archive %s: 2 MPI ranks" % anchor),
              "%s: want one line naming %s with 2 MPI ranks, got %r" % (what, anchor, lines))
    left = sorted(f for f in os.listdir(out) if f not in ("traces.otf2", "traces.def", "traces", "ranks",
                                                           "tracer.log")) if os.path.isdir(out) else []
    ck.expect(not left, "%s: left in %s: %r (the launcher was traced)" % (what, out, left))
    try:
        tc.otf2_print(anchor, "-Werror")
        tr = tc.load(anchor)
        tc.check_all(tr, exit_status=0)
        groups = sorted(tr.location_groups)
        ck.expect(groups == ["MPI Rank 0", "MPI Rank 1"], "%s: location groups %r" % (what, groups))
        ck.expect(tr.count("Enter", region="MPI_Init") == 2, "%s: want 2 MPI_Init" % what)
        print("%s: read back: %s" % (what, tr))
    except tc.CheckError as e:
        ck.fail("%s: %s" % (what, e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--tracer-run", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--mpi", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
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
