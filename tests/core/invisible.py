#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tracer is invisible to a program that looks at itself, sandboxes
itself, drops privileges or leaves by the raw system call: untraced and
traced runs have the same stdout, stderr (less tracer: lines) and exit
status, and the archive is read back (otf2-print, python3-otf2, the shared
checks). sandbox_prog.c says what each mode does.

  tasks           /proc/self/task holds 1 task and unshare(CLONE_NEWUSER)
                  works (no thread of ours), single-threaded and in the fork
                  child of a 3-thread program
  unshare         `unshare -U true` and `unshare -r id -u` (Debian's
                  util-linux) under tracer-run -q: user namespaces need a
                  single-threaded caller (EINVAL with a thread of ours)
  setpriv         `setpriv --reuid=65534 --regid=65534 --clear-groups id`
                  (root only): glibc's setxid broadcast reaches every thread
                  (abort with a thread of ours); the id exec'd after the
                  drop is in the same archive (it is handed to the new user
                  before the drop)
  seccomp_process a KILL_PROCESS filter (prctl), then exit(3): exit 3, the
                  archive finished before the filter (MeasurementOnOff OFF
                  last before ProgramEnd, anchor TRACER::RECORDING_STOPPED)
  seccomp_thread  the same with KILL_THREAD through syscall(SYS_seccomp)
  seccomp_die     a forbidden call after the filter: SIGSYS, as untraced
  exit_group      syscall(SYS_exit_group, 5) under tracer-run -q: exit 5, no
                  stderr at all, ProgramEnd 5
  chromium        chromium --headless --dump-dom: the same DOM and exit status
  chromium_sandbox  the same as nobody with chromium's own sandbox, under tracer-run: one archive
                  (a thread of ours made it abort), the archive read back
  glibc_clone     glibc's clone() on a small stack (chromium's sandbox), the
                  child's function returning: the same as raw_clone, and the
                  child's end is no kill (before: it recorded into its
                  parent's event mappings, chromium_sandbox's archive corrupt)
  raw_clone       syscall(SYS_clone, SIGCHLD) 3 times: the child is a process
                  of its own in the archive (2 location groups), every
                  archive readable (before: the child wrote into its
                  parent's event mappings, "This is no chunk header!")

usage: invisible.py CASE   (environment: SANDBOX_PROG, FULL_LIB, TRACER_RUN, WORK)
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

PROG = os.environ['SANDBOX_PROG']
LIB = os.environ['FULL_LIB']
TRACER_RUN = os.environ['TRACER_RUN']
WORK = os.path.join(os.environ['WORK'], 'invisible')
ck = rc.Checker()


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def pair(name, argv, cwd=None, expect_rc=None, env=None):
    """argv untraced and traced (default settings, and env); the same
    output and status; the archive read back. Returns (untraced, traced,
    archive)."""
    d = fresh(name)
    base = rc.run_untraced(argv, timeout=120, cwd=cwd)
    out = os.path.join(d, 'trace')
    traced = rc.run_traced(argv, LIB, out, env=env, timeout=120, cwd=cwd)[0]
    if expect_rc is not None:
        ck.expect(base.returncode == expect_rc, '%s: untraced exit %d, expected %d (%r)' %
                  (name, base.returncode, expect_rc, base.stderr))
    rc.compare(ck, base, traced)
    return base, traced, out


def read_back(out, exit_status=None):
    tr = tc.load(out)
    tc.otf2_print(tr.anchor, '-Werror')
    tc.check_all(tr, exit_status=exit_status)
    return tr


def case_tasks():
    for mode in ('tasks', 'fork-tasks'):
        base, traced, out = pair(mode, [PROG, mode], expect_rc=0)
        ck.expect('tasks 1, unshare(CLONE_NEWUSER) ok' in traced.stdout, '%s traced: %r' % (mode, traced.stdout))
        read_back(out, 0)
        print('ok %s: %s' % (mode, traced.stdout.strip()))


def case_sampling_tasks():
    """TRACER_SAMPLING with the default TRACER_DURABLE: no thread of ours either (until 2026-12-02 the
    tracer-io thread from the start: 'tasks 2' and EINVAL from unshare), in the single-threaded process and
    in the fork child of a program with threads."""
    for mode in ('tasks', 'fork-tasks'):
        base, traced, out = pair('sampling_' + mode, [PROG, mode], expect_rc=0, env={'TRACER_SAMPLING': '1ms'})
        ck.expect('tasks 1, unshare(CLONE_NEWUSER) ok' in traced.stdout, 'sampling %s traced: %r' %
                  (mode, traced.stdout))
        if mode == 'tasks':
            read_back(out, 0)
        else:   # (its threads' 600,000 lock calls as calling-context events: the reference reader alone)
            tc.otf2_print(tc.load(out).anchor, '-Werror')
        print('ok sampling %s: %s' % (mode, traced.stdout.strip()))


def case_unshare():
    """Through tracer-run (it unifies the tree from outside the namespace:
    an image in a user namespace without a uid mapping cannot write into
    the archive directory)."""
    if not shutil.which('unshare'):
        raise rc.Skip('no unshare')
    for argv, groups in ((['unshare', '-U', 'true'], 1), (['unshare', '-r', 'id', '-u'], 2)):
        base = rc.run_untraced(argv, timeout=60)
        if base.returncode != 0:
            raise rc.Skip('%s fails untraced here: %r' % (' '.join(argv), base.stderr.strip()))
        out = os.path.join(fresh('unshare%d' % groups), 'trace')
        r = subprocess.run([TRACER_RUN, '-q', '--lib', LIB, '-o', out] + argv, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60, env=rc.clean_env())
        ck.expect(r.returncode == base.returncode and r.stdout == base.stdout and r.stderr == base.stderr,
                  '%s: traced exit %d %r %r, untraced exit %d %r %r' % (' '.join(argv), r.returncode, r.stdout,
                                                                         r.stderr, base.returncode, base.stdout,
                                                                         base.stderr))
        tr = read_back(out, 0)
        ck.expect(len(tr.location_groups) >= groups, '%s: location groups %s' % (' '.join(argv), tr.location_groups))
        print('ok %s: exit %d, %r, %d processes in the archive' % (' '.join(argv), r.returncode, r.stdout.strip(),
                                                                   len(tr.location_groups)))


def case_setpriv():
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        raise rc.Skip('setpriv needs root')
    argv = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'id']
    # the archive directory is written before the drop: a directory the
    # dropped user could not write would still be fine (files are open)
    base, traced, out = pair('setpriv', argv, cwd='/', expect_rc=0)
    ck.expect('uid=65534' in traced.stdout, 'setpriv traced: %r' % traced.stdout)
    # one archive: the image exec'd after the drop joined the tree (the
    # archive was handed to uid 65534 first), no second one (DIR.1)
    ck.expect(not os.path.exists(out + '.1'), 'setpriv: a second archive %s.1' % out)
    extra = [l for l in rc.tracer_lines(traced.stderr) if 'archive' not in l or 'already holds' in l]
    ck.expect(not extra, 'setpriv: tracer lines %s' % extra)
    tr = read_back(out, 0)
    ck.expect(len(tr.location_groups) == 2, 'setpriv: location groups %s (want setpriv and id)' % tr.location_groups)
    print('ok setpriv: %r, %s in one archive' % (traced.stdout.strip(), tr.location_groups))


