#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""core_exports: libtracer.so exports nothing internal.

The program shares our symbol namespace, so every symbol libtracer.so
exports is either a function it interposes or its public API. The expected
list is generated, never written by hand:

 marked    every name the library's sources define with TR_EXPORT (or .globl in
           top-level asm), read from
           the preprocessed sources (compile_commands.json: macro-generated
           wrapper lists, the generated MPI wrappers of mpi.spec included)
 exported  nm -D --defined-only libtracer.so

and asserted: exported == marked (nothing exported unmarked: no weak or
default-visibility leak; nothing marked that does not reach the library),
and every marked name is interposed (a dynamic symbol of a library a program
links: libc, libm, MPI C/Fortran, libgomp, the Argobots stand-in) or public
API (wrappers/vt/VT.h and its Fortran spellings, the OMPT tool entry point).
Never a name with an internal prefix.

usage: exports.py LIBTRACER BUILD_DIR SOURCE_DIR [LIBRARY...]
(the libraries libtracer.so links are added to LIBRARY...)
"""
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

INTERNAL = re.compile(r"^(tr_|smp_|otf2w_|pth_|vt_|abt_|io_|omp_tr|gomp_|mpi_tr|real_)")
# The OMPT tool entry point: the OpenMP runtime looks it up in the tool
# (OpenMP 5.0 4.2.1); it is defined by tools, by no library.
TOOL_ENTRY = {"ompt_start_tool"}


ck = rc.Checker()   # every kind of leak is reported


def tool(argv, cwd=None):
    """A tool's output (runcheck's clean environment); its failure stops the test."""
    p = rc.run_untraced(argv, timeout=300, cwd=cwd)
    if p.returncode:
        raise rc.CheckFailed("%s failed (exit %d):\n%s" % (" ".join(argv[:3]), p.returncode, p.stderr[-2000:]))
    return p.stdout


def dynsyms(path):
    out = tool(["nm", "-D", "--defined-only", path])
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3:
            names.add(f[2].split("@")[0])
    return names


def marked_names(build, src):
    """Names defined with TR_EXPORT (visibility default) in our own files:
    {name: the source file whose preprocessed text marks it}."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        cmds = json.load(f)
    objdirs = ("tr_preload.dir", "tr_wrappers.dir", "tr_sampling.dir")
    ours = (os.path.realpath(src) + "/", os.path.realpath(build) + "/")
    names, nfiles = {}, 0
    for c in cmds:
        args = c.get("arguments") or shlex.split(c["command"])
        out = args[args.index("-o") + 1] if "-o" in args else ""
        if not any(d in out for d in objdirs):
            continue
        pp, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MT", "-MQ"):
                skip = True
                continue
            if a in ("-c", "-MD", "-MMD") or a.startswith("-Werror"):
                continue
            pp.append(a)
        text = tool(pp + ["-E"], cwd=c["directory"])
        nfiles += 1
        # keep only the text of our own files (line markers), not system headers
        keep, cur = [], True
        for line in text.splitlines():
            m = re.match(r'^# \d+ "([^"]*)"', line)
            if m:
                cur = os.path.realpath(m.group(1)).startswith(ours) if m.group(1)[:1] == "/" else \
                    os.path.realpath(os.path.join(c["directory"], m.group(1))).startswith(ours)
                continue
            if cur:
                keep.append(line)
        text = "\n".join(keep)
        for m in re.finditer(r'__attribute__\(\(visibility\("default"\)\)\)', text):
            rest = text[m.end():m.end() + 2000]
            # drop further attributes, then the name is the last identifier before "("
            while True:
                rest = rest.lstrip()
                if not rest.startswith("__attribute__"):
                    break
                depth, i = 0, len("__attribute__")
                while i < len(rest):
                    depth += rest[i] == "("
                    depth -= rest[i] == ")"
                    i += 1
                    if depth == 0:
                        break
                rest = rest[i:]
            head = rest.split("(", 1)[0]
            ids = re.findall(r"[A-Za-z_]\w*", head)
            # a declaration with an asm label exports the label (its
            # adjacent string literals joined), not the C name
            decl = re.split(r"[;{]", rest, maxsplit=1)[0]
            label = re.search(r'__asm__\s*\(((?:\s*"[^"]*")+)\s*\)', decl)
            if label:
                names.setdefault("".join(re.findall(r'"([^"]*)"', label.group(1))), os.path.basename(c["file"]))
            elif ids:
                names.setdefault(ids[-1], os.path.basename(c["file"]))
        # entry points defined in top-level asm (the MPI trampolines of the
        # generated mpi_disp.c): global symbols of default visibility
        hidden = set(re.findall(r"\.hidden (\w+)", text))
        for m in re.finditer(r"\.globl (\w+)", text):
            if m.group(1) not in hidden:
                names.setdefault(m.group(1), os.path.basename(c["file"]))
    if nfiles < 10:
        raise rc.CheckFailed("only %d sources of libtracer.so in compile_commands.json" % nfiles)
    return names


def public_api(src, marked):
    """The VT API: the functions of wrappers/vt/VT.h and their Fortran bindings
    (the names wrappers/vt/vt_fortran.c exports, ITC routine names), and the
    OMPT tool entry point."""
    with open(os.path.join(src, "wrappers", "vt", "VT.h")) as f:
        vt = set(re.findall(r"\b(VT_\w+)\s*\(", f.read()))
    vtf = {n for n, where in marked.items() if where == "vt_fortran.c"}
    return vt | vtf | TOOL_ENTRY


def main():
    lib, build, src = sys.argv[1:4]
    libs = [l for l in sys.argv[4:] if os.path.exists(l)]
    # and the system libraries libtracer.so itself links (libc, libm, ...)
    ldd = tool(["ldd", lib])
    libs += [m.group(1) for m in re.finditer(r"=> (/\S+)", ldd) if "libtracer" not in m.group(1)]
    exported = dynsyms(lib)
    marked = marked_names(build, src)
    print("exported %d, marked TR_EXPORT %d" % (len(exported), len(marked)))
    leak = sorted(exported - set(marked))
    ck.expect(not leak, "exported but not marked TR_EXPORT (internal leak): %s" % " ".join(leak[:40]))
    unused = sorted(set(marked) - exported)
    ck.expect(not unused, "marked TR_EXPORT but not exported: %s" % " ".join(unused[:40]))
    internal = sorted(n for n in exported if INTERNAL.match(n))
    ck.expect(not internal, "internal names exported: %s" % " ".join(internal))
    interposable = set()
    for l in libs:
        interposable |= dynsyms(l)
    api = public_api(src, marked)
    stray = sorted(n for n in exported if n not in interposable and n not in api)
    ck.expect(not stray, "exported names that are neither interposed (%s) nor public API: %s"
              % (", ".join(os.path.basename(l) for l in libs), " ".join(stray[:40])))
    return ck.done("ok: %d exported = interposed %d + public API %d" %
                   (len(exported), len(exported - api), len(exported & api)))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except rc.CheckFailed as e:
        print("FAIL: %s" % e)
        sys.exit(1)
