/* SPDX-License-Identifier: BSD-3-Clause */
/* report.h - `tracer report` / `tracer convert`: one pass over an archive
 * (format/otf2r.h, merged in time order) into per-location, per-region and
 * per-rank figures, printed as text, JSON or one HTML page. */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "otf2r.h"

/* Figures of one region on one location (or in total). Times in ticks.
 * incl counts the outermost activation only (recursion is not counted
 * twice); min/max are over every call's inclusive duration. */
struct rep_stat {
	uint64_t calls, incl, excl, min, max;
	uint64_t done;          /* calls that left (min/max are over these) */
	uint64_t sum;           /* their durations (in a --from/--to window: the average's) */
};
/* Average duration of a call (ticks): inclusive time per call, in a time
 * window the durations of the calls that began in it. */
#define REP_AVG(r, s) ((s)->done ? ((r)->windowed ? (s)->sum : (s)->incl) / (s)->done : 0)

struct rep_frame {
	uint32_t ri;            /* region index */
	uint64_t enter, child;
	size_t bsend;           /* blocking send in this call: index + 1 into rep.bsend, 0 none */
	int counted;            /* entered inside the time window (a call of the report) */
	uint32_t cc;            /* its calling context (CallingContextEnter), UINT32_MAX none */
};

/* What the report (or the export) covers: --from/--to, a time window of
 * the run, each end seconds from its start or a percentage of its length
 * (ClockProperties): calls that begin in it are counted, with the time they
 * spend in it, every other record when its time is in it; --thread and
 * --rank, the locations of the report: only their events are read. */
#define REP_SEL_MAX 64
struct rep_select {
	int on;                 /* a window was asked */
	double from, to;        /* to < 0: the end */
	int from_pct, to_pct;
	const char *from_s, *to_s;
	uint64_t threads[REP_SEL_MAX];   /* location ids */
	uint32_t ranks[REP_SEL_MAX];     /* location group ids */
	size_t nthreads, nranks;
	int cpath;              /* keep each location's wait states for rep_cpath_build */
};
#define REP_SELECT_INIT { .to = -1, .from_s = "0", .to_s = "100%" }
/* getopt options of a selection: from, to, thread, rank (val 'F', 'T',
 * 'U', 'R'); rep_select_option takes one (cmd: for the error line): 0, or
 * 2 after one line on stderr. */
#define REP_SELECT_OPTIONS                                                        \
	{ "from", required_argument, 0, 'F' }, { "to", required_argument, 0, 'T' },  \
	{ "thread", required_argument, 0, 'U' }, { "rank", required_argument, 0, 'R' }
#define REP_SELECT_HELP                                                              \
	"      --from T, --to T  only the time window [T1, T2) of the run: seconds from\n" \
	"                      its start or a percentage of its length (2.5, 40%)\n"    \
	"      --thread ID     only this location (repeat for more)\n"                  \
	"      --rank R        only the locations of this process (location group:\n"   \
	"                      the MPI rank, the part of a process tree; repeat)\n"
int rep_select_option(struct rep_select *s, int c, const char *arg, const char *cmd);
/* The cases of a getopt switch that take the selection options into sel
 * (the option character in c; a bad value: return 2). */
#define REP_SELECT_CASES(sel, c, cmd)                                    \
	case 'F':                                                        \
	case 'T':                                                        \
	case 'U':                                                        \
	case 'R':                                                        \
		if (rep_select_option(&(sel), (c), optarg, (cmd)))       \
			return 2;                                        \
		break
struct rep;
/* r's window (win_from/win_to, ticks) and selected locations (sel) from s
 * (NULL: everything); after rep_setup_defs. -1 after one line on stderr
 * (a thread or rank the archive does not have, an empty window). */
int rep_select_set(struct rep *r, const struct rep_select *s);

#include "report_bins.h"

