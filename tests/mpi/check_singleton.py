#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Singleton MPI run (the program started without mpirun, one rank) under
libtracer.so: the same stdout, stderr (less tracer: lines) and exit status
as untraced, one valid one-rank archive (otf2-print -Werror, the reference
reader, every event within ClockProperties) and one exit line (no other
tracer: line), and no archive of Open MPI's helper daemon (the singleton's
MPI_Init starts orted/prted, which inherits LD_PRELOAD). Then the same
program started by a traced shell (`sh -c PROG`, the shell's archive
directory): one archive of the tree whose MPI process is a part with its
MPI events (it was left out: its packed definitions named rank 0, not its
part).

usage: check_singleton.py --lib LIB --prog PROG --out DIR
"""
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402


def archive_dirs(parent, base):
    """DIR and the DIR.* a traced helper daemon would write next to it."""
    if not os.path.isdir(parent):
        return []
    return sorted(f for f in os.listdir(parent) if f == base or f.startswith(base + "."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    parent = os.path.dirname(a.out) or "."
    base = os.path.basename(a.out)
    for f in archive_dirs(parent, base):
        shutil.rmtree(os.path.join(parent, f), ignore_errors=True)
    os.makedirs(parent, exist_ok=True)
    # a singleton: no launcher's variables reach it (clean_env starts from ours)
    for k in [k for k in os.environ if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))]:
        del os.environ[k]

    ck = rc.Checker()
    plain = rc.run_untraced([a.prog], timeout=120)
    p, _ = rc.run_traced([a.prog], a.lib, a.out, {"TRACER_VERBOSE": "1"}, timeout=120)
    rc.compare(ck, plain, p)
    dirs = archive_dirs(parent, base)
    ck.expect(dirs == [base], "archive directories %r: the helper daemon was traced" % dirs)
    lines = rc.tracer_lines(p.stderr)
    ck.expect(len(lines) == 1 and lines[0].startswith("tracer: archive"), "want one exit line, got %r" % lines)
    try:
        tc.otf2_print(a.out, "-Werror")
        tr = tc.load(a.out)
        tc.check_all(tr, exit_status=0)
        tc.check_clock_range(tr)
        groups = list(tr.location_groups)
        ck.expect(groups == ["MPI Rank 0"], "location groups %r, want ['MPI Rank 0']" % groups)
        for r in ("MPI_Init", "MPI_Finalize", "MPI_Bcast", "MPI_Allreduce"):
            ck.expect(tr.count("Enter", region=r), "no Enter of %s" % r)
        names = [c.name for c in tr.comms]
        ck.expect("MPI_COMM_WORLD" in names, "no MPI_COMM_WORLD in %r" % names)
        print("read back:", tr)
    except tc.CheckError as e:
        ck.fail(str(e))

    # started by a traced shell: a part of the shell's tree
    sh_out = a.out + "_sh"
    for f in archive_dirs(parent, base + "_sh"):
        shutil.rmtree(os.path.join(parent, f), ignore_errors=True)
    argv = ["sh", "-c", a.prog + "; echo status $?"]
    plain = rc.run_untraced(argv, timeout=120)
    p, _ = rc.run_traced(argv, a.lib, sh_out, {"TRACER_VERBOSE": "1"}, timeout=120)
    rc.compare(ck, plain, p)
    try:
        anchor = os.path.join(sh_out, "traces.otf2")
        tc.otf2_print(anchor, "-Werror")
        tr = tc.load(anchor)
        tc.check_all(tr, exit_status=0)
        prog = os.path.basename(a.prog)
        groups = list(tr.location_groups)
        mine = [g for g in groups if g.startswith(prog + " (pid ")]
        ck.expect(len(mine) == 1 and any(g.startswith("sh (pid ") for g in groups),
                  "location groups %r, want sh's and %s's" % (groups, prog))
        for r in ("MPI_Init", "MPI_Finalize", "MPI_Bcast", "MPI_Allreduce"):
            ck.expect(tr.count("Enter", region=r), "under sh: no Enter of %s" % r)
        print("under sh, read back:", tr)
    except tc.CheckError as e:
        ck.fail("under sh: " + str(e))
    return ck.done()


if __name__ == "__main__":
    sys.exit(main())
