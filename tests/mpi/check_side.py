#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Processes beside an MPI rank, under a real launcher: a rank's system()
before and after MPI_Finalize and its fork child (mpi_side.c), and a wrapper
script that does not exec the program (`sh -c 'PROG; true'`, the shell is
the process the launcher started) or does (`sh -c 'exec PROG'`: the shell's
archive is moved aside at the exec, side<r>-<pid>.1). Each way gives one archive DIR with the
2 ranks of PROG (never DIR.1), one tracer: line naming it, the same stdout
and exit status as untraced, and no line about a run that "ended without
MPI_Finalize". A program that never calls MPI under the launcher: its
ranks' archives merged into DIR/traces.otf2, one notice line (none with
-q). The side processes' own archives are DIR/ranks/side<r>-<pid>
(each read by otf2-print -Werror); with the wrapper, DIR/ranks/rank<r>.mpi
names the archive of the process that called MPI_Init. The archive passes
the reference reader (python3-otf2) and the shared checks.

usage: check_side.py --lib LIB --tracer-run TRACER_RUN --mpirun MPIRUN --mpi ompi|mpich --prog PROG --out DIR
"""
import glob
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402


def check(ck, what, out, p, plain, sides, wrapper):
    rc.compare(ck, plain, p)
    lines = rc.tracer_lines(p.stderr)
    anchor = os.path.join(out, "traces.otf2")
    ck.expect(len(lines) == 1 and lines[0].startswith("tracer: archive %s: 2 MPI ranks" % anchor),
              "%s: want one line naming %s with 2 MPI ranks, got %r" % (what, anchor, lines))
    others = glob.glob(out + ".*")
    ck.expect(not others, "%s: archives beside %s: %r" % (what, out, others))
    ranks = os.path.join(out, "ranks")
    side = sorted(glob.glob(os.path.join(ranks, "side*-*.otf2")))
    ck.expect(len(side) >= sides, "%s: want at least %d side archives, got %r" % (what, sides, side))
    for s in side:
        try:
            tc.otf2_print(s, "-Werror")
        except tc.CheckError as e:
            ck.fail("%s: %s: %s" % (what, s, e))
    for r in range(2):
        alias = os.path.join(ranks, "rank%d.mpi" % r)
        if wrapper:
            ck.expect(os.path.exists(alias) and open(alias).read().startswith("side%d-" % r),
                      "%s: %s should name the side archive of the MPI process" % (what, alias))
        else:
            ck.expect(not os.path.exists(alias), "%s: %s exists" % (what, alias))
    tr = rc.check_mpi_archive(ck, what, anchor, 2, ("MPI_Init", "MPI_Allreduce", "MPI_Finalize"))
    if tr:
        print("%s: read back: %s, %d side archives" % (what, tr, len(side)))


def main():
    a = rc.launcher_args()
    env = rc.ROOT_ENV
    launch = rc.mpi_launch(a.mpirun, a.mpi, 2, [])
    ck = rc.Checker()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    # per rank: two system() shells (each execs true) and a fork child
    cases = [("rank with system() and fork", [a.prog], 2 * 3, False),
             ("wrapper script without exec", ["sh", "-c", a.prog + "; true"], 2 * 4, True),
             ("wrapper script with exec", ["sh", "-c", "exec " + a.prog], 2 * 4, False)]
    for what, argv, sides, wrapper in cases:
        plain = rc.run_untraced(launch + argv, env, timeout=120)
        ck.expect(plain.returncode == 0, "%s untraced: exit %d, %r" % (what, plain.returncode, plain.stderr))
        for how in ("tracer-run", "LD_PRELOAD"):
            out = "%s_%s_%s" % (a.out, "_".join(what.split()[:3]), how.replace("-", "").lower())
            for old in [out] + glob.glob(out + ".*"):
                shutil.rmtree(old, ignore_errors=True)
            if how == "tracer-run":
                p = rc.run_untraced(launch + [a.tracer_run, "-o", out] + argv, env, timeout=120, echo=True)
            else:
                p, _ = rc.run_traced(launch + argv, a.lib, out, env, timeout=120)
            check(ck, "%s (%s)" % (what, how), out, p, plain, sides, wrapper)
    # a program that never calls MPI under the launcher: the ranks' archives
    # merged by tracer-merge (detached), one notice line, none with -q
    argv = ["sh", "-c", "exec hostname"]
    plain = rc.run_untraced(launch + argv, env, timeout=120)
    for q in ([], ["-q"]):
        what = "no MPI%s" % (" -q" if q else "")
        out = "%s_nompi%s" % (a.out, "_q" if q else "")
        shutil.rmtree(out, ignore_errors=True)
        p = rc.run_untraced(launch + [a.tracer_run, "-o", out] + q + argv, env, timeout=120, echo=True)
        rc.compare(ck, plain, p)
        anchor = os.path.join(out, "traces.otf2")
        lines = rc.tracer_lines(p.stderr)
        want = [] if q else ["tracer: archive %s: being merged from the 2 ranks' archives" % anchor]
        ck.expect(len(lines) == len(want) and all(l.startswith(w) for l, w in zip(lines, want)),
                  "%s: tracer lines %r, want %r" % (what, lines, want))
        for _ in range(300):
            if os.path.exists(anchor):
                break
            time.sleep(0.1)
        rc.check_mpi_archive(ck, what, anchor, 2, ())
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
