# SPDX-License-Identifier: BSD-3-Clause
"""install_tests.py - the installed tree and the Debian package, used as a
new user would: from another directory, with no build tree, no source tree
and no TRACER_* variable to help.

Cases:
  tree  cmake --install into WORK/prefix, then the prefix moved elsewhere
        (the commands find the library, and the library the commands, by
        their own location): the file list; --version and --help of every
        command, each --help option in its manual page; tracer-run and
        `tracer run` on a lock program (output as untraced, the installed
        library loaded, archive read back, `tracer report`); a process killed
        by SIGKILL under LD_PRELOAD of the installed library, then `tracer
        recover`; a VT_* program built with pkg-config.
  mpi   2 ranks under Open MPI's mpirun, once through the installed
        tracer-run, once through the installed tracer-mpirun.
  deb   cpack -G DEB: its contents and dependencies (libunwind, libdw, PAPI,
        zlib; no MPI library); installed with dpkg into a throw-away root
        (--root, no dependency check: the root is empty), the tools of that
        root run on the lock program.

usage: install_tests.py CASE --build DIR --work DIR --lockprog PATH [--mpiprog PATH --mpirun PATH]
"""
import argparse
import glob
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lib'))
import runcheck as rc  # noqa: E402
import tracecheck as tc  # noqa: E402

