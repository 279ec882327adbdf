# SPDX-License-Identifier: BSD-3-Clause
"""core_cases_settings.py - cases of test_core.py on settings and bad input:
invalid and fuzzed TRACER_* values, the messages, unwritable output, a full
disk, the descriptor limit, filters, verbosity, an existing or default
output directory, a full buffer, the clock.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import core_lib as cl
from core_lib import *  # noqa: F401,F403  (rc, tc, PROG, LIB, FULL, check, run, traced, ...)


FUZZ_VALUES = {
    'TRACER_BUFFER': ['16M', '512K', '256K', '100K', '1G', 'lots', '-1', '0', '1T', '2T', '64MiB', ' 1M',
                      '99999999999999999999', '1.5M'],
    'TRACER_CHUNK': ['1M', '256K', '16M', '32M', '0', 'x', '512kb'],
    'TRACER_ON_FULL': ['flush', 'stop', 'STOP', 'maybe', ''],
    'TRACER_PTHREAD': ['on', 'off', '0', 'yes', 'maybe'],
    'TRACER_MPI': ['on', 'off', '2'],
    'TRACER_FILTER': ['@filter', '/dev/zero', '/dev/stdin', '@dir', '/nonexistent', ''],
    'TRACER_VERBOSE': ['0', '1', '2', '3', '-1', 'quiet', 'x\x1b[31m', '1\n2'],
    'TRACER_CLOCK': ['tsc', 'monotonic', 'Monotonic', 'hpet'],
    'TRACER_SAMPLING': ['off', '1ms', '250us', '1000Hz', '0', '1ns', 'inf', '-1ms', '1e3us', '0x10ms'],
    'TRACER_SAMPLING_DEPTH': ['1', '64', '4096', '0', '5000', 'x'],
    'TRACER_SAMPLING_UNWIND': ['cfi', 'libunwind', 'check', 'CFI', ''],
    'TRACER_CALLERS': ['on', 'off', 'x'],
    'TRACER_METRICS': ['', 'rusage::minflt', 'bogus', 'rusage::utime,rusage::majflt', ',,,'],
    'TRACER_DETAILED_STATES': ['0', '5', 'on', '-3', 'x'],
    'TRACER_TYPO': ['1'],
}


def case_invalid_setting():
    p, d = traced(['basic'], env={'TRACER_BUFFER': 'lots', 'TRACER_FOO': '1'})
    lines = tracer_lines(p.stderr)
    bad = [l for l in lines if 'TRACER_BUFFER' in l]
    check(len(bad) == 1 and "'lots'" in bad[0] and '16M' in bad[0], 'invalid value line: %r' % lines)
    unk = [l for l in lines if 'TRACER_FOO' in l]
    check(len(unk) == 1, 'unknown variable line: %r' % lines)
    check(len(lines) == 3, 'tracer lines: %r' % lines)   # + summary
    tc.check_all(tc.load(d), exit_status=3)


def case_messages():
    # an echoed value's control characters are escaped (one line, no
    # terminal escapes); values outside the documented set are rejected
    p, d = traced(['basic'], env={'TRACER_CLOCK': 'tsc\n\x1b[31mred', 'TRACER_VERBOSE': '3'})
    lines = tracer_lines(p.stderr)
    check(all(l.startswith('tracer:') for l in p.stderr.splitlines()), 'raw newline in a message: %r' % p.stderr)
    check('\x1b' not in p.stderr, 'raw escape character in %r' % p.stderr)
    clk = [l for l in lines if 'TRACER_CLOCK' in l]
    check(len(clk) == 1 and "'tsc\\n\\x1b[31mred'" in clk[0], 'TRACER_CLOCK line %r' % lines)
    vb = [l for l in lines if 'TRACER_VERBOSE' in l]
    check(len(vb) == 1 and "'3'" in vb[0] and 'invalid' in vb[0], 'TRACER_VERBOSE=3: %r' % lines)
    summary(p.stderr)   # the default, 1, is used
    tc.check_all(tc.load(d), exit_status=3)
    # out of range or not the documented syntax: one line each
    for i, (var, val) in enumerate([('TRACER_BUFFER', '100K'), ('TRACER_VERBOSE', ' 2'),
                                    ('TRACER_SAMPLING', '0x10ms'), ('TRACER_SAMPLING_DEPTH', '+5'),
                                    ('TRACER_CHUNK', '32M'), ('TRACER_VERBOSE', '-1'),
                                    ('TRACER_MPI_POLLING', 'sometimes'), ('TRACER_IO_CHARS', 'each')]):
        # (the families' settings are theirs: the core library alone does not know them)
        core = var in ('TRACER_BUFFER', 'TRACER_VERBOSE', 'TRACER_CHUNK')
        p, d = traced(['basic'], out='bad%d' % i, env={var: val}, lib=None if core else FULL)
        lines = tracer_lines(p.stderr)
        check(len([l for l in lines if var in l and 'invalid' in l]) == 1, '%s=%r: %r' % (var, val, lines))
        check(not [l for l in lines if 'unknown' in l], '%s=%r: %r' % (var, val, lines))
        tc.check_all(tc.load(d), exit_status=3)
    # TRACER_BUFFER below the default chunk: the chunk shrinks to fit it;
    # with an explicit larger TRACER_CHUNK it is rejected
    p, d = traced(['many', '20000'], out='small', env={'TRACER_BUFFER': '512K', 'TRACER_DURABLE': 'off'})
    check(len(tracer_lines(p.stderr)) == 1, 'TRACER_BUFFER=512K: %r' % tracer_lines(p.stderr))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(enters(tr, 'outer') == 20000 and tr.count('BufferFlush') >= 2, 'small buffer: %d outer, %d flushes'
          % (enters(tr, 'outer'), tr.count('BufferFlush')))
    p, d = traced(['basic'], out='small2', env={'TRACER_BUFFER': '512K', 'TRACER_CHUNK': '1M'})
    bad = [l for l in tracer_lines(p.stderr) if 'TRACER_BUFFER' in l]
    check(len(bad) == 1 and 'TRACER_CHUNK' in bad[0], 'BUFFER < explicit CHUNK: %r' % p.stderr)
    # every value the README's settings table gives (default and examples) is accepted
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'README.md')
    vals = []
    for row in open(readme).read().splitlines():
        cols = re.split(r'(?<!\\)\|', row)
        m = re.match(r' `(TRACER_[A-Z_]+)` $', cols[1]) if len(cols) == 6 else None
        if not m or m.group(1) in ('TRACER_OUTPUT', 'TRACER_FILTER', 'TRACER_METRICS'):
            continue
        for tok in re.findall(r'`([^`]+)`', cols[3] + cols[4]):
            if ' ' not in tok and '_' not in tok and not tok.startswith('-'):
                vals.append((m.group(1), tok))
    check(len(vals) > 20, 'README table values %r' % vals)
    # (the full library: every family's table is in it, so no name is unknown)
    for i, (var, val) in enumerate(vals):
        p = run([PROG, 'basic'], lib=FULL, env={'TRACER_OUTPUT': os.path.join(cl.WORK, 'r%d' % i), var: val})
        check(p.returncode == 3 and not [l for l in tracer_lines(p.stderr) if 'invalid' in l or 'unknown' in l],
              'README value %s=%s: %r' % (var, val, p.stderr))
    print('README values accepted: %s' % ' '.join('%s=%s' % v for v in vals))


def case_settings_fuzz():
    """Bounded settings fuzz (fixed seed): 240 combinations of TRACER_*
    values, good and bad, with the full library on two small programs.
    Traced and untraced stdout and exit status are identical, every tracer:
    line is one line without control characters, and the archive is
    readable whenever TRACER_OUTPUT names a usable directory."""
    import random
    rnd = random.Random(18)
    filt = os.path.join(cl.WORK, 'filter.txt')
    with open(filt, 'w') as fh:
        fh.write('-filtered_me\n')
    os.makedirs(os.path.join(cl.WORK, 'adir'))
    modes = {'basic': ([PROG, 'basic'], 3), 'threads': ([PROG, 'threads'], 0)}
    base = {m: run(a) for m, (a, _) in modes.items()}
    t0 = time.time()
    n = 200
    for i in range(n):
        mode = rnd.choice(sorted(modes))
        args, status = modes[mode]
        env = {}
        for var in rnd.sample(sorted(FUZZ_VALUES), rnd.randint(1, 6)):
            v = rnd.choice(FUZZ_VALUES[var])
            env[var] = {'@filter': filt, '@dir': os.path.join(cl.WORK, 'adir')}.get(v, v)
        out = os.path.join(cl.WORK, 'f%d' % i)
        good_out = rnd.random() < 0.8
        env['TRACER_OUTPUT'] = out if good_out else rnd.choice(['', '/dev/null/x', 'a\nb' * 3000, '/proc/x'])
        e = rc.clean_env()
        e.update(env)
        e['LD_PRELOAD'] = FULL
        try:
            p = subprocess.run(args, env=e, cwd=cl.WORK, input='stdin data\n', stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise rc.CheckFailed('combination %d %r: hangs' % (i, env))
        what = 'combination %d (%s) %r' % (i, mode, env)
        check(p.returncode == base[mode].returncode == status and p.stdout == base[mode].stdout,
              '%s: rc %d %r\n%s' % (what, p.returncode, p.stdout, p.stderr[-2000:]))
        for l in p.stderr.splitlines():
            check(l.startswith('tracer:') or not l, '%s: stderr line %r' % (what, l))
            check(not any(ord(c) < 32 or ord(c) == 127 for c in l), '%s: control character in %r' % (what, l))
        if good_out and os.path.isdir(out):
            tr = tc.load(out)
            tc.check_all(tr, exit_status=status)
        elif good_out:
            raise rc.CheckFailed('%s: no archive\n%s' % (what, p.stderr))
        shutil.rmtree(out, ignore_errors=True)
    print('%d combinations in %.1f s' % (n, time.time() - t0))


def case_unwritable_output():
    e = {'TRACER_OUTPUT': '/dev/null/archive'}
    base = run([PROG, 'basic'])
    p = run([PROG, 'basic'], lib=LIB, env=e)
    check(p.returncode == base.returncode and p.stdout == base.stdout, 'program changed')
    lines = tracer_lines(p.stderr)
    check(len(lines) == 1 and '/dev/null/archive' in lines[0] and 'untraced' in lines[0], 'lines %r' % lines)


def case_full_disk():
    """A full disk: the program runs unharmed (same output and exit status)
    and one `tracer: error:` line names the file and 'No space left on
    device'. The archive lives on a 64 KiB tmpfs (needs root; skipped,
    exit 77, where mounting is not permitted)."""
    mnt = os.path.join(cl.WORK, 'tiny')
    os.makedirs(mnt)
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        print('SKIP full_disk: cannot mount a tmpfs here')
        sys.exit(77)
    try:
        base = run([PROG, 'churn'])
        p = run([PROG, 'churn'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(mnt, 'a')})
        check(p.returncode == base.returncode and p.stdout == base.stdout,
              'program changed: rc %d vs %d' % (p.returncode, base.returncode))
        errs = [l for l in tracer_lines(p.stderr) if l.startswith('tracer: error:')]
        check(len(errs) == 1, 'want one tracer: error line, got %r' % tracer_lines(p.stderr))
        check('No space left on device' in errs[0] and mnt in errs[0], 'error line %r' % errs[0])
        # what was lost, plainly, and no normal-looking summary after it
        check(len(tracer_lines(p.stderr)) == 1, 'more than the error line: %r' % tracer_lines(p.stderr))
        check(' NOT written' in errs[0] and 'events of' in errs[0] and 'lost' in errs[0], 'line %r' % errs[0])
        check('(first: success)' not in p.stderr, 'first error: success')
        # the crash path says it too
        base = run([PROG, 'abort', '20000'])
        p = run([PROG, 'abort', '20000'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(mnt, 'b')})
        check(p.returncode == base.returncode == -signal.SIGABRT, 'abort: rc %d' % p.returncode)
        lines = tracer_lines(p.stderr)
        check(len(lines) == 1 and lines[0].startswith('tracer: error:') and 'INCOMPLETE' in lines[0],
              'crash path on a full disk: %r' % lines)
    finally:
        subprocess.run(['umount', mnt])


def case_nofile_limit():
    # ulimit -n 24 with 24 threads all flushing at once: the tracer
    # kept up to 64 event files open (EMFILE: write errors, events lost, the
    # program's own open() could fail); now no descriptor is kept between flushes
    import resource

    def lim():
        resource.setrlimit(resource.RLIMIT_NOFILE, (24, 24))
    env = {'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K', 'TRACER_DURABLE': 'off'}   # flushes
    p, d = traced(['wide', '24', '5000'], env=env, preexec=lim)
    check(p.stdout == 'mode wide\nopen ok\n', 'program: %r' % p.stdout)
    check(len(tracer_lines(p.stderr)) == 1 and summary(p.stderr), 'tracer lines: %r' % tracer_lines(p.stderr))
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    per = [enters(tr, 'outer', l) for l in tr.locations if l.name != 'Master thread']
    check(len(per) == 24 and set(per) == {5000}, 'outer per thread %r' % per)
    check(tr.count('BufferFlush') >= 24, 'BufferFlush %d: no flush, the test does not test' % tr.count('BufferFlush'))


def case_filter():
    f = os.path.join(cl.WORK, 'filter.txt')
    with open(f, 'w') as fh:
        fh.write('# comment\n-filtered_me\nexclude in*\n+inner\n\n')
    p, d = traced(['basic'], env={'TRACER_FILTER': f})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(enters(tr, 'filtered_me') == 0, 'filtered region recorded')
    check(enters(tr, 'inner') == 10 and enters(tr, 'outer') == 10, 'last match must win')
    p = run([PROG, 'basic'], lib=LIB, env={'TRACER_OUTPUT': os.path.join(cl.WORK, 'o2'),
                                           'TRACER_FILTER': os.path.join(cl.WORK, 'missing')})
    check(p.returncode == 3 and any('missing' in l for l in tracer_lines(p.stderr)), 'missing filter file')


def case_filter_unsafe():
    # TRACER_FILTER must be a regular file of at most 1 MiB, read
    # without blocking: /dev/zero hung before main, /dev/stdin ate the
    # program's input, a directory gave no warning. Each: one tracer: line,
    # no filter, the program unharmed (its stdin included)
    fifo = os.path.join(cl.WORK, 'fifo')
    os.mkfifo(fifo)
    big = os.path.join(cl.WORK, 'big')
    with open(big, 'w') as fh:
        fh.write(('-x\n' * 400000))
    cases = [('/dev/zero', 'character device'), ('/dev/stdin', 'FIFO'), (fifo, 'FIFO'), (cl.WORK, 'directory'),
             (big, 'larger than 1 MiB'), ('/dev/null', 'character device')]
    for i, (f, why) in enumerate(cases):
        d = os.path.join(cl.WORK, 'o%d' % i)
        for prog in ([PROG, 'basic'], ['cat']):
            e = rc.clean_env()
            e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': d})
            base = subprocess.run(prog, env=rc.clean_env(), input='program input\n', stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, universal_newlines=True, timeout=30, cwd=cl.WORK)
            e['TRACER_FILTER'] = f
            try:
                p = subprocess.run(prog, env=e, input='program input\n', stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True, timeout=30, cwd=cl.WORK)
            except subprocess.TimeoutExpired:
                raise rc.CheckFailed('TRACER_FILTER=%s: %s hangs' % (f, prog[0]))
            check(p.returncode == base.returncode and p.stdout == base.stdout,
                  'TRACER_FILTER=%s %s: rc %d %r vs %d %r' % (f, prog[0], p.returncode, p.stdout,
                                                            base.returncode, base.stdout))
            lines = [l for l in tracer_lines(p.stderr) if 'TRACER_FILTER' in l]
            check(len(lines) == 1 and why in lines[0] and 'no filter' in lines[0],
                  'TRACER_FILTER=%s: %r' % (f, tracer_lines(p.stderr)))
            if prog[0] == PROG:
                tr = tc.load(d)
                tc.check_all(tr, exit_status=3)
                check(enters(tr, 'filtered_me') == 10, 'TRACER_FILTER=%s: a filter was applied' % f)
            shutil.rmtree(d, ignore_errors=True)
    # a regular file still works, and one given as /dev/stdin (redirected
    # from a file: a fresh open, the program's offset untouched)
    f = os.path.join(cl.WORK, 'filter.txt')
    with open(f, 'w') as fh:
        fh.write('-filtered_me\n')
    e = rc.clean_env()
    e.update({'LD_PRELOAD': LIB, 'TRACER_OUTPUT': os.path.join(cl.WORK, 'reg'), 'TRACER_FILTER': '/dev/stdin'})
    with open(f) as fin:
        p = subprocess.run(['cat'], env=e, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30, cwd=cl.WORK)
    check(p.stdout == '-filtered_me\n' and p.returncode == 0, 'cat < file: %r' % p.stdout)
    check(not [l for l in tracer_lines(p.stderr) if 'TRACER_FILTER' in l], 'regular stdin: %r' % p.stderr)


def case_verbose():
    p, d = traced(['basic'], env={'TRACER_VERBOSE': '0'})
    check(tracer_lines(p.stderr) == [], 'TRACER_VERBOSE=0 printed %r' % p.stderr)
    tc.check_all(tc.load(d), exit_status=3)
    p, d = traced(['basic'], out='o2', env={'TRACER_VERBOSE': '2'})
    check(len(tracer_lines(p.stderr)) > 2, 'no debug output')


def case_existing_output():
    p1, d = traced(['basic'])
    p2, _ = traced(['basic'])
    check(summary(p2.stderr).group(1) == d + '.1', 'second run: %r' % p2.stderr)
    check(any('already holds an archive' in l for l in tracer_lines(p2.stderr)), 'no notice')
    tc.check_all(tc.load(d), exit_status=3)
    tc.check_all(tc.load(d + '.1'), exit_status=3)


def case_default_dir():
    p = run([PROG, 'basic'], lib=LIB)
    m = summary(p.stderr)
    check(re.match(r'tracer-core_prog-\d{8}-\d{6}-\d+$', m.group(1)), 'default name %r' % m.group(1))
    tc.check_all(tc.load(os.path.join(cl.WORK, m.group(1))), exit_status=3)


def case_on_full_stop():
    # 40000 x 6 records ~ 3.5 MB > 256K: the master location stops, the rest is counted
    p, d = traced(['many', '40000'], env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                         'TRACER_ON_FULL': 'stop'})
    m = re.search(r'(\d+) events dropped', summary(p.stderr).string)
    check(m and int(m.group(1)) > 100000, 'no dropped count: %r' % p.stderr)
    tr = tc.load(d)
    # ProgramEnd is never dropped: recording resumes (ON) for the last records;
    # the regions open at the stop get their Leave: balanced
    tc.check_all(tr, exit_status=0)
    mo = [str(e.ev.measurement_mode) for e in tr.master.events if e.kind == 'MeasurementOnOff']
    check(len(mo) == 2 and 'OFF' in mo[0] and 'ON' in mo[1], 'MeasurementOnOff: %r' % mo)
    check(tr.master.events[-1].kind == 'ProgramEnd', 'last master event %r' % tr.master.events[-1])
    check(enters(tr, 'outer') + int(m.group(1)) // 3 > 30000, 'recorded + dropped too small')
    # threads stopped inside nested regions, left and entered others while
    # stopped, and still inside some at the end
    p, d = traced(['threads_stop', '30000'], out='o2', env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                                          'TRACER_ON_FULL': 'stop'})
    check('dropped' in summary(p.stderr).string, 'nothing dropped: the test does not test')
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    for l in tr.locations:
        kinds = [e.kind for e in l.events]
        check(kinds.count('Enter') == kinds.count('Leave'), '%s: %d Enter, %d Leave' % (
            l.name, kinds.count('Enter'), kinds.count('Leave')))
    # the crash path too (no flush there: one chunk more in memory): the
    # stopped master gets its Leaves and ProgramEnd
    p, d = traced(['abort', '40000'], out='o3', env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                                  'TRACER_ON_FULL': 'stop'})
    check(p.returncode == -signal.SIGABRT, 'abort: %d' % p.returncode)
    tr = tc.load(d)
    tc.check_all(tr, exit_status=128 + signal.SIGABRT)
    mo = [str(e.ev.measurement_mode) for e in tr.master.events if e.kind == 'MeasurementOnOff']
    check(len(mo) == 2 and 'ON' in mo[1], 'abort: the master did not stop: %r' % mo)


def case_on_full_flush():
    p, d = traced(['many', '40000'], env={'TRACER_BUFFER': '256K', 'TRACER_CHUNK': '256K',
                                          'TRACER_DURABLE': 'off'})   # the flush writer
    check('dropped' not in summary(p.stderr).string, 'dropped with flush')
    tr = tc.load(d)
    tc.check_all(tr, exit_status=0)
    check(tr.count('BufferFlush') >= 5, 'BufferFlush: %d' % tr.count('BufferFlush'))
    check(enters(tr, 'outer') == 40000 and enters(tr, 'filtered_me') == 40000, 'events lost')


def case_clock_monotonic():
    p, d = traced(['basic'], env={'TRACER_CLOCK': 'monotonic'})
    tr = tc.load(d)
    tc.check_all(tr, exit_status=3)
    check(tr.clock.timer_resolution == 1000000000, 'resolution %d' % tr.clock.timer_resolution)