struct rep_loc {
	uint64_t id;
	const char *name;
	size_t group;           /* index into rep.groups */
	uint64_t events, first, last, flushes, onoff;
	struct rep_frame *stack;
	size_t depth, cap;
	struct rep_stat *reg;   /* [nregions] */
	uint32_t *active;       /* [nregions] activations open */
	uint64_t busy;          /* time inside any region */
	uint64_t tasks[3];      /* ThreadTaskCreate, ThreadTaskSwitch, ThreadTaskComplete */
	uint64_t late_sender;   /* receives waiting for a send that began later */
	uint64_t late_sender_n;
	uint64_t ls_call, ls_max;   /* the receiving call charged last (its enter + 1, 0 none), its wait */
	uint64_t wait_nxn, late_bcast, early_reduce;   /* wait states at collectives (report_wait.c) */
	uint64_t late_receiver; /* blocking sends waiting for a receive that began later */
	uint64_t late_receiver_n;
	size_t ls_from, ls_ws;  /* the charged call's sender (location index), its wait state + 1 (0 none) */
	struct rep_ws *ws;      /* its wait states, for the critical path (rep.cpath_on) */
	size_t nws, capws;
	uint64_t mpi;           /* exclusive time in MPI regions */
	uint64_t last_change;   /* timeline: time of the last Enter/Leave */
	uint64_t coll_begin;    /* time of the open MpiCollectiveBegin, UINT64_MAX none */
	double *mcur;           /* [nmm] last value of each metric member */
	double *msum;           /* [nmm] relative members: the sum of their values */
	uint8_t *mhave;         /* [nmm] a value was seen */
	double *mstart;         /* [cap * nmm] values at each open frame's Enter */
	uint8_t *mstart_have;
	struct rep_bins *lod;   /* timeline: [rep.nlod] levels, the coarsest first; NULL none */
};

/* A lock (ThreadAcquireLock / OmpAcquireLock), keyed by process and lock
 * id. wait = time from the Enter of the innermost open region (the lock
 * call) to the acquisition. */
struct rep_waiter {
	size_t loc;
	uint64_t wait;
};

/* The calls of region ri made by one calling function (region fn) at one
 * line (SourceCodeLocation scl) (report_callers.c). */
struct rep_caller {
	uint32_t ri, fn, scl;
	uint64_t calls, time, max;
};
void rep_caller_add(struct rep *r, uint32_t ri, uint32_t cc, uint64_t d);
void rep_text_callers(const struct rep *r, size_t limit, FILE *f);
void rep_json_callers(const struct rep *r, FILE *f);
void rep_html_callers(const struct rep *r, size_t limit, FILE *f);

struct rep_lock {
	size_t group;
	uint32_t id;
	uint64_t address;       /* TRACER::LOCK_ADDRESS of its first acquisition, 0 unknown */
	char *name, *object;    /* its symbol and object (report_locks.c), NULL unknown */
	char *init;             /* where a heap or stack lock was made: "function (file:line)", NULL unknown */
	uint64_t acquisitions, wait, max;
	struct rep_waiter *waiters;
	size_t nwaiters, capwaiters;
};

/* Message matching: sends and receives paired in order per key (sender
 * process, receiver process, communicator, tag). */
struct rep_matchq {
	uint64_t key[4];
	int used, side;               /* side of the queued values */
	uint64_t *vals;
	size_t head, n, cap;
};
struct rep_match {
	struct rep_matchq *q;
	size_t n, cap;
};
/* An end of side `side` (0 = send, 1 = receive) with value v: returns the
 * value of the oldest queued end of the other side (*matched = 1), else
 * queues v and returns it (*matched = 0). */
uint64_t rep_match(struct rep_match *m, const uint64_t key[4], int side, uint64_t v, int *matched);
void rep_match_free(struct rep_match *m);

#define REP_MAXMSGS 5000
struct rep_msg {
	size_t from, to;        /* location indices */
	uint64_t sent, received;
};

