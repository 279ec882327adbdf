/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * e2e_util.c - the helpers of the end-to-end tests of the OTF2 writer (e2e.h).
 */
#include "e2e.h"

/* one directory per test (each test runs in its own process) */
char *tmpdir(const char *tag)
{
	static char p[4096];
	const char *base = getenv("FMT_TEST_DIR");

	if (!base || !*base)
		base = "/tmp";
	mkdir(base, 0777);
	snprintf(p, sizeof(p), "%s/%s-XXXXXX", base, tag);
	cr_assert_not_null(mkdtemp(p), "mkdtemp %s: %s", p, strerror(errno));
	return p;
}

int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

void rmtree(const char *dir)
{
	if (!getenv("FMT_KEEP"))        /* FMT_KEEP=1: keep archives for debugging */
		sh("rm -rf '%s'", dir);
}

otf2w_archive *open_archive(const char *dir, uint64_t chunk, uint32_t max_chunks)
{
	otf2w_archive_params p;
	otf2w_archive *ar = NULL;
	otf2w_status st;

	memset(&p, 0, sizeof(p));
	p.path = dir;
	p.event_chunk_size = chunk;
	p.max_chunks = max_chunks;
	p.creator = "fmt e2e";
	st = otf2w_archive_open(&p, &ar);
	cr_assert_eq(st, OTF2W_OK, "otf2w_archive_open(%s): %s", dir, otf2w_status_str(st));
	cr_assert_not_null(ar);
	return ar;
}

/* minimal clean global definitions: locations locs[], regions 0..nregions-1 */
void gdefs(otf2w_archive *ar, const uint64_t *locs, int n, uint32_t nregions)
{
	otf2w_gdef_writer *g;
	char name[32];
	uint32_t i;

	OK(otf2w_archive_get_gdef_writer(ar, &g));
	OK(otf2w_gdef_clock_properties(g, 1000000000, 0, UINT64_MAX >> 1, OTF2W_UNDEFINED_UINT64));
	OK(otf2w_gdef_string(g, 0, ""));
	OK(otf2w_gdef_string(g, 1, "node"));
	OK(otf2w_gdef_string(g, 2, "process"));
	OK(otf2w_gdef_string(g, 3, "thread"));
	for (i = 0; i < nregions; i++) {
		snprintf(name, sizeof(name), "region_%u", i);
		OK(otf2w_gdef_string(g, 4 + i, name));
	}
	OK(otf2w_gdef_system_tree_node(g, 0, 1, 0, OTF2W_UNDEFINED_REF));
	OK(otf2w_gdef_location_group(g, 0, 2, OTF2W_LGROUP_PROCESS, 0, OTF2W_UNDEFINED_REF));
	for (i = 0; i < (uint32_t)n; i++)
		OK(otf2w_gdef_location(g, locs[i], 3, OTF2W_LOC_CPU_THREAD, 0, 0));
	for (i = 0; i < nregions; i++)
		OK(otf2w_gdef_region(g, i, 4 + i, 4 + i, 0, OTF2W_ROLE_FUNCTION, OTF2W_PARADIGM_USER,
				     OTF2W_REGION_FLAG_NONE, OTF2W_UNDEFINED_REF, 0, 0));
}

void anchor_of(char *buf, size_t len, const char *dir)
{
	snprintf(buf, len, "%s/traces.otf2", dir);
}

void oracle_check(const char *dir, struct oracle_loc *locs, int n)
{
	char anchor[4096], err[512];
	int i;

	anchor_of(anchor, sizeof(anchor), dir);
	cr_assert_eq(oracle_read(anchor, locs, n, err, sizeof(err)), 0, "reference reader: %s", err);
	for (i = 0; i < n; i++) {
		struct oracle_loc *l = &locs[i];

		cr_assert(l->seen, "location %lu not read", (unsigned long)l->loc);
		cr_assert_eq(l->bad, 0, "location %lu: %lu Enter/Leave records differ from the "
			     "written ones (first at record %lu)", (unsigned long)l->loc,
			     (unsigned long)l->bad, (unsigned long)l->first_bad);
		cr_assert_eq(l->backwards, 0, "location %lu: time goes backwards",
			     (unsigned long)l->loc);
		cr_assert_eq(l->bad_position, 0, "location %lu: %lu event positions (chunk header "
			     "counters) wrong", (unsigned long)l->loc, (unsigned long)l->bad_position);
		cr_assert_eq(l->nother, 0, "location %lu: unexpected records", (unsigned long)l->loc);
	}
}

void otf2_print_ok(const char *dir)
{
	int rc = sh("otf2-print -Werror --silent '%s/traces.otf2' >'%s.print' 2>&1", dir, dir);

	if (rc != 0)
		sh("head -c 2000 '%s.print' >&2", dir);
	cr_assert_eq(rc, 0, "otf2-print -Werror rejects %s (see above)", dir);
	cr_assert_eq(sh("grep -q '^\\[OTF2\\]' '%s.print'", dir), 1,
		     "otf2-print reports [OTF2] errors for %s", dir);
	sh("rm -f '%s.print'", dir);
}

/* pthread locking callbacks that count their calls (struct lockstat) */
int lk_create(void *ud, void **lock)
{
	struct lockstat *s = ud;
	pthread_mutex_t *m = malloc(sizeof(*m));

	if (!m || pthread_mutex_init(m, NULL))
		return -1;
	__atomic_add_fetch(&s->creates, 1, __ATOMIC_SEQ_CST);
	*lock = m;
	return 0;
}

int lk_destroy(void *ud, void *lock)
{
	struct lockstat *s = ud;

	__atomic_add_fetch(&s->destroys, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_destroy(lock);
	free(lock);
	return 0;
}

int lk_lock(void *ud, void *lock)
{
	struct lockstat *s = ud;

	if (pthread_mutex_lock(lock))
		return -1;
	s->locks++;               /* under the lock */
	if (++s->depth != 1)
		s->max_depth_err++;
	return 0;
}

int lk_unlock(void *ud, void *lock)
{
	struct lockstat *s = ud;

	s->unlocks++;
	s->depth--;
	return pthread_mutex_unlock(lock) ? -1 : 0;
}

const otf2w_locking_callbacks lk_cb = { lk_create, lk_destroy, lk_lock, lk_unlock };
