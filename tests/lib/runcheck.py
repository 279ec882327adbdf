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

Clean environment: the caller's environment without LD_PRELOAD and every
TRACER_* variable (a developer's own settings never leak into a test), plus
what the test sets.
"""
import glob
import os
import shutil
import subprocess
import sys


class Checker:
    """Collects failures (a test reports all of them, not only the first)."""

    def __init__(self):
        self.errors = []

    def fail(self, msg):
        self.errors.append(msg)
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


def _run(argv, env, timeout, echo):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if echo:
        print(p.stdout, end="")
        print(p.stderr, end="", file=sys.stderr)
    return p


def run_untraced(argv, env=None, timeout=60, echo=False):
    """The program alone (clean environment)."""
    return _run(argv, clean_env(env), timeout, echo)


def run_traced(argv, lib, outdir, env=None, timeout=60, echo=True, preload=True):
    """The program under libtracer.so writing into a fresh outdir. preload=False
    for programs linked against libtracer.so (VT API, Argobots). Returns
    (CompletedProcess, the archive's anchor or None when there is not exactly one)."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    e = {"TRACER_OUTPUT": outdir}
    if preload:
        e["LD_PRELOAD"] = lib
    e.update(env or {})
    p = _run(argv, clean_env(e), timeout, echo)
    anchors = glob.glob(os.path.join(outdir, "**", "*.otf2"), recursive=True)
    return p, anchors[0] if len(anchors) == 1 else None


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


def open_trace(anchor):
    """The archive through the reference reader (python3-otf2)."""
    import otf2
    return otf2.reader.open(anchor)
