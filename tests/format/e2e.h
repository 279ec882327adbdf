/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e2e.h - what the end-to-end tests of the OTF2 writer share (e2e.c,
 * e2e_misuse.c; defined in e2e_util.c): a directory per test, shell
 * commands, an archive with its global definitions, the reference reader's
 * and otf2-print's verdicts, the Enter/Leave generator of oracle.h.
 */
#ifndef TR_E2E_H
#define TR_E2E_H
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <otf2/otf2.h>
#include "otf2w.h"
#include "oracle.h"

char *tmpdir(const char *tag);
int sh(const char *fmt, ...);
void rmtree(const char *dir);
otf2w_archive *open_archive(const char *dir, uint64_t chunk, uint32_t max_chunks);
void gdefs(otf2w_archive *ar, const uint64_t *locs, int n, uint32_t nregions);
void anchor_of(char *buf, size_t len, const char *dir);
void oracle_check(const char *dir, struct oracle_loc *locs, int n);
void otf2_print_ok(const char *dir);

#define OK(call) do { otf2w_status _s = (call); \
	cr_assert_eq(_s, OTF2W_OK, "%s: %s (%s)", #call, otf2w_status_str(_s), \
		     ar ? otf2w_archive_error(ar) : ""); } while (0)

/* otf2w locking callbacks on a pthread mutex each, counting their calls
 * (ud: a struct lockstat) */
struct lockstat {
	pthread_mutex_t m;
	long creates, destroys, locks, unlocks, depth, max_depth_err;
};
int lk_create(void *ud, void **lock);
int lk_destroy(void *ud, void *lock);
int lk_lock(void *ud, void *lock);
int lk_unlock(void *ud, void *lock);
extern const otf2w_locking_callbacks lk_cb;

/* Enter/Leave generator of oracle.h */
static inline otf2w_status gen_event(otf2w_evt_writer *w, uint64_t k, uint32_t base, uint32_t mod,
				     uint64_t div)
{
	uint32_t r = base + (mod ? (uint32_t)((k / 2) % mod) : 0);

	return (k & 1) ? otf2w_evt_leave(w, NULL, k / div, r) : otf2w_evt_enter(w, NULL, k / div, r);
}

#endif /* TR_E2E_H */