struct rep_group {
	uint32_t id;
	const char *name;
	uint8_t type;
	size_t nlocs;
};

struct rep {
	otf2r_archive *ar;
	uint64_t resolution, offset;     /* ticks per second, global offset */
	size_t nregions;
	const otf2r_gdef_region **regions;
	const char **region_names;
	uint32_t *region_by_id;          /* dense id -> index, UINT32_MAX none */
	size_t region_ids;
	struct rep_loc *locs;
	size_t nlocs;
	struct rep_group *groups;
	size_t ngroups;
	uint64_t events, first, last, bytes;
	const char *program;
	uint64_t *msg_count, *msg_bytes; /* ngroups x ngroups, sender-major */
	uint64_t messages;
	uint64_t t0, t1;                 /* timeline range (0, 0 = none) */
	size_t nlod;                     /* timeline: levels of detail per location */
	uint64_t win_from, win_to;       /* the time window: [from, to), ticks */
	int windowed;
	uint8_t *sel;                    /* non-NULL: locations selected, the others dropped */
	uint32_t lock_addr_attr;         /* the Attribute TRACER::LOCK_ADDRESS, UINT32_MAX none */
	struct rep_lock *locks;          /* open addressing on (group, id) */
	size_t nlocks, caplocks;
	/* calling contexts (sampling): by dense id */
	size_t ncc;
	uint32_t *cc_region;             /* region index, UINT32_MAX none */
	uint32_t *cc_parent;             /* cc id, UINT32_MAX root */
	uint32_t *cc_scl;                /* SourceCodeLocation id */
	uint64_t *cc_samples;            /* CallingContextSample per leaf context */
	struct rep_caller *callers;      /* open addressing on (region, caller) */
	size_t ncallers, capcallers;
	uint64_t samples;
	/* MPI collectives per communicator id (dense, < ncomm): operations
	 * (MpiCollectiveEnd records) and time from their Begin */
	size_t ncomm;
	uint64_t *coll_count, *coll_time;
	/* calls: the ends of one member (the first location that ended a
	 * collective on the communicator; every member takes part in each) */
	uint64_t *coll_calls;
	size_t *coll_first;
	struct rep_match match;          /* messages: enter time of the other end */
	/* message ends waiting for their partner: enter of the call, location,
	 * time, blocking send index + 1; slots reused through a free list */
	struct rep_pend {
		uint64_t enter, time;
		size_t loc, bsend, next_free;
	} *pend;
	size_t npend, cappend, pend_free;        /* pend_free: index + 1, 0 none */
	/* blocking sends until their call's Leave and their receive are known */
	struct rep_bsend {
		size_t loc, next_free, rloc;         /* rloc: the receiver's location */
		uint64_t enter, leave, recv_enter;   /* UINT64_MAX: not yet known */
	} *bsend;
	size_t nbsend, capbsend, bsend_free;
	/* metric members (dense index) and their change per region: value at
	 * the Leave minus value at the Enter, outermost activations only */
	size_t nmm;
	uint32_t *mm_ids;                /* [nmm] MetricMember ids */
	uint8_t *mm_rel;                 /* [nmm] RELATIVE_* mode: summed (msum), not per region */
	double *mreg;                    /* [nregions * nmm] */
	uint64_t *mreg_n;                /* [nregions * nmm] activations with both values */
	struct rep_msg *msgs;            /* matched messages for the timeline (first REP_MAXMSGS) */
	struct {
		uint64_t key;            /* comm << 32 | rank */
		size_t group;
		int valid;
	} peer_cache[4096];
	size_t nmsgs, capmsgs;
	struct rep_io *io;               /* I/O operations (report_io.c), NULL: none */
	struct rep_waits *waits;         /* collectives in flight (report_wait.c), NULL: none */
	struct rep_pair *pairs;          /* who waits on whom: open addressing on (waiter, waited) */
	size_t npairs, cappairs;
	int cpath_on;                    /* wait states kept per location (rep_select.cpath) */
	struct rep_cpath *cpath;         /* the critical path (report_path.c), NULL: not computed */
};

