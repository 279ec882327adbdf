/* SPDX-License-Identifier: BSD-3-Clause */
/* oracle.c - reference-reader (libotf2) checks, see oracle.h */
#include <stdio.h>
#include <string.h>
#include <otf2/otf2.h>
#include "oracle.h"

struct ctx {
	struct oracle_loc *locs;
	int n;
	int defined;       /* Location definitions found */
	int unknown;       /* Location definitions not in locs */
};

static void step(struct oracle_loc *l, uint64_t time, uint64_t pos)
{
	l->records++;
	if (pos != l->records)
		l->bad_position++;
	if (l->records > 1 && time < l->last_time)
		l->backwards++;
	l->last_time = time;
}

static void seq(struct oracle_loc *l, uint64_t time, uint64_t pos, int leave, uint32_t region)
{
	uint64_t k, div = l->time_div ? l->time_div : 1, mul = l->time_mul ? l->time_mul : 1;
	uint32_t want;

	if (l->gaps && l->nseq && time <= l->last_k)
		l->bad++;      /* strictly increasing when k comes from the time */
	step(l, time, pos);
	if (l->off)
		l->seq_after_off++;
	k = l->gaps ? time : l->nseq;
	want = l->region_base + (l->region_mod ? (uint32_t)((k / 2) % l->region_mod) : 0);
	if ((uint64_t)leave != (k & 1) || region != want || time != k * mul / div) {
		if (!l->bad)
			l->first_bad = l->records;
		l->bad++;
	}
	l->last_k = k;
	l->nseq++;
}

static struct oracle_loc *find(struct ctx *c, uint64_t loc)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->locs[i].loc == loc)
			return &c->locs[i];
	return NULL;
}

static OTF2_CallbackCode cb_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				  void *ud, OTF2_AttributeList *al, OTF2_RegionRef r)
{
	seq(ud, t, pos, 0, r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				  void *ud, OTF2_AttributeList *al, OTF2_RegionRef r)
{
	seq(ud, t, pos, 1, r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_flush(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				  void *ud, OTF2_AttributeList *al, OTF2_TimeStamp stop)
{
	struct oracle_loc *l = ud;

	step(l, t, pos);
	if (l->nflush < ORACLE_MAX_FLUSH) {
		l->flush_time[l->nflush] = t;
		l->flush_stop[l->nflush] = stop;
	}
	l->nflush++;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_onoff(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				  void *ud, OTF2_AttributeList *al, OTF2_MeasurementMode m)
{
	struct oracle_loc *l = ud;

	step(l, t, pos);
	if (m == OTF2_MEASUREMENT_OFF) {
		l->noff++;
		l->off_time = t;
		l->off = 1;
	} else {
		l->non++;
		l->on_time = t;
		l->off = 0;
	}
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_unknown(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos,
				    void *ud, OTF2_AttributeList *al)
{
	struct oracle_loc *l = ud;

	step(l, t, pos);
	l->nother++;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
				     OTF2_LocationType type, uint64_t nev, OTF2_LocationGroupRef g)
{
	struct ctx *c = ud;

	if (find(c, self))
		c->defined++;
	else
		c->unknown++;
	return OTF2_CALLBACK_SUCCESS;
}

int oracle_read(const char *anchor, struct oracle_loc *locs, int n, char *err, int errlen)
{
	OTF2_Reader *r;
	OTF2_GlobalDefReader *gdr;
	OTF2_GlobalDefReaderCallbacks *gcb;
	OTF2_EvtReaderCallbacks *ecb;
	struct ctx c = { .locs = locs, .n = n };
	uint64_t cnt;
	int i, ret = -1;

	r = OTF2_Reader_Open(anchor);
	if (!r) {
		snprintf(err, errlen, "OTF2_Reader_Open(%s) failed", anchor);
		return -1;
	}
	OTF2_Reader_SetSerialCollectiveCallbacks(r);
	gdr = OTF2_Reader_GetGlobalDefReader(r);
	gcb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, cb_location);
	if (!gdr || OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, gcb, &c) != OTF2_SUCCESS ||
	    OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &cnt) != OTF2_SUCCESS) {
		snprintf(err, errlen, "reading the global definitions failed");
		goto out_g;
	}
	if (c.defined != n || c.unknown) {
		snprintf(err, errlen, "%d of %d expected locations defined, %d others",
			 c.defined, n, c.unknown);
		goto out_g;
	}
	for (i = 0; i < n; i++)
		OTF2_Reader_SelectLocation(r, locs[i].loc);
	if (OTF2_Reader_OpenEvtFiles(r) != OTF2_SUCCESS) {
		snprintf(err, errlen, "OTF2_Reader_OpenEvtFiles failed");
		goto out_g;
	}
	ecb = OTF2_EvtReaderCallbacks_New();
	OTF2_EvtReaderCallbacks_SetEnterCallback(ecb, cb_enter);
	OTF2_EvtReaderCallbacks_SetLeaveCallback(ecb, cb_leave);
	OTF2_EvtReaderCallbacks_SetBufferFlushCallback(ecb, cb_flush);
	OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(ecb, cb_onoff);
	OTF2_EvtReaderCallbacks_SetUnknownCallback(ecb, cb_unknown);
	for (i = 0; i < n; i++) {
		OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(r, locs[i].loc);
		OTF2_ErrorCode e;

		if (!er) {
			snprintf(err, errlen, "no event reader for location %llu",
				 (unsigned long long)locs[i].loc);
			goto out_e;
		}
		OTF2_Reader_RegisterEvtCallbacks(r, er, ecb, &locs[i]);
		e = OTF2_Reader_ReadAllLocalEvents(r, er, &cnt);
		if (e != OTF2_SUCCESS) {
			snprintf(err, errlen, "reading location %llu: %s",
				 (unsigned long long)locs[i].loc, OTF2_Error_GetName(e));
			goto out_e;
		}
		if (cnt != locs[i].records) {
			snprintf(err, errlen, "location %llu: reader counted %llu, callbacks %llu",
				 (unsigned long long)locs[i].loc, (unsigned long long)cnt,
				 (unsigned long long)locs[i].records);
			goto out_e;
		}
		locs[i].seen = 1;
		OTF2_Reader_CloseEvtReader(r, er);
	}
	OTF2_Reader_CloseEvtFiles(r);
	ret = 0;
out_e:
	OTF2_EvtReaderCallbacks_Delete(ecb);
out_g:
	OTF2_GlobalDefReaderCallbacks_Delete(gcb);
	OTF2_Reader_Close(r);
	return ret;
}
