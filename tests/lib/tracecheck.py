# SPDX-License-Identifier: BSD-3-Clause
"""tracecheck - read an OTF2 archive back with the reference reader and check it.

Shared by the test suites of every area (run with /usr/bin/python3: it has
the reference `otf2` bindings of OTF2 3.0.2).

Library use (tests/<area>/*.py):

    import sys, os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
    import tracecheck as tc

    tr = tc.load('out/traces.otf2')     # also accepts the archive directory
    tc.otf2_print(tr.anchor)            # otf2-print must exit 0 (returns stdout)
    tr.locations                         # [Loc(id, name, group, events=[Ev...])]
    tr.master                            # location named "Master thread" (first)
    tr.loc('Thread 1').events            # events of one location, file order
    tr.regions                           # region names (definition order)
    tr.count('Enter'), tr.count('Enter', loc) , tr.kinds(loc)
    tc.check_all(tr)                     # timestamps + nesting + ProgramBegin/End
    tc.check_timestamps(tr)              # per location non-decreasing
    tc.check_clock_range(tr)             # every event within ClockProperties
    tc.check_nesting(tr, allow_open=False)   # Enter/Leave balanced and nested
    tr.program_begin / tr.program_end    # the events (or None)
    tc.check_all_print(path, 143)        # check_all on otf2-print's output (millions of events)
    tc.Rules(anchor).time(loc, '', i, kind, t)   # check_all's rules, one event at a time
    for kind, loc, time, attrs in tc.print_events(path): ...   # otf2-print's events
    tc.otf2_print_count(path, '"pthread_mutex_lock"')   # occurrences in otf2-print's output

Every Ev has .kind (reference class name: 'Enter', 'Leave', 'ProgramBegin',
'ThreadCreate', 'MpiSend', ...), .time, .loc (location id), .ev (the
reference event object: .region.name, .exit_status, .program_name, ...)
and .region (name, for Enter/Leave).

Failures raise CheckError with a message naming the archive, location and
event index. Command line:

    tracecheck.py ARCHIVE [--locations N] [--min-events N] [--region NAME]...
                  [--no-region NAME]... [--exit-status N] [--print] [--open-ok]

runs check_all plus the given expectations and prints a one-line summary;
exit status 0 when everything holds, 1 otherwise.
"""
import argparse
import contextlib
import os
import subprocess
import sys
import tempfile

import otf2

OTF2_PRINT = os.environ.get('OTF2_PRINT', 'otf2-print')


class CheckError(AssertionError):
    pass


class Ev:
    __slots__ = ('kind', 'time', 'loc', 'ev', 'region')

    def __init__(self, loc, ev):
        self.kind = type(ev).__name__
        self.time = ev.time
        self.loc = loc
        self.ev = ev
        r = getattr(ev, 'region', None)
        self.region = r.name if r is not None else None

    def __repr__(self):
        extra = ' ' + self.region if self.region else ''
        return '<%s%s @%d loc %d>' % (self.kind, extra, self.time, self.loc)


class Loc:
    def __init__(self, d):
        self.id = d._ref
        self.name = d.name
        self.group = d.group.name if d.group is not None else None
        self.number_of_events = d.number_of_events
        self.events = []

    def __repr__(self):
        return '<Loc %d %r %d events>' % (self.id, self.name, len(self.events))


class Trace:
    def __init__(self, anchor):
        self.anchor = anchor
        with otf2.reader.open(anchor) as r:
            d = r.definitions
            self.clock = d.clock_properties
            self.locations = [Loc(l) for l in d.locations]
            self.regions = [x.name for x in d.regions]
            self.region_defs = list(d.regions)
            self.strings = [str(s) for s in d.strings]
            self.paradigms = [p.paradigm for p in d.paradigms]
            self.groups = list(d.groups)
            self.comms = list(d.comms)
            self.location_groups = [g.name for g in d.location_groups]
            self.system_tree = [(n.name, n.class_name) for n in d.system_tree_nodes]
            by_id = {l.id: l for l in self.locations}
            for loc, ev in r.events:
                e = Ev(loc._ref, ev)
                by_id[loc._ref].events.append(e)
        self._by_id = {l.id: l for l in self.locations}

    # -- queries --
    def loc(self, key):
        """Location by id or by name (first match)."""
        if isinstance(key, int):
            return self._by_id[key]
        for l in self.locations:
            if l.name == key:
                return l
        raise CheckError('%s: no location named %r (have %s)' %
                         (self.anchor, key, [l.name for l in self.locations]))

    @property
    def master(self):
        return self.loc('Master thread')

    def events(self, loc=None):
        if loc is not None:
            return self._loc(loc).events
        return [e for l in self.locations for e in l.events]

    def _loc(self, loc):
        return loc if isinstance(loc, Loc) else self.loc(loc)

    def count(self, kind, loc=None, region=None):
        return sum(1 for e in self.events(loc)
                   if e.kind == kind and (region is None or e.region == region))

    def kinds(self, loc=None):
        return [e.kind for e in self.events(loc)]

    @property
    def program_begin(self):
        evs = [e for e in self.events() if e.kind == 'ProgramBegin']
        return evs[0] if evs else None

    @property
    def program_end(self):
        evs = [e for e in self.events() if e.kind == 'ProgramEnd']
        return evs[-1] if evs else None

    def __repr__(self):
        return '<Trace %s: %d locations, %d events>' % (
            self.anchor, len(self.locations), len(self.events()))


