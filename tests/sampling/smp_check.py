#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sampling and metrics tests: run a program with libtracer.so preloaded
(only into the program) and check its archive with the reference reader
(python3-otf2; /usr/bin/python3 only) and otf2-print.

usage: smp_check.py CASE --lib LIB --bindir DIR --src DIR --work DIR

Cases: accuracy stress nomalloc tree metrics rusage badmetric sigprof sigaction depth wakeup

The generic checks on every sampled archive: smp_lib.py (check_cc_streams).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

from otf2.events import (CallingContextEnter, CallingContextLeave, CallingContextSample, Enter,
                         Leave, Metric)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smp_lib import *  # noqa: E402,F401,F403
import smp_cases_metrics  # noqa: E402


def accuracy_run(args, mk, name, seconds, counts, per_loc, info_out, extra=None):
    env = {"TRACER_SAMPLING": "100us", "SMP_CPU_SECONDS": str(seconds)}
    env.update(extra or {})
    anchor, so, se = run_traced(args, name, [os.path.join(args.bindir, "smp_accuracy")], env, timeout=240)
    info, evs, res = load(anchor)
    expect(len(info["igs"]) == 1, "one InterruptGenerator expected, got %d" % len(info["igs"]))
    ig = info["igs"][0]
    expect(str(ig.interrupt_generator_mode).endswith("TIME") and ig.period == 100000 and ig.exponent == -9,
           "interrupt generator %r" % ig)
    n = check_cc_streams(evs)
    bad = []
    for loc, lst in evs.items():
        for ev in lst:
            if not isinstance(ev, CallingContextSample):
                continue
            per_loc[loc] += 1
            P = path_of(ev.calling_context)
            leaf = P[-1].region.name
            if leaf not in ("leaf_a", "leaf_b", "leaf_c"):
                continue
            if any(c.region.name == "calibrate" for c in P):
                continue      # the program timing its leaves at start
            counts[leaf] += 1
            x = leaf[-1].upper()
            scl = P[-1].source_code_location
            ok = (scl is not None and mk["LEAF_%s_BEGIN" % x] <= scl.line_number <= mk["LEAF_%s_END" % x]
                  and scl.file.endswith("smp_accuracy.c"))
            ok = ok and len(P) >= 3 and P[-2].region.name == "caller"
            ok = ok and P[-2].source_code_location is not None \
                and P[-2].source_code_location.line_number in (mk["CALL_%s" % x], mk["CALL_%s2" % x])
            if ok:
                gp = P[-3]
                want = ("main", mk["CALL_MAIN"]) if gp.region.name == "main" else ("worker", mk["CALL_WORKER"])
                ok = gp.region.name == want[0] and gp.source_code_location is not None \
                    and gp.source_code_location.line_number == want[1]
            if not ok:
                bad.append(" -> ".join("%s:%s" % (c.region.name, c.source_code_location.line_number
                                                  if c.source_code_location else "?") for c in P))
    expect(not bad, "%d samples with a wrong stack, e.g. %s" % (len(bad), bad[:3]))
    m = re.search(r"measured a=([\d.]+) b=([\d.]+) c=([\d.]+)", so)
    expect(m, "program output missing")
    print("  CPU time shares measured by the program: a %s b %s c %s" % m.groups())
    measured = {"leaf_" + x: float(v) / 100 for x, v in zip("abc", m.groups())}
    # the calibration aims at 60/30/10; the program's own clock readings are
    # the truth the samples are judged against (a loaded machine moves them)
    for k, w in {"leaf_a": 0.6, "leaf_b": 0.3, "leaf_c": 0.1}.items():
        expect(abs(measured[k] - w) <= 0.08, "the program's own shares are far off (%s %.1f %%): "
               "the calibration is broken" % (k, 100 * measured[k]))
    sampling_line(se)
    info_out.append(info)
    return n, measured


