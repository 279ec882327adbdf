# SPDX-License-Identifier: BSD-3-Clause
"""real_tests.py - real programs nobody here wrote, untraced and traced.

Every case runs a program twice in fresh directories holding the same input:
once untraced and once with libtracer.so preloaded (or under tracer-run),
then compares what the program did: stdout, stderr apart from `tracer:`
lines, every file left in its directory (byte for byte), exit status or
signal death. The archive(s) are read back with the reference reader
(otf2-print, python3-otf2 through tests/lib/tracecheck.py).

usage: real_tests.py CASE --lib LIB --bindir DIR --work DIR [--tracer-run PATH]
       real_tests.py --list
"""
import argparse
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'
TCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'
ALLOCATORS = {'jemalloc': JEMALLOC, 'tcmalloc': TCMALLOC}
SKIP = rc.SKIP_CODE

A = None          # parsed arguments
CASES = {}


ck = rc.Checker(stop=True)   # a case stops at its first failed check
# the names tests/durable's scripts use (rc's own, under their old names)
Fail = rc.CheckFailed
Result = rc.Timed


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# ---- running ----

def clean_env(extra=None):
    """runcheck's clean environment in the C locale."""
    return rc.clean_env(dict({'LC_ALL': 'C'}, **(extra or {})))


def compare(name, ru, rt, u, t):
    """rc.compare and rc.compare_dirs of two rc.run_timed runs; returns the
    number of files."""
    if ru.hung:
        ck.fail('%s: the untraced run hung' % name)
    if rt.hung or rt.rc != ru.rc:
        ck.fail('%s: untraced %s, traced %s; traced stderr: %s' %
                (name, ru.status(), rt.status(), rt.err.decode(errors='replace')[-800:]))
    rc.compare(ck, ru, rt)
    return rc.compare_dirs(ck, u, t)


def archives(prefix):
    """Every archive directory a run left: PREFIX, PREFIX.N, PREFIX-forkPID..."""
    return sorted(d for d in glob.glob(prefix + '*') if os.path.isdir(d) and glob.glob(d + '/*.otf2'))


