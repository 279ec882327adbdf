#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Singleton MPI run (the program started without mpirun, one rank) under
libtracer.so: the same stdout and exit status as untraced, one valid
one-rank archive (otf2-print -Werror, the reference reader, every event
within ClockProperties), and no archive of Open MPI's helper daemon (the
singleton's MPI_Init starts orted/prted, which inherits LD_PRELOAD).

usage: check_singleton.py --lib LIB --prog PROG --out DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tracecheck as tc  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    parent = os.path.dirname(a.out) or "."
    base = os.path.basename(a.out)
    for f in os.listdir(parent) if os.path.isdir(parent) else ():
        if f == base or f.startswith(base + "."):
            shutil.rmtree(os.path.join(parent, f), ignore_errors=True)
    os.makedirs(parent, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))}
    plain = subprocess.run([a.prog], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
    env.update(LD_PRELOAD=a.lib, TRACER_OUTPUT=a.out, TRACER_VERBOSE="1")
    p = subprocess.run([a.prog], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    print(p.stdout + p.stderr)
    bad = []
    if (p.returncode, p.stdout) != (plain.returncode, plain.stdout):
        bad.append("traced exit %d stdout %r, untraced exit %d stdout %r" %
                   (p.returncode, p.stdout, plain.returncode, plain.stdout))
    err = [l for l in p.stderr.splitlines() if not l.startswith("tracer:")]
    if err != [l for l in plain.stderr.splitlines()]:
        bad.append("stderr differs: %r" % err)
    dirs = sorted(f for f in os.listdir(parent) if f == base or f.startswith(base + "."))
    if dirs != [base]:
        bad.append("archive directories %r: the helper daemon was traced" % dirs)
    lines = [l for l in p.stderr.splitlines() if l.startswith("tracer: archive")]
    if len(lines) != 1:
        bad.append("want one exit line, got %r" % lines)
    try:
        tc.otf2_print(a.out)
        tr = tc.load(a.out)
        tc.check_all(tr, exit_status=0)
        tc.check_clock_range(tr)
        if [g for g in tr.location_groups] != ["MPI Rank 0"]:
            bad.append("location groups %r, want ['MPI Rank 0']" % tr.location_groups)
        for r in ("MPI_Init", "MPI_Finalize", "MPI_Bcast", "MPI_Allreduce"):
            if not tr.count("Enter", region=r):
                bad.append("no Enter of %s" % r)
        names = [c.name for c in tr.comms]
        if "MPI_COMM_WORLD" not in names:
            bad.append("no MPI_COMM_WORLD in %r" % names)
        print("ok?", tr)
    except tc.CheckError as e:
        bad.append(str(e))
    for b in bad:
        print("FAIL:", b)
    if bad:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