def accuracy_shares(args, name, extra=None, tol=0.02):
    """smp_accuracy at 100 us: leaf shares within tol of the CPU time shares
    the program measured with its own thread clock (calibrated to 60/30/10;
    samples per location returned). ~2 s of CPU per thread give ~40,000 samples: the
    statistical error is 0.25 points; one more run only when the shared
    machine disturbed the first (its shares judged on their own)."""
    src = os.path.join(args.src, "smp_accuracy.c")
    mk = markers(src)
    for attempt in (1, 2):
        counts = collections.Counter()
        per_loc = collections.Counter()
        infos = []
        n, want = accuracy_run(args, mk, "%s%d" % (name, attempt), 2, counts, per_loc, infos, extra)
        total = sum(counts.values())
        ok = total and all(abs(counts[k] / total - w) <= tol for k, w in want.items())
        if ok or attempt == 2:
            break
        print("shares off (%s): one more run" % dict(counts))
    print("samples: %d (per location %s), in leaves: %s" % (n, dict(per_loc), dict(counts)))
    expect(len(per_loc) == 2, "samples on %d locations, expected 2" % len(per_loc))
    expect(total >= 20000, "only %d samples in the leaves" % total)
    for k, w in want.items():
        share = counts[k] / total
        print("  %s: %.1f %% (the program measured %.1f %%)" % (k, 100 * share, 100 * w))
        expect(abs(share - w) <= tol, "%s got %.1f %% of the samples, the program measured %.1f +- %.0f"
               % (k, 100 * share, 100 * w, 100 * tol))
    return infos[0], mk, per_loc


def case_accuracy(args):
    info, mk, per_loc = accuracy_shares(args, "accuracy")
    unique_contexts(info["ccs"])
    # function definitions: name, file and first line
    for x in "abc":
        r = [r for r in info["regions"] if r.name == "leaf_" + x]
        expect(len(r) == 1, "leaf_%s defined %d times" % (x, len(r)))
        r = r[0]
        expect(r.source_file.endswith("smp_accuracy.c"), "leaf_%s file %s" % (x, r.source_file))
        b = mk["LEAF_%s_BEGIN" % x.upper()]
        expect(b - 1 <= r.begin_line_number <= b, "leaf_%s begins at line %d, expected %d"
               % (x, r.begin_line_number, b - 1))


def rate_run(args, name, period, seconds, extra=None, wrapper=None):
    """smp_accuracy sampled at `period`: per location (samples in the
    archive, the thread's CPU time as the program measured it, properties),
    the archive's info and stderr."""
    env = {"TRACER_SAMPLING": period, "SMP_CPU_SECONDS": str(seconds)}
    env.update(extra or {})
    cmd = [os.path.join(args.bindir, "smp_accuracy")]
    if wrapper:
        cmd = [os.path.join(args.bindir, wrapper)] + cmd
        env["SMP_PRELOAD"] = args.lib
        env["LD_PRELOAD"] = ""
    anchor, so, se = run_traced(args, name, cmd, env, timeout=240)
    m = re.search(r"cpu main_ns=(\d+) worker_ns=(\d+)", so)
    expect(m, "program output missing")
    if "SMP_BLOCKED" in env:
        # the program's own masks are kept (all but SIGPROF)
        expect("worker_sigint_blocked=1" in so, "the worker's mask lost SIGINT: %r" % so)
    cpu = {"Master thread": float(m.group(1)), "Thread 1": float(m.group(2))}
    info, evs, res = load(anchor)
    check_cc_streams(evs)
    props = props_of(info)
    out = {}
    for loc in cpu:
        n = sum(1 for e in evs.get(loc, []) if isinstance(e, CallingContextSample))
        out[loc] = (n, cpu[loc], props.get(loc, {}))
    return out, info, se, evs


