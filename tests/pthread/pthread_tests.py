#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/pthread: traced programs read back with the reference OTF2 reader.

usage: pthread_tests.py CASE --lib libtracer.so --bindir DIR --demo PATH --work DIR
CASE: sigterm | sigrec | locks | sync | exit | churn | mainexit | fork | mpi | demo | off | xz | onfull | cancelflush | cancelflush_durable | vtexit | exitsampling
"""
import argparse
import collections
import glob
import hashlib
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otf2  # noqa: E402
from otf2.events import (Enter, Leave, ThreadAcquireLock, ThreadBegin,  # noqa: E402
                         ThreadCreate, ThreadEnd, ThreadReleaseLock, ThreadWait)
from pthcheck import (CheckError, Trace, check_all, check_lifecycle, expect, fail, find_anchor,  # noqa: E402
                      run_traced, seqs, summary)
import runcheck as rc  # noqa: E402,I100  (pthcheck put tests/lib on the path)
import tracecheck as tc  # noqa: E402

NTHREADS = 4
ITERS = 1000
ROUNDS = 50


def trace_of(args, name, cmd, **kw):
    out = os.path.join(args.work, name)
    for old in glob.glob(out + "-fork*"):
        shutil.rmtree(old, ignore_errors=True)
    p = run_traced(cmd, out, args.lib, **kw)
    tr = Trace(find_anchor(out))
    print("%s: %d locations; %s" % (name, len(tr.events), summary(tr)))
    return tr, p


def case_locks(args):
    tr, _ = trace_of(args, "locks", [os.path.join(args.bindir, "pth_locks"), str(NTHREADS), str(ITERS)])
    master = tr.master()
    mc = tr.lock_counts(master)
    # main took A 1x, B 2x, R 3x, S 4x, T 5x: that names the lock ids
    by_count = {v: k for k, v in mc.items()}
    expect(sorted(mc.values()) == [1, 2, 3, 4, 5], "main's acquisitions per lock: %r" % dict(mc))
    A, B, R, S, T = (by_count[i] for i in range(1, 6))
    expect(len({A, B, R, S, T}) == 5, "lock ids not distinct")
    threads = tr.thread_locations()
    expect(len(threads) == NTHREADS, "%d thread locations, want %d" % (len(threads), NTHREADS))
    seen_m = set()
    for loc in threads:
        c = tr.lock_counts(loc)
        m = (c[A] - 0) // (ITERS + 1)
        expect(1 <= m <= NTHREADS and m not in seen_m, "%s: %d acquisitions of A" % (tr.names[loc], c[A]))
        seen_m.add(m)
        want = {A: m * ITERS + m, B: 3 * m + m, R: ITERS + m, S: m * ITERS, T: m}
        for lock, n in want.items():
            expect(c[lock] == n, "%s (m=%d): lock %d acquired %d times, want %d"
                   % (tr.names[loc], m, lock, c[lock], n))
        rel = collections.Counter(e.lock_id for e in tr.events[loc] if isinstance(e, ThreadReleaseLock))
        expect(rel == c, "%s: releases %r != acquisitions %r" % (tr.names[loc], dict(rel), dict(c)))
        # an uncontended lock is Enter/Acquire/Leave at one timestamp; every
        # pthread_mutex_lock region holds exactly one acquisition
        evs = tr.events[loc]
        for i, e in enumerate(evs):
            if isinstance(e, Enter) and e.region.name == "pthread_mutex_lock":
                expect(isinstance(evs[i + 1], ThreadAcquireLock) and isinstance(evs[i + 2], Leave),
                       "%s: pthread_mutex_lock region is not Enter/Acquire/Leave" % tr.names[loc])
                expect(evs[i + 2].time >= e.time, "Leave before Enter")
        n_lock = len(tr.enters(loc, "pthread_mutex_lock"))
        expect(n_lock == m * ITERS + 2 * m, "%s: %d pthread_mutex_lock regions, want %d"
               % (tr.names[loc], n_lock, m * ITERS + 2 * m))
        expect(len(tr.enters(loc, "pthread_spin_lock")) == m * ITERS, "spin regions")
        expect(len(tr.enters(loc, "pthread_mutex_timedlock")) == m, "timedlock regions")
        expect(len(tr.enters(loc, "pthread_rwlock_rdlock")) == ITERS, "rdlock regions")
        expect(len(tr.enters(loc, "pthread_rwlock_wrlock")) == m, "wrlock regions")
        ntry = len(tr.enters(loc, "pthread_mutex_trylock"))
        expect(ntry >= 3 * m, "%s: %d trylock regions < %d" % (tr.names[loc], ntry, 3 * m))
    expect(seen_m == set(range(1, NTHREADS + 1)), "thread counts %r" % seen_m)
    check_all(tr, exclusive_ids={A, B, S, T})
    # all acquisitions of A across locations: 1 + sum(m*ITERS + m)
    total_a = sum(tr.lock_counts(l)[A] for l in tr.events)
    expect(total_a == 1 + sum(m * ITERS + m for m in range(1, NTHREADS + 1)), "total A %d" % total_a)


def case_sync(args):
    tr, _ = trace_of(args, "sync", [os.path.join(args.bindir, "pth_sync"), str(NTHREADS), str(ROUNDS)])
    check_all(tr)
    threads = tr.thread_locations()
    expect(len(threads) == NTHREADS, "%d thread locations" % len(threads))
    # barrier: ROUNDS regions per thread; round r: every Enter <= every Leave
    rounds = []
    for loc in threads:
        en, lv = tr.enters(loc, "pthread_barrier_wait"), tr.leaves(loc, "pthread_barrier_wait")
        expect(len(en) == ROUNDS and len(lv) == ROUNDS, "%s: %d/%d barrier enter/leave"
               % (tr.names[loc], len(en), len(lv)))
        rounds.append((en, lv))
    for r in range(ROUNDS):
        last_in = max(en[r].time for en, _ in rounds)
        first_out = min(lv[r].time for _, lv in rounds)
        expect(last_in <= first_out, "barrier round %d: a thread left at %d before the last arrived at %d"
               % (r, first_out, last_in))
    # semaphores: two threads with ROUNDS sem_wait and ROUNDS sem_post each
    pingpong = [l for l in threads if len(tr.enters(l, "sem_post")) == ROUNDS]
    expect(len(pingpong) == 2, "ping-pong threads: %d" % len(pingpong))
    for loc in pingpong:
        n = len(tr.enters(loc, "sem_wait"))
        expect(n == ROUNDS, "%s: %d sem_wait regions" % (tr.names[loc], n))
    # thread 0's errno checks went through the wrappers; the timed-out
    # condition wait released and re-acquired its mutex inside its region
    t0 = [l for l in threads if tr.enters(l, "sem_trywait")]
    expect(len(t0) == 1 and len(tr.enters(t0[0], "sem_timedwait")) == 1, "sem_trywait/timedwait regions")
    evs = tr.events[t0[0]]
    i = next(i for i, e in enumerate(evs) if isinstance(e, Enter) and e.region.name == "pthread_cond_timedwait")
    expect(isinstance(evs[i + 1], ThreadReleaseLock) and isinstance(evs[i + 2], ThreadAcquireLock)
           and isinstance(evs[i + 3], Leave), "cond_timedwait: not Enter/Release/Acquire/Leave")
    expect(evs[i + 1].lock_id == evs[i + 2].lock_id and
           evs[i + 2].acquisition_order == evs[i + 1].acquisition_order + 1,
           "cond_timedwait: mutex not re-acquired with the next order")
    expect(evs[i + 2].time - evs[i + 1].time > 0, "timed wait took no time")
    # every other variant went through its wrapper (thread 1)
    t1 = [l for l in threads if tr.enters(l, "pthread_cond_clockwait")]
    expect(len(t1) == 1, "no pthread_cond_clockwait region")
    for name in ("pthread_mutex_clocklock", "pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock",
                 "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_tryrdlock",
                 "pthread_rwlock_trywrlock", "pthread_spin_trylock", "sem_clockwait",
                 "pthread_cond_broadcast"):
        expect(len(tr.enters(t1[0], name)) == 1, "thread 1: %d %s regions, want 1"
               % (len(tr.enters(t1[0], name)), name))
    # 40 mutexes held at once (more than the wrapper's stack of 32), released
    # in reverse: every release matches its acquisition (check_all)
    ids = {e.lock_id for e in tr.events[t1[0]] if isinstance(e, ThreadReleaseLock)}
    expect(len(ids) >= 42, "thread 1 released %d distinct locks, want >= 42" % len(ids))
    expect(len(tr.enters(tr.master(), "pthread_clockjoin_np")) == 1, "no pthread_clockjoin_np region")


def case_exit(args):
    tr, _ = trace_of(args, "exit", [os.path.join(args.bindir, "pth_exit")])
    master = tr.master()
    creates = sorted(tr.of_type(master, ThreadCreate), key=lambda e: e.time)
    expect(len(creates) == 8, "%d ThreadCreate in main, want 8" % len(creates))
    seq_of = [c.sequence_count for c in creates]
    loc_of = {}
    for loc in tr.thread_locations():
        loc_of[tr.events[loc][0].sequence_count] = loc
    expect(sorted(loc_of) == sorted(seq_of), "ThreadBegin seqs %r vs creates %r" % (sorted(loc_of), seq_of))
    running_sem = loc_of[seq_of[7]]
    _, begins, ends, waits = check_all(tr, allow_open={running_sem})
    joined = set(seq_of[:4])
    expect(seqs(waits) == joined, "ThreadWait for seqs %r, want %r (threads 0-3)"
           % (sorted(seqs(waits)), sorted(joined)))
    for i in range(8):
        expect(seq_of[i] in seqs(ends), "thread %d has no ThreadEnd" % i)
    # 1: released its mutex in the cleanup handler run by pthread_exit
    evs1 = tr.events[loc_of[seq_of[1]]]
    acq = [e for e in evs1 if isinstance(e, ThreadAcquireLock)]
    rel = [e for e in evs1 if isinstance(e, ThreadReleaseLock)]
    expect(len(acq) == 1 and len(rel) == 1, "thread 1: %d acquire, %d release" % (len(acq), len(rel)))
    kinds1 = [type(e).__name__ + ":" + getattr(getattr(e, "region", None), "name", "") for e in evs1]
    want = ["Enter:pthread_exit", "Leave:pthread_exit", "ThreadReleaseLock:", "ThreadEnd:"]
    expect(kinds1[-4:] == want, "thread 1 ends with %r, want %r (pthread_exit, the cleanup "
           "handler's unlock, ThreadEnd)" % (kinds1[-4:], want))
    # 2: cancelled in pthread_cond_wait: region closed, mutex re-acquired, then released by the handler
    loc2 = tr.events[loc_of[seq_of[2]]]
    names2 = [(type(e).__name__, getattr(getattr(e, "region", None), "name", None)) for e in loc2]
    expect(("Leave", "pthread_cond_wait") in names2, "thread 2: cond wait not left: %r" % names2)
    expect(sum(1 for e in loc2 if isinstance(e, ThreadAcquireLock)) == 2 and
           sum(1 for e in loc2 if isinstance(e, ThreadReleaseLock)) == 2, "thread 2 lock events %r" % names2)
    loc3 = tr.events[loc_of[seq_of[3]]]
    # cancelled while blocked in sem_wait: the region is closed by our cleanup
    # handler (if the cancel came before the call, sem_wait acted on it
    # before anything was recorded)
    n_in = len(tr.enters(loc_of[seq_of[3]], "sem_wait"))
    n_out = len(tr.leaves(loc_of[seq_of[3]], "sem_wait"))
    expect(n_in == n_out and n_in <= 1, "thread 3: sem_wait entered %d, left %d" % (n_in, n_out))
    if not n_in:
        print("note: thread 3 was cancelled before it reached sem_wait")
    expect(isinstance(loc3[-1], ThreadEnd), "thread 3: last event is not ThreadEnd")
    # main: the join regions
    expect(len(tr.enters(master, "pthread_tryjoin_np")) >= 1, "no tryjoin region")
    expect(len(tr.enters(master, "pthread_timedjoin_np")) == 1, "no timedjoin region")
    expect(len(tr.enters(master, "pthread_join")) == 2, "join regions")
    expect(len(tr.enters(master, "pthread_cancel")) == 2, "cancel regions")
    expect(len(tr.enters(loc_of[seq_of[5]], "pthread_detach")) == 1, "detach region")


def case_demo(args):
    plain = rc.run_untraced([args.demo], timeout=60, binary=True)
    expect(plain.returncode == 0, "demo failed untraced")
    tr, p = trace_of(args, "demo", [args.demo])
    expect(p.stdout == plain.stdout, "traced output differs: %r vs %r" % (p.stdout, plain.stdout))
    check_all(tr)
    master = tr.master()
    threads = tr.thread_locations()
    expect(len(threads) == 4, "%d threads" % len(threads))
    expect(len(tr.of_type(master, ThreadCreate)) == 4 and len(tr.of_type(master, ThreadWait)) == 4,
           "main: creates/waits")
    for loc in threads:
        expect(len(tr.enters(loc, "pthread_barrier_wait")) == 1, "barrier per thread")
    nwait = sum(len(tr.enters(l, "pthread_cond_wait")) for l in threads)
    nsig = sum(len(tr.enters(l, "pthread_cond_signal")) for l in threads)
    # every put and every get signals once: 2 x (4000 items + 2 end markers)
    expect(nsig == 2 * 4002, "%d cond signals, want 8004" % nsig)
    print("demo: %d condition waits" % nwait)
    for name in ("pthread_create", "pthread_join", "pthread_mutex_lock", "pthread_cond_wait",
                 "pthread_barrier_wait"):
        expect(name in tr.regions, "region %s not defined" % name)


def case_off(args):
    plain = rc.run_untraced([args.demo], timeout=60, binary=True)
    tr, p = trace_of(args, "off", [args.demo], env_extra={"TRACER_PTHREAD": "off"})
    expect(p.stdout == plain.stdout, "output differs with TRACER_PTHREAD=off")
    for loc, evs in tr.events.items():
        for e in evs:
            expect(not isinstance(e, (ThreadCreate, ThreadBegin, ThreadEnd, ThreadWait,
                                      ThreadAcquireLock, ThreadReleaseLock)),
                   "TRACER_PTHREAD=off but %s recorded" % type(e).__name__)
            if isinstance(e, (Enter, Leave)):
                expect(e.region.paradigm != otf2.Paradigm.PTHREAD, "pthread region %s recorded" % e.region.name)


def make_data(path, size, seed=20261121):
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(5000)]
    chunks, n = [], 0
    while n < size:
        words = rng.choices(vocab, k=200000)
        s = (" ".join(words) + "\n").encode()
        chunks.append(s)
        n += len(s)
    with open(path + ".tmp", "wb") as f:
        f.write(b"".join(chunks)[:size])
    os.rename(path + ".tmp", path)


def case_xz(args):
    os.makedirs(args.work, exist_ok=True)
    data = os.path.join(args.work, "xz-input.txt")
    make_data(data, 24 << 20)
    ref = os.path.join(args.work, "xz-ref.xz")
    out = os.path.join(args.work, "xz-traced.xz")
    cmd = ["xz", "-T2", "-0", "-c", data]
    expect(rc.run_untraced(cmd, stdout_path=ref, timeout=300).returncode == 0, "xz failed untraced")
    tr, _ = trace_of(args, "xz", cmd, stdout_path=out, timeout=300)
    h = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
    expect(h(out) == h(ref), "traced xz output differs from the untraced one")
    dec = subprocess.run(["xz", "-dc", out], stdout=subprocess.PIPE)
    expect(dec.returncode == 0 and hashlib.sha256(dec.stdout).hexdigest() == h(data),
           "traced xz output does not decompress to the input")
    master = tr.master()
    ncreate = len(tr.of_type(master, ThreadCreate))
    expect(ncreate >= 2, "xz -T2 created %d threads" % ncreate)
    threads = tr.thread_locations()
    # threads not joined before exit may be blocked in a condition wait
    waited = {e.sequence_count for e in tr.of_type(master, ThreadWait)}
    open_ok = {l for l in threads if tr.events[l][0].sequence_count not in waited}
    _, begins, ends, waits = check_all(tr, allow_open=open_ok, allow_held=open_ok)
    expect(len(begins) == ncreate, "%d ThreadBegin for %d ThreadCreate" % (len(begins), ncreate))
    nacq = sum(tr.count(ThreadAcquireLock, l) for l in threads)
    expect(nacq > 0, "no lock acquisitions in the xz worker threads")
    print("xz: %d threads, %d joined, %d acquisitions in workers" % (ncreate, len(waits), nacq))


def case_mallocstress(args):
    """4 threads in malloc/free with a 1 MiB buffer of 256 KiB chunks: under
    jemalloc/tcmalloc/mimalloc (alloc variants) chunks fill inside the
    allocator's own locks; the run must end (no deadlock) with a complete
    archive."""
    tr, p = trace_of(args, "mallocstress", [os.path.join(args.bindir, "pth_misc"), "mallocstress"],
                     env_extra={"TRACER_BUFFER": "1M", "TRACER_CHUNK": "256K"}, timeout=120)
    expect(b"done" in p.stdout, "program did not finish")
    creates, begins, ends, waits = check_all(tr, exclusive_ids=None)
    expect(len(begins) == 4 and len(ends) == 4, "begins/ends %d/%d, want 4" % (len(begins), len(ends)))


def case_churn(args):
    tr, _ = trace_of(args, "churn", [os.path.join(args.bindir, "pth_misc"), "churn"])
    creates, begins, ends, waits = check_all(tr, exclusive_ids=None)
    expect(len(creates) == 200 and len(begins) == 200 and len(ends) == 200,
           "creates/begins/ends: %d/%d/%d, want 200" % (len(creates), len(begins), len(ends)))
    expect(len(waits) == 100, "%d ThreadWait, want 100 (the joined half)" % len(waits))
    expect(len(tr.events) == 201, "%d locations, want 201" % len(tr.events))
    master = tr.master()
    expect(len(tr.enters(master, "pthread_detach")) == 100, "detach regions")
    # the detached threads have no ThreadWait; the joined ones exactly one
    joined = {e.sequence_count for e in tr.of_type(master, ThreadWait)}
    expect(joined <= seqs(begins), "ThreadWait for unknown threads")
    for loc in tr.thread_locations():
        expect(tr.lock_counts(loc) and sum(tr.lock_counts(loc).values()) == 10,
               "%s: %r acquisitions, want 10" % (tr.names[loc], dict(tr.lock_counts(loc))))


def case_mainexit(args):
    tr, p = trace_of(args, "mainexit", [os.path.join(args.bindir, "pth_misc"), "mainexit"])
    expect(b"total 6" in p.stdout, "program output %r" % p.stdout)
    # the process ends when its last thread returns: no exit status known
    creates, begins, ends, waits = check_all(tr, exit_status=None)
    expect(len(creates) == 3 and len(begins) == 3 and len(ends) == 3 and not waits,
           "creates/begins/ends/waits: %d/%d/%d/%d" % (len(creates), len(begins), len(ends), len(waits)))
    expect(not tr.of_type(tr.master(), ThreadEnd), "ThreadEnd on the master thread")


def case_fork(args):
    # one archive per process (the process tree's one archive: tests/tree)
    tr, _ = trace_of(args, "fork", [os.path.join(args.bindir, "pth_misc"), "fork"],
                     env_extra={"TRACER_TREE": "separate"})
    creates, begins, ends, waits = check_all(tr)
    expect(len(creates) == 1 and len(begins) == 1 and len(ends) == 1 and len(waits) == 1,
           "parent: creates/begins/ends/waits %d/%d/%d/%d" % (len(creates), len(begins), len(ends), len(waits)))
    kids = glob.glob(os.path.join(args.work, "fork-fork*", "*.otf2"))
    expect(len(kids) == 1, "child archives: %r" % kids)
    child = Trace(kids[0])
    print("fork child: %d locations; %s" % (len(child.events), summary(child)))
    creates, begins, ends, waits = check_all(child, exit_status=None)
    expect(len(creates) == 1 and len(begins) == 1 and len(ends) == 1 and len(waits) == 1,
           "child: creates/begins/ends/waits %d/%d/%d/%d" % (len(creates), len(begins), len(ends), len(waits)))
    # the child's locks are numbered afresh: its mutex is acquired once, order 1
    acq = [e for evs in child.events.values() for e in evs if isinstance(e, ThreadAcquireLock)]
    expect([(e.lock_id, e.acquisition_order) for e in acq] == [(0, 1)], "child acquisitions %r"
           % [(e.lock_id, e.acquisition_order) for e in acq])
    expect(not isinstance(child.events[child.master()][0], ThreadBegin), "child master has a ThreadBegin")


def case_mpi(args):
    out = os.path.join(args.work, "mpi")
    shutil.rmtree(out, ignore_errors=True)
    p = rc.run_mpi("mpirun", 2, [os.path.join(args.bindir, "pth_mpi")], ["TRACER_OUTPUT=" + out],
                   lib=args.lib, timeout=180)
    expect(p.returncode == 0 and "sum 20" in p.stdout, "mpirun failed (%d)" % p.returncode)
    tr = Trace(find_anchor(out))
    print("mpi: %d locations; %s" % (len(tr.events), summary(tr)))
    creates, begins, ends, waits = check_all(tr)
    # per rank: the master and the user's thread; Open MPI's internal
    # threads (started inside MPI_Init) are not recorded
    expect(len(tr.events) == 4, "%d locations, want 4: %r" % (len(tr.events), list(tr.names.values())))
    expect(len(creates) == 2 and len(begins) == 2 and len(ends) == 2 and len(waits) == 2,
           "creates/begins/ends/waits %d/%d/%d/%d" % (len(creates), len(begins), len(ends), len(waits)))
    for loc in tr.thread_locations():
        expect(sum(tr.lock_counts(loc).values()) == 10, "%s: lock acquisitions" % tr.names[loc])


def case_onfull(args):
    """TRACER_ON_FULL=stop: worker threads whose buffers fill up stop
    recording, but their location is written out and resumed before the
    ThreadEnd (tr_thread_ending), so ThreadEnd is still their last record."""
    tr, p = trace_of(args, "onfull", [os.path.join(args.bindir, "pth_locks"), "2", "20000"],
                     env_extra={"TRACER_BUFFER": "256K", "TRACER_CHUNK": "256K",
                                "TRACER_ON_FULL": "stop"})
    expect(b"events dropped" in p.stderr, "no events dropped: the buffers did not fill")
    threads = tr.thread_locations()
    expect(len(threads) == 2, "%d thread locations, want 2" % len(threads))
    for loc in threads:
        evs = tr.events[loc]
        names = [type(e).__name__ for e in evs[-3:]]
        mo = [e for e in evs if type(e).__name__ == "MeasurementOnOff"]
        expect(mo and str(mo[0].measurement_mode).endswith("OFF"),
               "%s: not stopped (no MeasurementOnOff OFF): buffer did not fill" % tr.names[loc])
        expect(isinstance(evs[-1], ThreadEnd) and evs[-1].sequence_count == evs[0].sequence_count,
               "%s: last events %r, want ThreadEnd last" % (tr.names[loc], names))
    # the master's wait for each worker still matches its ThreadEnd
    _, begins, ends, waits = check_lifecycle(tr)
    expect(seqs(waits) == seqs(ends) == seqs(begins), "ThreadWait/End/Begin seqs differ")


def case_cancelflush(args, durable=False):
    """A thread cancelled while its tiny buffer keeps flushing: the pending
    cancel must not act inside the tracer's write() (guard and in_record
    held, buffer half switched) but at the program's pthread_testcancel, so
    every worker is complete: balanced regions and locks, ThreadEnd last,
    flushes recorded. The flush writer (TRACER_DURABLE=off); its durable
    twin (cancelflush_durable) cancels while the workers switch mapped
    windows (256 KiB chunks: every worker fills several)."""
    name = "cancelflush_durable" if durable else "cancelflush"
    env = {"TRACER_BUFFER": "256K", "TRACER_CHUNK": "256K", "TRACER_DURABLE": "on" if durable else "off"}
    tr, p = trace_of(args, name, [os.path.join(args.bindir, "pth_misc"), "cancelflush"],
                     env_extra=env, timeout=60)
    expect(b"8 of 8 threads cancelled" in p.stdout, "program output %r" % p.stdout)
    creates, begins, ends, waits = check_all(tr)
    expect(len(begins) == 8 and len(ends) == 8 and len(waits) == 8,
           "begins/ends/waits %d/%d/%d, want 8" % (len(begins), len(ends), len(waits)))
    flushes = 0
    for loc in tr.thread_locations():
        evs = tr.events[loc]
        nfl = sum(1 for e in evs if type(e).__name__ == "BufferFlush")
        flushes += nfl
        if durable:
            expect(nfl == 0, "%s: %d BufferFlush records in durable mode" % (tr.names[loc], nfl))
        else:
            expect(nfl >= 1, "%s: no BufferFlush: the buffer never filled" % tr.names[loc])
        expect(len(tr.enters(loc, "pthread_mutex_lock")) >= 10000,
               "%s: only %d lock regions before the cancel acted" % (tr.names[loc],
                                                                    len(tr.enters(loc, "pthread_mutex_lock"))))
    if durable:
        sizes = sorted(os.path.getsize(f)
                       for f in glob.glob(os.path.join(args.work, name, "**", "*.evt"), recursive=True))
        expect(len(sizes) >= 9 and sizes[-8] > 256 * 1024,
               "event files of %r bytes: not every worker filled a 256 KiB chunk" % sizes)
    print("%s: %d BufferFlush records on the workers" % (name, flushes))


def case_vtexit(args):
    """Threads that end (pthread_exit / return) with a user region still
    open: the Leave comes before the ThreadEnd, which stays last."""
    tr, p = trace_of(args, "vtexit", [os.path.join(args.bindir, "pth_misc"), "vtexit"])
    expect(b"vtexit: ok" in p.stdout, "program output %r" % p.stdout)
    creates, begins, ends, waits = check_all(tr)   # nesting, ThreadEnd last
    threads = tr.thread_locations()
    expect(len(threads) == 2, "%d thread locations" % len(threads))
    for loc in threads:
        evs = tr.events[loc]
        expect(len(tr.enters(loc, "left_open")) == 1 and len(tr.leaves(loc, "left_open")) == 1,
               "%s: left_open region not entered and closed once" % tr.names[loc])
        expect(isinstance(evs[-2], Leave) and evs[-2].region.name == "left_open",
               "%s: ends with %r" % (tr.names[loc], [type(e).__name__ for e in evs[-3:]]))


def case_exitsampling(args):
    """pth_exit with sampling on (regions are CallingContextEnter/Leave,
    written by sampling/): the thread still blocked in sem_wait at exit gets
    the CallingContextLeave of its open regions before its ThreadEnd (module
    order: sampling's thread_fini before the pthread one)."""
    tr, _ = trace_of(args, "exitsampling", [os.path.join(args.bindir, "pth_exit")],
                     env_extra={"TRACER_SAMPLING": "1ms"})
    creates, begins, ends, waits = check_lifecycle(tr)   # ThreadEnd last everywhere
    expect(len(begins) == 8 and len(ends) == 8, "begins/ends %d/%d, want 8" % (len(begins), len(ends)))
    open_at_exit = 0
    for loc in tr.thread_locations():
        depth = 0
        for e in tr.events[loc]:
            k = type(e).__name__
            depth += (k == "CallingContextEnter") - (k == "CallingContextLeave")
            expect(k not in ("Enter", "Leave"), "%s: %s record in calling-context mode" % (tr.names[loc], k))
        expect(depth == 0, "%s: %d calling contexts left open" % (tr.names[loc], depth))
        last_leave = [e for e in tr.events[loc][-3:] if type(e).__name__ == "CallingContextLeave"]
        open_at_exit += bool(last_leave)
    expect(open_at_exit >= 1, "no thread closed a calling context right before its ThreadEnd")


def sigterm_run(args, env, mode, delay, timeout, what):
    """pth_misc MODE: SIGTERM `delay` s after it said ready; it must end
    within `timeout` s (no deadlock). Returns the process and its stderr."""
    import time
    p = subprocess.Popen([os.path.join(args.bindir, "pth_misc"), mode], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline()
    expect(b"ready" in line, "%s: program did not start: %r" % (what, line))
    time.sleep(delay)
    p.send_signal(15)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # the evidence first: every thread's stack (gdb, when installed)
        if shutil.which("gdb"):
            g = subprocess.run(["gdb", "-p", str(p.pid), "-batch", "-ex", "thread apply all bt 30"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            sys.stdout.write(g.stdout.decode(errors="replace")[-20000:])
        p.kill()
        p.communicate()
        expect(False, "%s: no exit %d s after SIGTERM (deadlock)" % (what, timeout))
    return p, err


def case_sigterm(args):
    """SIGTERM (default action) while the master blocks in pthread_join and
    three threads hammer a lock through the wrappers (with and without
    sampling): the process must die by SIGTERM as untraced, within seconds
    (no deadlock in the signal path), leaving a complete archive: ProgramEnd
    143, every thread ended, regions closed, lock orders consistent."""
    for extra in ({}, {"TRACER_SAMPLING": "250us"}):
        name = "sigterm" + ("-sampling" if extra else "")
        out = os.path.join(args.work, name)
        shutil.rmtree(out, ignore_errors=True)
        env = dict(os.environ, LD_PRELOAD=args.lib, TRACER_OUTPUT=out, TRACER_VERBOSE="1", **extra)
        for run in range(3):
            shutil.rmtree(out, ignore_errors=True)
            p, err = sigterm_run(args, env, "sigterm", 0.2, 20, "%s run %d" % (name, run))
            expect(p.returncode == -15, "%s run %d: exit %d, want death by SIGTERM" % (name, run, p.returncode))
            tr = Trace(find_anchor(out))
            print("%s run %d: %d locations; %s" % (name, run, len(tr.events), summary(tr)))
            creates, begins, ends, waits = check_all(tr, exit_status=143,
                                                     allow_held=set(tr.thread_locations()))
            expect(len(creates) == 3 and len(begins) == 3 and len(ends) == 3,
                   "%s: creates/begins/ends %d/%d/%d, want 3 each" % (name, len(creates), len(begins), len(ends)))


def print_check(anchor, exit_status):
    """otf2-print reads the archive (tc.print_events, streamed: fast enough
    for millions of events); per location: timestamps never decrease, the
    master ends with ProgramEnd exit_status, every other location with
    ThreadEnd. Returns the number of locations and events."""
    last, n, order = {}, 0, tc.Rules(anchor)
    try:
        for kind, loc, t, rest in tc.print_events(anchor):
            order.time(loc, "", n, kind, t)
            last[loc] = (kind, rest)
            n += 1
    except tc.CheckError as e:   # otf2-print failed, or time went back
        fail(str(e))
    expect(0 in last, "no master location")
    for loc, (kind, rest) in sorted(last.items()):
        if loc == 0:
            expect(kind == "PROGRAM_END" and ("exit status: %d" % exit_status) in rest.lower(),
                   "master ends with %s %s, want PROGRAM_END %d" % (kind, rest, exit_status))
        else:
            expect(kind == "THREAD_END", "location %d ends with %s, not THREAD_END" % (loc, kind))
    return len(last), n


def case_sigrec(args):
    """SIGTERM (default action) at 20 random moments while 4 threads record
    in a tight loop with sampling at 10 kHz, and main blocks SIGTERM (so a
    recording thread takes it, mostly inside a record: the handler defers
    to the end of the record). Durable on and off. Each run must die by
    SIGTERM as untraced, and its archive must read with otf2-print, every
    location ending with its ThreadEnd (ProgramEnd 143 on the master) in
    time order."""
    rnd = random.Random(int(os.environ.get("TRACER_TEST_SEED", "0")) or None)
    out = os.path.join(args.work, "sigrec")
    bad = []
    for run in range(20):
        durable = "on" if run % 2 else "off"
        delay = rnd.uniform(0.01, 0.08)
        shutil.rmtree(out, ignore_errors=True)
        env = dict(os.environ, LD_PRELOAD=args.lib, TRACER_OUTPUT=out, TRACER_VERBOSE="1",
                   TRACER_SAMPLING="100us", TRACER_DURABLE=durable)
        p, err = sigterm_run(args, env, "sigrec", delay, 30, "sigrec run %d" % run)
        what = "run %d (durable %s, SIGTERM after %.0f ms)" % (run, durable, delay * 1000)
        expect(p.returncode == -15, "sigrec %s: exit %d, want death by SIGTERM" % (what, p.returncode))
        try:
            nloc, nev = print_check(find_anchor(out), 143)
            expect(nloc == 5, "%d locations, want 5" % nloc)
            print("sigrec %s: %d locations, %d events" % (what, nloc, nev))
        except CheckError as e:
            print("sigrec %s: FAIL %s" % (what, e))
            sys.stdout.write(err.decode(errors="replace"))
            bad.append(run)
    expect(not bad, "sigrec: %d of 20 runs failed: %r" % (len(bad), bad))


CASES = {"mallocstress": case_mallocstress, "sigterm": case_sigterm, "sigrec": case_sigrec, "locks": case_locks, "mpi": case_mpi, "fork": case_fork, "churn": case_churn, "mainexit": case_mainexit, "sync": case_sync, "exit": case_exit, "demo": case_demo,
         "off": case_off, "xz": case_xz,
         "onfull": case_onfull, "cancelflush": case_cancelflush,
         "cancelflush_durable": lambda a: case_cancelflush(a, durable=True),
         "vtexit": case_vtexit, "exitsampling": case_exitsampling}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--demo", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    return rc.run_case(lambda: CASES[args.case](args), "pthread." + args.case)


if __name__ == "__main__":
    sys.exit(main())
