/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fmt_dual - writes the same trace twice, with our writer (DIR/ours) and
 * with the reference libotf2 writer (DIR/ref), call by call. check_dual.py
 * reads both back with the reference reader and compares every record.
 *
 *   fmt_dual all DIR    every event (4 value rounds), global definition,
 *                       local MappingTable/ClockOffset, snapshot and marker
 *                       record; attribute lists of every type; an empty
 *                       location; a location with id > 2^32.
 *   fmt_dual all-py DIR the same without InterComm and without the events
 *                       with UNDEFINED references (python reader limits)
 *   fmt_dual edge DIR   minimum chunk size (256 KiB): ~100k events of mixed
 *                       sizes straddling many chunk ends, records > 255
 *                       bytes (ProgramBegin 300 args, Metric 255 values,
 *                       Group 20000 members, 100 KB string), thousands of
 *                       definitions, a 10000-entry mapping table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "dual.h"

#define LOC_BIG 4294967296ull

static int edge_mode;
static int no_intercomm;        /* mode all-py */

void dual_fail(const char *what, int line)
{
	fprintf(stderr, "fmt_dual: %s (line %d)\n", what, line);
	exit(1);
}

void dual_check(otf2w_status os, OTF2_ErrorCode rs, const struct dual *d,
		const char *what, int line)
{
	if (os == OTF2W_OK && rs == OTF2_SUCCESS)
		return;
	fprintf(stderr, "fmt_dual: %s (line %d): ours=%s (%s) reference=%s\n", what, line,
		otf2w_status_str(os), os ? otf2w_archive_error(d->oa) : "",
		OTF2_Error_GetName(rs));
	exit(1);
}

/* ---- attribute lists ------------------------------------------------------- */

static void attr_add(struct dual *d, uint32_t id, uint8_t type, OTF2_AttributeValue v)
{
	OTF2_AttributeValue raw;

	memset(&raw, 0, sizeof(raw));
	raw = v;
	dual_check(otf2w_attr_list_add(d->oal, id, type, raw.uint64),
		   OTF2_AttributeList_AddAttribute(d->ral, id, type, v), d, "attr", __LINE__);
	d->have_attrs = 1;
}

#define AV(member, val) ({ OTF2_AttributeValue _v; memset(&_v, 0, sizeof(_v)); \
	_v.member = (val); _v; })

static void attrs_all_types(struct dual *d, int k)
{
	attr_add(d, 1, OTF2_TYPE_UINT8, AV(uint8, 0xff));
	attr_add(d, 2, OTF2_TYPE_UINT16, AV(uint16, 0xfffe));
	attr_add(d, 3, OTF2_TYPE_UINT32, AV(uint32, k & 1 ? 0 : 0xffffffffu));
	attr_add(d, 4, OTF2_TYPE_UINT64, AV(uint64, k & 1 ? 0x123456789ull : UINT64_MAX));
	attr_add(d, 5, OTF2_TYPE_INT8, AV(int8, -1));
	attr_add(d, 6, OTF2_TYPE_INT16, AV(int16, -300));
	attr_add(d, 7, OTF2_TYPE_INT32, AV(int32, k & 1 ? INT32_MIN : -5));
	attr_add(d, 8, OTF2_TYPE_INT64, AV(int64, k & 1 ? INT64_MIN : INT64_MAX));
	attr_add(d, 9, OTF2_TYPE_FLOAT, AV(float32, 1.5f));
	attr_add(d, 10, OTF2_TYPE_DOUBLE, AV(float64, -2.25e-300));
	attr_add(d, 11, OTF2_TYPE_STRING, AV(stringRef, 2));
	attr_add(d, 12, OTF2_TYPE_ATTRIBUTE, AV(attributeRef, 3));
	attr_add(d, 13, OTF2_TYPE_LOCATION, AV(locationRef, LOC_BIG));
	attr_add(d, 14, OTF2_TYPE_REGION, AV(regionRef, 1));
	attr_add(d, 15, OTF2_TYPE_GROUP, AV(groupRef, 0));
	attr_add(d, 16, OTF2_TYPE_METRIC, AV(metricRef, 0));
	attr_add(d, 17, OTF2_TYPE_COMM, AV(commRef, 1));
	attr_add(d, 18, OTF2_TYPE_PARAMETER, AV(parameterRef, 2));
	attr_add(d, 19, OTF2_TYPE_RMA_WIN, AV(rmaWinRef, 1));
	attr_add(d, 20, OTF2_TYPE_SOURCE_CODE_LOCATION, AV(sourceCodeLocationRef, 1));
	attr_add(d, 21, OTF2_TYPE_CALLING_CONTEXT, AV(callingContextRef, 0));
	attr_add(d, 22, OTF2_TYPE_INTERRUPT_GENERATOR, AV(interruptGeneratorRef, 1));
	attr_add(d, 23, OTF2_TYPE_IO_FILE, AV(ioFileRef, 1));
	attr_add(d, 24, OTF2_TYPE_IO_HANDLE, AV(ioHandleRef, 0));
	attr_add(d, 25, OTF2_TYPE_LOCATION_GROUP, AV(locationGroupRef, 1));
}