#include "report_waits.h"

/* `tracer convert --pprof` (convert_pprof.c): the samples of the events
 * passed to rep_pprof_sample (location li), written as a gzip'ed pprof
 * profile at close (write 0: none; from/to: the window, ticks). open:
 * NULL after one line on stderr; close: 0, 1 when there was no sample, -1
 * after a write error (one line each; no file left but a written one). */
struct rep_pprof;
struct rep_pprof *rep_pprof_open(const char *path);
void rep_pprof_sample(struct rep_pprof *p, const struct rep *r, size_t li, const otf2r_event *ev);
int rep_pprof_close(struct rep_pprof *p, const struct rep *r, int write, uint64_t from, uint64_t to);

/* Samples per region: self (the sampled context's region), total (any
 * context on the path, each region once per sample); line = the
 * SourceCodeLocation of the region's most sampled context. */
struct rep_fn {
	size_t ri;
	uint64_t self, total;
	uint32_t scl;
};
size_t rep_sample_functions(const struct rep *r, struct rep_fn *out);   /* sorted by self */
uint32_t *rep_region_canon(const struct rep *r);   /* per region the first of its name (free) */
size_t rep_sample_paths(const struct rep *r, uint32_t *out);             /* cc ids by samples */
const char *rep_scl_text(const struct rep *r, uint32_t scl, char *buf, size_t n);
int rep_print_collapsed(const struct rep *r, FILE *f);   /* folded stacks: "a;b;c N" lines */

/* Read the whole archive (merged order) into r. 0 ok, -1 error (message on
 * stderr prefixed "tracer:"). t0/t1 != 0 enables the timeline bins. */
/* Process (group index) of rank `rank` of communicator `comm`, SIZE_MAX if unknown. */
size_t rep_peer_group(const struct rep *r, uint32_t comm, uint32_t rank);
void *rep_xcalloc(size_t n, size_t s);          /* exits on failure */
const char *rep_str_or(const struct rep *r, uint32_t id, const char *dflt);
/* MpiSend/MpiIsend/MpiRecv/MpiIrecv: late-sender time and timeline lines. */
void rep_late_sender(struct rep *r, size_t li, const otf2r_event *ev);
/* The call holding blocking send k (index + 1) was left at t. */
void rep_bsend_left(struct rep *r, size_t k, uint64_t t);
/* Fields of MpiSend/MpiIsend (returns 1) or MpiRecv/MpiIrecv (0). */
int rep_message(const otf2r_event *ev, uint32_t *peer, uint32_t *comm, uint32_t *tag,
		uint64_t *bytes);
const char *rep_comm_name(const struct rep *r, uint32_t comm);
int rep_setup_defs(struct rep *r, otf2r_archive *ar);   /* definitions only */
int rep_build(struct rep *r, otf2r_archive *ar, int timeline);
int rep_build_select(struct rep *r, otf2r_archive *ar, int timeline, const struct rep_select *w);
void rep_free(struct rep *r);
struct rep_stat rep_total(const struct rep *r, size_t ri, int group);   /* group -1 = all */

/* Output */
struct rep_opts {
	size_t limit;                    /* rows per table (0 = all) */
	const char *sort;                /* excl, incl, calls, name, avg, max */
	int has_location;
	uint64_t location;
};
/* Locks with acquisitions, sorted by total wait (most first). */
size_t rep_sorted_locks(const struct rep *r, const struct rep_lock **out);
/* The names of the locks from their sites (TRACER::LOCK_SITE::<id>), read
 * from the objects with libdw (report_locks.c; rep_build calls it). */
void rep_lock_names(struct rep *r);
void rep_sorted(const struct rep *r, const struct rep_stat *st, const struct rep_opts *o,
		size_t *order, size_t *n);