def case_rate(args):
    """perf task-clock delivery: per thread, samples >= 90 % of CPU time /
    period at 1 ms and >= 80 % at 100 us; the archive says what it got."""
    for period, ns, need in (("1ms", 1e6, 0.9), ("100us", 1e5, 0.8)):
        r, info, se, evs = rate_run(args, "rate_" + period, period, 1.5)
        ig = info["igs"]
        expect(len(ig) == 1 and "task-clock" in ig[0].name and ig[0].period == ns and ig[0].exponent == -9
               and str(ig[0].interrupt_generator_mode).endswith("TIME"), "interrupt generator %r" % ig)
        worst = 1e9
        for loc, (n, cpu, pr) in sorted(r.items()):
            want = cpu / ns
            print("  %s %s: %d samples for %.3f s of CPU: %.1f %% of %.0f" % (period, loc, n, cpu / 1e9,
                                                                           100 * n / want, want))
            expect(n >= need * want, "%s: %s got %d samples, %.0f %% of the %.0f its CPU time asks for"
                   % (period, loc, n, 100 * n / want, want))
            # the location's properties: samples as in the archive, CPU time as measured
            expect(int(pr.get("SAMPLING::SAMPLES", -1)) == n, "%s: SAMPLING::SAMPLES %s, archive has %d"
                   % (loc, pr.get("SAMPLING::SAMPLES"), n))
            for k in ("SAMPLING::DEFERRED", "SAMPLING::LOST"):
                expect(k in pr and int(pr[k]) >= 0, "%s: no %s property" % (loc, k))
            pc = float(pr.get("SAMPLING::CPU_NS", 0))
            expect(0.9 * cpu <= pc <= 1.1 * cpu, "%s: SAMPLING::CPU_NS %.0f, the program measured %.0f"
                   % (loc, pc, cpu))
            worst = min(worst, n / (pc / 1e9))
        asked, lo, med, nthr = summary_rates(se)
        print("  line: asked %d/s, delivered min %d/s, median %d/s over %d threads" % (asked, lo, med, nthr))
        expect(asked == round(1e9 / ns) and nthr == 2, "asked %d/s over %d threads" % (asked, nthr))
        expect(abs(lo - worst) <= 0.01 * worst + 1, "line says min %d/s, archive %.0f/s" % (lo, worst))
        warned = "under 90 % of the samples asked" in se
        expect(warned == (lo < 0.9 * asked), "under-delivery warning %s with min %d/s of %d/s"
               % ("given" if warned else "missing", lo, asked))


def case_fallback(args):
    """perf_event_open refused (seccomp): CPU-time timers, one line with the
    rate they deliver; the archive and the exit line say what was got."""
    r, info, se, evs = rate_run(args, "fallback", "100us", 1.0, wrapper="smp_noperf")
    lines = [l for l in se.splitlines() if "perf events refused" in l]
    expect(len(lines) == 1 and lines[0].startswith("tracer: warning: sampling:"), "fallback lines %s" % lines)
    m = re.search(r"using CPU-time timers, which the kernel checks at its tick: at most (\d+) samples/s per thread "
                  r"of CPU \(asked 10000/s\)", lines[0])
    expect(m, "no delivered rate in: %s" % lines[0])
    hz = int(m.group(1))
    expect(50 <= hz <= 1000, "implausible tick rate %d/s" % hz)
    ig = info["igs"]
    expect(len(ig) == 1 and "CPU-time timer" in ig[0].name and ig[0].period == round(1e9 / hz),
           "interrupt generator %r (the period really delivered: %d ns)" % (ig, round(1e9 / hz)))
    for loc, (n, cpu, pr) in sorted(r.items()):
        rate = n / (cpu / 1e9)
        print("  %s: %d samples for %.3f s of CPU: %.0f/s (announced %d/s)" % (loc, n, cpu / 1e9, rate, hz))
        # not more than announced; on this shared 2-core machine a thread
        # competing for its core reaches the tick check about half as often
        # (127/s of 250/s seen), hence the low bound of 30 %; in a VM whose
        # host is busy a tick can come in time the guest counts as stolen,
        # not as the thread's CPU time (287/s of 250/s per CPU second seen
        # in CI): up to 1.3 times, still far below the 10000/s asked
        expect(0.3 * hz <= rate <= 1.3 * hz, "%s: %.0f samples/s, announced at most %d/s" % (loc, rate, hz))
        expect(int(pr.get("SAMPLING::SAMPLES", -1)) == n, "%s: SAMPLING::SAMPLES %s" % (loc, pr))
    asked, lo, med, nthr = summary_rates(se)
    expect(asked == 10000 and lo <= 1.3 * hz, "line: asked %d/s, min %d/s" % (asked, lo))
    w = [l for l in se.splitlines() if "under 90 % of the samples asked" in l]
    expect(len(w) == 1 and "tick" in w[0], "under-delivery warning %s" % w)