void dual_attrs(struct dual *d, int k)
{
	if (k < 0) {
		otf2w_attr_list_clear(d->oal);
		OTF2_AttributeList_RemoveAllAttributes(d->ral);
		d->have_attrs = 0;
		return;
	}
	dual_attrs(d, -1);
	switch (k % 4) {
	case 0:
		break;
	case 1:
		attr_add(d, 3, OTF2_TYPE_UINT32, AV(uint32, (uint32_t)k * 1000u));
		break;
	case 2:
		attr_add(d, 4, OTF2_TYPE_UINT64, AV(uint64, UINT64_MAX - (uint64_t)k));
		attr_add(d, 8, OTF2_TYPE_INT64, AV(int64, -(int64_t)k));
		attr_add(d, 11, OTF2_TYPE_STRING, AV(stringRef, (uint32_t)k % DUAL_NSTRINGS));
		break;
	case 3:
		attrs_all_types(d, k);
		break;
	}
}

void dual_step(struct dual *d)
{
	static const uint64_t steps[] = { 1, 0, 3, 1000, 0, 1, 65536, 7 };

	d->t += steps[d->step++ % (sizeof(steps) / sizeof(steps[0]))];
}

uint8_t dual_metric_type(int i)
{
	static const uint8_t t[] = { OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_DOUBLE };

	return t[i % 3];
}

uint64_t dual_metric_value(int i, uint8_t type)
{
	static const uint64_t u[] = { 0, 1, UINT64_MAX, 0x1234567890ull };
	static const int64_t s[] = { -1, INT64_MIN, 5, 0 };
	static const double f[] = { 1.0, -0.5, 1e300, 0.0 };
	union { double d; uint64_t u; } cv;

	switch (type) {
	case OTF2_TYPE_UINT64:
		return u[i % 4];
	case OTF2_TYPE_INT64:
		return (uint64_t)s[i % 4];
	default:
		cv.d = f[i % 4];
		return cv.u;
	}
}

/* ---- archive setup ------------------------------------------------------------ */