ck = rc.Checker(stop=True)
A = None
CASES = {}
COMMANDS = ('tracer', 'tracer-run', 'tracer-merge', 'tracer-mpirun')


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def run(argv, env=None, cwd=None, timeout=300, ok=True):
    p = subprocess.run(argv, env=rc.clean_env(env), cwd=cwd or A.elsewhere, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors='replace', timeout=timeout)
    if ok and p.returncode != 0:
        ck.fail('%s: exit %d\n%s%s' % (' '.join(argv), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def install_prefix():
    """cmake --install into WORK/prefix.staged, then moved to WORK/prefix:
    nothing may depend on the path it was installed to."""
    staged, pfx = fresh(os.path.join(A.work, 'prefix.staged')), fresh(os.path.join(A.work, 'prefix'))
    run(['cmake', '--install', A.build, '--prefix', staged], cwd=A.work)
    os.rename(staged, pfx)
    return pfx


def libdir_of(root):
    """The one directory under root holding libtracer.so."""
    libs = glob.glob(os.path.join(root, '**', 'libtracer.so'), recursive=True)
    ck.expect(len(libs) == 1, 'libtracer.so under %s: %s' % (root, libs))
    return os.path.dirname(libs[0])


def check_lock_run(bindir, name):
    """tracer-run and `tracer run` of BINDIR on the lock program from another
    directory: same output as untraced, the library of that tree loaded,
    archive read back, `tracer report` of it."""
    prog = [A.lockprog, 'n200', '4', '0']
    base = run(prog)
    for how, cmd in (('tracer-run', [os.path.join(bindir, 'tracer-run')]),
                     ('tracer run', [os.path.join(bindir, 'tracer'), 'run'])):
        out = fresh(os.path.join(A.elsewhere, '%s-%s' % (name, how.replace(' ', '_'))))
        p = run(cmd + ['-o', out] + prog)
        ck.expect(p.stdout == base.stdout, '%s %s: stdout %r, untraced %r' % (name, how, p.stdout, base.stdout))
        ck.expect(rc.without_tracer_lines(p.stderr) == rc.without_tracer_lines(base.stderr),
                  '%s %s: stderr %r' % (name, how, p.stderr))
        tr = tc.load(out)
        tc.check_all(tr, exit_status=0)
        n = tr.count('Enter')
        ck.expect(tc.otf2_print_count(tr.anchor, '"pthread_mutex_lock"') >= 800,
                  '%s %s: fewer than 800 pthread_mutex_lock events (%d Enter)' % (name, how, n))
        r = run([os.path.join(bindir, 'tracer'), 'report', out])
        ck.expect('pthread_mutex_lock' in r.stdout and 'Locks (' in r.stdout,
                  '%s %s: tracer report: %s' % (name, how, r.stdout[:1500]))
    # which library the installed launcher preloads
    maps = run([os.path.join(bindir, 'tracer-run'), '-q', '-o', fresh(os.path.join(A.elsewhere, name + '-maps')),
                'grep', '-m1', 'libtracer', '/proc/self/maps']).stdout
    lib = maps.split()[-1] if maps.split() else ''
    want = os.path.realpath(os.path.join(libdir_of(os.path.dirname(bindir.rstrip('/'))), 'libtracer.so'))
    ck.expect(lib == want, '%s: the program loaded %r, not %s' % (name, lib, want))
    print('%s: tracer-run and tracer run traced the lock program with %s' % (name, lib))


@case
def tree():
    pfx = install_prefix()
    files = sorted(os.path.relpath(f, pfx) for f in glob.glob(os.path.join(pfx, '**'), recursive=True)
                   if os.path.isfile(f))
    print('installed: %s' % ' '.join(files))
    libdir = os.path.relpath(libdir_of(pfx), pfx)
    want = ['bin/' + c for c in COMMANDS] + [libdir + '/libtracer.so', libdir + '/pkgconfig/tracer.pc',
                                             'include/VT.h', 'share/doc/tracer/README.md',
                                             'share/doc/tracer/copyright', 'share/doc/tracer/docs/core.md']
    want += ['share/man/man1/%s.1.gz' % c for c in COMMANDS]
    for w in want:
        ck.expect(w in files, 'not installed: %s' % w)
    ck.expect(not any('scripts/' in f or f.endswith('.py') for f in files), 'source-tree files installed')
    bindir = os.path.join(pfx, 'bin')
    # --version, --help, the manual pages (every option of --help in the page)
    for c in COMMANDS:
        v = run([os.path.join(bindir, c), '--version']).stdout
        ck.expect(re.match(r'^%s \(libtracer\) \d+\.\d+\.\d+$' % re.escape(c), v.strip()),
                  '%s --version: %r' % (c, v))
        h = run([os.path.join(bindir, c), '--help']).stdout
        ck.expect(h.startswith('usage: '), '%s --help: %r' % (c, h[:200]))
        page_gz = os.path.join(pfx, 'share/man/man1/%s.1.gz' % c)
        if shutil.which('man'):
            page = run(['man', '-l', page_gz], env={'MANWIDTH': '200', 'MAN_KEEP_FORMATTING': '0'}).stdout
            page = re.sub(r'.\x08', '', page)
        else:   # (no man-db: the roff source, its escaped hyphens plain)
            page = gzip.open(page_gz, 'rt').read().replace('\\-', '-')
        opts = sorted(set(re.findall(r'(?<![\w-])(--[a-z][a-z-]+)', h)))
        for opt in opts:
            ck.expect(opt in page, '%s.1 lacks %s of its --help' % (c, opt))
        print('%s: --version %s, %d options of --help in its manual page' % (c, v.split()[-1], len(opts)))
    check_lock_run(bindir, 'prefix')
    # killed by SIGKILL under LD_PRELOAD of the installed library, then recovered
    out = fresh(os.path.join(A.elsewhere, 'killed'))
    env = rc.clean_env({'LD_PRELOAD': os.path.join(pfx, libdir, 'libtracer.so'), 'TRACER_OUTPUT': out})
    p = subprocess.Popen([A.lockprog, '30', '4', '20'], env=env, cwd=A.elsewhere, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    lines = 0
    for _ in p.stdout:
        lines += 1
        if lines == 12:   # 0.6 s: past the first durability ticks
            break
    p.send_signal(signal.SIGKILL)
    p.wait()
    rc.wait_ended(p.pid)
    r = run([os.path.join(bindir, 'tracer'), 'recover', out])
    tr = tc.load(out)
    tc.check_all(tr, exit_status=137)
    ck.expect(tr.count('Enter') > 100, 'recovered archive: %d Enter events' % tr.count('Enter'))
    print('killed after %d lines, recovered: %s' % (lines, (r.stdout + r.stderr).strip()[:300]))
    # a VT_* program built with the installed pkg-config file, linked to libtracer.so
    src = os.path.join(A.elsewhere, 'vt_app.c')
    with open(src, 'w') as f:
        f.write('#include <VT.h>\n#include <stdio.h>\n'
                'int main(void) { int c, s; VT_classdef("App", &c); VT_funcdef("solve", c, &s);\n'
                '  for (int i = 0; i < 3; i++) { VT_enter(s, VT_NOSCL); VT_leave(VT_NOSCL); }\n'
                '  puts("vt done"); return 0; }\n')
    pc = os.path.join(pfx, libdir, 'pkgconfig')
    flags = run(['pkg-config', '--cflags', '--libs', 'tracer'], env={'PKG_CONFIG_PATH': pc}).stdout.split()
    exe = os.path.join(A.elsewhere, 'vt_app')
    run(['cc', '-o', exe, src] + flags)
    out = fresh(os.path.join(A.elsewhere, 'vt'))
    p = run([exe], env={'TRACER_OUTPUT': out})
    ck.expect(p.stdout == 'vt done\n', 'vt_app: %r' % p.stdout)
    tr = tc.load(out)
    tc.check_all(tr, exit_status=0)
    ck.expect(sum(1 for e in tr.master.events if e.kind == 'Enter' and e.region == 'solve') == 3,
              'vt_app: 3 Enter of solve expected: %s' % tr.regions)


@case
def mpi():
    if not A.mpiprog or not A.mpirun:
        raise rc.Skip('no Open MPI program or mpirun')
    pfx = install_prefix()
    bindir = os.path.join(pfx, 'bin')
    env = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
    base = run([A.mpirun, '--oversubscribe', '--bind-to', 'none', '-np', '2', A.mpiprog], env=env)
    for how in ('tracer-run', 'tracer-mpirun'):
        out = fresh(os.path.join(A.elsewhere, 'mpi-' + how))
        if how == 'tracer-run':
            cmd = [A.mpirun, '--oversubscribe', '--bind-to', 'none', '-np', '2',
                   os.path.join(bindir, 'tracer-run'), '-o', out, A.mpiprog]
        else:
            cmd = [os.path.join(bindir, 'tracer-mpirun'), '-o', out, '--oversubscribe', '--bind-to', 'none',
                   '-np', '2', A.mpiprog]
        p = run(cmd, env=dict(env, PATH=os.path.dirname(A.mpirun) + ':' + os.environ.get('PATH', '')))
        ck.expect(sorted(p.stdout.splitlines()) == sorted(base.stdout.splitlines()),
                  '%s: stdout %r, untraced %r' % (how, p.stdout, base.stdout))
        tr = tc.load(out)
        tc.check_all(tr, exit_status=0)
        groups = {l.group for l in tr.locations}
        ck.expect(len(groups) == 2, '%s: %d location groups, 2 ranks expected' % (how, len(groups)))
        ck.expect(tr.count('MpiSend') > 0 and tr.count('MpiRecv') > 0, '%s: no MpiSend/MpiRecv' % how)
        r = run([os.path.join(bindir, 'tracer'), 'report', out])
        ck.expect('MPI_Send' in r.stdout, '%s: tracer report: %s' % (how, r.stdout[:1500]))
        print('%s: 2 ranks, %d MpiSend, %d MpiRecv' % (how, tr.count('MpiSend'), tr.count('MpiRecv')))


@case
def deb():
    for tool in ('cpack', 'dpkg-deb', 'dpkg'):
        if not shutil.which(tool):
            raise rc.Skip('%s not found' % tool)
    pkgdir = fresh(os.path.join(A.work, 'package'))
    run(['cpack', '-G', 'DEB', '--config', os.path.join(A.build, 'CPackConfig.cmake'), '-B', pkgdir],
        cwd=A.work, timeout=600)
    debs = glob.glob(os.path.join(pkgdir, '*.deb'))
    ck.expect(len(debs) == 1, 'cpack made %s' % debs)
    deb = debs[0]
    print('package: %s' % os.path.basename(deb))
    contents = run(['dpkg-deb', '-c', deb]).stdout
    paths = [l.split()[-1].lstrip('.') for l in contents.splitlines()]
    for c in COMMANDS:
        ck.expect('/usr/bin/' + c in paths, 'package lacks /usr/bin/%s:\n%s' % (c, contents))
        ck.expect('/usr/share/man/man1/%s.1.gz' % c in paths, 'package lacks the manual page of %s' % c)
    for w in ('libtracer.so', 'pkgconfig/tracer.pc', '/usr/include/VT.h', '/usr/share/doc/tracer/copyright'):
        ck.expect(any(p.endswith(w) for p in paths), 'package lacks %s' % w)
    depends = run(['dpkg-deb', '-f', deb, 'Depends']).stdout
    print('Depends: %s' % depends.strip())
    for d in ('libc6', 'zlib1g', 'libunwind', 'libdw', 'libpapi'):
        ck.expect(re.search(r'(^|, )%s' % d, depends), 'Depends lacks %s: %s' % (d, depends))
    ck.expect('mpi' not in depends.lower(), 'Depends names an MPI library: %s' % depends)
    # installed into a throw-away root with dpkg itself
    root = fresh(os.path.join(A.work, 'root'))
    admin = os.path.join(root, 'var', 'lib', 'dpkg')
    for d in ('info', 'updates', 'triggers'):
        os.makedirs(os.path.join(admin, d))
    open(os.path.join(admin, 'status'), 'w').close()
    run(['dpkg', '--root=' + root, '--force-depends', '--force-script-chrootless', '--log=/dev/null',
         '-i', deb], cwd=A.work)
    st = run(['dpkg', '--root=' + root, '-s', 'tracer']).stdout
    ck.expect('Status: install ok installed' in st, 'dpkg -s tracer in the root: %s' % st)
    check_lock_run(os.path.join(root, 'usr', 'bin'), 'deb')
    run(['dpkg', '--root=' + root, '--force-script-chrootless', '--log=/dev/null', '-r', 'tracer'], cwd=A.work)
    left = [f for f in glob.glob(os.path.join(root, 'usr', '**'), recursive=True) if os.path.isfile(f)]
    ck.expect(not left, 'dpkg -r left files: %s' % left[:10])


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument('case', choices=sorted(CASES))
    ap.add_argument('--build', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--lockprog', required=True)
    ap.add_argument('--mpiprog')
    ap.add_argument('--mpirun')
    A = ap.parse_args()
    A.work = os.path.join(os.path.abspath(A.work), A.case)
    os.makedirs(A.work, exist_ok=True)
    A.elsewhere = os.path.join(A.work, 'elsewhere')   # cwd of every traced run: no build or source tree
    os.makedirs(A.elsewhere, exist_ok=True)
    sys.exit(rc.run_case(CASES[A.case], A.case))


if __name__ == '__main__':
    main()
