#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sampling.unwind: the sampler's own stack walk (sampling/unwind.c) against
libunwind on real programs, and the stacks it gives read back.

usage: smp_unwind.py --lib LIB --bindir DIR --src DIR --work DIR

1. smp_unwind (ours: frames with the CFA on %rsp, on %rbp, a realigned
   stack, two threads) and programs nobody here wrote (python3, gzip, bash,
   perl, numpy's matrix product on OpenBLAS-OpenMP when python3-numpy is
   there), untraced and with TRACER_SAMPLING_UNWIND=check (stdout byte for
   byte, stderr less tracer: lines and exit status compared): every sample
   is walked both ways; the exit line says how many of the stacks walked from the unwind
   tables differ from libunwind's: none may, and most samples must have
   been walked from the tables (90 % for smp_unwind, 80 % for gzip, bash
   and perl, 50 % for python3 and numpy: their modules are opened with
   dlopen, and a pc in an object loaded since the sampler's last look at
   the object table goes to libunwind until the next look).
2. smp_unwind with the default walk: the samples at the end of each chain
   have the chain's whole path (rec_sp x 31 or rec_bp x 31 below
   run_shapes, main or thread_main; aligned_call x 5 then rec_sp x 7), read
   back with the reference reader; "smp_unwind signal" (CPU time in a
   signal handler) in check mode, 90 % walked from the tables, and its
   paths through the signal frame (__libc_start_call_main < sig_raise <
   sig_handler < sig_work).
3. TRACER_SAMPLING_UNWIND=libunwind walks nothing from the tables.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smp_lib as sc  # noqa: E402  (the shared helpers of smp_check.py)

from otf2.events import CallingContextSample  # noqa: E402

rc = sc.rc
expect = sc.expect


def walk_counts(se):
    """(samples, walked from the tables, walked at all (from the tables or by
    libunwind: the samples whose pc has unwind information), differing) from
    the exit lines."""
    m = re.search(r"sampling: (\d+) samples on", se)
    expect(m, "no sampling summary on stderr:\n%s" % se[-2000:])
    w = re.search(r"(\d+) stacks walked from the unwind tables, (\d+) by libunwind", se)
    expect(w, "no stack-walk line (TRACER_VERBOSE=2) on stderr")
    d = re.search(r"unwind check: (\d+) of (\d+) stacks walked from the unwind tables differ", se)
    return (int(m.group(1)), int(w.group(1)), int(w.group(1)) + int(w.group(2)),
            (int(d.group(1)), int(d.group(2))) if d else None)


def check_run(args, name, cmd, share, env=None):
    """cmd untraced, then traced in check mode: the same stdout byte for
    byte, stderr less tracer: lines and exit status; then the walk counts."""
    os.makedirs(args.work, exist_ok=True)
    out_u = os.path.join(args.work, name + ".untraced.out")
    out_t = os.path.join(args.work, name + ".traced.out")
    base = rc.run_untraced(cmd, dict(env or {}), timeout=300, stdout_path=out_u)
    e = {"TRACER_SAMPLING": "500us", "TRACER_SAMPLING_UNWIND": "check", "TRACER_VERBOSE": "2"}
    e.update(env or {})
    anchor, so, se = sc.run_traced(args, name, cmd, e, timeout=300, stdout_path=out_t,
                                   expect_rc=base.returncode)
    with open(out_u, "rb") as fu, open(out_t, "rb") as ft:
        bu, bt = fu.read(), ft.read()
    expect(bu == bt, "%s: stdout differs traced (%d bytes) and untraced (%d bytes)" % (name, len(bt), len(bu)))
    expect(rc.without_tracer_lines(se) == rc.without_tracer_lines(base.stderr),
           "%s: stderr less tracer: lines differs: %r vs %r" % (name, se[-300:], base.stderr[-300:]))
    n, walked, stacks, diff = walk_counts(se)
    expect(diff is not None, "%s: no unwind check line" % name)
    first = [l for l in se.splitlines() if "first difference" in l]
    expect(diff[0] == 0, "%s: %d of %d stacks unlike libunwind's: %s" % (name, diff[0], diff[1], first))
    expect(n >= 100 and stacks >= 100, "%s: only %d samples, %d with a stack" % (name, n, stacks))
    # share: of the samples whose pc has unwind information (the others,
    # in code without any - OpenBLAS's assembly kernels - keep their pc)
    expect(walked >= share * stacks, "%s: %d of %d stacks (%d samples) walked from the unwind tables" %
           (name, walked, stacks, n))
    print("%s: %d samples, %d walked from the unwind tables, all as libunwind walked them; stdout (%d bytes), "
          "stderr and exit status %d as untraced" % (name, n, walked, len(bt), base.returncode))
    return anchor


def chain(p, fn):
    """Length of the run of fn frames ending at the leaf side of p (before leaf_spin)."""
    k = len(p) - 1
    while k >= 0 and p[k] != fn:
        k -= 1
    m = 0
    while k >= 0 and p[k] == fn:
        m += 1
        k -= 1
    return m, k


def sampled_paths(args, name, argv, leaf):
    """(the run's stderr, the names of the calling context of every sample
    whose path holds leaf): argv traced with the default walk."""
    anchor, so, se = sc.run_traced(args, name, argv, {"TRACER_SAMPLING": "500us", "TRACER_VERBOSE": "2"},
                                   timeout=300)
    info, evs, res = sc.load(anchor)
    paths = [sc.names(ev.calling_context) for lst in evs.values() for ev in lst
             if isinstance(ev, CallingContextSample)]
    return se, [p for p in paths if leaf in p]