static OTF2_FlushType ref_pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc,
				    void *cb, bool final)
{
	return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks ref_flush = { .otf2_pre_flush = ref_pre_flush };

static void open_both(struct dual *d, const char *dir, uint64_t chunk, uint64_t defchunk)
{
	char path[4096];
	otf2w_archive_params p;

	memset(&p, 0, sizeof(p));
	snprintf(path, sizeof(path), "%s/ours", dir);
	p.path = path;
	p.event_chunk_size = chunk;
	p.def_chunk_size = defchunk;
	p.max_chunks = 4;
	p.machine_name = "node-ü";
	p.creator = "fmt_dual";
	p.description = "";
	if (otf2w_archive_open(&p, &d->oa) != OTF2W_OK)
		dual_fail("otf2w_archive_open", __LINE__);

	snprintf(path, sizeof(path), "%s/ref", dir);
	d->ra = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE, chunk, defchunk,
				  OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!d->ra)
		dual_fail("OTF2_Archive_Open", __LINE__);
	OTF2_Archive_SetFlushCallbacks(d->ra, &ref_flush, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(d->ra);
	OTF2_Archive_SetMachineName(d->ra, "node-ü");
	OTF2_Archive_SetCreator(d->ra, "fmt_dual");
	OTF2_Archive_SetDescription(d->ra, "");
	OTF2_Archive_OpenEvtFiles(d->ra);
	OTF2_Archive_OpenDefFiles(d->ra);
	OTF2_Archive_OpenSnapFiles(d->ra);

	dual_check(otf2w_archive_set_property(d->oa, "FMT::TEST::KIND", edge_mode ? "edge" : "all"),
		   OTF2_Archive_SetProperty(d->ra, "FMT::TEST::KIND", edge_mode ? "edge" : "all",
					    false), d, "property", __LINE__);
	dual_check(otf2w_archive_set_property(d->oa, "fmt::lower_case", "ü"),
		   OTF2_Archive_SetProperty(d->ra, "fmt::lower_case", "ü", false),
		   d, "property", __LINE__);

	dual_check(otf2w_archive_get_gdef_writer(d->oa, &d->og), OTF2_SUCCESS, d, "gdef", __LINE__);
	d->rg = OTF2_Archive_GetGlobalDefWriter(d->ra);
	d->oal = otf2w_attr_list_new();
	d->ral = OTF2_AttributeList_New();
	if (!d->rg || !d->oal || !d->ral)
		dual_fail("writers", __LINE__);
}

static void loc_begin(struct dual *d, uint64_t loc)
{
	dual_check(otf2w_archive_get_evt_writer(d->oa, loc, &d->oe), OTF2_SUCCESS, d,
		   "get evt writer", __LINE__);
	d->re = OTF2_Archive_GetEvtWriter(d->ra, loc);
	if (!d->re)
		dual_fail("OTF2_Archive_GetEvtWriter", __LINE__);
	d->nevents = 0;
}

static void loc_end(struct dual *d)
{
	dual_check(otf2w_archive_close_evt_writer(d->oa, d->oe),
		   OTF2_Archive_CloseEvtWriter(d->ra, d->re), d, "close evt writer", __LINE__);
}

static void def_begin(struct dual *d, uint64_t loc)
{
	dual_check(otf2w_archive_get_def_writer(d->oa, loc, &d->od), OTF2_SUCCESS, d,
		   "get def writer", __LINE__);
	d->rd = OTF2_Archive_GetDefWriter(d->ra, loc);
	if (!d->rd)
		dual_fail("OTF2_Archive_GetDefWriter", __LINE__);
}

static void def_end(struct dual *d)
{
	dual_check(otf2w_archive_close_def_writer(d->oa, d->od),
		   OTF2_Archive_CloseDefWriter(d->ra, d->rd), d, "close def writer", __LINE__);
}

/* MappingTable on both: n pairs, dense (local = index) or sparse */
static void mapping(struct dual *d, uint8_t type, int sparse, const uint64_t *local,
		    const uint64_t *global, uint64_t n)
{
	otf2w_id_map *om = otf2w_id_map_new(sparse, n);
	OTF2_IdMap *rm = OTF2_IdMap_Create(sparse ? OTF2_ID_MAP_SPARSE : OTF2_ID_MAP_DENSE, n);
	uint64_t i;

	if (!om || !rm)
		dual_fail("id map", __LINE__);
	for (i = 0; i < n; i++) {
		dual_check(otf2w_id_map_add(om, sparse ? local[i] : i, global[i]),
			   OTF2_IdMap_AddIdPair(rm, sparse ? local[i] : i, global[i]),
			   d, "id map add", __LINE__);
	}
	dual_check(otf2w_ldef_mapping_table(d->od, type, om),
		   OTF2_DefWriter_WriteMappingTable(d->rd, type, rm), d, "MappingTable", __LINE__);
	otf2w_id_map_delete(om);
	OTF2_IdMap_Free(rm);
}

static void close_both(struct dual *d)
{
	otf2w_status os;
	OTF2_ErrorCode rs;

	otf2w_attr_list_delete(d->oal);
	OTF2_AttributeList_Delete(d->ral);
	rs = OTF2_Archive_CloseGlobalDefWriter(d->ra, d->rg);
	if (rs != OTF2_SUCCESS)
		dual_fail("OTF2_Archive_CloseGlobalDefWriter", __LINE__);
	os = otf2w_archive_close(d->oa);
	rs = OTF2_Archive_Close(d->ra);
	if (os != OTF2W_OK) {
		fprintf(stderr, "fmt_dual: otf2w_archive_close: %s\n", otf2w_status_str(os));
		exit(1);
	}
	if (rs != OTF2_SUCCESS)
		dual_fail("OTF2_Archive_Close", __LINE__);
}

/* ---- global definitions ---------------------------------------------------------- */

static void def_strings(struct dual *d, uint32_t n)
{
	static char big[100001];
	char buf[64];
	uint32_t i;

	for (i = 0; i < n; i++) {
		const char *s = buf;

		switch (i) {
		case 0: s = ""; break;
		case 1: s = "main"; break;
		case 2: s = "Grüße, 世界 ✓ \xf0\x9f\x98\x80"; break;
		case 3: s = "tab\there \"quoted\" back\\slash"; break;
		case 4:
			if (edge_mode) {
				memset(big, 'x', sizeof(big) - 1);
				big[sizeof(big) - 1] = 0;
				s = big;
				break;
			}
			/* fallthrough */
		default:
			snprintf(buf, sizeof(buf), "string_%u", i);
		}
		DGDEF(string, String, i, s);
	}
}

static const uint64_t all_locs[] = { 0, 1, 2, LOC_BIG };

static void def_all(struct dual *d, const uint64_t *locs, int nlocs, uint32_t nregions)
{
	static const uint64_t members_loc[] = { 0, 1 };
	static const uint64_t ranks[] = { 1, 0 };
	static const uint64_t metric_members[] = { 0, 1, 2 };
	static const uint32_t dims[] = { 0, 1 };
	static const uint32_t coords[] = { 1, 0xffffffffu };
	static const uint8_t io_props[] = { OTF2_IO_PARADIGM_PROPERTY_VERSION };
	static const uint8_t io_types[] = { OTF2_TYPE_STRING };
	static const uint64_t io_values[] = { 10 };
	uint32_t mm32[3] = { 0, 1, 2 };
	uint32_t i;
	union { double d; uint64_t u; } dv = { .d = 2.5 };

	DGDEF(clock_properties, ClockProperties, 1000000000ull, 0, 1ull << 42, 1700000000123456789ull);
	def_strings(d, edge_mode ? 3000 + DUAL_NSTRINGS : DUAL_NSTRINGS);
	DGDEF(paradigm, Paradigm, OTF2_PARADIGM_MPI, 5, OTF2_PARADIGM_CLASS_PROCESS);
	DGDEF(paradigm, Paradigm, OTF2_PARADIGM_PTHREAD, 6, OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT);
	DGDEF_AV(paradigm_property, ParadigmProperty, OTF2_TYPE_STRING, 7, OTF2_PARADIGM_MPI,
		 OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE);
	DGDEF_AV(paradigm_property, ParadigmProperty, OTF2_TYPE_UINT8, 1, OTF2_PARADIGM_MPI,
		 OTF2_PARADIGM_PROPERTY_RMA_ONLY);
	DGDEF(io_paradigm, IoParadigm, 0, 8, 9, OTF2_IO_PARADIGM_CLASS_SERIAL,
	      OTF2_IO_PARADIGM_FLAG_OS, 1, (const void *)io_props, (const void *)io_types,
	      (const void *)io_values);
	DGDEF(io_paradigm, IoParadigm, 1, 11, 12, OTF2_IO_PARADIGM_CLASS_PARALLEL,
	      OTF2_IO_PARADIGM_FLAG_NONE, 0, NULL, NULL, NULL);
	for (i = 0; i <= 25; i++)
		DGDEF(attribute, Attribute, i, 20 + i, i & 1 ? 50 + i : OTF2_UNDEFINED_STRING, i);
	DGDEF(attribute, Attribute, 26, 4, 0, OTF2_TYPE_UINT64);
	DGDEF(system_tree_node, SystemTreeNode, 0, 13, 14, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	DGDEF(system_tree_node, SystemTreeNode, 1, 15, 16, 0);
	DGDEF_AV(system_tree_node_property, SystemTreeNodeProperty, OTF2_TYPE_STRING, 18, 0, 17);
	DGDEF_AV(system_tree_node_property, SystemTreeNodeProperty, OTF2_TYPE_UINT64, UINT64_MAX, 1, 19);
	DGDEF(system_tree_node_domain, SystemTreeNodeDomain, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE);
	DGDEF(system_tree_node_domain, SystemTreeNodeDomain, 1, OTF2_SYSTEM_TREE_DOMAIN_NETWORKING_DEVICE);
	DGDEF(location_group, LocationGroup, 0, 80, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
	      OTF2_UNDEFINED_LOCATION_GROUP);
	DGDEF(location_group, LocationGroup, 1, 81, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, 1, 0);
	DGDEF_AV(location_group_property, LocationGroupProperty, OTF2_TYPE_INT64, -5, 0, 82);
	DGDEF_AV(location_group_property, LocationGroupProperty, OTF2_TYPE_DOUBLE, dv.u, 1, 83);
	for (i = 0; i < (uint32_t)nlocs; i++)
		DGDEF(location, Location, locs[i], 90 + i,
		      i == 3 ? OTF2_LOCATION_TYPE_METRIC : OTF2_LOCATION_TYPE_CPU_THREAD,
		      i == 2 ? 0 : 1000 + i, i & 1);
	DGDEF_AV(location_property, LocationProperty, OTF2_TYPE_STRING, 85, locs[0], 84);
	DGDEF_AV(location_property, LocationProperty, OTF2_TYPE_UINT32, 0xffffffffu, locs[1], 86);
	DGDEF(region, Region, 0, 1, 100, 101, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
	      OTF2_REGION_FLAG_NONE, 102, 10, 20);
	DGDEF(region, Region, 1, 103, 103, 0, OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_MPI,
	      OTF2_REGION_FLAG_DYNAMIC | OTF2_REGION_FLAG_PHASE, OTF2_UNDEFINED_STRING, 0, 0xffffffffu);
	for (i = 2; i < nregions; i++)
		DGDEF(region, Region, i, DUAL_NSTRINGS + i, DUAL_NSTRINGS + i, 0,
		      (OTF2_RegionRole)(i % 39), (OTF2_Paradigm)(i % 25), i % 4, 2, i, i + 1);
	DGDEF(callsite, Callsite, 0, 102, 42, 0, 1);
	DGDEF(callpath, Callpath, 0, OTF2_UNDEFINED_CALLPATH, 0);
	DGDEF(callpath, Callpath, 1, 0, 1);
	DGDEF(group, Group, 0, 104, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
	      OTF2_GROUP_FLAG_NONE, 2, members_loc);
	DGDEF(group, Group, 1, 105, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
	      OTF2_GROUP_FLAG_NONE, 2, ranks);
	DGDEF(group, Group, 2, 106, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
	      OTF2_GROUP_FLAG_NONE, 0, NULL);
	DGDEF(group, Group, 3, 107, OTF2_GROUP_TYPE_LOCATIONS, OTF2_PARADIGM_UNKNOWN,
	      OTF2_GROUP_FLAG_GLOBAL_MEMBERS, 0, NULL);
	DGDEF(metric_member, MetricMember, 0, 110, 111, OTF2_METRIC_TYPE_PAPI,
	      OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, 112);
	DGDEF(metric_member, MetricMember, 1, 113, 0, OTF2_METRIC_TYPE_OTHER,
	      OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE, OTF2_BASE_BINARY, -3, 114);
	DGDEF(metric_member, MetricMember, 2, 115, 0, OTF2_METRIC_TYPE_USER,
	      OTF2_METRIC_RELATIVE_NEXT, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, INT64_MAX, 116);
	DGDEF(metric_class, MetricClass, 0, 3, (const void *)mm32, OTF2_METRIC_ASYNCHRONOUS,
	      OTF2_RECORDER_KIND_CPU);
	DGDEF(metric_class, MetricClass, 1, 1, (const void *)(mm32 + 1),
	      OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_UNKNOWN);
	DGDEF(metric_instance, MetricInstance, 2, 0, locs[0], OTF2_SCOPE_LOCATION, locs[1]);
	DGDEF(metric_class_recorder, MetricClassRecorder, 0, locs[0]);
	DGDEF(group, Group, 4, 108, OTF2_GROUP_TYPE_METRIC, OTF2_PARADIGM_UNKNOWN,
	      OTF2_GROUP_FLAG_NONE, 3, metric_members);
	if (edge_mode) {
		uint64_t *big = malloc(20000 * sizeof(*big));

		for (i = 0; i < 20000; i++)
			big[i] = i % nregions;
		DGDEF(group, Group, 5, 109, OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_UNKNOWN,
		      OTF2_GROUP_FLAG_NONE, 20000, big);
		free(big);
	}
	DGDEF(comm, Comm, 0, 117, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
	DGDEF(comm, Comm, 1, 118, 2, 0, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS);
	/* the python3-otf2 InterComm binding is broken (reads the fields as a
	 * Comm's): the archive for the python reader has no InterComm */
	if (!no_intercomm)
		DGDEF(inter_comm, InterComm, 2, 119, 1, 2, 0, OTF2_COMM_FLAG_NONE);
	DGDEF(parameter, Parameter, 0, 120, OTF2_PARAMETER_TYPE_STRING);
	DGDEF(parameter, Parameter, 1, 121, OTF2_PARAMETER_TYPE_INT64);
	DGDEF(parameter, Parameter, 2, 122, OTF2_PARAMETER_TYPE_UINT64);
	DGDEF(rma_win, RmaWin, 0, 123, 0, OTF2_RMA_WIN_FLAG_NONE);
	DGDEF(rma_win, RmaWin, 1, 124, 1, OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS);
	DGDEF(cart_dimension, CartDimension, 0, 125, 4, OTF2_CART_PERIODIC_FALSE);
	DGDEF(cart_dimension, CartDimension, 1, 126, 0xffffffffu, OTF2_CART_PERIODIC_TRUE);
	DGDEF(cart_topology, CartTopology, 0, 127, 0, 2, (const void *)dims);
	DGDEF(cart_coordinate, CartCoordinate, 0, 0, 2, (const void *)coords);
	DGDEF(cart_coordinate, CartCoordinate, 0, 1, 0, NULL);
	DGDEF(source_code_location, SourceCodeLocation, 0, 102, 42);
	DGDEF(source_code_location, SourceCodeLocation, 1, 128, 0);
	DGDEF(calling_context, CallingContext, 0, 0, 0, OTF2_UNDEFINED_CALLING_CONTEXT);
	DGDEF(calling_context, CallingContext, 1, 1, 1, 0);
	DGDEF_AV(calling_context_property, CallingContextProperty, OTF2_TYPE_UINT64, 99, 1, 129);
	DGDEF(interrupt_generator, InterruptGenerator, 0, 130, OTF2_INTERRUPT_GENERATOR_MODE_TIME,
	      OTF2_BASE_DECIMAL, -9, 1000000);
	DGDEF(interrupt_generator, InterruptGenerator, 1, 131, OTF2_INTERRUPT_GENERATOR_MODE_COUNT,
	      OTF2_BASE_BINARY, 0, UINT64_MAX);
	DGDEF(io_regular_file, IoRegularFile, 0, 132, 0);
	DGDEF(io_directory, IoDirectory, 1, 133, 1);
	DGDEF_AV(io_file_property, IoFileProperty, OTF2_TYPE_STRING, 135, 0, 134);
	DGDEF_AV(io_file_property, IoFileProperty, OTF2_TYPE_INT32, (uint32_t)-1, 1, 136);
	DGDEF(io_handle, IoHandle, 0, 137, 0, 0, OTF2_IO_HANDLE_FLAG_PRE_CREATED,
	      OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE);
	DGDEF(io_handle, IoHandle, 1, 138, 1, 1, OTF2_IO_HANDLE_FLAG_ALL_PROXY, 0, 0);
	DGDEF(io_pre_created_handle_state, IoPreCreatedHandleState, 0,
	      OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_STATUS_FLAG_APPEND);
	DGDEF_AV(callpath_parameter, CallpathParameter, OTF2_TYPE_INT64, -1, 1, 1);
}

/* ---- markers ------------------------------------------------------------------- */

#define DMARK(snake, Camel, ...) \
	dual_check(otf2w_marker_##snake(d->om, __VA_ARGS__), \
		   OTF2_MarkerWriter_Write##Camel(d->rm, __VA_ARGS__), d, #Camel, __LINE__)

static void markers(struct dual *d)
{
	dual_check(otf2w_archive_get_marker_writer(d->oa, &d->om), OTF2_SUCCESS, d, "marker",
		   __LINE__);
	d->rm = OTF2_Archive_GetMarkerWriter(d->ra);
	if (!d->rm)
		dual_fail("OTF2_Archive_GetMarkerWriter", __LINE__);
	DMARK(def_marker, DefMarker, 0, "", "", OTF2_SEVERITY_NONE);
	DMARK(def_marker, DefMarker, 1, "grp ü", "cat", OTF2_SEVERITY_HIGH);
	DMARK(def_marker, DefMarker, 2, "grp ü", "other category", OTF2_SEVERITY_LOW);
	DMARK(marker, Marker, 0, 0, 0, OTF2_MARKER_SCOPE_GLOBAL, OTF2_UNDEFINED_UINT64, "");
	DMARK(marker, Marker, 1000, UINT64_MAX, 1, OTF2_MARKER_SCOPE_LOCATION, LOC_BIG, "text ✓");
	DMARK(marker, Marker, 2000, 5, 2, OTF2_MARKER_SCOPE_LOCATION_GROUP, 1, "lg");
	DMARK(marker, Marker, 3000, 0, 1, OTF2_MARKER_SCOPE_SYSTEM_TREE_NODE, 0, "stn");
	DMARK(marker, Marker, 4000, 1, 2, OTF2_MARKER_SCOPE_GROUP, 0, "group");
	DMARK(marker, Marker, 5000, 2, 0, OTF2_MARKER_SCOPE_COMM, 1, "comm");
	/* the marker file is written by otf2w_archive_close / OTF2_Archive_Close */
}

/* ---- the two scenarios --------------------------------------------------------- */

static void snapshots(struct dual *d, uint64_t loc)
{
	int r;

	dual_check(otf2w_archive_get_snap_writer(d->oa, loc, &d->os), OTF2_SUCCESS, d,
		   "snap writer", __LINE__);
	d->rs = OTF2_Archive_GetSnapWriter(d->ra, loc);
	if (!d->rs)
		dual_fail("OTF2_Archive_GetSnapWriter", __LINE__);
	for (r = 0; r < 4; r++) {
		d->t = 10000 * (uint64_t)(r + 1);
		dual_gen_snapshot(d, r, 1 + r);
	}
	dual_check(otf2w_archive_close_snap_writer(d->oa, d->os),
		   OTF2_Archive_CloseSnapWriter(d->ra, d->rs), d, "close snap", __LINE__);
}

static void run_all(struct dual *d, const char *dir)
{
	static const uint64_t reg_g[] = { 1, 0 };
	static const uint64_t comm_l[] = { 5, 1000 }, comm_g[] = { 0, 1 };
	static const uint64_t str_l[] = { 7 }, str_g[] = { 3 };
	static const uint64_t att_l[] = { 200, 3 }, att_g[] = { 26, 4 };
	int r;

	open_both(d, dir, 1 << 20, 4 << 20);
	dual_check(otf2w_archive_set_number_of_snapshots(d->oa, 4),
		   OTF2_Archive_SetNumberOfSnapshots(d->ra, 4), d, "nsnap", __LINE__);
	def_all(d, all_locs, 4, 2);

	/* location 0: every event record type, 4 value rounds */
	loc_begin(d, 0);
	d->t = 0;
	/* round 3 (UNDEFINED references) only for otf2-print: the python
	 * reader cannot resolve undefined references */
	for (r = 0; r < (no_intercomm ? 3 : 4); r++)
		dual_gen_events(d, r);
	loc_end(d);

	/* location 1: mapping tables and clock offsets */
	def_begin(d, 1);
	mapping(d, OTF2_MAPPING_REGION, 0, NULL, reg_g, 2);
	mapping(d, OTF2_MAPPING_COMM, 1, comm_l, comm_g, 2);
	mapping(d, OTF2_MAPPING_STRING, 1, str_l, str_g, 1);
	mapping(d, OTF2_MAPPING_ATTRIBUTE, 1, att_l, att_g, 2);
	DLDEF(clock_offset, ClockOffset, 0, 0, 0.0);
	DLDEF(clock_offset, ClockOffset, 1000, 100, 0.5);
	DLDEF(clock_offset, ClockOffset, 3000, -50, 1.5);
	def_end(d);
	loc_begin(d, 1);
	d->t = 500;
	DEVT(enter, Enter, 0);
	d->t = 1000;
	attr_add(d, 200, OTF2_TYPE_UINT64, AV(uint64, 5));
	attr_add(d, 3, OTF2_TYPE_UINT64, AV(uint64, 6));
	DEVT(mpi_send, MpiSend, 3, 1000, 7, 8);
	d->t = 2000;
	DEVT(parameter_string, ParameterString, 0, 7);
	d->t = 4000;
	DEVT(buffer_flush, BufferFlush, 4100);
	DEVT(leave, Leave, 0);
	loc_end(d);

	/* location 2: no events at all; location 2^32: a few */
	loc_begin(d, 2);
	loc_end(d);
	loc_begin(d, LOC_BIG);
	d->t = 1ull << 40;
	DEVT(enter, Enter, 1);
	dual_step(d);
	DEVT(leave, Leave, 1);
	loc_end(d);

	for (r = 0; r < 4; r++)
		snapshots(d, all_locs[r]);
	markers(d);
	close_both(d);
}

static void run_edge(struct dual *d, const char *dir)
{
	const uint64_t *locs = all_locs;
	const uint32_t nregions = 3000;
	uint64_t *ml, *mg;
	uint32_t args[300];
	uint8_t ty[255];
	uint64_t va[255];
	int i, j;

	open_both(d, dir, 262144, 262144);
	def_all(d, locs, 4, nregions);

	/* a 10000-entry sparse region mapping table on location 1 */
	ml = malloc(10000 * sizeof(*ml));
	mg = malloc(10000 * sizeof(*mg));
	for (i = 0; i < 10000; i++) {
		ml[i] = 100000 + (uint64_t)i * 3;
		mg[i] = (uint64_t)i % nregions;
	}
	def_begin(d, 1);
	mapping(d, OTF2_MAPPING_REGION, 1, ml, mg, 10000);
	def_end(d);

	/* location 0: mixed-size records over many 256 KiB chunks */
	loc_begin(d, 0);
	d->t = 1;
	for (i = 0; i < 100000; i++) {
		switch (i % 7) {
		case 0: case 3:
			DEVT(enter, Enter, (uint32_t)(i % nregions));
			break;
		case 1: case 4:
			DEVT(leave, Leave, (uint32_t)(i % nregions));
			break;
		case 2:
			DEVT(mpi_send, MpiSend, (uint32_t)i, i & 1, (uint32_t)(i * 31),
			     (uint64_t)i << (i % 57));
			break;
		case 5:
			dual_attrs(d, i);
			DEVT(mpi_recv, MpiRecv, (uint32_t)i, 0, 0xffffffffu, UINT64_MAX - (uint64_t)i);
			break;
		case 6:
			if (i % 4999 == 6) {
				for (j = 0; j < 300; j++)
					args[j] = (uint32_t)(j + i) % (DUAL_NSTRINGS + 3000);
				DEVT(program_begin, ProgramBegin, 4, 300, (const void *)args);
			} else if (i % 2999 == 6) {
				for (j = 0; j < 255; j++) {
					ty[j] = dual_metric_type(i + j);
					va[j] = dual_metric_value(i + j, ty[j]);
				}
				DEVT(metric, Metric, 0, 255, (const void *)ty, (const void *)va);
			} else {
				DEVT(parameter_int, ParameterInt, 1, -(int64_t)i * 1000003);
			}
			break;
		}
		if (i % 3)
			d->t += (uint64_t)(i % 5);
	}
	loc_end(d);

	/* location 1: mapped region ids */
	loc_begin(d, 1);
	d->t = 5;
	for (i = 0; i < 2000; i++) {
		DEVT(enter, Enter, (uint32_t)ml[(i * 7) % 10000]);
		d->t++;
	}
	loc_end(d);
	free(ml);
	free(mg);

	/* locations 2 and 2^32: no events */
	loc_begin(d, 2);
	loc_end(d);
	loc_begin(d, LOC_BIG);
	loc_end(d);
	close_both(d);
}

int main(int argc, char **argv)
{
	struct dual d;
	char cmd[4200];

	if (argc != 3 || (strcmp(argv[1], "all") && strcmp(argv[1], "all-py") &&
			  strcmp(argv[1], "edge"))) {
		fprintf(stderr, "usage: fmt_dual all|all-py|edge DIR\n");
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/ours' '%s/ref'", argv[2], argv[2]);
	if (system(cmd) != 0)
		return 1;
	mkdir(argv[2], 0777);
	memset(&d, 0, sizeof(d));
	edge_mode = !strcmp(argv[1], "edge");
	no_intercomm = strcmp(argv[1], "all") != 0;
	if (edge_mode)
		run_edge(&d, argv[2]);
	else
		run_all(&d, argv[2]);
	return 0;
}
