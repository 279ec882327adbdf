/* SPDX-License-Identifier: BSD-3-Clause */
/* unit_encode.c - primitive encodings (otf2-format.md §4) and the exact
 * bytes of small event files, compared with reference-writer output. */
#include <criterion/criterion.h>

#include "unit_util.h"
#include "buffer_inline.h"

static size_t enc_cu32(uint32_t v, uint8_t *out)
{
	uint8_t buf[16] = { 0 };
	size_t n = (size_t)(otf2w__put_cu32(buf, v) - buf);
	memcpy(out, buf, 16);
	return n;
}

static size_t enc_cu64(uint64_t v, uint8_t *out)
{
	uint8_t buf[16] = { 0 };
	size_t n = (size_t)(otf2w__put_cu64(buf, v) - buf);
	memcpy(out, buf, 16);
	return n;
}

static size_t enc_ci64(int64_t v, uint8_t *out)
{
	uint8_t buf[16] = { 0 };
	size_t n = (size_t)(otf2w__put_ci64(buf, v) - buf);
	memcpy(out, buf, 16);
	return n;
}

#define EXPECT(fn, v, ...)                                                   \
	do {                                                                 \
		uint8_t want[] = { __VA_ARGS__ };                            \
		uint8_t got[16];                                             \
		size_t n = fn(v, got);                                       \
		cr_assert_eq(n, sizeof(want), #fn "(" #v "): %zu bytes", n); \
		cr_assert_arr_eq(got, want, sizeof(want), #fn "(" #v ")");   \
	} while (0)

Test(encode, cu32)
{
	EXPECT(enc_cu32, 0, 0x00);
	EXPECT(enc_cu32, 1, 0x01, 0x01);
	EXPECT(enc_cu32, 42, 0x01, 0x2a);
	EXPECT(enc_cu32, 1000, 0x02, 0xe8, 0x03);
	EXPECT(enc_cu32, 0x123456, 0x03, 0x56, 0x34, 0x12);
	EXPECT(enc_cu32, 1000000000, 0x04, 0x00, 0xca, 0x9a, 0x3b);
	EXPECT(enc_cu32, 0xfffffffeu, 0x04, 0xfe, 0xff, 0xff, 0xff);
	EXPECT(enc_cu32, 0xffffffffu, 0xff);
}

Test(encode, cu64)
{
	EXPECT(enc_cu64, 0, 0x00);
	EXPECT(enc_cu64, 255, 0x01, 0xff);
	EXPECT(enc_cu64, 256, 0x02, 0x00, 0x01);
	EXPECT(enc_cu64, 0xffffffffull, 0x04, 0xff, 0xff, 0xff, 0xff);
	EXPECT(enc_cu64, 0x0100000000000000ull, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x01);
	EXPECT(enc_cu64, 0xffffffffffffffffull, 0xff);
	EXPECT(enc_cu64, 0xfffffffffffffffeull, 0x08, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

Test(encode, ci64)
{
	EXPECT(enc_ci64, 0, 0x00);
	EXPECT(enc_ci64, 5, 0x01, 0x05);
	EXPECT(enc_ci64, -2, 0x08, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
	EXPECT(enc_ci64, -3, 0x08, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
	EXPECT(enc_ci64, INT64_MAX, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f);
}

Test(encode, attribute_values)
{
	uint8_t b[16];
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_UINT8, 0x1ff) - b, 1);
	cr_assert_eq(b[0], 0xff);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_UINT16, 0x1234) - b, 2);
	cr_assert_eq(b[0], 0x34);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_DOUBLE, 0x3ff0000000000000ull) - b, 8);
	cr_assert_eq(b[7], 0x3f);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_INT32, (uint64_t)(int64_t)-1) - b, 5);
	cr_assert_eq(b[0], 4);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_STRING, 7) - b, 2);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_LOCATION, 0x100000000ull) - b, 6);
	cr_assert_eq(otf2w__put_av(b, OTF2W_TYPE_REGION, 0xffffffffull) - b, 1);
	cr_assert_eq(b[0], 0xff);
}

/* otf2-format.md §8.1: the 50-byte 0.evt of the reference writer. */
Test(encode, reference_evt_bytes)
{
	char dir[512], path[600];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "refevt");
	otf2w_archive_params p = { .path = dir };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 1, 1);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	otf2w_attr_list *al = otf2w_attr_list_new();
	cr_assert_eq(otf2w_attr_list_add_uint64(al, 0, 42), OTF2W_OK);
	cr_assert_eq(otf2w_evt_enter(w, al, 1000, 0), OTF2W_OK);
	cr_assert_eq(otf2w_evt_leave(w, NULL, 2000, 0), OTF2W_OK);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	otf2w_attr_list_delete(al);

	static const uint8_t want[] = {
		0x03, 0x42, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
		0x05, 0xe8, 0x03, 0, 0, 0, 0, 0, 0,
		0x06, 0x06, 0x01, 0x01, 0x00, 0x04, 0x01, 0x2a,
		0x0c, 0x00,
		0x05, 0xd0, 0x07, 0, 0, 0, 0, 0, 0,
		0x0d, 0x00,
		0x02, 0x01,
	};
	size_t n;
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir);
	uint8_t *got = ut_read(path, &n);
	cr_assert_not_null(got);
	cr_assert_eq(n, sizeof(want), "0.evt is %zu bytes", n);
	cr_assert_arr_eq(got, want, n);
	free(got);

	/* empty local definitions: header with counters 1/0 + 02 01 */
	static const uint8_t wdef[] = { 0x03, 0x42, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x01 };
	snprintf(path, sizeof(path), "%s/traces/0.def", dir);
	got = ut_read(path, &n);
	cr_assert_not_null(got);
	cr_assert_eq(n, sizeof(wdef));
	cr_assert_arr_eq(got, wdef, n);
	free(got);
	ut_rmrf(dir);
}

/* Same time twice shares one timestamp; time 0 repeats it (reference quirk). */
Test(encode, timestamp_suppression)
{
	char dir[512], path[600];
	otf2w_archive *ar;
	otf2w_evt_writer *w;
	ut_tmpdir(dir, sizeof(dir), "ts");
	otf2w_archive_params p = { .path = dir };
	cr_assert_eq(otf2w_archive_open(&p, &ar), OTF2W_OK);
	ut_defs(ar, 1, 3);
	cr_assert_eq(otf2w_archive_get_evt_writer(ar, 0, &w), OTF2W_OK);
	otf2w_evt_enter(w, NULL, 0, 1);
	otf2w_evt_enter(w, NULL, 0, 2);
	otf2w_evt_enter(w, NULL, 100, 1);
	otf2w_evt_enter(w, NULL, 100, 2);
	cr_assert_eq(otf2w_archive_close(ar), OTF2W_OK);
	static const uint8_t want[] = {
		0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0x01, 0x01,
		0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0x01, 0x02,
		0x05, 0x64, 0, 0, 0, 0, 0, 0, 0, 0x0c, 0x01, 0x01, 0x0c, 0x01, 0x02,
		0x02, 0x01,
	};
	size_t n;
	snprintf(path, sizeof(path), "%s/traces/0.evt", dir);
	uint8_t *got = ut_read(path, &n);
	cr_assert_not_null(got);
	cr_assert_eq(n, 18 + sizeof(want));
	cr_assert_arr_eq(got + 18, want, sizeof(want));
	uint64_t first, last;
	memcpy(&first, got + 2, 8);
	memcpy(&last, got + 10, 8);
	cr_assert_eq(first, 1);
	cr_assert_eq(last, 4);
	free(got);
	ut_rmrf(dir);
}
