/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dual.h - write the same content with our writer (otf2w) and with the
 * reference libotf2 writer (the oracle), call by call, with identical
 * arguments. The two archives are then read back with the reference reader
 * and compared (check_dual.py).
 */
#ifndef DUAL_H
#define DUAL_H

#include <stdint.h>
#include <otf2/otf2.h>
#include "otf2w.h"

#define DUAL_NSTRINGS 400   /* strings 0..DUAL_NSTRINGS-1 are always defined */

struct dual {
	otf2w_archive *oa;          OTF2_Archive *ra;
	otf2w_gdef_writer *og;      OTF2_GlobalDefWriter *rg;
	otf2w_evt_writer *oe;       OTF2_EvtWriter *re;
	otf2w_def_writer *od;       OTF2_DefWriter *rd;
	otf2w_snap_writer *os;      OTF2_SnapWriter *rs;
	otf2w_marker_writer *om;    OTF2_MarkerWriter *rm;
	otf2w_attr_list *oal;       OTF2_AttributeList *ral;
	int have_attrs;             /* attribute lists of the next event are not empty */
	uint64_t t;                 /* time of the next event */
	uint64_t step;              /* step counter for dual_step */
	uint64_t nevents;           /* events written on the current location */
};

void dual_fail(const char *what, int line) __attribute__((noreturn));
void dual_check(otf2w_status os, OTF2_ErrorCode rs, const struct dual *d,
		const char *what, int line);

/* attribute list for the next event (both writers); k selects the content */
void dual_attrs(struct dual *d, int k);
/* advances d->t by a varying step (0 included) */
void dual_step(struct dual *d);
uint8_t dual_metric_type(int i);
uint64_t dual_metric_value(int i, uint8_t type);

#define DOAL(d) ((d)->have_attrs ? (d)->oal : NULL)
#define DRAL(d) ((d)->have_attrs ? (d)->ral : NULL)

/* one event on both writers (attribute lists consumed) */
#define DEVT(snake, Camel, ...) do { \
	dual_check(otf2w_evt_##snake(d->oe, DOAL(d), d->t, __VA_ARGS__), \
		   OTF2_EvtWriter_##Camel(d->re, DRAL(d), d->t, __VA_ARGS__), \
		   d, #Camel, __LINE__); \
	d->nevents++; dual_attrs(d, -1); } while (0)
#define DEVT0(snake, Camel) do { \
	dual_check(otf2w_evt_##snake(d->oe, DOAL(d), d->t), \
		   OTF2_EvtWriter_##Camel(d->re, DRAL(d), d->t), d, #Camel, __LINE__); \
	d->nevents++; dual_attrs(d, -1); } while (0)
#define DSNAP(snake, Camel, ...) \
	dual_check(otf2w_snap_##snake(d->os, NULL, d->t, __VA_ARGS__), \
		   OTF2_SnapWriter_##Camel(d->rs, NULL, d->t, __VA_ARGS__), \
		   d, "Snap" #Camel, __LINE__)
#define DGDEF(snake, Camel, ...) \
	dual_check(otf2w_gdef_##snake(d->og, __VA_ARGS__), \
		   OTF2_GlobalDefWriter_Write##Camel(d->rg, __VA_ARGS__), \
		   d, "Def" #Camel, __LINE__)
/* definitions with a trailing (type, attribute value) pair */
#define DGDEF_AV(snake, Camel, type, raw, ...) \
	dual_check(otf2w_gdef_##snake(d->og, __VA_ARGS__, type, (uint64_t)(raw)), \
		   OTF2_GlobalDefWriter_Write##Camel(d->rg, __VA_ARGS__, type, \
				(OTF2_AttributeValue){ .uint64 = (uint64_t)(raw) }), \
		   d, "Def" #Camel, __LINE__)
#define DLDEF(snake, Camel, ...) \
	dual_check(otf2w_ldef_##snake(d->od, __VA_ARGS__), \
		   OTF2_DefWriter_Write##Camel(d->rd, __VA_ARGS__), \
		   d, "LocalDef" #Camel, __LINE__)

extern const int dual_n_event_types;
extern const char *const dual_event_names[];
void dual_gen_events(struct dual *d, int round);
void dual_gen_snapshot(struct dual *d, int round, uint64_t cont_read_pos);

#endif /* DUAL_H */