def case_cycles(args):
    """Hardware overflow sampling (cycles@N): samples where the processor
    exposes counters; elsewhere one clear line, no samples, program unharmed."""
    pmu = os.path.exists("/sys/bus/event_source/devices/cpu") or \
        os.path.exists("/sys/bus/event_source/devices/cpu_core")
    anchor, so, se = run_traced(args, "cycles", [os.path.join(args.bindir, "smp_accuracy")],
                                {"TRACER_SAMPLING": "cycles@2000000", "SMP_CPU_SECONDS": "0.3"})
    expect("measured a=" in so, "program output missing")
    info, evs, res = load(anchor)
    n = sum(1 for l in evs.values() for e in l if isinstance(e, CallingContextSample))
    lines = [l for l in se.splitlines() if "cycles@2000000" in l]
    if pmu:
        check_cc_streams(evs)
        expect(not lines, "hardware sampling refused: %s" % lines)
        ig = info["igs"]
        expect(len(ig) == 1 and str(ig[0].interrupt_generator_mode).endswith("COUNT") and
               ig[0].period == 2000000, "interrupt generator %r" % ig)
        expect(n >= 50, "only %d samples" % n)
        return
    expect(len(lines) == 1 and lines[0].startswith("tracer: warning: sampling: cycles@2000000 unavailable:")
           and "sampling off" in lines[0], "expected one line saying cycles@N is unavailable, got %s" % lines)
    expect(n == 0 and not info["igs"], "samples without a counter: %d" % n)
    raise rc.Skip("no hardware PMU here (/sys/bus/event_source/devices/cpu): cycles@N sampling not checked "
               "(the unavailable line was)")


def case_blocked(args):
    """A thread created with every signal blocked (it keeps them blocked) is
    sampled like the others: SIGPROF stays open while the tracer owns it."""
    r, info, se, evs = rate_run(args, "blocked", "100us", 1.5, extra={"SMP_BLOCKED": "1"})
    shares = {}
    for loc, (n, cpu, pr) in sorted(r.items()):
        want = cpu / 1e5
        print("  %s: %d samples for %.3f s of CPU: %.1f %% of %.0f" % (loc, n, cpu / 1e9, 100 * n / want, want))
        expect(n >= 0.8 * want, "%s got %d samples, %.0f %% of the %.0f its CPU time asks for"
               % (loc, n, 100 * n / want, want))
        c = collections.Counter(names(e.calling_context)[-1] for e in evs[loc]
                                if isinstance(e, CallingContextSample)
                                and "calibrate" not in names(e.calling_context))
        tot = sum(c[k] for k in ("leaf_a", "leaf_b", "leaf_c"))
        shares[loc] = {k: c[k] / tot for k in ("leaf_a", "leaf_b", "leaf_c")}
        print("  %s shares: %s" % (loc, {k: "%.1f %%" % (100 * v) for k, v in shares[loc].items()}))
    # the blocked worker gets the same shares as the master (within 3 points)
    for k in ("leaf_a", "leaf_b", "leaf_c"):
        expect(abs(shares["Thread 1"][k] - shares["Master thread"][k]) <= 0.03,
               "%s: worker %.1f %%, master %.1f %%" % (k, 100 * shares["Thread 1"][k], 100 * shares["Master thread"][k]))


