/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unwind.c - the sampler's own stack walk: from the interrupted context
 * up the stack by the objects' .eh_frame call-frame information, with a
 * per-thread cache of each address's rule (TRACER_SAMPLING_UNWIND=cfi, the
 * default).
 *
 * Why not libunwind alone: unw_backtrace starts in the handler, walks its
 * frames and the signal frame, and looks every address up in a per-thread
 * hash keyed by the exact address. The interrupted pc is new at almost
 * every sample of a compute kernel, so every sample paid libunwind's full
 * lookup (every loaded object's program headers, the FDE, its CFI program):
 * a median of 8-14 us per sample on numpy/OpenBLAS, where the rest of the
 * sample costs about one. Here the walk starts at the interrupted context
 * (uc_mcontext: rip, rsp, rbp), an address's rule is found in the object
 * table the sampler already keeps (symbols.c: text range and .eh_frame_hdr
 * of every object), and each rule is cached in a 4-way set of 16-byte
 * entries (one cache line a set).
 *
 * A rule is what a sampler needs on x86-64: the CFA as rsp or rbp plus an
 * offset (or the *(rbp + k) of a realigned frame, GCC's
 * DW_CFA_def_cfa_expression for main with an aligned stack; or a PLT
 * stub's expression, evaluated for the stub's address), the return
 * address at CFA - 8, and where the caller's rbp is (unchanged, at CFA + k,
 * or at *rbp); or a signal frame (the C library's rt_sigreturn trampoline,
 * its CIE marked 'S' and its code checked): the interrupted registers from
 * the ucontext the kernel left on the stack, and the walk goes on from the
 * interrupted pc. Any other shape (another CFA register, another
 * expression, a handler on an alternate stack, an object or address
 * without an FDE, an FDE in a layout not read here) answers -1 and the
 * sampler asks libunwind for the whole stack, as before, so a stack is
 * never cut short by this walker. (Before PLT stubs and signal frames were
 * read here, a sample in a stub or below a handler went to libunwind:
 * slower, and libunwind calls dl_iterate_phdr from the handler.)
 *
 * Safety: the handler reads only the objects' mapped unwind tables (under
 * tr_smp_eh_begin, like ehgap.c) and stack memory between the interrupted
 * rsp and the thread's stack top (known from thread start; a context
 * outside that stack, e.g. a coroutine's, goes to libunwind). No lock, no
 * allocation, no system call: async-signal-safe.
 *
 * TRACER_SAMPLING_UNWIND=check walks both ways, keeps this walker's stack
 * and counts the stacks that differ from libunwind's (the exit line at
 * TRACER_VERBOSE=1 says how many; tests/sampling use it on real programs).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "smp_sampler.h"

#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

enum { UW_NONE = 0, UW_STD, UW_ALIGNED, UW_LAST, UW_SIGNAL, UW_OTHER };   /* rule kinds */
enum { RBP_SAME = 0, RBP_CFA, RBP_DEREF };                      /* the caller's rbp */

/* ---- reading the tables --------------------------------------------------------- */