def seccomp(mode, want):
    base, traced, out = pair(mode, [PROG, mode], expect_rc=want)
    tr = read_back(out, 0)
    master = [l for l in tr.locations if l.name == 'Master thread'][0]
    kinds = [e.kind for e in master.events]
    ck.expect(kinds[-2:] == ['MeasurementOnOff', 'ProgramEnd'],
              '%s: the master ends with %s, not MeasurementOnOff, ProgramEnd' % (mode, kinds[-3:]))
    props = tc.otf2_print(tr.anchor, '-A')
    ck.expect('TRACER::RECORDING_STOPPED' in props, '%s: no anchor property TRACER::RECORDING_STOPPED' % mode)
    print('ok %s: exit %d as untraced, %d events before the filter' % (mode, traced.returncode, len(kinds)))


def case_seccomp_process():
    seccomp('seccomp-process', 3)


def case_seccomp_thread():
    seccomp('seccomp-thread', 3)


def case_seccomp_die():
    seccomp('seccomp-die', -31)


def case_exit_group():
    """syscall(SYS_exit_group, n), and exit(n) of a value outside 0..255:
    ProgramEnd has the status the parent sees (exit(-61): 195; before: -61)"""
    for how, n, want in (('exit-group', '5', 5), ('exit-group', '-61', 195), ('exit', '-61', 195)):
        d = fresh('exit_group')
        out = os.path.join(d, 'trace')
        base = rc.run_untraced([PROG, how, n], timeout=60)
        r = subprocess.run([TRACER_RUN, '-q', '--lib', LIB, '-o', out, PROG, how, n], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60, env=rc.clean_env())
        ck.expect(base.returncode == want and r.returncode == want, '%s %s: exit status %d untraced, %d traced' %
                  (how, n, base.returncode, r.returncode))
        ck.expect(r.stdout == base.stdout, 'stdout %r, untraced %r' % (r.stdout, base.stdout))
        ck.expect(r.stderr == '', 'tracer-run -q: stderr %r' % r.stderr)
        read_back(out, want)
        print('ok exit_group: %s %s: exit %d, nothing on stderr, ProgramEnd %d' % (how, n, want, want))