def stream_check(anchor, exit_status=None, master=0, timeout=300):
    """The checks of tracecheck.check_all on an archive too big for the
    python reader (slow, and it holds every event): otf2-print's output
    streamed line by line. otf2-print exits 0, timestamps per location never
    go back, Enter/Leave nest, ProgramBegin first and ProgramEnd last on the
    master location. Returns (locations, events, {region: Enter count})."""
    p = subprocess.Popen([tc.OTF2_PRINT, anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    last, stack, first_kind, last_line, enters, n = {}, {}, {}, {}, {}, 0
    t0 = time.monotonic()
    body = False
    for line in p.stdout:
        if not body:
            body = line.startswith('-----')
            continue
        f = line.split(None, 3)
        if len(f) < 3 or not f[1].isdigit():
            if line.startswith('==='):
                break
            continue
        kind, i, t = f[0], int(f[1]), int(f[2])
        n += 1
        if t < last.get(i, 0):
            p.kill()
            ck.fail('%s: location %d: event %d %s goes back in time' % (anchor, i, n, kind))
        last[i] = t
        first_kind.setdefault(i, kind)
        last_line[i] = line
        if kind in ('ENTER', 'LEAVE'):
            r = line.split('Region: "', 1)[1].split('"', 1)[0]
            if kind == 'ENTER':
                stack.setdefault(i, []).append(r)
                enters[r] = enters.get(r, 0) + 1
            else:
                s = stack.get(i)
                if not s or s.pop() != r:
                    p.kill()
                    ck.fail('%s: location %d: Leave %s does not match' % (anchor, i, r))
        if time.monotonic() - t0 > timeout:
            p.kill()
            ck.fail('otf2-print %s: still reading after %d s' % (anchor, timeout))
    rest = p.stdout.read()
    err = p.stderr.read()
    if p.wait() != 0:
        ck.fail('otf2-print %s: exit %d: %s' % (anchor, p.returncode, err[-500:]))
    del rest
    for i, s in stack.items():
        if s:
            ck.fail('%s: location %d: regions open at the end: %s' % (anchor, i, s))
    if first_kind.get(master) != 'PROGRAM_BEGIN':
        ck.fail('%s: first master event %s' % (anchor, first_kind.get(master)))
    if exit_status is not None:
        l = last_line.get(master, '')
        if not l.startswith('PROGRAM_END') or not l.rstrip().endswith('Exit status: %d' % exit_status):
            ck.fail('%s: last master event %r, expected ProgramEnd(%d)' % (anchor, l, exit_status))
    return len(last), n, enters


def otf2_print_ok(prefix, single=False):
    """otf2-print reads every archive at PREFIX* (single: the archive
    directory PREFIX only) and exits 0."""
    dirs = [prefix] if single else archives(prefix)
    if not dirs:
        ck.fail('no archive at %s*' % prefix)
    for d in dirs:
        anchor = tc.find_anchor(d)
        try:
            p = subprocess.run([tc.OTF2_PRINT, anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               timeout=300)
        except subprocess.TimeoutExpired:
            ck.fail('otf2-print %s: still reading after 300 s' % anchor)
        if p.returncode != 0:
            ck.fail('otf2-print %s: exit %d: %s' % (anchor, p.returncode, p.stderr[-500:]))


class Summary:
    """What read_back found in one archive."""
    def __init__(self, path, nloc, nev, enters, names):
        self.path, self.nloc, self.nev, self.enters, self.names = path, nloc, nev, enters, names


BIG = int(os.environ.get('REAL_BIG', 50000))   # events: above this an archive is streamed


def read_back(prefix, exit_status=None, min_locations=1, allow_open=False, first_only=False):
    """Reads every archive back (tracecheck's checks; first_only: PREFIX's
    only); returns Summary objects (first = PREFIX)."""
    dirs = archives(prefix)[:1] if first_only else archives(prefix)
    if not dirs:
        ck.fail('no archive at %s*' % prefix)
    out = []
    for d in dirs:
        anchor = tc.find_anchor(d)
        st = exit_status if d == prefix else None
        with tc.otf2.reader.open(anchor) as r:
            names = [l.name for l in r.definitions.locations]
            total = sum(l.number_of_events for l in r.definitions.locations)
            master = [l._ref for l in r.definitions.locations if l.name == 'Master thread']
        if total > BIG:
            nloc, nev, enters = stream_check(anchor, st, master[0] if master else 0)
        else:
            tr = tc.load(d)
            tc.check_all(tr, st, allow_open=allow_open)
            enters = {}
            for e in tr.events():
                if e.kind == 'Enter':
                    enters[e.region] = enters.get(e.region, 0) + 1
            nloc, nev = len(tr.locations), len(tr.events())
        out.append(Summary(d, nloc, nev, enters, names))
    if out[0].nloc < min_locations:
        ck.fail('%s: %d locations, expected at least %d (%s)' %
                   (dirs[0], out[0].nloc, min_locations, out[0].names))
    return out


def fresh(name):
    base = os.path.join(A.work, name)
    shutil.rmtree(base, ignore_errors=True)
    u, t = os.path.join(base, 'untraced'), os.path.join(base, 'traced')
    os.makedirs(u)
    os.makedirs(t)
    return base, u, t


def preload(before=(), after=()):
    return ':'.join(list(before) + [A.lib] + list(after))


def pair(name, argv, setup=None, env=None, tenv=None, alloc=None, order='before', min_locations=1,
         timeout=300, via_run=False):
    """One untraced and one traced run of argv compared; returns (traces, traced result)."""
    base, u, t = fresh(name)
    for d in (u, t):
        if setup:
            setup(d)
    envu = clean_env(env)
    envt = clean_env(env)
    before, after = [], []
    if alloc:
        if not os.path.exists(ALLOCATORS[alloc]):
            print('SKIP: %s not installed (scripts/install-deps)' % ALLOCATORS[alloc])
            sys.exit(SKIP)
        envu['LD_PRELOAD'] = ALLOCATORS[alloc]
        (before if order == 'before' else after).append(ALLOCATORS[alloc])
    prefix = os.path.join(base, 'archive')
    if tenv:
        envt.update(tenv)
    if via_run:
        if before or after:
            envt['LD_PRELOAD'] = ':'.join(before + after)
        argvt = [A.tracer_run, '--lib', A.lib, '-o', prefix, '--'] + argv
    else:
        envt['LD_PRELOAD'] = preload(before, after)
        envt['TRACER_OUTPUT'] = prefix
        argvt = argv
    ru = rc.run_timed(argv, u, envu, timeout)
    rt = rc.run_timed(argvt, t, envt, timeout)
    nfiles = compare(name, ru, rt, u, t)
    trs = read_back(prefix, ru.rc if ru.rc >= 0 else None, min_locations)
    print('ok %s: %s, %d files identical, untraced %.2fs traced %.2fs, %d archive(s), %d locations, '
          '%d events, %d tracer: lines' % (name, rt.status(), nfiles, ru.elapsed, rt.elapsed, len(trs),
                                            trs[0].nloc, trs[0].nev,
                                            len(rc.tracer_lines(rt.err))))
    return trs, rt


# ---- inputs ----

def gen_text(path, size=4 << 20, seed=1):
    """Deterministic text: lines of words from a fixed random vocabulary."""
    rng = random.Random(seed)
    letters = 'abcdefghijklmnopqrstuvwxyz'
    vocab = [''.join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(5000)]
    out, n = [], 0
    while n < size:
        line = ' '.join(rng.choice(vocab) for _ in range(rng.randint(1, 12))) + '\n'
        out.append(line)
        n += len(line)
    with open(path, 'w') as f:
        f.write(''.join(out))
    os.utime(path, (1600000000, 1600000000))


_TEXT = {}


def text_input(d):
    """input.txt in d (generated once, copied)."""
    if 'path' not in _TEXT:
        p = os.path.join(A.work, 'input.txt')
        gen_text(p)
        _TEXT['path'] = p
    dst = os.path.join(d, 'input.txt')
    shutil.copyfile(_TEXT['path'], dst)
    os.utime(dst, (1600000000, 1600000000))


def need(prog):
    if not shutil.which(prog):
        print('SKIP: %s not installed (scripts/install-deps)' % prog)
        sys.exit(SKIP)


def bin_(name):
    return os.path.join(A.bindir, name)


# ---- cases: compressors, sort ----

@case
def pigz():
    need('pigz')
    pair('pigz', ['pigz', '-p', '2', '-k', '-n', 'input.txt'], setup=text_input, min_locations=2)


@case
def xz():
    need('xz')
    pair('xz', ['xz', '-T2', '--block-size=1MiB', '-k', 'input.txt'], setup=text_input, min_locations=2)


@case
def zstd():
    need('zstd')
    pair('zstd', ['zstd', '-q', '-T2', '-B1048576', '-k', 'input.txt'], setup=text_input, min_locations=2)


def sort_input(d):
    """input.txt twice (about 180,000 lines: sort uses threads above 128Ki lines)."""
    text_input(d)
    p = os.path.join(d, 'input.txt')
    with open(p, 'rb') as f:
        data = f.read()
    with open(p, 'ab') as f:
        f.write(data)


@case
def sort():
    pair('sort', ['sort', '--parallel=2', '-S', '32M', '-o', 'sorted.txt', 'input.txt'], setup=sort_input,
         min_locations=2)


# ---- cases: threads in other languages ----

@case
def python_threads():
    trs, _ = pair('python_threads', ['/usr/bin/python3', os.path.join(HERE, 'py_threads.py'), 'out.txt'],
                  min_locations=5)
    if not trs[0].enters:
        ck.fail('python_threads: no Enter recorded')


@case
def cxx_threads():
    trs, _ = pair('cxx_threads', [bin_('real_cxx_threads'), 'out.txt'], min_locations=5)
    regions = set(trs[0].enters)
    for r in ('pthread_mutex_lock', 'pthread_cond_wait'):
        if r not in regions:
            ck.fail('cxx_threads: no region %s (have %s)' % (r, sorted(regions)[:30]))


# ---- cases: a daemon that closes every descriptor ----

DAEMON_ENV = {'TRACER_BUFFER': '1M', 'TRACER_CHUNK': '256K'}


def daemon_case(name, alloc=None, order='before'):
    trs, _ = pair(name, [bin_('real_daemon_close'), 'own.log'], tenv=DAEMON_ENV, alloc=alloc, order=order,
                  min_locations=4)
    # every lock of the run reached the archive: 2 x 200000 before the
    # close, at least 50000 after
    locks = trs[0].enters.get('pthread_mutex_lock', 0)
    if locks < 450000:
        ck.fail('%s: %d pthread_mutex_lock recorded, expected >= 450000' % (name, locks))


@case
def daemon():
    daemon_case('daemon')


def _alloc_daemon(alloc, order):
    def f():
        daemon_case('daemon_%s_%s' % (alloc, order), alloc, order)
    f.__name__ = 'daemon_%s_%s' % (alloc, order)
    return case(f)


for _a in ALLOCATORS:
    for _o in ('before', 'after'):
        _alloc_daemon(_a, _o)


# ---- SIGTERM soak ----

def soak(name, alloc=None, runs=30, seed=9, startup=False):
    """runs traced runs of malloc_storm, each SIGTERMed at a random moment
    (fixed seed) after its threads run; allocator preloaded before the
    tracer on even runs, after it on odd runs. Each must die by SIGTERM
    like the untraced run, within 20 s, and leave an archive otf2-print
    reads; every 10th archive gets all of tracecheck's checks. startup: each
    run is signalled during the start-up instead (no archive is then fine,
    a directory without one not)."""
    runs = int(os.environ.get('REAL_SOAK_RUNS', runs))
    base, u, t = fresh(name)
    envu = clean_env()
    if alloc:
        if not os.path.exists(ALLOCATORS[alloc]):
            print('SKIP: %s not installed' % ALLOCATORS[alloc])
            sys.exit(SKIP)
        envu['LD_PRELOAD'] = ALLOCATORS[alloc]
    argv = [bin_('real_malloc_storm'), '4']
    ru = rc.run_timed(argv, u, envu, term_after=0.1)
    if ru.hung or ru.rc != -signal.SIGTERM:
        ck.fail('%s: the untraced run: %s' % (name, ru.status()))
    rng = random.Random(seed)
    worst = 0.0
    for i in range(runs):
        # startup: at a random moment of the start-up (before or while the
        # tracer starts: no archive is then fine, a broken one not)
        early = startup
        delay = rng.uniform(0.0, 0.03) if early else rng.uniform(0.0, 0.3)
        envt = clean_env()
        if alloc:
            envt['LD_PRELOAD'] = preload([ALLOCATORS[alloc]]) if i % 2 == 0 else preload((), [ALLOCATORS[alloc]])
        else:
            envt['LD_PRELOAD'] = A.lib
        prefix = os.path.join(base, 'archive%02d' % i)
        envt['TRACER_OUTPUT'] = prefix
        rt = rc.run_timed(argv, t, envt, term_after=delay, wait_ready=not early)
        what = '%s run %d (SIGTERM %.3fs after %s, LD_PRELOAD=%s)' % (name, i, delay,
                                                                  'start' if early else 'ready', envt['LD_PRELOAD'])
        if rt.hung or rt.rc != ru.rc:
            ck.fail('%s: %s, untraced %s; stderr: %s' % (what, rt.status(), ru.status(),
                                                            rt.err.decode(errors='replace')[-500:]))
        if rt.out != b'ready\n' and not (early and rt.out == b''):
            ck.fail('%s: stdout %r' % (what, rt.out[:200]))
        if early and not os.path.exists(os.path.join(prefix, 'traces.otf2')):
            # killed before the tracer started: nothing at all. A
            # termination signal once the tracer began making its files
            # waits until it can write the archive, so a directory without
            # an archive (an empty one, a tree's registry without any part,
            # a partial anchor) is a half-made start that tracer recover
            # cannot use
            if os.path.isdir(prefix):
                ck.fail('%s: a directory without an archive: %r' % (what, sorted(os.listdir(prefix))))
            continue
        try:
            if i % 10 == 0:
                read_back(prefix, min_locations=1 if early else 5)   # every check (slow in python)
            else:
                otf2_print_ok(prefix)                  # the reference reader reads it all
        except Exception as e:   # CheckError, Fail, the reader's own errors
            ck.fail('%s: archive %s: %s: %s' % (what, prefix, type(e).__name__, e))
        worst = max(worst, rt.elapsed - delay)
        shutil.rmtree(prefix, ignore_errors=True)
    print('ok %s: %d runs died by SIGTERM like untraced, archives readable, slowest end %.2fs after the '
          'signal' % (name, runs, worst))


@case
def soak_glibc():
    soak('soak_glibc')


@case
def soak_jemalloc():
    soak('soak_jemalloc', 'jemalloc')


@case
def soak_tcmalloc():
    soak('soak_tcmalloc', 'tcmalloc')


@case
def soak_startup():
    """SIGTERM 0-30 ms after the start (the tracer starting), with glibc,
    jemalloc and tcmalloc."""
    for alloc in (None, 'jemalloc', 'tcmalloc'):
        soak('soak_startup_%s' % (alloc or 'glibc'), alloc, runs=20, startup=True)


# ---- quiet: one summary per run ----

QUIET_CMD = ['sh', '-c', 'python3 -c "print(1)" 2>&1']


def expect_quiet(name, r, what):
    """stdout exactly '1', stderr exactly one tracer: line, the summary."""
    lines = r.err.decode(errors='replace').splitlines()
    if r.rc != 0 or r.out != b'1\n':
        ck.fail('%s: %s: %s, stdout %r (expected exactly 1)' % (name, what, r.status(), r.out[:300]))
    if len(lines) != 1 or not lines[0].startswith('tracer: ') or 'archive' not in lines[0]:
        ck.fail('%s: %s: stderr should be the one summary line, is %r' % (name, what, lines[:10]))
    return lines[0]


def tracer_run_argv(prefix, argv):
    return [A.tracer_run, '--lib', A.lib, '-o', prefix, '--'] + argv


@case
def quiet_tracer_run():
    """tracer-run: the exit line of no process reaches the program's output;
    tracer-run prints the run's summary once, after the tree has ended."""
    base, u, t = fresh('quiet_tracer_run')
    prefix = os.path.join(base, 'archive')
    r = rc.run_timed(tracer_run_argv(prefix, QUIET_CMD), t, clean_env())
    line = expect_quiet('quiet_tracer_run', r, 'tracer-run')
    otf2_print_ok(prefix)
    log = os.path.join(prefix, 'tracer.log')
    if not os.path.exists(log):
        ck.fail('quiet_tracer_run: no %s' % log)
    else:
        # the tree's line counts every process: none writes a summary of
        # its part (a file the unification removes) into the log
        parts = [l for l in open(log, errors='replace') if l.startswith('tracer: archive ')]
        if parts:
            ck.fail('quiet_tracer_run: %d summary lines in %s, want none (the first: %s)'
                    % (len(parts), log, parts[0].rstrip()))
    print('ok quiet_tracer_run: stdout 1, stderr: %s' % line)


@case
def quiet_preload():
    """Plain LD_PRELOAD: only the first process of the tree prints."""
    base, u, t = fresh('quiet_preload')
    prefix = os.path.join(base, 'archive')
    r = rc.run_timed(QUIET_CMD, t, clean_env({'LD_PRELOAD': A.lib, 'TRACER_OUTPUT': prefix}))
    line = expect_quiet('quiet_preload', r, 'LD_PRELOAD')
    if prefix + '/traces.otf2' not in line:
        ck.fail('quiet_preload: the summary is not the first process\'s: %s' % line)
    otf2_print_ok(prefix)
    print('ok quiet_preload: stdout 1, stderr: %s' % line)


@case
def tracer_run_status():
    """tracer-run ends like the program: exit status, signal death (also of
    a signal sent to tracer-run and forwarded), and waits for orphans."""
    base, u, t = fresh('tracer_run_status')
    prefix = os.path.join(base, 'archive')
    cases = [(['sh', '-c', 'exit 7'], 7), (['sh', '-c', 'kill -TERM $$'], -signal.SIGTERM),
             (['sh', '-c', 'kill -SEGV $$'], -signal.SIGSEGV)]
    for i, (argv, want) in enumerate(cases):
        r = rc.run_timed(tracer_run_argv('%s%d' % (prefix, i), argv), t, clean_env())
        if r.rc != want:
            ck.fail('tracer_run_status: %s: %s, expected %d' % (argv, r.status(), want))
    # a forwarded SIGTERM: the program dies by it, so does tracer-run
    p = subprocess.Popen(tracer_run_argv(prefix + 'f', ['sh', '-c', 'echo ready; exec sleep 30']), cwd=t,
                         env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    time.sleep(0.2)
    try:
        rc.term_wait(p, 20, 'tracer_run_status: SIGTERM not forwarded')
    except rc.CheckFailed as e:
        ck.fail(str(e))
    if p.returncode != -signal.SIGTERM:
        ck.fail('tracer_run_status: forwarded SIGTERM: returncode %d' % p.returncode)
    # an orphan that outlives the program: tracer-run waits for it
    t0 = time.monotonic()
    r = rc.run_timed(tracer_run_argv(prefix + 'o', ['sh', '-c', '(sleep 1; echo orphan > orphan.txt) & exit 0']), t,
            clean_env())
    if r.rc != 0 or not os.path.exists(os.path.join(t, 'orphan.txt')) or time.monotonic() - t0 < 0.9:
        ck.fail('tracer_run_status: did not wait for the orphan (%s, %.2fs)' % (r.status(),
                                                                                 time.monotonic() - t0))
    # a child that changes directory writes to the same (absolute) place
    r = rc.run_timed([A.tracer_run, '--lib', A.lib, '-o', 'rel_out', '--', 'sh', '-c', 'mkdir -p sub && cd sub && true'],
            t, clean_env())
    if os.path.exists(os.path.join(t, 'sub', 'rel_out')) or not archives(os.path.join(t, 'rel_out')):
        ck.fail('tracer_run_status: relative -o: %s' % sorted(os.listdir(t)))
    print('ok tracer_run_status: exit 7, SIGTERM, SIGSEGV, forwarded SIGTERM, orphan waited for, -o absolute')


# ---- autoconf configure + make -j2 of a small C project ----

def autoconf_tree(base):
    src = os.path.join(base, 'src')
    shutil.copytree(os.path.join(HERE, 'autoconf'), src)
    r = rc.run_timed(['autoreconf', '-i'], src, clean_env(), timeout=300)
    if r.rc != 0:
        ck.fail('autoreconf: %s: %s' % (r.status(), r.err.decode(errors='replace')[-500:]))
    shutil.rmtree(os.path.join(src, 'autom4te.cache'), ignore_errors=True)
    return src


def normalized(b, d):
    return b.decode(errors='replace').replace(d, 'DIR')


@case
def configure():
    """./configure, then make -j2, under tracer-run: same config.h, same
    output, same programs; one tracer: line (the summary)."""
    need('autoreconf')
    base, u, t = fresh('configure')
    src = autoconf_tree(base)
    for d in (u, t):
        shutil.rmtree(d)
        shutil.copytree(src, d)
    prefix = os.path.join(base, 'archive')
    for step in (['./configure'], ['make', '-j2']):
        ru = rc.run_timed(step, u, clean_env())
        rt = rc.run_timed(tracer_run_argv(prefix, step), t, clean_env())
        name = 'configure: ' + ' '.join(step)
        if rt.hung or rt.rc != ru.rc or ru.rc != 0:
            ck.fail('%s: untraced %s, traced %s: %s' % (name, ru.status(), rt.status(),
                                                           rt.err.decode(errors='replace')[-800:]))
        ou, ot = normalized(ru.out, u), normalized(rt.out, t)
        if step[0] == 'make':   # parallel jobs: their lines in any order, untraced too
            ou, ot = sorted(ou.splitlines()), sorted(ot.splitlines())
        if ou != ot:
            ck.fail('%s: stdout differs:\n--- untraced\n%s\n--- traced\n%s' %
                       (name, normalized(ru.out, u)[-1500:], normalized(rt.out, t)[-1500:]))
        tl = rc.tracer_lines(rt.err)
        eu, et = ('\n'.join(rc.without_tracer_lines(r.err)) for r in (ru, rt))
        if eu != et.replace(t, u) or len(tl) != 1:
            ck.fail('%s: stderr: %d tracer: lines (expected the summary only): %s\n%s' %
                    (name, len(tl), tl[:5], et[-800:]))
        if step[0] == './configure':
            for f in ('config.h',):
                a, b = open(os.path.join(u, f), 'rb').read(), open(os.path.join(t, f), 'rb').read()
                if a != b:
                    ck.fail('configure: %s differs (first difference at byte %d)' % (f, rc.first_diff(a, b)))
        print('ok %s: %s, untraced %.2fs traced %.2fs; %s' % (name, rt.status(), ru.elapsed, rt.elapsed, tl[0]))
        # the whole tree (hundreds of processes, every compiler child): ONE
        # archive (TRACER_TREE=one, tests/tree), read back with otf2-print
        dirs = sorted(d for d in glob.glob(prefix + '*') if os.path.isdir(d))
        if dirs != [prefix] or 'processes' not in tl[0]:
            ck.fail('%s: archives %s (expected one, the tree\'s), summary %s' % (name, dirs, tl[0]))
        otf2_print_ok(prefix, single=True)
        trs = read_back(prefix, first_only=True)
        print('   one archive, %d locations, %d events, read back with otf2-print' % (trs[0].nloc, trs[0].nev))
        shutil.rmtree(prefix)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    for prog in ('./hello', './worker'):
        a, b = rc.run_timed([prog], u, clean_env()), rc.run_timed([prog], t, clean_env())
        if a.rc != 0 or a.out != b.out:
            ck.fail('configure: %s built traced prints %r, untraced %r' % (prog, b.out, a.out))


# ---- thread names ----

@case
def thread_names():
    """pthread_setname_np / prctl(PR_SET_NAME) names are the location names
    (the name at the thread's end; 15 characters as in the kernel)."""
    trs, _ = pair('thread_names', [bin_('real_thread_names')], min_locations=4)
    names = sorted(trs[0].names)
    want = sorted(['the-boss', 'renamed-worker', 'named-by-main', 'Thread 3'])
    if names != want:
        ck.fail('thread_names: locations %s, expected %s' % (names, want))


# ---- programs that cannot be traced ----

STATIC_SRC = r"""
#include <stdio.h>
int main(int argc, char **argv)
{
	FILE *f = fopen("static.txt", "w");
	fprintf(f, "static %d\n", argc);
	fclose(f);
	printf("static program, %d args\n", argc);
	return 3;
}
"""


def untraceable_run(what, argv, u, t, prefix, says):
    """argv untraced and under tracer-run: the same run (compare), and one
    tracer: line, saying `says`."""
    ru = rc.run_timed(argv, u, clean_env())
    rt = rc.run_timed(tracer_run_argv(prefix, argv), t, clean_env())
    compare('untraceable ' + what, ru, rt, u, t)
    tl = rc.tracer_lines(rt.err)
    if len(tl) != 1 or says not in tl[0]:
        ck.fail('untraceable: %s: tracer: lines %s' % (what, tl))
    print('ok untraceable %s: %s; %s' % (what, rt.status(), tl[0]))


@case
def untraceable():
    """A statically linked program, a set-uid program of another user and
    one of another architecture: tracer-run says so in one tracer: line and
    runs it unchanged."""
    need('gcc')
    base, u, t = fresh('untraceable')
    src = os.path.join(base, 'static.c')
    with open(src, 'w') as f:
        f.write(STATIC_SRC)
    exe = os.path.join(base, 'static_prog')
    r = rc.run_timed(['gcc', '-static', '-O1', '-o', exe, src], base, clean_env())
    if r.rc != 0:
        ck.fail('gcc -static: %s (libc6-dev has libc.a): %s' % (r.status(), r.err.decode()[-400:]))
    prefix = os.path.join(base, 'archive')
    untraceable_run('static', [exe, 'a'], u, t, prefix, 'statically linked')
    if archives(prefix):
        ck.fail('untraceable: static: an archive was written')
    # set-uid for another user (root only: chown)
    if os.geteuid() == 0:
        import pwd
        nobody = pwd.getpwnam('nobody').pw_uid
        suid = os.path.join(base, 'suid_echo')
        shutil.copyfile('/bin/echo', suid)
        os.chown(suid, nobody, -1)
        os.chmod(suid, 0o4755)
        os.chmod(base, 0o755)
        untraceable_run('setuid', [suid, 'hello'], u, t, prefix, 'set-uid')
    # another architecture: an aarch64 ELF header (exec fails: 126, as from a shell)
    arm = os.path.join(base, 'arm_prog')
    with open('/bin/true', 'rb') as f:
        data = bytearray(f.read())
    data[18:20] = (183).to_bytes(2, 'little')   # EM_AARCH64
    with open(arm, 'wb') as f:
        f.write(data)
    os.chmod(arm, 0o755)
    rt = rc.run_timed(tracer_run_argv(prefix, [arm]), t, clean_env())
    tl = rc.tracer_lines(rt.err)
    if len(tl) != 1 or 'another architecture' not in tl[0] or rt.rc != 126:
        ck.fail('untraceable: aarch64: %s, tracer: lines %s' % (rt.status(), tl))
    print('ok untraceable aarch64: %s; %s' % (rt.status(), tl[0]))


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('case', nargs='?')
    ap.add_argument('--lib')
    ap.add_argument('--bindir')
    ap.add_argument('--work')
    ap.add_argument('--tracer-run')
    ap.add_argument('--list', action='store_true')
    A = ap.parse_args()
    if A.list:
        print(' '.join(sorted(CASES)))
        return 0
    A.lib = os.path.abspath(A.lib)
    A.work = os.path.abspath(A.work)
    A.bindir = os.path.abspath(A.bindir or '.')
    A.tracer_run = os.path.abspath(A.tracer_run) if A.tracer_run else None
    os.makedirs(A.work, exist_ok=True)
    return rc.run_case(CASES[A.case], A.case)


if __name__ == '__main__':
    sys.exit(main())