static uint64_t uleb(const uint8_t **pp, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned sh = 0;
	const uint8_t *p = *pp;
	while (p < end) {
		uint8_t b = *p++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

static int64_t sleb(const uint8_t **pp, const uint8_t *end)
{
	int64_t v = 0;
	unsigned sh = 0;
	uint8_t b = 0;
	const uint8_t *p = *pp;
	while (p < end) {
		b = *p++;
		if (sh < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << sh);
		sh += 7;
		if (!(b & 0x80))
			break;
	}
	if (sh < 64 && (b & 0x40))
		v |= -(int64_t)((uint64_t)1 << sh);
	*pp = p;
	return v;
}

/* A DW_EH_PE-encoded pointer at *pp (pc-relative or absolute; the
 * indirect bit is not followed). -1 on an encoding not read here. */
static int enc_ptr(const uint8_t **pp, const uint8_t *end, uint8_t enc, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	if (enc == 0xff) {   /* DW_EH_PE_omit */
		*out = 0;
		return 0;
	}
	switch (enc & 0x0f) {
	case 0x00: if (end - p < 8) return -1; memcpy(&v, p, 8); p += 8; break;   /* absptr */
	case 0x01: v = uleb(&p, end); break;
	case 0x02: { uint16_t x; if (end - p < 2) return -1; memcpy(&x, p, 2); p += 2; v = x; break; }
	case 0x03: { uint32_t x; if (end - p < 4) return -1; memcpy(&x, p, 4); p += 4; v = x; break; }
	case 0x04: if (end - p < 8) return -1; memcpy(&v, p, 8); p += 8; break;
	case 0x09: v = (uint64_t)sleb(&p, end); break;
	case 0x0a: { int16_t x; if (end - p < 2) return -1; memcpy(&x, p, 2); p += 2; v = (uint64_t)(int64_t)x; break; }
	case 0x0b: { int32_t x; if (end - p < 4) return -1; memcpy(&x, p, 4); p += 4; v = (uint64_t)(int64_t)x; break; }
	case 0x0c: if (end - p < 8) return -1; memcpy(&v, p, 8); p += 8; break;
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uint64_t)(uintptr_t)*pp; break;   /* pcrel: from the field */
	default: return -1;
	}
	*pp = p;
	*out = v;
	return 0;
}

struct cie {
	const uint8_t *ins, *ins_end;   /* initial instructions */
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	uint8_t has_z, signal;
};

static int read_cie(const uint8_t *c, struct cie *ci)
{
	uint32_t len;
	memcpy(&len, c, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1;
	const uint8_t *end = c + 4 + len, *p = c + 8;
	uint8_t ver = *p++;
	if (ver != 1 && ver != 3)
		return -1;
	const char *aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	memset(ci, 0, sizeof(*ci));
	ci->fde_enc = 0;   /* absptr unless 'R' says */
	ci->code_align = uleb(&p, end);
	ci->data_align = sleb(&p, end);
	uint64_t ra = ver == 1 ? *p++ : uleb(&p, end);
	if (ra != DW_RA)
		return -1;
	const uint8_t *aug_end = NULL;
	for (const char *a = aug; *a; a++) {
		uint64_t ignored;
		if (a == aug && *a == 'z') {
			uint64_t n = uleb(&p, end);
			aug_end = p + n;
			ci->has_z = 1;
		} else if (*a == 'R') {
			ci->fde_enc = *p++;
		} else if (*a == 'L') {
			p++;
		} else if (*a == 'P') {
			uint8_t e = *p++;
			if (enc_ptr(&p, end, (uint8_t)(e & 0x7f), &ignored))
				return -1;
		} else if (*a == 'S') {
			ci->signal = 1;
		} else if (*a != 'B') {
			if (!aug_end)
				return -1;   /* an unknown letter without 'z': cannot go on */
			break;           /* the rest is skipped by its length */
		}
	}
	if (aug_end)
		p = aug_end;
	if (p > end)
		return -1;
	ci->ins = p;
	ci->ins_end = end;
	return 0;
}

/* ---- the CFI program ---------------------------------------------------------------- */

struct row {
	int64_t cfa_off, rbp_off;
	uint8_t cfa_reg;     /* DW_RSP, DW_RBP; 0xff: an expression (cfa_expr) */
	uint8_t cfa_deref;   /* CFA = *(rbp + cfa_off) */
	uint8_t rbp_kind;    /* RBP_* */
	uint8_t ra_undef;
	uint8_t other;       /* a rule this walker cannot follow */
	int64_t ra_off;
};

#define UW_STACK 8

struct cfi_run {
	struct row r, init;
	struct row saved[UW_STACK];
	int nsaved;
	uint64_t loc;
};

/* The DWARF expression [p, p + n) as "breg6 k; deref" (the CFA of a
 * realigned frame) -> 1 with *k; "breg6 0" (a register at *rbp) -> 2. */
static int expr_shape(const uint8_t *p, uint64_t n, int64_t *k)
{
	const uint8_t *e = p + n;
	if (n < 2 || *p != 0x70 + DW_RBP)   /* DW_OP_breg6 */
		return 0;
	p++;
	*k = sleb(&p, e);
	if (p == e)
		return 2;
	if (p + 1 == e && *p == 0x06)   /* DW_OP_deref */
		return 1;
	return 0;
}

/* The CFA expression of a PLT stub (binutils' .plt FDE):
 * "breg7 8; breg16 0; lit15; and; lit<k>; ge; lit3; shl; plus", i.e.
 * rsp + 8, + 8 more from byte k of each 16-byte entry on (past its push).
 * Returns k (10 or 11), 0 for any other expression. */
static int plt_shape(const uint8_t *p, uint64_t n)
{
	static const uint8_t pre[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a }, post[] = { 0x2a, 0x33, 0x24, 0x22 };
	if (n != sizeof(pre) + 1 + sizeof(post) || memcmp(p, pre, sizeof(pre)) ||
	    memcmp(p + sizeof(pre) + 1, post, sizeof(post)))
		return 0;
	uint8_t lit = p[sizeof(pre)];
	return lit == 0x3a || lit == 0x3b ? lit - 0x30 : 0;
}

static void set_reg(struct row *r, uint64_t reg, int kind, int64_t off)
{
	/* kind: 0 undefined, 1 same value, 2 at CFA + off, 3 anything else */
	if (reg == DW_RA) {
		if (kind == 0)
			r->ra_undef = 1;
		else if (kind == 2)
			r->ra_off = off, r->ra_undef = 0;
		else
			r->other = 1;
	} else if (reg == DW_RBP) {
		if (kind == 1 || kind == 0)
			r->rbp_kind = RBP_SAME;
		else if (kind == 2)
			r->rbp_kind = RBP_CFA, r->rbp_off = off;
		else
			r->other = 1;
	} else if (reg == DW_RSP) {
		if (kind != 1)
			r->other = 1;
	}
	/* other registers: not needed to find the return address */
}

/* Run [p, end) until the row for target; 1 when target was passed, 0 at
 * the end of the program, -1 on what this walker does not read. */
static int run_cfi(struct cfi_run *cr, const struct cie *ci, const uint8_t *p, const uint8_t *end,
		   uint64_t target)
{
	while (p < end) {
		uint8_t op = *p++;
		uint64_t reg, delta = 0, n;
		int64_t off;
		int adv = 0;
		switch (op >> 6) {
		case 1: delta = op & 0x3f; adv = 1; break;
		case 2: off = (int64_t)uleb(&p, end) * ci->data_align; set_reg(&cr->r, op & 0x3f, 2, off); continue;
		case 3:
			reg = op & 0x3f;
			if (reg == DW_RA) { cr->r.ra_off = cr->init.ra_off; cr->r.ra_undef = cr->init.ra_undef; }
			else if (reg == DW_RBP) { cr->r.rbp_kind = cr->init.rbp_kind; cr->r.rbp_off = cr->init.rbp_off; }
			continue;
		default: break;
		}
		if (!adv) {
			switch (op) {
			case 0x00: continue;   /* nop */
			case 0x01: if (enc_ptr(&p, end, ci->fde_enc, &n)) return -1; cr->loc = n; continue;
			case 0x02: delta = *p++; adv = 1; break;
			case 0x03: { uint16_t x; memcpy(&x, p, 2); p += 2; delta = x; adv = 1; break; }
			case 0x04: { uint32_t x; memcpy(&x, p, 4); p += 4; delta = x; adv = 1; break; }
			case 0x05: reg = uleb(&p, end); off = (int64_t)uleb(&p, end) * ci->data_align; set_reg(&cr->r, reg, 2, off); continue;
			case 0x06:
				reg = uleb(&p, end);
				if (reg == DW_RA) { cr->r.ra_off = cr->init.ra_off; cr->r.ra_undef = cr->init.ra_undef; }
				else if (reg == DW_RBP) { cr->r.rbp_kind = cr->init.rbp_kind; cr->r.rbp_off = cr->init.rbp_off; }
				continue;
			case 0x07: set_reg(&cr->r, uleb(&p, end), 0, 0); continue;
			case 0x08: set_reg(&cr->r, uleb(&p, end), 1, 0); continue;
			case 0x09: reg = uleb(&p, end); (void)uleb(&p, end); set_reg(&cr->r, reg, 3, 0); continue;
			case 0x0a:
				if (cr->nsaved == UW_STACK) return -1;
				cr->saved[cr->nsaved++] = cr->r;
				continue;
			case 0x0b:
				if (!cr->nsaved) return -1;
				cr->r = cr->saved[--cr->nsaved];
				continue;
			case 0x0c: cr->r.cfa_reg = (uint8_t)uleb(&p, end); cr->r.cfa_off = (int64_t)uleb(&p, end); cr->r.cfa_deref = 0; continue;
			case 0x0d: cr->r.cfa_reg = (uint8_t)uleb(&p, end); cr->r.cfa_deref = 0; continue;
			case 0x0e: cr->r.cfa_off = (int64_t)uleb(&p, end); continue;
			case 0x0f: {
				n = uleb(&p, end);
				if (p + n > end)
					return -1;
				int k = plt_shape(p, n);
				if (k) {
					/* evaluated for the address itself (a PLT stub is
					 * only ever the leaf: its rip is the target) */
					cr->r.cfa_reg = DW_RSP, cr->r.cfa_off = 8 + ((target & 15) >= (uint64_t)k ? 8 : 0);
					cr->r.cfa_deref = 0;
				} else if (expr_shape(p, n, &off) == 1) {
					cr->r.cfa_reg = DW_RBP, cr->r.cfa_off = off, cr->r.cfa_deref = 1;
				} else {
					return -1;
				}
				p += n;
				continue;
			}
			case 0x10:
				reg = uleb(&p, end);
				n = uleb(&p, end);
				if (p + n > end) return -1;
				if (reg == DW_RBP && expr_shape(p, n, &off) == 2 && off == 0)
					cr->r.rbp_kind = RBP_DEREF;
				else
					set_reg(&cr->r, reg, 3, 0);
				p += n;
				continue;
			case 0x11: reg = uleb(&p, end); off = sleb(&p, end) * ci->data_align; set_reg(&cr->r, reg, 2, off); continue;
			case 0x12: cr->r.cfa_reg = (uint8_t)uleb(&p, end); cr->r.cfa_off = sleb(&p, end) * ci->data_align; cr->r.cfa_deref = 0; continue;
			case 0x13: cr->r.cfa_off = sleb(&p, end) * ci->data_align; continue;
			case 0x14: case 0x15: reg = uleb(&p, end); (void)uleb(&p, end); set_reg(&cr->r, reg, 3, 0); continue;
			case 0x16: reg = uleb(&p, end); n = uleb(&p, end); if (p + n > end) return -1; p += n; set_reg(&cr->r, reg, 3, 0); continue;
			case 0x2e: (void)uleb(&p, end); continue;   /* GNU_args_size */
			case 0x2f: reg = uleb(&p, end); off = -(int64_t)uleb(&p, end) * ci->data_align; set_reg(&cr->r, reg, 2, off); continue;
			default: return -1;
			}
		}
		uint64_t next = cr->loc + delta * ci->code_align;
		if (next > target)
			return 1;
		cr->loc = next;
	}
	return 0;
}

/* The rule for address a (an interrupted pc, or a return address - 1);
 * 0 when a is in no object of the table (not cached: the table may learn
 * it at its next refresh). */
static int find_rule(uintptr_t a, struct smp_uw_ent *e)
{
	e->kind = UW_OTHER;
	struct tr_smp_eh o;
	if (tr_smp_obj_eh(a, &o) != 0)
		return 0;
	if (o.count == 0) {
		e->kind = UW_NONE;
		return 1;
	}
	uintptr_t fa;
	if (tr_smp_eh_upper(&o, a, &fa) == 0) {
		e->kind = UW_NONE;
		return 1;
	}
	const uint8_t *fde = (const uint8_t *)fa;
	uint32_t len, cie_off;
	memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu || len < 12)
		return 1;
	memcpy(&cie_off, fde + 4, 4);
	struct cie ci;
	if (read_cie(fde + 4 - cie_off, &ci) != 0)
		return 1;
	const uint8_t *p = fde + 8, *end = fde + 4 + len;
	uint64_t pc0, range;
	if (enc_ptr(&p, end, ci.fde_enc, &pc0) || enc_ptr(&p, end, ci.fde_enc & 0x0f, &range))
		return 1;
	if (a < pc0 || a >= pc0 + range) {
		e->kind = UW_NONE;   /* between FDEs: no unwind information */
		return 1;
	}
	if (ci.signal) {
		/* a signal frame: the C library's return trampoline, whose
		 * FDE starts one byte before it (a return address - 1 finds
		 * it); the kernel's ucontext is at its rsp. Only the
		 * x86-64 rt_sigreturn code, "mov $15, %rax; syscall". */
		static const uint8_t sigret[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
		if (a + 1 + sizeof(sigret) <= pc0 + range && !memcmp((const void *)(a + 1), sigret, sizeof(sigret)))
			e->kind = UW_SIGNAL;
		return 1;
	}
	if (ci.has_z) {
		uint64_t n = uleb(&p, end);
		p += n;
	}
	struct cfi_run cr;
	memset(&cr, 0, sizeof(cr));
	cr.r.cfa_reg = DW_RSP;
	cr.r.ra_off = -8;
	cr.loc = pc0;
	if (run_cfi(&cr, &ci, ci.ins, ci.ins_end, UINT64_MAX) < 0)
		return 1;
	cr.init = cr.r;
	cr.nsaved = 0;
	if (run_cfi(&cr, &ci, p, end, a) < 0)
		return 1;
	const struct row *r = &cr.r;
	if (r->other || (r->cfa_reg != DW_RSP && r->cfa_reg != DW_RBP) || r->cfa_off != (int32_t)r->cfa_off ||
	    r->rbp_off != (int16_t)r->rbp_off)
		return 1;
	if (r->ra_undef) {
		e->kind = UW_LAST;
		return 1;
	}
	if (r->ra_off != -8)
		return 1;
	e->kind = r->cfa_deref ? UW_ALIGNED : UW_STD;
	e->cfa_rbp = r->cfa_reg == DW_RBP;
	e->cfa_off = (int32_t)r->cfa_off;
	e->rbp_kind = r->rbp_kind;
	e->rbp_off = (int16_t)r->rbp_off;
	return 1;
}

/* ---- the cache and the walk ------------------------------------------------------------- */

static inline uint32_t uw_set(uintptr_t a)
{
	return (uint32_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 40) & (SMP_UWC_SETS - 1);
}

static inline struct smp_uw_ent *rule(struct smp_thread *s, uintptr_t a)
{
	uint32_t gen = __atomic_load_n(&tr_smp_obj_gen, __ATOMIC_ACQUIRE);
	if (gen != s->uwc_gen) {
		/* an object went away since: its addresses may be another's now */
		memset(s->uwc, 0, sizeof(*s->uwc) * 4 * SMP_UWC_SETS);
		s->uwc_gen = gen;
	}
	struct smp_uw_ent *set = s->uwc + uw_set(a) * 4;
	for (int i = 0; i < 4; i++)
		if (set[i].key == a)
			return &set[i];
	struct smp_uw_ent n;
	memset(&n, 0, sizeof(n));
	if (tr_smp_eh_begin() != 0)
		return NULL;   /* an object is being unloaded: libunwind decides */
	int known = find_rule(a, &n);
	tr_smp_eh_end();
	if (!known) {
		/* in no object of the table (loaded since its last refresh):
		 * libunwind decides, the next sample refreshes the table */
		__atomic_store_n(&tr_smp_stale, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	struct smp_uw_ent *e = &set[(s->uwc_victim++) & 3];
	n.key = a;
	*e = n;
	return e;
}

/* The walk. A sample arrives with the caches cold (a kernel such as dgemm
 * evicts everything in a millisecond), and each frame depends on the one
 * before: its rule, then its return address on the stack, two misses in
 * series per frame. The previous sample's stack is mostly this one's, so
 * its rule sets and return-address slots are prefetched first: the misses
 * overlap instead of adding up. */
SMP_HOT int tr_smp_cfi_walk(struct smp_thread *s, const void *ucv, void **buf, uint32_t cap)
{
	const ucontext_t *uc = ucv;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t rsp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t rbp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t top = s->stack_hi;
	if (rsp < s->stack_lo || rsp >= top)
		return -1;
	uint32_t np = s->uw_nprev;
	for (uint32_t k = 0; k < np; k++) {
		__builtin_prefetch(s->uwc + s->uw_prev[k].set * 4);
		if (s->uw_prev[k].slot >= rsp && s->uw_prev[k].slot < top)
			__builtin_prefetch((const void *)s->uw_prev[k].slot);
	}
	s->uw_nprev = 0;
	uint32_t n = 0;
	buf[n++] = (void *)rip;
	uintptr_t a = rip;   /* the address whose rule applies */
	while (n < cap) {
		struct smp_uw_ent *e = rule(s, a);
		if (!e)
			return -1;
		uintptr_t cfa, nrbp = rbp;
		switch (e->kind) {
		case UW_LAST:
			return (int)n;
		case UW_STD:
			cfa = (e->cfa_rbp ? rbp : rsp) + (intptr_t)e->cfa_off;
			break;
		case UW_ALIGNED: {
			uintptr_t at = rbp + (intptr_t)e->cfa_off;
			if (at < rsp || at > top - 8 || (at & 7))
				return -1;
			memcpy(&cfa, (const void *)at, 8);
			break;
		}
		case UW_SIGNAL: {
			/* the interrupted code's registers, from the ucontext the
			 * kernel left at rsp; it ran on this stack, above (a
			 * handler on an alternate stack: libunwind decides) */
			const ucontext_t *u = (const ucontext_t *)rsp;
			if (rsp > top - sizeof(*u))
				return -1;
			uintptr_t ip = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
			uintptr_t sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
			if (sp <= rsp || sp >= top || ip < 0x4000)
				return -1;
			buf[n++] = (void *)ip;
			rsp = sp;
			rbp = (uintptr_t)u->uc_mcontext.gregs[REG_RBP];
			a = ip;   /* interrupted there, not a return address */
			continue;
		}
		default:
			return -1;
		}
		/* the caller's frame is above this one, inside the stack */
		if (cfa <= rsp || cfa > top || (cfa & 7))
			return -1;
		if (e->rbp_kind == RBP_CFA) {
			uintptr_t at = cfa + (intptr_t)e->rbp_off;
			if (at < rsp || at > top - 8)
				return -1;
			memcpy(&nrbp, (const void *)at, 8);
		} else if (e->rbp_kind == RBP_DEREF) {
			if (rbp < rsp || rbp > top - 8 || (rbp & 7))
				return -1;
			memcpy(&nrbp, (const void *)rbp, 8);
		}
		uintptr_t ra;
		memcpy(&ra, (const void *)(cfa - 8), 8);
		if (n - 1 < SMP_UW_PREV) {
			s->uw_prev[n - 1].set = uw_set(a);
			s->uw_prev[n - 1].slot = cfa - 8;
			s->uw_nprev = n;
		}
		if (ra < 0x4000)
			return (int)n;   /* the outermost frame (as libunwind ends) */
		buf[n++] = (void *)ra;
		rsp = cfa;
		rbp = nrbp;
		a = ra - 1;   /* the call, not what follows it (a noreturn call may end a function) */
	}
	return (int)n;
}
