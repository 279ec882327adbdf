# SPDX-License-Identifier: BSD-3-Clause
"""runcheck - run a program traced and untraced, compare, read back, assert.

The one helper the area test scripts share (run them with /usr/bin/python3:
the reference `otf2` bindings). Archives are then checked with the reference
reader (`open_trace`, or tracecheck.py for the common checks).

    import sys, os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
    import runcheck as rc

    ck = rc.Checker()
    base = rc.run_untraced([prog, arg])                  # clean environment
    p, anchor = rc.run_traced([prog, arg], lib, outdir, {'TRACER_X': '1'})
    rc.compare(ck, base, p)          # stdout, stderr less tracer: lines, exit status
    ck.expect(p.returncode == 0, 'program exit %d' % p.returncode)
    with rc.open_trace(anchor) as trace:                 # otf2.reader
        ...
    sys.exit(ck.done())              # prints the failures, 0 or 1

A test that must stop at its first failure (later checks would be
meaningless) uses Checker(stop=True): fail() raises CheckFailed; a part
that cannot run here raises Skip (exit SKIP_CODE, CTest SKIP_RETURN_CODE).
MPI programs run under a real launcher with run_mpi (Open MPI's mpirun or
MPICH's Hydra), the tracer's variables exported to the ranks only.

Scripts of several cases (`SCRIPT.py CASE ...`) end with
`sys.exit(rc.run_case(fn, name))`: 'ok NAME', or 'FAIL NAME: why' at the
first failed check (CheckFailed, tracecheck's CheckError), or the Skip.
Programs that write files run in a directory of their own (cwd=) and
compare_dirs checks the traced run wrote the same files. run_timed is for
runs that must be timed, signalled (SIGTERM after 'ready') or may hang
(killed with their process group, reported, not raised); term_wait ends a
run the test started itself (SIGTERM, a hang raised).

Clean environment: the caller's environment without LD_PRELOAD and every
TRACER_* variable (a developer's own settings never leak into a test), plus
what the test sets.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import time


SKIP_CODE = 77


class CheckFailed(AssertionError):
    """A failed check of a Checker(stop=True), or a run that timed out."""


class Skip(Exception):
    """Part of a test cannot run on this machine (after the rest passed):
    exit SKIP_CODE with the reason."""


class Checker:
    """Collects failures (a test reports all of them, not only the first);
    with stop=True the first failure raises CheckFailed instead."""

    def __init__(self, stop=False):
        self.errors = []
        self.stop = stop

    def fail(self, msg):
        self.errors.append(msg)
        if self.stop:
            raise CheckFailed(msg)
        print("FAIL:", msg)

    def expect(self, cond, msg):
        if not cond:
            self.fail(msg)
        return bool(cond)

    def done(self, ok_msg="ok"):
        if self.errors:
            print("%d failure(s)" % len(self.errors))
            return 1
        print(ok_msg)
        return 0


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("TRACER_")}
    env.update(extra or {})
    return env


def _run(argv, env, timeout, echo, stdout_path=None, cwd=None, err_to_stdout=False, stdin=None,
         pass_fds=(), binary=False):
    """argv to its end (text, undecodable bytes replaced; binary: bytes);
    stdout_path: its stdout goes to that file (p.stdout is then empty);
    stdin: a file object or None. A timeout is a failure."""
    out = open(stdout_path, "wb") if stdout_path else None
    try:
        p = subprocess.run(argv, env=env, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=stdin, text=not binary, errors=None if binary else "replace",
                           timeout=timeout, cwd=cwd, pass_fds=pass_fds)
    except subprocess.TimeoutExpired:
        raise CheckFailed("%s did not finish within %d s (deadlock?)" % (argv[0], timeout))
    finally:
        if out:
            out.close()
    if p.stdout is None:
        p.stdout = b"" if binary else ""
    if echo:
        o, e = (p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")) if binary \
            else (p.stdout, p.stderr)
        print(o, end="")
        print(e, end="", file=sys.stdout if err_to_stdout else sys.stderr)
    return p


def run_untraced(argv, env=None, timeout=60, echo=False, **kw):
    """The program alone (clean environment). kw: cwd, stdin, pass_fds,
    binary, stdout_path (as _run)."""
    return _run(argv, clean_env(env), timeout, echo, **kw)


def run_traced(argv, lib, outdir, env=None, timeout=60, echo=True, preload=True, **kw):
    """The program under libtracer.so writing into a fresh outdir. preload=False
    for programs linked against libtracer.so (VT API, Argobots). kw: cwd,
    stdin, pass_fds, binary, stdout_path (as _run). Returns
    (CompletedProcess, the archive's anchor or None when there is not exactly one)."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    e = {"TRACER_OUTPUT": outdir}
    if preload:
        e["LD_PRELOAD"] = lib
    e.update(env or {})
    p = _run(argv, clean_env(e), timeout, echo, **kw)
    return p, find_anchor(outdir)


class Timed:
    """What run_timed saw: rc (negative: killed by that signal), out and err
    (bytes), elapsed seconds, hung (killed after the timeout)."""

    def __init__(self, rc, out, err, elapsed, hung=False):
        self.rc, self.out, self.err, self.elapsed, self.hung = rc, out, err, elapsed, hung

    # the names of a CompletedProcess, for compare
    returncode = property(lambda self: self.rc)
    stdout = property(lambda self: self.out)
    stderr = property(lambda self: self.err)

    def status(self):
        if self.hung:
            return "hung (killed after the timeout)"
        if self.rc < 0:
            return "killed by signal %d (%s)" % (-self.rc, signal.Signals(-self.rc).name)
        return "exit status %d" % self.rc


def run_timed(argv, cwd, env, timeout=120, term_after=None, term_timeout=20, wait_ready=True):
    """argv in its own session with exactly env (build it with clean_env);
    term_after: SIGTERM that many seconds after the line 'ready' on its
    stdout (wait_ready=False: after the start), then term_timeout to end. A
    run past its time is killed with its process group and returned with
    hung=True. Returns a Timed."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    first = b""
    if term_after is not None:
        first = p.stdout.readline() if wait_ready else b""
        time.sleep(term_after)
        p.send_signal(signal.SIGTERM)
        timeout = term_timeout
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return Timed(p.returncode, first + out, err, time.monotonic() - t0, hung=True)
    return Timed(p.returncode, first + out, err, time.monotonic() - t0)


def term_wait(p, timeout, hung):
    """SIGTERM to the running Popen p, then its (stdout, stderr); still
    running timeout seconds later: killed, and CheckFailed(hung) raised."""
    p.send_signal(signal.SIGTERM)
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise CheckFailed(hung)


def process_ended(pid):
    """pid has ended: no such process, or a zombie nobody reaps (an orphan
    whose new parent does not wait, as this VM's pid 1)."""
    try:
        st = open('/proc/%d/stat' % pid).read()
    except OSError:
        return True
    return st[st.rindex(')') + 2] in 'ZX'


def wait_ended(pid, timeout=30):
    """Wait (at most timeout s) until process_ended(pid); its result."""
    end = time.time() + timeout
    while not process_ended(pid) and time.time() < end:
        time.sleep(0.05)
    return process_ended(pid)


def find_anchor(outdir):
    """The one archive anchor (*.otf2) under outdir, or None."""
    anchors = glob.glob(os.path.join(outdir, "**", "*.otf2"), recursive=True)
    return anchors[0] if len(anchors) == 1 else None


def mpi_launch(mpirun, mpi, np, env_vars):
    """The launcher's command line for np ranks with env_vars (VAR=value
    each) exported to the ranks only. mpi: "ompi" (Open MPI's mpirun) or
    "mpich" (MPICH's Hydra mpiexec)."""
    if mpi == "mpich":
        cmd = [mpirun, "-n", str(np)]
        for e in env_vars:
            k, v = e.split("=", 1)
            cmd += ["-genv", k, v]
        return cmd
    return [mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(np)] + sum(
        (["-x", e] for e in env_vars), [])


# what a launcher needs to run as root here
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def launcher_args():
    """The arguments of a check that runs a launcher itself (tracer-run or
    LD_PRELOAD around mpirun): --lib --tracer-run --mpirun --mpi --prog --out."""
    ap = argparse.ArgumentParser()
    for a in ("--lib", "--tracer-run", "--mpirun", "--mpi", "--prog", "--out"):
        ap.add_argument(a, required=True)
    return ap.parse_args()


def check_mpi_archive(ck, what, anchor, ranks, regions=("MPI_Init",)):
    """anchor passes otf2-print -Werror and the shared checks (exit status
    0), its location groups are MPI Rank 0 .. ranks-1 and each rank entered
    every region of regions once. Returns the trace, or None."""
    import tracecheck as tc
    try:
        tc.otf2_print(anchor, "-Werror")
        tr = tc.load(anchor)
        tc.check_all(tr, exit_status=0)
        groups = sorted(tr.location_groups)
        want = ["MPI Rank %d" % r for r in range(ranks)]
        ck.expect(groups == want, "%s: location groups %r, want %r" % (what, groups, want))
        for region in regions:
            ck.expect(tr.count("Enter", region=region) == ranks, "%s: want %d %s" % (what, ranks, region))
        return tr
    except tc.CheckError as e:
        ck.fail("%s: %s" % (what, e))
        return None


def run_mpi(mpirun, np, argv, env_vars, lib=None, mpi="ompi", timeout=600, cwd=None):
    """argv on np ranks; lib: preloaded into the ranks (None: untraced).
    The launcher runs in a clean environment (allowed to run as root; ranks
    killed after an MPI_Abort get 3 s to write their trace before SIGKILL);
    the ranks get env_vars (VAR=value each) and LD_PRELOAD. Prints the
    command line, then the ranks' stdout and stderr (both on stdout)."""
    env = clean_env(ROOT_ENV)
    env.setdefault("OMPI_MCA_odls_base_sigkill_timeout", "3")
    env_vars = list(env_vars) + (["LD_PRELOAD=" + lib] if lib else [])
    cmd = mpi_launch(mpirun, mpi, np, env_vars) + list(argv)
    print("+", " ".join(cmd))
    return _run(cmd, env, timeout, True, cwd=cwd, err_to_stdout=True)


def _text(s):
    return s.decode(errors="replace") if isinstance(s, bytes) else s


def tracer_lines(stderr):
    """The tracer's own lines of a stderr (text or bytes)."""
    return [l for l in _text(stderr).splitlines() if l.startswith("tracer:")]


def without_tracer_lines(stderr):
    """The other lines of a stderr (text or bytes)."""
    return [l for l in _text(stderr).splitlines() if not l.startswith("tracer:")]


def compare(ck, base, traced):
    """The traced run did what the untraced one did: stdout byte for byte,
    stderr less the tracer's own lines, exit status (or signal)."""
    ck.expect(traced.returncode == base.returncode,
              "exit status %d traced vs %d untraced" % (traced.returncode, base.returncode))
    ck.expect(traced.stdout == base.stdout, "stdout differs:\n%r\n%r" % (traced.stdout[-600:], base.stdout[-600:]))
    ck.expect(without_tracer_lines(traced.stderr) == without_tracer_lines(base.stderr),
              "stderr (less tracer: lines) differs:\n%r\n%r" % (traced.stderr[-600:], base.stderr[-600:]))


def snapshot(d):
    """relative path -> bytes of every file under d (a link: '->' target)."""
    files = {}
    for root, dirs, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.islink(p):
                files[os.path.relpath(p, d)] = b"->" + os.readlink(p).encode()
            else:
                with open(p, "rb") as f:
                    files[os.path.relpath(p, d)] = f.read()
    return files


def first_diff(a, b):
    """The offset of the first byte where a and b differ (the shorter's
    length when one is a prefix of the other)."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def compare_dirs(ck, untraced, traced):
    """The traced run left the same files, byte for byte, in its directory as
    the untraced one in its own. Returns the number of files."""
    su, st = snapshot(untraced), snapshot(traced)
    if not ck.expect(set(su) == set(st), "files differ: only untraced %s, only traced %s"
                     % (sorted(set(su) - set(st))[:10], sorted(set(st) - set(su))[:10])):
        return len(su)
    for k in sorted(su):
        a, b = su[k], st[k]
        ck.expect(a == b, "file %s differs: untraced %d bytes, traced %d bytes, first difference at byte %d"
                  % (k, len(a), len(b), first_diff(a, b)))
    return len(su)


def expect_lines(ck, text, wanted, what="stdout"):
    """Every line of wanted appears (stripped) in text."""
    lines = [l.strip() for l in text.splitlines()]
    for w in wanted:
        ck.expect(w in lines, "%s lacks %r" % (what, w))


def otf2_print(ck, anchor, werror=False):
    """The reference otf2-print reads the whole archive: exit 0; werror:
    with -Werror, and no [OTF2] complaint on its stderr."""
    p = subprocess.run(["otf2-print"] + (["-Werror"] if werror else []) + [anchor],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    ck.expect(p.returncode == 0, "otf2-print%s exit %d: %s"
              % (" -Werror" if werror else "", p.returncode, p.stderr.strip()[:2000]))
    if werror:
        ck.expect("[OTF2]" not in p.stderr, "libotf2 complained: %s" % p.stderr.strip()[:2000])


def open_trace(anchor):
    """The archive through the reference reader (python3-otf2)."""
    import otf2
    return otf2.reader.open(anchor)


def read_back(anchor, by_group=False):
    """The whole archive through the reference reader: (its definitions,
    {location name, or its group's name with by_group: [reference events in
    file order]}, timer resolution)."""
    evs = {}
    with open_trace(anchor) as tr:
        for loc, ev in tr.events:
            evs.setdefault(loc.group.name if by_group else loc.name, []).append(ev)
        return tr.definitions, evs, tr.timer_resolution


def run_case(fn, name):
    """Runs one case fn() of a script that stops at its first failure;
    prints 'ok NAME' or 'FAIL NAME: why' (a failed check: CheckFailed, or
    tracecheck's CheckError) or 'SKIP NAME: why'; returns the exit code."""
    try:
        fn()
    except Skip as e:
        print("SKIP %s: %s" % (name, e))
        return SKIP_CODE
    except AssertionError as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    print("ok %s" % name)
    return 0