def find_anchor(path):
    """ARCHIVE may be the anchor file or a directory holding traces.otf2
    (or a single *.otf2)."""
    if os.path.isdir(path):
        cand = os.path.join(path, 'traces.otf2')
        if os.path.exists(cand):
            return cand
        anchors = sorted(f for f in os.listdir(path) if f.endswith('.otf2'))
        if len(anchors) == 1:
            return os.path.join(path, anchors[0])
        raise CheckError('%s: no traces.otf2 (anchors: %s)' % (path, anchors))
    return path


def load(path):
    anchor = find_anchor(path)
    if not os.path.exists(anchor):
        raise CheckError('%s: archive anchor missing' % anchor)
    return Trace(anchor)


def otf2_print(anchor, *args):
    """Run otf2-print; it must exit 0. Returns stdout."""
    anchor = find_anchor(anchor)
    p = subprocess.run([OTF2_PRINT] + list(args) + [anchor], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise CheckError('otf2-print %s: exit %d: %s' % (anchor, p.returncode, p.stderr.strip()[-500:]))
    return p.stdout


class Rules:
    """The rules of check_all, fed one location's events at a time, by the
    Python reader's Trace or by otf2-print's output (check_all_print): time
    never goes back and starts at or after the global offset (offset None:
    not checked), Enter/Leave balanced and nested (region: any key naming
    the region), every MPI or RMA collective's Begin ended by its End inside
    the same region (also in crash and recovered archives)."""

    def __init__(self, anchor, offset=None):
        self.anchor, self.offset = anchor, offset
        self.prev, self.stack = {}, {}

    def time(self, loc, where, i, what, t):
        if loc not in self.prev:
            if self.offset is not None and t < self.offset:
                raise CheckError('%s: location %d starts before the global offset' % (self.anchor, loc))
        elif t < self.prev[loc]:
            raise CheckError('%s: location %d%s: event %d %s goes back in time (%d < %d)' %
                             (self.anchor, loc, where, i, what, t, self.prev[loc]))
        self.prev[loc] = t

    _COLL = {'MpiCollectiveBegin': 'MpiCollectiveEnd', 'RmaCollectiveBegin': 'RmaCollectiveEnd'}

    def nest(self, loc, where, i, kind, region):
        stack = self.stack.setdefault(loc, [])
        if kind == 'Enter':
            stack.append(region)
        elif kind in self._COLL:
            stack.append((kind,))
        elif kind in self._COLL.values():
            if not stack or not isinstance(stack[-1], tuple) or self._COLL[stack[-1][0]] != kind:
                raise CheckError('%s: location %d%s: event %d %s without its Begin' % (self.anchor, loc, where, i, kind))
            stack.pop()
        elif kind == 'Leave':
            if not stack:
                raise CheckError('%s: location %d%s: event %d Leave %s without Enter' %
                                 (self.anchor, loc, where, i, region))
            if isinstance(stack[-1], tuple):
                raise CheckError('%s: location %d%s: event %d Leave %s inside a %s without its End' %
                                 (self.anchor, loc, where, i, region, stack[-1][0]))
            top = stack.pop()
            if top != region:
                raise CheckError('%s: location %d%s: event %d Leave %s does not match Enter %s' %
                                 (self.anchor, loc, where, i, region, top))

    def closed(self, loc, where):
        if self.stack.get(loc):
            raise CheckError('%s: location %d%s: regions still open at the end: %s' %
                             (self.anchor, loc, where, self.stack[loc]))

    def program(self, first, last, status, exit_status):
        """The master location's first and last event (kinds, descriptions)
        and the ProgramEnd's status."""
        if first[0] != 'ProgramBegin':
            raise CheckError('%s: first master event is %s, not ProgramBegin' % (self.anchor, first[1]))
        if exit_status is not None:
            if last[0] != 'ProgramEnd':
                raise CheckError('%s: last master event is %s, not ProgramEnd' % (self.anchor, last[1]))
            if status != exit_status:
                raise CheckError('%s: ProgramEnd exit status %d, expected %d' % (self.anchor, status, exit_status))


def check_timestamps(tr):
    if tr.clock is not None and tr.clock.timer_resolution <= 0:
        raise CheckError('%s: timer resolution %d' % (tr.anchor, tr.clock.timer_resolution))
    r = Rules(tr.anchor, tr.clock.global_offset if tr.clock is not None else None)
    for l in tr.locations:
        for i, e in enumerate(l.events):
            r.time(l.id, ' (%s)' % l.name, i, repr(e), e.time)


def check_time_range(clock, first, last, where):
    """Events from first to last (reader times) lie within ClockProperties
    [global_offset, global_offset + trace_length]: viewers size their
    timeline from it."""
    off, length = clock.global_offset, clock.trace_length
    if first < off or last > off + length:
        raise CheckError('%s: events from %d to %d, ClockProperties cover %d to %d (%+d / %+d)' %
                         (where, first, last, off, off + length, first - off, last - off - length))


def check_clock_range(tr):
    """Every event of every location within ClockProperties."""
    times = [e.time for l in tr.locations for e in l.events]
    if times and tr.clock is not None:
        check_time_range(tr.clock, min(times), max(times), tr.anchor)


def check_nesting(tr, allow_open=False):
    """Enter/Leave balanced and properly nested per location (also
    CallingContextEnter/Leave). allow_open: regions may stay open at the end."""
    r = Rules(tr.anchor)
    for l in tr.locations:
        for i, e in enumerate(l.events):
            r.nest(l.id, ' (%s)' % l.name, i, e.kind, e.region)
        if not allow_open:
            r.closed(l.id, ' (%s)' % l.name)


def check_program(tr, exit_status=None):
    """ProgramBegin first and ProgramEnd last on the master location."""
    m = tr.locations[0] if tr.locations else None
    try:
        m = tr.master
    except CheckError:
        pass
    if m is None or not m.events:
        raise CheckError('%s: no events on the master location' % tr.anchor)
    first, last = m.events[0], m.events[-1]
    Rules(tr.anchor).program((first.kind, repr(first)), (last.kind, repr(last)),
                              getattr(last.ev, 'exit_status', None), exit_status)


def check_all(tr, exit_status=None, allow_open=False):
    otf2_print(tr.anchor)
    check_timestamps(tr)
    check_nesting(tr, allow_open=allow_open)
    check_program(tr, exit_status)


@contextlib.contextmanager
def otf2_print_stream(path, text=True):
    """otf2-print's output as a stream (for archives whose text would take gigabytes); otf2-print must exit 0
    (CheckError once the stream was read to its end); killed if the reader stops early."""
    anchor = find_anchor(path)
    with tempfile.TemporaryFile('w+b') as err:
        p = subprocess.Popen([OTF2_PRINT, anchor], stdout=subprocess.PIPE, stderr=err, universal_newlines=text)
        try:
            yield p.stdout
        except BaseException:
            p.kill()
            raise
        finally:
            p.stdout.close()
            p.wait()
        if p.returncode != 0:
            err.seek(0)
            raise CheckError('otf2-print %s: exit %d: %s' % (anchor, p.returncode,
                                                             err.read().decode(errors='replace').strip()[-500:]))


def print_events(path):
    """The events as otf2-print prints them (libotf2's reader in C: ~0.3 us per event, the Python reader ~4 us),
    in time order, each location's in its file order: (KIND, location id, time, attributes) with KIND as
    otf2-print names it (ENTER, THREAD_ACQUIRE_LOCK, ...) and the attributes as printed. otf2-print must exit 0
    (raises CheckError after the last event otherwise)."""
    with otf2_print_stream(path) as out:
        for line in out:
            f = line.split(None, 3)
            if len(f) >= 3 and f[2].isdigit() and f[1].isdigit():
                yield f[0], int(f[1]), int(f[2]), f[3].rstrip('\n') if len(f) > 3 else ''


def otf2_print_count(path, text):
    """How many times text occurs in otf2-print's output (it must exit 0), counted block by block."""
    key, n, tail = text.encode(), 0, b''
    with otf2_print_stream(path, text=False) as out:
        for block in iter(lambda: out.read(1 << 20), b''):
            block = tail + block
            cut = block.rfind(b'\n') + 1   # whole lines: text holds no newline
            n += block.count(key, 0, cut)
            tail = block[cut:]
    return n + tail.count(key)


# otf2-print's names of the kinds the rules look at
_PRINT_KINDS = {'ENTER': 'Enter', 'LEAVE': 'Leave', 'PROGRAM_BEGIN': 'ProgramBegin', 'PROGRAM_END': 'ProgramEnd',
                'MPI_COLLECTIVE_BEGIN': 'MpiCollectiveBegin', 'MPI_COLLECTIVE_END': 'MpiCollectiveEnd',
                'RMA_COLLECTIVE_BEGIN': 'RmaCollectiveBegin', 'RMA_COLLECTIVE_END': 'RmaCollectiveEnd'}


def check_all_print(path, exit_status=None, allow_open=False, each=None, clock_range=False):
    """check_all on otf2-print's output, for archives of millions of events (print_events: a tenth of the
    Python reader's time), the same rules (Rules): otf2-print exits 0; per location timestamps never
    decrease and start at or after the global offset (timer resolution > 0); Enter/Leave balanced and
    nested (by region); ProgramBegin first and, with exit_status, ProgramEnd with that status last on the
    master location ("Master thread", else the first defined). clock_range: every event within
    ClockProperties too (check_clock_range). each(KIND, location id, time, attributes): called for every
    event (the caller's own checks in the same pass). Returns {location id: its number of events}."""
    anchor = find_anchor(path)
    names, clock = [], {}
    for line in otf2_print(anchor, '-G').splitlines():
        if line.startswith('LOCATION '):
            f = line.split(None, 2)
            names.append((int(f[1]), f[2].split('"')[1]))
        elif line.startswith('CLOCK_PROPERTIES '):
            clock = dict(kv.split(': ', 1) for kv in line.split(None, 1)[1].split(', '))
    master = ([i for i, n in names if n == 'Master thread'] + [i for i, _ in names])[:1]
    if clock and int(clock['Ticks per Seconds']) <= 0:
        raise CheckError('%s: timer resolution %s' % (anchor, clock['Ticks per Seconds']))
    rules = Rules(anchor, int(clock['Global Offset']) if clock else None)
    first, last, counts, first_time = {}, {}, {}, {}
    for kind, loc, t, attrs in print_events(anchor):
        i = counts.get(loc, 0)
        k = _PRINT_KINDS.get(kind, kind)
        rules.time(loc, '', i, kind, t)
        rules.nest(loc, '', i, k, attrs)
        if not i:
            first[loc] = (k, kind)
            first_time[loc] = t
        last[loc] = (k, '%s %s' % (kind, attrs))
        counts[loc] = i + 1
        if each is not None:
            each(kind, loc, t, attrs)
    if clock_range and clock and counts:
        off, length = int(clock['Global Offset']), int(clock['Length'])
        lo = min(first_time.values())
        hi = max(rules.prev.values())
        if lo < off or hi > off + length:
            raise CheckError('%s: events from %d to %d, ClockProperties cover %d to %d (%+d / %+d)' %
                             (anchor, lo, hi, off, off + length, lo - off, hi - off - length))
    if not allow_open:
        for loc in counts:
            rules.closed(loc, '')
    m = master[0] if master else None
    if m not in counts:
        raise CheckError('%s: no events on the master location' % anchor)
    status = None
    if last[m][0] == 'ProgramEnd':
        status = int(last[m][1].split('Exit status: ', 1)[1].split(',')[0])
    rules.program(first[m], last[m], status, exit_status)
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description='check an OTF2 archive with the reference reader')
    ap.add_argument('archive')
    ap.add_argument('--locations', type=int)
    ap.add_argument('--min-events', type=int)
    ap.add_argument('--region', action='append', default=[])
    ap.add_argument('--no-region', action='append', default=[])
    ap.add_argument('--exit-status', type=int)
    ap.add_argument('--open-ok', action='store_true', help='regions may stay open')
    ap.add_argument('--print', action='store_true', help='print the events')
    a = ap.parse_args(argv)
    try:
        tr = load(a.archive)
        check_all(tr, a.exit_status, a.open_ok)
        if a.locations is not None and len(tr.locations) != a.locations:
            raise CheckError('%d locations, expected %d' % (len(tr.locations), a.locations))
        if a.min_events is not None and len(tr.events()) < a.min_events:
            raise CheckError('%d events, expected >= %d' % (len(tr.events()), a.min_events))
        for r in a.region:
            if tr.count('Enter', region=r) == 0:
                raise CheckError('no Enter of region %s' % r)
        for r in a.no_region:
            if tr.count('Enter', region=r) != 0:
                raise CheckError('region %s recorded' % r)
        if a.print:
            for e in sorted(tr.events(), key=lambda e: (e.time, e.loc)):
                print(e)
        print('ok: %r' % tr)
        return 0
    except CheckError as e:
        print('FAIL: %s' % e)
        return 1


if __name__ == '__main__':
    sys.exit(main())