def case_chromium():
    """Debian's chromium --headless --dump-dom of a page whose script
    changes it (its GPU and utility processes check that they are
    single-threaded: exit 134 with a thread of ours). stderr is chromium's
    own log (pids, times): not compared."""
    exe = shutil.which('chromium')
    if not exe:
        raise rc.Skip('no chromium')
    d = fresh('chromium')
    page = os.path.join(d, 'page.html')
    with open(page, 'w') as f:
        f.write('<html><body><p id="x">static</p>'
                '<script>document.getElementById("x").textContent = "from script";</script></body></html>')
    argv = [exe, '--headless', '--no-sandbox', '--disable-gpu', '--dump-dom', 'file://' + page]
    base = rc.run_untraced(argv, timeout=120)
    if base.returncode != 0 or 'from script' not in base.stdout:
        raise rc.Skip('chromium fails untraced here: exit %d %r' % (base.returncode, base.stderr[-300:]))
    out = os.path.join(d, 'trace')
    traced = rc.run_traced(argv, LIB, out, timeout=180)[0]
    ck.expect(traced.returncode == base.returncode and traced.stdout == base.stdout,
              'chromium traced: exit %d, stdout %r; untraced exit %d, %r' % (traced.returncode, traced.stdout[:200],
                                                                             base.returncode, base.stdout[:200]))
    anchor = tc.find_anchor(out)
    tc.check_all_print(anchor)   # (streamed: millions of events)
    groups = tc.otf2_print(anchor, '-G').count('LOCATION_GROUP ')
    ck.expect(groups >= 3, 'chromium: %d processes in the archive' % groups)
    print('ok chromium: the same DOM, exit %d, %d processes in the archive' % (traced.returncode, groups))