def case_paths(args):
    prog = os.path.join(args.bindir, "smp_unwind")
    se, paths = sampled_paths(args, "unwind_paths", [prog], "leaf_spin")
    n, walked, _, _ = walk_counts(se)
    expect(walked >= 0.9 * n, "%d of %d samples walked from the unwind tables" % (walked, n))
    seen = {"rec_sp": 0, "rec_bp": 0, "aligned": 0}
    bad = []
    for p in paths:
        if "aligned_call" in p:
            m, k = chain(p, "rec_sp")
            a, k2 = chain(p[:k + 1], "aligned_call")
            ok = m == 7 and a == 5 and k2 >= 0 and p[k2] == "run_shapes"
            seen["aligned"] += 1
        else:
            fn = "rec_sp" if "rec_sp" in p else "rec_bp"
            m, k = chain(p, fn)
            ok = m == 31 and k >= 0 and p[k] == "run_shapes" and k >= 1 and p[k - 1] in ("main", "thread_main")
            seen[fn] += 1
        if not ok:
            bad.append(p)
    expect(not bad, "%d samples with a wrong path, e.g. %s" % (len(bad), bad[:2]))
    expect(all(v >= 20 for v in seen.values()), "samples at the end of each chain: %s" % seen)
    print("paths: %s samples at the chains' ends, every path whole" % seen)


def case_libunwind(args):
    prog = os.path.join(args.bindir, "smp_unwind")
    anchor, so, se = sc.run_traced(args, "unwind_lib", [prog],
                                   {"TRACER_SAMPLING": "1ms", "TRACER_VERBOSE": "2",
                                    "TRACER_SAMPLING_UNWIND": "libunwind", "SMP_CPU_SECONDS": "0.1"},
                                   timeout=300)
    n, walked, _, _ = walk_counts(se)
    expect(n > 0 and walked == 0, "TRACER_SAMPLING_UNWIND=libunwind: %d of %d walked from the tables" % (walked, n))
    print("libunwind alone: %d samples, none walked from the tables" % n)


def case_signal(args):
    """samples in a signal handler (smp_unwind signal): the walk crosses the
    kernel's signal frame from the unwind tables (check mode: each stack as
    libunwind's, 90 % of them walked from the tables; before the walk read
    signal frames every such sample went to libunwind), and each path goes
    on below the handler: __libc_start_call_main, sig_raise, the handler,
    sig_work."""
    prog = os.path.join(args.bindir, "smp_unwind")
    check_run(args, "unwind_signal", [prog, "signal"], 0.9)
    _, paths = sampled_paths(args, "unwind_signal_paths", [prog, "signal"], "sig_work")
    # (main calls sig_raise last: a tail call, not a frame)
    want = ("__libc_start_call_main", "sig_raise", "sig_handler", "sig_work")
    whole = bad = 0
    for p in paths:
        ok = all(w in p for w in want) and [p.index(w) for w in want] == sorted(p.index(w) for w in want)
        whole += ok
        bad += not ok
        if not ok and bad == 1:
            print("a path without the frames below the handler: %s" % p)
    expect(whole >= 20 and bad == 0, "samples in the handler: %d with the whole path, %d without" % (whole, bad))
    print("signal: %d samples in the handler, each path through the signal frame down to main" % whole)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    try:
        check_run(args, "unwind_ours", [os.path.join(args.bindir, "smp_unwind")], 0.9)
        data = os.path.join(args.work, "unwind_rand.bin")
        os.makedirs(args.work, exist_ok=True)
        with open(data, "wb") as f:
            f.write(os.urandom(12 << 20))
        check_run(args, "unwind_gzip", ["gzip", "-9", "-c", data], 0.8)
        check_run(args, "unwind_python", ["/usr/bin/python3", "-c",
                  "import json\nd = [{'a': i, 'b': str(i)} for i in range(200000)]\n"
                  "for _ in range(3): s = json.dumps(d); print(len(s), len(json.loads(s)))"], 0.5)
        check_run(args, "unwind_bash", ["bash", "-c", "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done; echo $i"], 0.8)
        check_run(args, "unwind_perl", ["perl", "-e", "my $s = 0; $s += sqrt($_) for 1..2000000; print $s"], 0.8)
        if os.system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0:
            # OpenBLAS picks its kernel at run time: on an AVX-512 machine
            # (SkylakeX kernels: assembly without CFI) 13-29 % of all samples
            # were walked from the tables (CI 2026-12-02: 461 of 3396, 2809
            # in code without unwind information), so the share is of the
            # samples with a stack (there 461 of 587, 79 %)
            check_run(args, "unwind_numpy", ["/usr/bin/python3", "-c",
                      "import numpy as np\na = np.random.default_rng(1).random((1200, 1200))\n"
                      "for _ in range(4): b = a @ a\nprint('%.6e' % b.sum())"], 0.5, {"OMP_NUM_THREADS": "2"})
        else:
            print("numpy: not installed, its case left out")
        case_paths(args)
        case_signal(args)
        case_libunwind(args)
    except rc.CheckFailed as e:
        print("FAIL unwind: %s" % e)
        return 1
    except rc.Skip as e:
        print("SKIP unwind: %s" % e)
        return rc.SKIP_CODE
    print("PASS unwind")
    return 0


if __name__ == "__main__":
    sys.exit(main())
