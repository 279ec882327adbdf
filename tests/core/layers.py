#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""layers.py SRC - the include rules of docs/architecture.md ("Who may call
whom"), checked on every source file of the layers:

- format/ includes nothing of another layer;
- preload/ includes no header of wrappers/ or sampling/ (it calls them
  through struct tr_module hooks only);
- wrappers/ and sampling/ include nothing of each other, and of preload/
  only its public headers (core/'s tracer.h and the topic headers it is
  made of);
- a wrapper family (wrappers/<family>/) includes no header of another
  family, but for the one declared exception: MPI-IO (wrappers/mpi/)
  records its handles with the I/O family's functions (io/io_int.h);
- tools/ include of preload/ only the process-free headers (tr_defs.h,
  fsutil.h, durable_index.h, tree_files.h) and of format/ its public ones;
- the private headers stay in their folders: tr_int.h in preload/,
  defs_int.h and defset.h in preload/defs/, archive_int.h in the archive
  files of preload/archive/, proctree_int.h and proctree.h in
  preload/tree/ (proctree.h: and the core files that name a process's
  part), <x>_int.h of wrappers/, sampling/ and format/ in their own folder,
  tools' recover_int.h in tools/.
Headers are found by name in the source tree (generated ones by the list
below). A rule broken: one line per include, exit 1.
"""
import os
import re
import sys

LAYERS = ('format', 'preload', 'wrappers', 'sampling', 'tools')
GENERATED = {'otf2w_records.h': ('format', ''), 'otf2r_records.h': ('format', ''), 'defs_gen.h': ('preload', 'defs'),
             'mpi_gen.h': ('wrappers', 'mpi'), 'mpi_disp.h': ('wrappers', 'mpi')}
CORE_PUBLIC = {'tracer.h', 'tr_config.h', 'tr_thread.h', 'tr_event.h', 'tr_module.h', 'tr_registry.h',
               'tr_process.h', 'tr_real.h', 'tr_defs.h'}
CORE_PROCESS_FREE = {'tr_defs.h', 'fsutil.h', 'durable_index.h', 'tree_files.h'}
FORMAT_PUBLIC = {'otf2w.h', 'otf2r.h', 'otf2w_stage.h', 'otf2w_sys.h', 'otf2w_enums.h', 'otf2w_records.h',
                 'otf2r_records.h', 'otf2w_fast.h'}
ARCHIVE_FILES = re.compile(r'preload/archive/archive[a-z_]*\.[ch]$')
# proctree.h: the process tree's state, also read by the core files that
# name a process's part (archive, definitions, threads, signals, sandboxes)
PROCTREE_USERS = re.compile(r'preload/(tree|archive)/|preload/defs/defs(_local)?\.c$|'
                            r'preload/core/(thread|sandbox|init)\.c$')
# wrappers/ family -> the other families' headers it may include
FAMILY_EXCEPTIONS = {('mpi', 'io_int.h')}


def headers(src):
    """header name -> (layer folder, its subfolder or '')"""
    where = dict(GENERATED)
    for layer in LAYERS:
        top = os.path.join(src, layer)
        for root, _, files in os.walk(top):
            rel = os.path.relpath(root, top)
            sub = '' if rel == '.' else rel.split(os.sep)[0]
            for f in files:
                if f.endswith('.h'):
                    where.setdefault(f, (layer, sub))
    return where


def subfolder(path):
    parts = path.split('/')
    return parts[1] if len(parts) > 2 else ''


def allowed(path, layer, name, at):
    """None if path (layer/[sub/]file) may include name (at: (layer, sub) of
    the header), else why not"""
    if at is None:
        return None
    hl, hsub = at
    if hl == layer:
        sub = subfolder(path)
        if hl == 'preload':
            if name == 'archive_int.h' and not ARCHIVE_FILES.search(path):
                return "archive_int.h is the archive files' own (preload/archive/archive*.c)"
            if name in ('defs_int.h', 'defset.h') and sub != 'defs':
                return "%s is preload/defs/'s own" % name
            if name == 'proctree_int.h' and sub != 'tree':
                return "proctree_int.h is preload/tree/'s own"
            if name == 'proctree.h' and not PROCTREE_USERS.search(path):
                return 'proctree.h: the process tree and the core files that name a part'
        if hl == 'wrappers' and hsub and sub != hsub and (sub, name) not in FAMILY_EXCEPTIONS:
            return 'a header of the %s family (wrappers/%s/): families include only their own' % (hsub, hsub)
        return None
    if name.endswith('_int.h') or name in ('smp_sampler.h', 'proctree.h', 'defset.h'):
        return 'a private header of %s/' % hl
    if layer == 'format':
        return 'format/ includes nothing above it'
    if layer == 'preload' and hl in ('wrappers', 'sampling'):
        return 'preload/ reaches %s/ through struct tr_module hooks only' % hl
    if layer in ('wrappers', 'sampling') and hl in ('wrappers', 'sampling'):
        return 'wrappers/ and sampling/ never include each other'
    if layer in ('wrappers', 'sampling') and hl == 'preload' and name not in CORE_PUBLIC:
        return 'of preload/ only tracer.h and its topic headers'
    if layer == 'tools' and hl == 'preload' and name not in CORE_PROCESS_FREE:
        return 'of preload/ the tools take only the process-free headers'
    if layer == 'tools' and hl in ('wrappers', 'sampling'):
        return 'the tools include no %s/ header' % hl
    if hl == 'format' and name not in FORMAT_PUBLIC:
        return 'of format/ only its public headers'
    return None


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..'))
    where = headers(src)
    bad, n = [], 0
    for layer in LAYERS:
        for root, _, files in os.walk(os.path.join(src, layer)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.relpath(os.path.join(root, f), src)
                with open(os.path.join(root, f), errors='replace') as fh:
                    for i, line in enumerate(fh, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m:
                            continue
                        n += 1
                        name = os.path.basename(m.group(1))
                        why = allowed(path, layer, name, where.get(name))
                        if why:
                            bad.append('%s:%d: #include "%s": %s' % (path, i, m.group(1), why))
    for b in bad:
        print(b)
    print('layers: %d includes of %s checked, %d against the rules' % (n, '/'.join(LAYERS), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
