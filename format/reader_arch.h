/* SPDX-License-Identifier: BSD-3-Clause */
/* reader_arch.h - the otf2r archive structure (reader.c, reader_evt.c). */
#ifndef OTF2R_READER_ARCH_H
#define OTF2R_READER_ARCH_H

#include <limits.h>
#include "reader_int.h"

struct otf2r_archive {
	char anchor_path[PATH_MAX];
	char base[PATH_MAX];          /* DIR/NAME */
	char def_path[PATH_MAX + 8];
	char err[PATH_MAX + 512];
	otf2r_anchor anchor;
	uint8_t *anchor_buf, *def_buf; /* strings of anchor and defs point here */
	otf2r_def *defs;
	size_t ndefs, capdefs;
	otf2r__arena defmem;          /* arrays of the global definitions */
	void *idx[64];                /* per record type: sorted (id, index) */
	size_t nidx[64];
	const otf2r_gdef_location **locs;
	size_t nlocs;
	const char **strings;         /* dense string table, or NULL */
	size_t nstrings;
	const otf2r_gdef_clock_properties *clock;
	int open_fds;                 /* event files kept open by readers */
};

int otf2r__fail(otf2r_archive *ar, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int otf2r__walk_local_defs(otf2r_archive *ar, uint64_t location, otf2r_ldef_cb cb, void *ud,
			   otf2r__arena *mem);
int otf2r__gdef_self(unsigned type, const union otf2r_gdef_u *u, uint64_t *self);

#endif /* OTF2R_READER_ARCH_H */
