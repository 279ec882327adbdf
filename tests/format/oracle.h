/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oracle.h - reads an archive back with the reference libotf2 reader
 * (linked into the test only, never into libtracer) and checks the
 * Enter/Leave stream of every location against a simple generator:
 *
 *   event k (k = 0, 1, ...): Enter if k is even, else Leave;
 *   region = region_base + (k / 2) % region_mod (region_base if mod is 0);
 *   time   = k * time_mul / time_div (both 0 -> 1).
 *
 * With gaps = 1 (stop-on-full tests), k is derived from the time
 * (time_div must be 1) so that dropped events are allowed; times must then
 * increase strictly. BufferFlush and MeasurementOnOff records are counted.
 */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdint.h>

#define ORACLE_MAX_FLUSH 256

struct oracle_loc {
	/* expectations (set by the caller) */
	uint64_t loc;
	uint32_t region_base, region_mod;
	uint64_t time_div, time_mul;
	int gaps;

	/* results */
	int seen;                 /* location defined and its events read */
	uint64_t records;         /* all event records */
	uint64_t nseq;            /* Enter/Leave records */
	uint64_t bad;             /* Enter/Leave records not matching the generator */
	uint64_t first_bad;       /* record index of the first mismatch */
	uint64_t backwards;       /* records with a time below the previous one */
	uint64_t bad_position;    /* eventPosition != running record number */
	uint64_t last_time;
	uint64_t last_k;          /* k of the last Enter/Leave */
	uint64_t nflush, non, noff, nother;
	uint64_t seq_after_off;   /* Enter/Leave after an OFF without ON */
	uint64_t flush_time[ORACLE_MAX_FLUSH], flush_stop[ORACLE_MAX_FLUSH];
	uint64_t off_time, on_time;
	int off;                  /* currently off */
};

/* Reads ANCHOR. locs[0..n-1] name the expected locations; the archive must
 * define exactly these. Returns 0 when the archive could be read (check the
 * per-location results), else -1 with a message in err. */
int oracle_read(const char *anchor, struct oracle_loc *locs, int n, char *err, int errlen);

#endif /* ORACLE_H */
