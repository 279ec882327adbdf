/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smp_libs.h - the libraries of sampling/: libunwind (the sampler's stack
 * walks), libdw (symbols of sampled addresses) and PAPI (TRACER_METRICS
 * counters). None of them is linked into libtracer.so: a process that
 * does not ask for sampling or PAPI metrics never loads them (their
 * loading and relocation was the largest part of a short process's cost),
 * and one that does opens them with dlopen(RTLD_LOCAL), so that their
 * symbols (libunwind's backtrace and _Unwind_Backtrace among them) never
 * join the program's global scope.
 *
 * Each list below names the functions (and libunwind's one variable) a
 * file of sampling/ uses; the structures hold their addresses, typed from
 * the libraries' own headers. Never included outside sampling/.
 */
#ifndef SMP_LIBS_H
#define SMP_LIBS_H

#define UNW_LOCAL_ONLY   /* the unwinder of this process only (_UL names) */
#include <libunwind.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <papi.h>

#define SMP_UNWIND_SYMS(X) \
	X(unw_backtrace) X(unw_set_caching_policy) X(unw_local_addr_space)

#define SMP_DW_SYMS(X) \
	X(dwfl_begin) X(dwfl_end) X(dwfl_report_begin) X(dwfl_report_elf) X(dwfl_report_end) \
	X(dwfl_module_getsrc) X(dwfl_lineinfo) X(dwfl_module_addrdie) \
	X(dwfl_build_id_find_elf) X(dwfl_standard_find_debuginfo) X(dwfl_offline_section_address) \
	X(dwarf_getscopes) X(dwarf_tag) X(dwarf_decl_line) X(dwfl_module_getsymtab) X(dwfl_module_getsymtab_first_global) \
	X(dwfl_module_getsym_info) X(dwfl_module_getelf) X(elf_nextscn) X(gelf_getshdr) \
	X(elf_getshdrstrndx) X(elf_strptr) X(elf_getscn) X(elf_getdata) X(gelf_getrela) X(gelf_getsym)

#define SMP_PAPI_SYMS(X) \
	X(PAPI_library_init) X(PAPI_thread_init) X(PAPI_unregister_thread) X(PAPI_strerror) \
	X(PAPI_num_components) X(PAPI_get_component_info) X(PAPI_create_eventset) \
	X(PAPI_destroy_eventset) X(PAPI_cleanup_eventset) X(PAPI_event_name_to_code) \
	X(PAPI_get_event_info) X(PAPI_add_event) X(PAPI_remove_event) X(PAPI_start) X(PAPI_stop) \
	X(PAPI_read)

/* (a name the headers define as a macro, e.g. unw_set_caching_policy, is
 * a member under the name it expands to, and looked up by that name) */
#define SMP_LIB_MEMBER(n) __typeof__(&n) n;
struct smp_unwind_lib { SMP_UNWIND_SYMS(SMP_LIB_MEMBER) };
struct smp_dw_lib { SMP_DW_SYMS(SMP_LIB_MEMBER) };
struct smp_papi_lib { SMP_PAPI_SYMS(SMP_LIB_MEMBER) };

/* The library, loaded at the first call (not thread-safe: called from the
 * modules' init, before any sample or metric), or NULL when it cannot be
 * loaded: then `what` (e.g. "TRACER_SAMPLING") is named in one tracer:
 * line with the reason, once. After a non-NULL return the pointer is also
 * in smp_unw / smp_dw / smp_papi. */
const struct smp_unwind_lib *smp_unwind_load(const char *what);
const struct smp_dw_lib *smp_dw_load(const char *what);
const struct smp_papi_lib *smp_papi_load(const char *what);
extern const struct smp_unwind_lib *smp_unw;
extern const struct smp_dw_lib *smp_dw;
extern const struct smp_papi_lib *smp_papi;

#endif /* SMP_LIBS_H */