def case_chromium_sandbox():
    """chromium as an unprivileged user (setpriv to nobody) with its own
    sandbox (zygote, renderer and GPU processes in namespaces of their own),
    under tracer-run: the same DOM and exit status as untraced, and one
    archive of the whole tree (the sandboxed processes find their tree
    though their pids are those of another pid namespace)."""
    exe, setpriv = shutil.which('chromium'), shutil.which('setpriv')
    if not exe or not setpriv or os.geteuid() != 0:
        raise rc.Skip('needs chromium, setpriv and root (to become nobody)')
    d = fresh('chromium_sandbox')
    os.chmod(d, 0o777)
    page = os.path.join(d, 'page.html')
    with open(page, 'w') as f:
        f.write('<html><body><p id="x">static</p>'
                '<script>document.getElementById("x").textContent = "from script";</script></body></html>')
    os.chmod(page, 0o644)
    who = [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=' + d]
    argv = [exe, '--headless', '--disable-gpu', '--dump-dom', 'file://' + page]
    base = rc.run_untraced(who + argv, timeout=120)
    if base.returncode != 0 or 'from script' not in base.stdout:
        raise rc.Skip('chromium as nobody fails untraced here: exit %d %r' % (base.returncode, base.stderr[-300:]))
    out = os.path.join(d, 'trace')
    traced = rc.run_untraced(who + [TRACER_RUN, '--lib', LIB, '-o', out] + argv, timeout=180)
    ck.expect(traced.returncode == base.returncode and traced.stdout == base.stdout,
              'chromium (nobody, sandbox) traced: exit %d, stdout %r; untraced exit %d, %r' %
              (traced.returncode, traced.stdout[:200], base.returncode, base.stdout[:200]))
    lines = rc.tracer_lines(traced.stderr)
    ck.expect(len(lines) == 1 and lines[0].startswith('tracer: archive %s/traces.otf2: ' % out),
              'chromium (nobody, sandbox): tracer lines %r' % lines)
    others = [x for x in os.listdir(d) if x.startswith('trace') and x != 'trace']
    ck.expect(not others, 'chromium (nobody, sandbox): archives beside %s: %r' % (out, others))
    anchor = tc.find_anchor(out)
    tc.check_all_print(anchor)
    groups = tc.otf2_print(anchor, '-G').count('LOCATION_GROUP ')
    ck.expect(groups >= 3, 'chromium (nobody, sandbox): %d processes in the archive' % groups)
    print('ok chromium_sandbox: the same DOM, exit %d, one archive of %d processes' % (traced.returncode, groups))


def case_raw_clone():
    for i in range(3):
        files = fresh('raw_clone%d_files' % i)
        base, traced, out = pair('raw_clone%d' % i, [PROG, 'raw-clone', files], expect_rc=0)
        ck.expect('child ok' in traced.stdout, 'raw_clone: %r' % traced.stdout)
        tr = read_back(out, 0)
        ck.expect(len(tr.location_groups) == 2, 'raw_clone: location groups %s, expected 2 (parent and child)' %
                  tr.location_groups)
    print('ok raw_clone: 3 runs, each archive readable with the child as a process of its own')


def case_glibc_clone():
    for i in range(3):
        files = fresh('glibc_clone%d_files' % i)
        base, traced, out = pair('glibc_clone%d' % i, [PROG, 'glibc-clone', files], expect_rc=0)
        ck.expect('child ok' in traced.stdout, 'glibc_clone: %r' % traced.stdout)
        ck.expect(open(os.path.join(files, 'child.txt')).read() == 'child\n', 'glibc_clone: child.txt')
        tr = read_back(out, 0)
        ck.expect(len(tr.location_groups) == 2, 'glibc_clone: location groups %s, expected 2 (parent and child)' %
                  tr.location_groups)
        ck.expect('killed' not in open(os.path.join(out, 'traces.otf2'), 'rb').read().decode('latin-1'),
                  'glibc_clone: the archive says a process was killed (the child ended by exit(2))')
    print('ok glibc_clone: 3 runs, each archive readable with the child as a process of its own, ended')


if __name__ == '__main__':
    name = sys.argv[1]
    code = rc.run_case(globals()['case_' + name], name)
    if code == 0:
        ck.done()
    sys.exit(code)