def case_xz(args):
    """xz -T2: liblzma creates its workers with signals blocked; they are
    sampled, and xz's output is the same as untraced."""
    os.makedirs(args.work, exist_ok=True)
    src = os.path.join(args.work, "xz_input")
    import random
    rnd = random.Random(11)
    words = ["%x" % rnd.getrandbits(rnd.choice((8, 16, 24, 32))) for _ in range(5000)]
    with open(src, "w") as f:
        for _ in range(6 * 2 ** 20 // 64):   # 6 blocks of 1 MiB: each worker compresses several
            f.write(" ".join(rnd.choice(words) for _ in range(10)) + "\n")
    cmd = ["xz", "-T2", "-3", "--block-size=1MiB", "-c", src]
    ref = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout
    out = os.path.join(args.work, "xz_out.xz")
    anchor, so, se = run_traced(args, "xz", cmd, {"TRACER_SAMPLING": "1ms"}, timeout=240, stdout_path=out)
    with open(out, "rb") as f:
        expect(f.read() == ref, "traced xz wrote other bytes than untraced xz")
    info, evs, res = load(anchor)
    check_cc_streams(evs)
    unique_contexts(info["ccs"])
    props = props_of(info)
    workers = 0
    for loc, lst in evs.items():
        n = sum(1 for e in lst if isinstance(e, CallingContextSample))
        pr = props.get(loc, {})
        cpu = float(pr.get("SAMPLING::CPU_NS", 0))
        print("  %s: %d samples, %.3f s of CPU" % (loc, n, cpu / 1e9))
        # a worker's share: at least one block (~0.12 s of CPU on this machine,
        # a 2:4 split of the 6 blocks leaves it ~0.25 s)
        if loc != "Master thread" and cpu >= 0.08e9:
            workers += 1
            expect(n >= 0.8 * cpu / 1e6, "%s: %d samples for %.3f s of CPU" % (loc, n, cpu / 1e9))
            lz = [e for e in lst if isinstance(e, CallingContextSample)
                  and any("lzma" in x or "lz_" in x for x in names(e.calling_context))]
            expect(len(lz) >= n // 2, "%s: only %d of %d samples in liblzma" % (loc, len(lz), n))
    expect(workers >= 2, "%d worker threads with CPU time, expected 2" % workers)


def case_mpi(args):
    """2 MPI ranks (real mpirun) are sampled like any process: per rank
    >= 85 % of CPU time / period at 1 ms (MPI_Init's time in the kernel is
    not sampled), at most 2 % lost (samples inside MPI calls are queued and
    written at the call's Leave), one sampling line for the run (rank 0)."""
    out = os.path.join(args.work, "mpi")
    shutil.rmtree(out, ignore_errors=True)
    p = rc.run_mpi(args.mpirun, 2, [os.path.join(args.bindir, "smp_mpi")],
                   ["TRACER_OUTPUT=" + out, "TRACER_VERBOSE=1", "TRACER_SAMPLING=1ms", "SMP_CPU_SECONDS=1.5"],
                   lib=args.lib, timeout=240)
    so, se = p.stdout, p.stderr
    expect(p.returncode == 0, "mpirun exited %d" % p.returncode)
    cpu = {int(r): float(c) for r, c in re.findall(r"rank (\d+) cpu_ns=(\d+)", so)}
    expect(sorted(cpu) == [0, 1], "program output missing: %r" % so)
    lines = [l for l in se.splitlines() if l.startswith("tracer: sampling:")]
    expect(len(lines) == 1 and "MPI rank 0:" in lines[0], "expected one sampling line (rank 0), got %s" % lines)
    anchor = os.path.join(out, "traces.otf2")
    expect(os.path.exists(anchor), "no unified archive %s" % anchor)
    defs, evs, res = rc.read_back(anchor, by_group=True)
    unique_contexts(list(defs.calling_contexts))
    props = collections.defaultdict(dict)
    for pr in defs.location_properties:
        props[pr.location.group.name][pr.name] = pr.value
    for r in (0, 1):
        g = "MPI Rank %d" % r
        lst = evs.get(g, [])
        n = sum(1 for e in lst if isinstance(e, CallingContextSample))
        leaf = sum(1 for e in lst if isinstance(e, CallingContextSample) and names(e.calling_context)[-1] == "mpi_leaf")
        want = cpu[r] / 1e6
        pr = props.get(g, {})
        print("  rank %d: %d samples (%d in mpi_leaf) for %.3f s of CPU: %.1f %%; properties %s"
              % (r, n, leaf, cpu[r] / 1e9, 100 * n / want, pr))
        expect(n >= 0.85 * want, "rank %d got %d samples, %.0f %% of %.0f" % (r, n, 100 * n / want, want))
        expect(leaf >= 0.5 * n, "rank %d: only %d of %d samples in mpi_leaf" % (r, leaf, n))
        expect(int(pr.get("SAMPLING::SAMPLES", -1)) == n, "rank %d: SAMPLING::SAMPLES %s, archive %d"
               % (r, pr.get("SAMPLING::SAMPLES"), n))
        # samples taken inside MPI calls are queued until the call's Leave
        # (timestamps in order); the queue holds them: nearly none lost
        expect(int(pr.get("SAMPLING::LOST", 10 ** 9)) <= 0.02 * n, "rank %d: %s of %d samples lost"
               % (r, pr.get("SAMPLING::LOST"), n))


def case_closefd(args):
    """A program that closes every descriptor (close_range) and reuses the
    numbers: the tracer never touches the program's files on the numbers
    its perf events had, and says the threads lost their sampling."""
    # TRACER_IO=off: with I/O regions, the program's fcntl/close calls right
    # after its close_range unwind at their Enter, and libunwind's memory
    # check reads its own pipe by a number the program now owns (a blocking
    # pipe here): a known limit (README), not what this case tests
    anchor, so, se = run_traced(args, "closefd", [os.path.join(args.bindir, "smp_closefd")],
                                {"TRACER_SAMPLING": "1ms", "TRACER_IO": "off"})
    m = re.search(r"perf descriptors seen: (\d+)", se)
    expect(m and int(m.group(1)) == 2, "the program saw %s perf descriptors, expected 2 (master, worker)"
           % (m and m.group(1)))
    expect("intact=1" in so, "the tracer touched the program's descriptors: %r" % so)
    w = [l for l in se.splitlines() if "closed the perf event descriptors" in l]
    expect(len(w) == 1 and w[0].startswith("tracer: warning: sampling:") and "of 2 threads" in w[0],
           "expected one line about the closed descriptors, got %s" % w)
    info, evs, res = load(anchor)
    check_cc_streams(evs)


def case_stress(args):
    anchor, so, se = run_traced(args, "stress", [os.path.join(args.bindir, "smp_stress")],
                                {"TRACER_SAMPLING": "100us", "SMP_SECONDS": "2.5"}, timeout=240)
    info, evs, res = load(anchor)
    n = check_cc_streams(evs)
    unique_contexts(info["ccs"])
    samples, threads, deferred, lost = sampling_line(se)
    print("samples in archive %d; summary: %d samples, %d threads, %d deferred, %d lost"
          % (n, samples, threads, deferred, lost))
    expect(n == samples, "archive has %d samples, summary says %d" % (n, samples))
    expect(n >= 100, "only %d samples" % n)
    expect(threads >= 10, "only %d threads sampled" % threads)
    enters = sum(1 for l in evs.values() for e in l if isinstance(e, CallingContextEnter))
    expect(enters > 1000, "only %d CallingContextEnter" % enters)
    regs = {c.region.name for c in info["ccs"]}
    for want in ("pthread_mutex_lock", "stress_work", "stress_inner", "churn"):
        expect(want in regs, "no calling context for %s" % want)


def case_nomalloc(args):
    anchor, so, se = run_traced(args, "nomalloc", [os.path.join(args.bindir, "smp_nomalloc")],
                                {"TRACER_SAMPLING": "100us", "SMP_CPU_SECONDS": "1"}, timeout=180)
    m = re.search(r"probe=(\w+) allocs=(\d+) handler_allocs=(\d+)", so)
    expect(m, "program output missing")
    expect(m.group(1) == "yes", "the program has no SIGPROF probe")
    expect(int(m.group(2)) > 100000, "the program allocated too little (%s)" % m.group(2))
    info, evs, res = load(anchor)
    n = check_cc_streams(evs)
    expect(n >= 100, "only %d samples" % n)
    expect(int(m.group(3)) == 0, "%s allocations inside the SIGPROF handler" % m.group(3))
    print("samples %d, allocations %s, in the handler %s" % (n, m.group(2), m.group(3)))


def case_tree(args):
    anchor, so, se = run_traced(args, "tree", [os.path.join(args.bindir, "smp_tree")],
                                {"TRACER_SAMPLING": "1ms", "SMP_CPU_SECONDS": "0.8"}, timeout=120)
    info, evs, res = load(anchor)
    check_cc_streams(evs)
    lst = list(evs.values())[0]
    enter = [e for e in lst if isinstance(e, CallingContextEnter) and e.calling_context.region.name == "phase_region"]
    expect(len(enter) == 1, "expected one CallingContextEnter of phase_region, got %d" % len(enter))
    pn = names(enter[0].calling_context)
    expect(pn[-1] == "phase_region" and "phase" in pn and "main" in pn[:pn.index("phase")],
           "phase_region context %s, expected ... main -> phase -> ... -> phase_region" % pn)
    node = enter[0].calling_context
    leave = [e for e in lst if isinstance(e, CallingContextLeave) and e.calling_context is node]
    expect(len(leave) == 1, "expected one CallingContextLeave of phase_region, got %d" % len(leave))
    # (samples after the region, in printf's symbol lookup or exit, are not in it)
    inside = [e for e in lst if isinstance(e, CallingContextSample) and enter[0].time <= e.time < leave[0].time]
    under = [e for e in inside if any(c is node for c in path_of(e.calling_context))]
    comp = [e for e in under if names(e.calling_context)[-1] == "compute"]
    print("samples in the region %d, below its node %d, in compute %d" % (len(inside), len(under), len(comp)))
    expect(len(inside) >= 50, "only %d samples in the region" % len(inside))
    expect(len(under) == len(inside), "samples in the region not below its node")
    expect(len(comp) >= 0.8 * len(under), "only %d of %d samples in compute" % (len(comp), len(under)))
    locks = [e for e in lst if isinstance(e, CallingContextEnter) and e.calling_context.region.name == "pthread_mutex_lock"]
    expect(locks, "no pthread_mutex_lock contexts")
    ln = names(locks[0].calling_context)
    expect("phase_region" in ln and ln[-2] == "phase", "pthread_mutex_lock context %s" % ln)


def case_sigprof(args):
    anchor, so, se = run_traced(args, "sigprof", [os.path.join(args.bindir, "smp_sigprof")],
                                {"TRACER_SAMPLING": "1ms"}, timeout=120)
    m = re.search(r"own_handler=(\d+)", so)
    expect(m and int(m.group(1)) > 0, "the program's own SIGPROF handler got no signal")
    lines = [l for l in se.splitlines() if "SIGPROF" in l]
    expect(len(lines) == 1 and lines[0].startswith("tracer:"), "expected one tracer: line about SIGPROF, got %s" % lines)
    info, evs, res = load(anchor)
    check_cc_streams(evs)


def case_depth(args):
    """TRACER_SAMPLING_DEPTH=3: the 3 innermost frames below "[truncated]"."""
    anchor, so, se = run_traced(args, "depth", [os.path.join(args.bindir, "smp_accuracy")],
                                {"TRACER_SAMPLING": "1ms", "TRACER_SAMPLING_DEPTH": "3",
                                 "SMP_CPU_SECONDS": "0.3"}, timeout=120)
    info, evs, res = load(anchor)
    n = check_cc_streams(evs)
    samples, threads, deferred, lost = sampling_line(se)
    m = re.search(r"(\d+) truncated", se)
    expect(m and int(m.group(1)) == samples, "summary: %s truncated of %d" % (m and m.group(1), samples))
    expect(n >= 20, "only %d samples" % n)
    for lst in evs.values():
        for ev in lst:
            if isinstance(ev, CallingContextSample):
                nm = names(ev.calling_context)
                # a sample taken while a wrapped region is open (e.g. the
                # master in the tracer's pthread_join wrapper) hangs below
                # that region's node: its own frames start at the last
                # [truncated], and frames inside the tracer collapse to one
                # [tracer] node (libc frames the tracer called, e.g. the
                # real pthread_join, may follow it)
                cut = len(nm) - 1 - nm[::-1].index("[truncated]") if "[truncated]" in nm else -1
                own = nm[cut:] if cut >= 0 else nm
                # (a sample inside the tracer's own code, e.g. a thread
                # inside a tick's file work under load: its innermost frames
                # collapse to [tracer], fewer than 3 remain)
                expect((cut == 0 and len(nm) == 4) or
                       (cut >= 0 and "[tracer]" in own and 2 <= len(own) <= 4),
                       "sample %s: expected [truncated] + 3 frames" % nm)
                if nm[-1].startswith("leaf_"):
                    expect(nm[-3:-1] in (["main", "caller"], ["worker", "caller"], ["calibrate", "best_time"]),
                           "sample %s" % nm)
    print("samples %d, all truncated to [truncated] + 3 frames" % n)


def case_sigaction(args):
    anchor, so, se = run_traced(args, "sigaction", [os.path.join(args.bindir, "smp_sigprof"), "sigaction"],
                                {"TRACER_SAMPLING": "1ms"}, timeout=120)
    # the sigaction wrapper stops the sampler's timers at the program's
    # sigaction(SIGPROF) call (the sampler's on_sigaction module hook): its handler never
    # gets a SIGPROF of ours, not even before the next thread start
    m = re.search(r"early=(\d+)", so)
    expect(m and int(m.group(1)) == 0, "the program's handler got %s SIGPROF of the tracer's timer right "
           "after its sigaction call: %r" % (m and m.group(1), so))
    m = re.search(r"after_yield=(\d+)", so)
    expect(m and int(m.group(1)) == 0, "the program still got SIGPROF after the tracer noticed its handler")
    lines = [l for l in se.splitlines() if "SIGPROF" in l]
    expect(len(lines) == 1 and lines[0].startswith("tracer:"), "expected one tracer: line about SIGPROF, got %s" % lines)
    info, evs, res = load(anchor)
    check_cc_streams(evs)


def case_wakeup(args):
    """VT_wakeup records the metrics now (the metrics module's wakeup hook):
    one Metric record at each call, between the region's Enter and Leave."""
    # TRACER_IO=off: the program's printf would be a region with Metric records too
    anchor, so, se = run_traced(args, "wakeup", [os.path.join(args.bindir, "smp_metrics"), "wakeup"],
                                {"TRACER_METRICS": "rusage::utime", "TRACER_IO": "off"}, timeout=120)
    expect("wakeups=2" in so, "program output %r" % so)
    info, evs, res = load(anchor)
    lst = [l for l in evs.values() if any(isinstance(e, Enter) for e in l)]
    expect(len(lst) == 1, "one location with regions expected")
    lst = lst[0]
    kinds = [type(e).__name__ for e in lst if not type(e).__name__.startswith("Program")]
    # Enter busy + its Metric, the two wakeups, Leave busy + its Metric
    region_times = {e.time for e in lst if isinstance(e, (Enter, Leave))}
    wake = [e for e in lst if isinstance(e, Metric) and e.time not in region_times]
    expect(len(wake) == 2, "%d Metric records at VT_wakeup, want 2 (events %r)" % (len(wake), kinds))
    enter = next(e for e in lst if isinstance(e, Enter))
    leave = next(e for e in lst if isinstance(e, Leave))
    vals = [e.values[0] for e in lst if isinstance(e, Metric)]
    expect(len(vals) == 4 and vals == sorted(vals), "rusage::utime records %r" % vals)
    for i, w in enumerate(wake):
        expect(enter.time < w.time < leave.time, "wakeup Metric %d outside the region" % i)
    # ~40 ms of CPU (user) time between the records (utime in us; 10 ms tick slack)
    for a, b in zip(vals, vals[1:]):
        expect(b - a >= 20000, "utime grew only %d us between two records: %r" % (b - a, vals))


def case_nocfi(args):
    """Samples in code without unwind information (smp_nocfi: no FDE, %rbp
    cleared) keep the pc alone; after the first, libunwind is asked only
    for one sample in 64 there, and the contexts are those of the walk."""
    anchor, so, se = run_traced(args, "nocfi", [os.path.join(args.bindir, "smp_nocfi")],
                                {"TRACER_SAMPLING": "1ms", "TRACER_VERBOSE": "2", "TRACER_DURABLE": "off",
                                 "SMP_CPU_SECONDS": "0.5"}, timeout=120)
    info, evs, res = load(anchor)
    n = check_cc_streams(evs)
    paths = collections.Counter()
    for lst in evs.values():
        for ev in lst:
            if isinstance(ev, CallingContextSample):
                paths[tuple(names(ev.calling_context))] += 1
    inside = {p: c for p, c in paths.items() if p[-1] == "nocfi_spin"}
    total = sum(inside.values())
    expect(total >= 0.8 * n and n >= 200, "%d of %d samples in nocfi_spin" % (total, n))
    expect(list(inside) == [("nocfi_spin",)], "contexts of the samples in nocfi_spin: %s" % inside)
    m = re.search(r"(\d+) samples in code without unwind information kept their pc alone", se)
    expect(m, "no count of the samples in code without unwind information on stderr")
    skipped = int(m.group(1))
    expect(skipped >= 0.9 * total, "%d of the %d samples in nocfi_spin skipped libunwind" % (skipped, total))
    expect(skipped <= total, "%d skipped, %d in nocfi_spin" % (skipped, total))
    print("%d samples in nocfi_spin, all in one context (the pc alone); %d of them without libunwind" %
          (total, skipped))


CASES = {n[5:]: f for m in (sys.modules[__name__], smp_cases_metrics) for n, f in vars(m).items() if n.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    args = ap.parse_args()
    try:
        CASES[args.case](args)
    except rc.CheckFailed as e:
        print("FAIL %s: %s" % (args.case, e))
        return 1
    except rc.Skip as e:
        print("SKIP %s: %s" % (args.case, e))
        return rc.SKIP_CODE
    print("PASS %s" % args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
