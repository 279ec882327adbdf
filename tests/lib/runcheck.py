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

Clean environment: the caller's environment without LD_PRELOAD and every
TRACER_* variable (a developer's own settings never leak into a test), plus
what the test sets.
"""
import glob
import os
import shutil
import subprocess
import sys


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


def _run(argv, env, timeout, echo, stdout_path=None, cwd=None, err_to_stdout=False):
    """argv to its end (text, undecodable bytes replaced); stdout_path: its
    stdout goes to that file (p.stdout is then ""). A timeout is a failure."""
    out = open(stdout_path, "wb") if stdout_path else None
    try:
        p = subprocess.run(argv, env=env, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise CheckFailed("%s did not finish within %d s (deadlock?)" % (argv[0], timeout))
    finally:
        if out:
            out.close()
    if p.stdout is None:
        p.stdout = ""
    if echo:
        print(p.stdout, end="")
        print(p.stderr, end="", file=sys.stdout if err_to_stdout else sys.stderr)
    return p


def run_untraced(argv, env=None, timeout=60, echo=False):
    """The program alone (clean environment)."""
    return _run(argv, clean_env(env), timeout, echo)


def run_traced(argv, lib, outdir, env=None, timeout=60, echo=True, preload=True, stdout_path=None):
    """The program under libtracer.so writing into a fresh outdir. preload=False
    for programs linked against libtracer.so (VT API, Argobots). Returns
    (CompletedProcess, the archive's anchor or None when there is not exactly one)."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    e = {"TRACER_OUTPUT": outdir}
    if preload:
        e["LD_PRELOAD"] = lib
    e.update(env or {})
    p = _run(argv, clean_env(e), timeout, echo, stdout_path)
    return p, find_anchor(outdir)


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


def run_mpi(mpirun, np, argv, env_vars, lib=None, mpi="ompi", timeout=600, cwd=None):
    """argv on np ranks; lib: preloaded into the ranks (None: untraced).
    The launcher runs in a clean environment (allowed to run as root; ranks
    killed after an MPI_Abort get 3 s to write their trace before SIGKILL);
    the ranks get env_vars (VAR=value each) and LD_PRELOAD. Prints the
    command line, then the ranks' stdout and stderr (both on stdout)."""
    env = clean_env({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    env.setdefault("OMPI_MCA_odls_base_sigkill_timeout", "3")
    env_vars = list(env_vars) + (["LD_PRELOAD=" + lib] if lib else [])
    cmd = mpi_launch(mpirun, mpi, np, env_vars) + list(argv)
    print("+", " ".join(cmd))
    return _run(cmd, env, timeout, True, cwd=cwd, err_to_stdout=True)


def tracer_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("tracer:")]


def without_tracer_lines(stderr):
    return [l for l in stderr.splitlines() if not l.startswith("tracer:")]


def compare(ck, base, traced):
    """The traced run did what the untraced one did: stdout byte for byte,
    stderr less the tracer's own lines, exit status (or signal)."""
    ck.expect(traced.returncode == base.returncode,
              "exit status %d traced vs %d untraced" % (traced.returncode, base.returncode))
    ck.expect(traced.stdout == base.stdout, "stdout differs:\n%r\n%r" % (traced.stdout, base.stdout))
    ck.expect(without_tracer_lines(traced.stderr) == without_tracer_lines(base.stderr),
              "stderr (less tracer: lines) differs:\n%r\n%r" % (traced.stderr, base.stderr))


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
