/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ehgap.c - code without unwind information, known from the object's
 * .eh_frame_hdr, so that the sampler stops asking libunwind about it.
 *
 * Hand-written kernels (OpenBLAS's dgemm_kernel_*, most of its level-3
 * code) have no FDE. libunwind cannot unwind from such a pc: each sample
 * there cost 12 us of lookups (every loaded object's tables searched) for
 * a failed walk; the sample then keeps the pc alone (sampler.c). After
 * such a failure the handler asks tr_smp_eh_gap for the stretch of code
 * around the pc that no FDE covers, and skips libunwind for the next
 * samples of its thread there (retrying now and then: frame-pointer code
 * without unwind tables may still unwind).
 *
 * The lookup reads only the object's own mapped .eh_frame_hdr and .eh_frame
 * (the binary search table the linker sorted), no lock, no allocation:
 * async-signal-safe. Only the layout GNU ld and lld emit is read (a table
 * of 4-byte data-relative entries, FDEs with 4-byte pc-relative begins);
 * anything else answers "unknown" and the sampler keeps calling libunwind.
 */
#include <stdint.h>
#include <string.h>
#include "tracer.h"
#include "smp_int.h"

#define EH_PE_udata4 0x03
#define EH_PE_sdata4 0x0b
#define EH_PE_pcrel 0x10
#define EH_PE_datarel 0x30
#define EH_PE_omit 0xff

static int32_t rd32(uintptr_t a)
{
	int32_t v;
	memcpy(&v, (const void *)a, 4);
	return v;
}

int tr_smp_eh_table(uintptr_t hdr, uintptr_t *table, uint32_t *count)
{
	const uint8_t *h = (const uint8_t *)hdr;
	if (!hdr || h[0] != 1 || (h[1] & 0x0f) != EH_PE_sdata4 || h[2] != EH_PE_udata4 ||
	    h[3] != (EH_PE_datarel | EH_PE_sdata4))
		return -1;
	uint32_t n;
	memcpy(&n, h + 8, 4);   /* after the 4-byte eh_frame pointer */
	*table = hdr + 12;
	*count = n;
	return 0;
}

/* The range [*lo, *hi) of entry k's FDE (table entries: initial pc and FDE
 * address, both relative to hdr). -1 when the FDE is not in the expected
 * form. */
static int fde_range(uintptr_t hdr, uintptr_t table, uint32_t k, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t e = table + 8 * (uintptr_t)k;
	uintptr_t start = hdr + (intptr_t)rd32(e);
	uintptr_t fde = hdr + (intptr_t)rd32(e + 4);
	uint32_t len = (uint32_t)rd32(fde);
	if (len == 0 || len == 0xffffffffu || len < 12)
		return -1;
	/* pc_begin (pc-relative) must say what the table says */
	uintptr_t pcb = fde + 8 + (intptr_t)rd32(fde + 8);
	if (pcb != start)
		return -1;
	*lo = start;
	*hi = start + (uint32_t)rd32(fde + 12);
	return 0;
}

uint32_t tr_smp_eh_upper(const struct tr_smp_eh *o, uintptr_t pc, uintptr_t *fde)
{
	uint32_t lo = 0, hi = o->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (o->hdr + (intptr_t)rd32(o->table + 8 * (uintptr_t)mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (fde && lo > 0)
		*fde = o->hdr + (intptr_t)rd32(o->table + 8 * (uintptr_t)(lo - 1) + 4);
	return lo;
}

static int eh_gap(uintptr_t pc, uintptr_t *gap_lo, uintptr_t *gap_hi)
{
	struct tr_smp_eh o;
	if (tr_smp_obj_eh(pc, &o) != 0 || o.count == 0)
		return -1;
	uint32_t lo = tr_smp_eh_upper(&o, pc, NULL);
	uintptr_t a = o.lo, b = o.hi, flo, fhi;
	if (lo > 0) {
		if (fde_range(o.hdr, o.table, lo - 1, &flo, &fhi) != 0)
			return -1;
		if (pc < fhi)
			return -1;   /* covered: libunwind has what it needs */
		a = fhi;
	}
	if (lo < o.count) {
		if (fde_range(o.hdr, o.table, lo, &flo, &fhi) != 0)
			return -1;
		b = flo;
	}
	if (!(a <= pc && pc < b))
		return -1;
	*gap_lo = a;
	*gap_hi = b;
	return 0;
}

int tr_smp_eh_gap(uintptr_t pc, uintptr_t *gap_lo, uintptr_t *gap_hi)
{
	if (tr_smp_eh_begin() != 0)
		return -1;   /* an object is being unloaded */
	int r = eh_gap(pc, gap_lo, gap_hi);
	tr_smp_eh_end();
	return r;
}
