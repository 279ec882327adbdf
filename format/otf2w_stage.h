/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2w_stage.h - the staging file of a durable event file
 * (otf2w_archive_set_durable): chunks 1, 2, ... of a location are recorded
 * in <evt>OTF2W_STAGE_SUFFIX before each goes into the .evt file. Its
 * layout: the chunk (chunk_size bytes, up to otf2w_stage_tail_at), then
 * one page starting with struct otf2w_stage_tail.
 */
#ifndef OTF2W_STAGE_H
#define OTF2W_STAGE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OTF2W_STAGE_SUFFIX ".stage"
#define OTF2W_STAGE_MAGIC "OTF2WSTG"
#define OTF2W_STAGE_PAGE 4096u
/* index: the file chunk the staging file holds (0: none yet) */
struct otf2w_stage_tail {
	char magic[8];
	uint64_t index;
	uint64_t chunk_size;
};
/* Where the tail page starts: after the chunk, at a page boundary. */
uint64_t otf2w_stage_tail_at(uint64_t chunk_size);
/* A durable event file whose writer died (SIGKILL): the chunk its staging
 * file holds is copied into it at its place, and the staging file removed.
 * 1 copied, 0 no staging file (or nothing staged), -1 error (errno).
 * Through otf2w_sys (link otf2w_libc in a program of its own). */
int otf2w_durable_settle(const char *evt_path);

#ifdef __cplusplus
}
#endif
#endif /* OTF2W_STAGE_H */
