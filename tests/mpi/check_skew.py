#!/usr/bin/python3
"""Clock correction across ranks with a known skew.

Runs the ping-pong/ring program on 2 ranks with TRACER_CLOCK=monotonic; rank 1's
clock is set TRACER_TEST_CLOCK_SKEW ns behind rank 0's (a test-only setting
added to every CLOCK_MONOTONIC reading of that process). Without correction
rank 1's receives would come up to the skew before their sends. Checks:
  - rank 1's locations carry ClockOffset records (otf2-print -M -C) of about
    +skew (within --tol ns), rank 0's of about 0;
  - after the reader applies them, every send matches one receive and no
    receive completes before its send, within the synchronisation uncertainty
    the tracer records with each offset (StdDev = half the best round trip);
  - the archive reads cleanly (otf2-print -Werror).
usage: check_skew.py --lib LIB --prog PROG --mpirun MPIRUN [--mpi ompi|mpich] --out DIR [--skew NS] [--tol NS]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_mpi  # noqa: E402
import runcheck as rc  # noqa: E402  (check_mpi put tests/lib on the path)

ck = check_mpi.ck


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--mpi", default="ompi", choices=("ompi", "mpich"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--skew", type=int, default=-50000000)
    ap.add_argument("--tol", type=int, default=2000000)
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    env = rc.clean_env({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    common = ["LD_PRELOAD=" + a.lib, "TRACER_OUTPUT=" + a.out, "TRACER_CLOCK=monotonic"]

    def ranks(skew):
        """One rank (MPMD part) with its own TRACER_TEST_CLOCK_SKEW."""
        env_vars = ["TRACER_TEST_CLOCK_SKEW=%d" % skew] + common
        if a.mpi == "mpich":   # Hydra: -env (this part only)
            return ["-n", "1"] + sum((["-env"] + e.split("=", 1) for e in env_vars), []) + [a.prog]
        return ["-np", "1"] + sum((["-x", e] for e in env_vars), []) + [a.prog]
    opts = [] if a.mpi == "mpich" else ["--oversubscribe", "--bind-to", "none"]
    cmd = [a.mpirun] + opts + ranks(0) + [":"] + ranks(a.skew)
    print("+", " ".join(cmd))
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    sys.stdout.write(p.stdout + p.stderr)
    anchor = os.path.join(a.out, "traces.otf2")
    if p.returncode != 0 or not os.path.exists(anchor):
        print("FAIL: mpirun exit %d, anchor %s" % (p.returncode, os.path.exists(anchor)))
        sys.exit(1)
    rc.otf2_print(ck, anchor, werror=True)

    # ClockOffset records per location; its rank from its location group
    defs = subprocess.run(["otf2-print", "-G", anchor], stdout=subprocess.PIPE, universal_newlines=True).stdout
    rank_of = {int(m.group(1)): int(m.group(2)) for m in
               re.finditer(r'^LOCATION\s+(\d+)\s.*Group: "MPI Rank (\d+)"', defs, re.M)}
    out = subprocess.run(["otf2-print", "-M", "-C", anchor], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    offsets = {}
    stddev = 0.0
    for line in out.splitlines():
        m = re.match(r"CLOCK_OFFSET\s+(\d+)\s.*Offset:\s*([+-]?\d+).*StdDev:\s*([-+0-9.e]+)", line)
        if m:
            offsets.setdefault(int(m.group(1)), []).append(int(m.group(2)))
            stddev = max(stddev, float(m.group(3)))
    # The tracer records the uncertainty of each offset (half the round trip
    # of its best ping-pong) as the standard deviation: on a quiet machine a
    # few hundred ns, on an overloaded one up to milliseconds. Correction
    # must hold within it.
    slack = int(2 * stddev)
    print("largest recorded uncertainty %.0f ns" % stddev)
    print("clock offsets per location:", offsets)
    by_rank = {}
    for l, offs in offsets.items():
        by_rank.setdefault(rank_of.get(l, -1), []).extend(offs)
    ck.expect(set(by_rank) >= {0, 1}, "ClockOffset records missing for a rank: %r" % by_rank)
    for o in by_rank.get(1, []):
        ck.expect(abs(o - (-a.skew)) <= max(a.tol, slack),
                  "rank 1 offset %d, want %d +- %d" % (o, -a.skew, max(a.tol, slack)))
    for o in by_rank.get(0, []):
        ck.expect(abs(o) <= a.tol, "rank 0 offset %d, want 0 +- %d" % (o, a.tol))

    t = check_mpi.Trace(anchor)
    t.check_clock(anchor)
    ck.expect(len(t.sends) > 0 and len(t.recvs) > 0, "no messages in the archive")
    # uncorrected, times would be off by the whole skew: the check has teeth
    # as long as the slack stays well below it (an overloaded machine gives
    # round trips of several ms)
    ck.expect(slack < -a.skew / 2, "clock sync uncertainty %d ns too large to test a %d ns skew"
              % (slack, -a.skew))
    check_mpi.check_matching(t, slack)
    if ck.errors:
        sys.exit(ck.done())
    print("ok: %d sends matched, rank 1 corrected by %r ns" % (len(t.sends), by_rank.get(1)))


if __name__ == "__main__":
    main()