int rep_print_text(const struct rep *r, const struct rep_opts *o, FILE *f);
/* I/O (report_io.c): IoOperationBegin/Complete/Cancelled of location li;
 * the text tables (nothing without I/O) and the JSON member ",\"io\":{...}". */
void rep_io_event(struct rep *r, size_t li, const otf2r_event *ev);
/* A Metric record of "ISO C character reads"/"... writes" (TRACER_IO_CHARS=
 * fold): its calls, bytes and time added to its handle's file (others:
 * nothing). */
void rep_io_chars(struct rep *r, const otf2r_event *ev);
/* The name of IoFile (regular file or directory) id file, "?" if none. */
const char *rep_io_file_name(const struct rep *r, uint32_t file);
/* Figures per (file, layer): *out allocated (free it), their number. */
struct rep_io_row {
	const char *file, *layer;
	uint64_t ops, bytes, time;
};
size_t rep_io_rows(const struct rep *r, struct rep_io_row **out);
void rep_io_print_text(const struct rep *r, const struct rep_opts *o, FILE *f);
/* Relative metrics (MPI polling, folded character I/O): per member, the sum
 * of its values over all threads and per thread (text; JSON member
 * ",\"metric_totals\":[...]"). */
void rep_metric_totals_text(const struct rep *r, FILE *f);
void rep_metric_totals_json(const struct rep *r, FILE *f);
void rep_io_print_html(const struct rep *r, const struct rep_opts *o, FILE *f);
void rep_io_print_json(const struct rep *r, FILE *f);
void rep_io_free(struct rep *r);
/* MpiCollectiveEnd of location li (its call open): wait states of the
 * operation once every member ended it (report_wait.c); in: the end is
 * inside the time window (its member's waits count). */
void rep_wait_end(struct rep *r, size_t li, const otf2r_event *ev, int in);
void rep_wait_free(struct rep *r);
int rep_print_json(const struct rep *r, const struct rep_opts *o, FILE *f);
int rep_print_html(const struct rep *r, const struct rep_opts *o, FILE *f);
/* The page's colour of region ri: "hsl(...)" into out. */
void rep_html_color(const struct rep *r, size_t ri, char *out, size_t n);
/* The timeline's levels above 0 as <script type="application/json"
 * id="lod">, rows of height row_h (report_html_lod.c): *out (malloc'd,
 * *len bytes; NULL on failure), the levels it holds (the finer ones left
 * out beyond its size cap). */
size_t rep_html_lod(const struct rep *r, int row_h, char **out, size_t *len);
extern const char rep_html_timeline_js[];   /* zoom, pan, levels of detail */
/* s as a JSON string, quotes included, handed to emit(ud, bytes, n) in pieces */
void rep_json_escape(const char *s, void (*emit)(void *ud, const char *p, size_t n), void *ud);
void rep_json_str(FILE *f, const char *s);
void rep_html_str(FILE *f, const char *s);
double rep_ms(const struct rep *r, uint64_t ticks);
/* A metric value's raw 64-bit pattern as a double (type: OTF2 Type). */
double rep_metric_value(uint8_t type, uint64_t raw);
/* Double *cap (first size `first`) and realloc p; exits on failure. */
void *rep_grow(void *p, size_t *cap, size_t first, size_t size);

/* Open the one ARCHIVE argument left after getopt (argc < 0: usage error):
 * 0, or the exit status (usage / error printed). */
int rep_open(int argc, char **argv, const char *usage, otf2r_archive **ar);
/* A read error of the archive at path: one line, naming tracer recover and
 * tracer merge when path exists. */
void rep_read_error(const char *path, const char *why);
int tracer_report_main(int argc, char **argv);
int tracer_convert_main(int argc, char **argv);
int tracer_diff_main(int argc, char **argv);   /* report_diff.c */

#endif /* TRACER_REPORT_H */
