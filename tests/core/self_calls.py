#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""core_self_calls: libtracer.so never calls a name it exports, never
allocates from the program's allocator, and has no jump slot to itself.

The library exports the C library functions it interposes (open, close,
sigprocmask, waitpid, execve, ...). Its own code calls the real ones through
one table (preload/core/tr_real.h: tr_real.<fn>), format/'s system layer
(otf2w_sys) or the raw system call (tr_syscall); its memory comes from its
heap (tr_malloc & co., preload/core/mem.c). Checked on what the linker sees:

 objects   every object linked into libtracer.so (the layers' object files,
           the members of libotf2w.a, the prebuilt MPI layers): no undefined
           reference to a function the library exports, other than its own
           API (the functions wrappers/vt/VT.h declares: the Fortran bindings
           call the C API); no reference to malloc & co. but from mem.c
 library   objdump -R: no JUMP_SLOT or GLOB_DAT relocation against a function
           the library exports (-Bsymbolic-functions binds its own names)

usage: self_calls.py LIBTRACER VT_H OBJECT_OR_ARCHIVE...
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import runcheck as rc  # noqa: E402

ALLOC = {"malloc", "calloc", "realloc", "free", "strdup", "strndup", "aligned_alloc", "posix_memalign",
         "memalign", "valloc", "pvalloc", "reallocarray"}
HEAP_OBJECT = "mem.c.o"
ck = rc.Checker()


def out(*argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, check=True, text=True).stdout


def exported_functions(lib):
    names = set()
    for line in out("nm", "-D", "--defined-only", lib).splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TWi":
            names.add(f[2].split("@")[0])
    return names


def undefined(path):
    """{object name: set of undefined symbols} (archives: one per member)."""
    refs = {}
    for line in out("nm", "-A", "-u", path).splitlines():
        loc, _, sym = line.rpartition(" ")
        obj = loc.rstrip(":").split(":")[-2 if path.endswith(".a") else 0]
        refs.setdefault(os.path.basename(obj), set()).add(sym.split("@")[0])
    return refs


def main():
    lib, vt_h, objects = sys.argv[1], sys.argv[2], sys.argv[3:]
    exports = exported_functions(lib)
    api = set(re.findall(r"\b(VT_\w+)\s*\(", open(vt_h).read())) & exports
    interposed = exports - api
    ck.expect(len(interposed) > 300 and {"open", "close", "sigprocmask", "waitpid"} <= interposed,
              "%d interposed functions exported: not the list expected" % len(interposed))
    nobj = 0
    for path in objects:
        for obj, syms in sorted(undefined(path).items()):
            nobj += 1
            bad = sorted(syms & interposed)
            ck.expect(not bad, "%s (%s) calls functions the library exports (use tr_real, otf2w_sys or "
                      "tr_syscall): %s" % (obj, path, " ".join(bad)))
            alloc = sorted(syms & ALLOC)
            ck.expect(not alloc or obj == HEAP_OBJECT,
                      "%s (%s) calls the program's allocator (use tr_malloc & co. or otf2w_sys): %s"
                      % (obj, path, " ".join(alloc)))
    ck.expect(nobj > 50, "only %d objects checked" % nobj)
    for line in out("objdump", "-R", lib).splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in ("R_X86_64_JUMP_SLOT", "R_X86_64_GLOB_DAT"):
            sym = f[2].split("@")[0].split("+")[0]
            ck.expect(sym not in exports, "%s relocation against %s, a function libtracer.so exports"
                      % (f[1], sym))
    sys.exit(ck.done("ok: %d objects, %d exported functions (%d of them API): no call to an export, "
                     "no allocation but the heap's, no relocation against an export"
                     % (nobj, len(exports), len(api))))


if __name__ == "__main__":
    main()
