/* SPDX-License-Identifier: BSD-3-Clause */
/* report_bench ARCHIVE - read every event of ARCHIVE in global time order
 * and print "events=N seconds=S". BENCH_REF=0: our reader (format/otf2r,
 * merge by heap); BENCH_REF=1: the reference libotf2 global event reader
 * with Enter/Leave callbacks (every other record is decoded too). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_clock.h"
#include <sys/resource.h>

#if BENCH_REF
#include <otf2/otf2.h>

static uint64_t nevents, sum;
static OTF2_LocationRef locs[4096];
static size_t nlocs;

static OTF2_CallbackCode on_loc(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
				OTF2_LocationType t, uint64_t n, OTF2_LocationGroupRef g)
{
	OTF2_Reader *r = ud;
	OTF2_Reader_SelectLocation(r, self);
	if (nlocs < 4096)
		locs[nlocs++] = self;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud,
				  OTF2_AttributeList *al, OTF2_RegionRef region)
{
	nevents++;
	sum += region;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_other(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud,
				  OTF2_AttributeList *al)
{
	nevents++;
	return OTF2_CALLBACK_SUCCESS;
}

static int read_all(const char *anchor)
{
	OTF2_Reader *r = OTF2_Reader_Open(anchor);
	if (!r)
		return -1;
	OTF2_Reader_SetSerialCollectiveCallbacks(r);
	OTF2_GlobalDefReader *gd = OTF2_Reader_GetGlobalDefReader(r);
	OTF2_GlobalDefReaderCallbacks *gcb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, on_loc);
	OTF2_Reader_RegisterGlobalDefCallbacks(r, gd, gcb, r);
	uint64_t n;
	OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &n);
	OTF2_GlobalDefReaderCallbacks_Delete(gcb);
	OTF2_Reader_CloseGlobalDefReader(r, gd);
	OTF2_Reader_OpenDefFiles(r);
	OTF2_Reader_OpenEvtFiles(r);
	/* local definitions (mapping tables, clock offsets), then event readers */
	for (size_t i = 0; i < nlocs; i++) {
		OTF2_DefReader *dr = OTF2_Reader_GetDefReader(r, locs[i]);
		uint64_t k;
		if (dr) {
			OTF2_Reader_ReadAllLocalDefinitions(r, dr, &k);
			OTF2_Reader_CloseDefReader(r, dr);
		}
		OTF2_Reader_GetEvtReader(r, locs[i]);
	}
	OTF2_Reader_CloseDefFiles(r);
	OTF2_GlobalEvtReader *ge = OTF2_Reader_GetGlobalEvtReader(r);
	OTF2_GlobalEvtReaderCallbacks *ecb = OTF2_GlobalEvtReaderCallbacks_New();
	OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ecb, on_enter);
	OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ecb, on_enter);
	OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(ecb, on_other);
	OTF2_Reader_RegisterGlobalEvtCallbacks(r, ge, ecb, NULL);
	uint64_t got;
	OTF2_Reader_ReadAllGlobalEvents(r, ge, &got);
	OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
	OTF2_Reader_CloseGlobalEvtReader(r, ge);
	OTF2_Reader_CloseEvtFiles(r);
	OTF2_Reader_Close(r);
	nevents = got;
	return 0;
}
#else
#include "otf2r.h"

static uint64_t nevents, sum;

static int read_all(const char *anchor)
{
	char err[4096];
	otf2r_archive *ar;
	if (otf2r_open(anchor, &ar, err, sizeof err)) {
		fprintf(stderr, "report_bench: %s\n", err);
		return -1;
	}
	otf2r_merge *m;
	otf2r_event ev;
	int rc = otf2r_merge_open(ar, NULL, 0, &m);
	while (rc == 0 && (rc = otf2r_merge_next(m, &ev)) > 0) {
		rc = 0;
		nevents++;
		if (ev.type == OTF2R_EVT_ENTER || ev.type == OTF2R_EVT_LEAVE)
			sum += ev.u.enter.region;
	}
	if (rc < 0)
		fprintf(stderr, "report_bench: %s\n", otf2r_error(ar));
	otf2r_merge_close(m);
	otf2r_close(ar);
	return rc;
}
#endif

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: report_bench ARCHIVE.otf2\n");
		return 2;
	}
	double t0 = bench_wall_s();
	if (read_all(argv[1]))
		return 1;
	double t1 = bench_wall_s();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("events=%" PRIu64 " seconds=%.6f cpu=%.6f check=%" PRIu64 "\n", nevents, t1 - t0,
	       cpu, sum);
	return 0;
}
