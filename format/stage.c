/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stage.c - the staging file of a durable event file (mapped.c writes it)
 * read back after the writer died: otf2w_durable_settle. A library of its
 * own (otf2w_stage) so that every tool that recovers links it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otf2w_stage.h"
#include "otf2w_sys.h"

/* All of data at off; 0 or -1 (errno). */
static int put_all(int fd, const uint8_t *data, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = otf2w_sys.pwrite(fd, data, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

uint64_t otf2w_stage_tail_at(uint64_t chunk_size)
{
	return (chunk_size + OTF2W_STAGE_PAGE - 1) / OTF2W_STAGE_PAGE * OTF2W_STAGE_PAGE;
}

int otf2w_durable_settle(const char *evt_path)
{
	char sp[4096];
	struct otf2w_stage_tail t;
	struct stat st;

	if ((size_t)snprintf(sp, sizeof(sp), "%s%s", evt_path, OTF2W_STAGE_SUFFIX) >= sizeof(sp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int sfd = otf2w_sys.open(sp, O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = -1, efd = -1;
	uint8_t *buf = NULL;
	if (otf2w_sys.fstat(sfd, &st) != 0 || (uint64_t)st.st_size < OTF2W_STAGE_PAGE ||
	    otf2w_sys.pread(sfd, &t, sizeof(t), st.st_size - OTF2W_STAGE_PAGE) != (ssize_t)sizeof(t) ||
	    memcmp(t.magic, OTF2W_STAGE_MAGIC, sizeof(t.magic)) != 0 || !t.chunk_size ||
	    otf2w_stage_tail_at(t.chunk_size) + OTF2W_STAGE_PAGE != (uint64_t)st.st_size) {
		errno = EINVAL;
		goto out;
	}
	rc = 0;
	if (t.index == 0)
		goto done;   /* nothing staged yet */
	efd = otf2w_sys.open(evt_path, O_RDWR | O_CLOEXEC);
	buf = otf2w_sys.malloc(t.chunk_size);
	struct stat es;
	if (efd < 0 || !buf || otf2w_sys.fstat(efd, &es) != 0) {
		rc = -1;
		goto out;
	}
	/* the chunk's reserved space (less than a chunk on a nearly full disk) */
	uint64_t off = t.index * t.chunk_size, len = t.chunk_size;
	if ((uint64_t)es.st_size > off && (uint64_t)es.st_size - off < len)
		len = (uint64_t)es.st_size - off;
	if (otf2w_sys.pread(sfd, buf, len, 0) != (ssize_t)len || put_all(efd, buf, len, off) != 0) {
		rc = -1;
		goto out;
	}
	rc = 1;
done:
	otf2w_sys.unlink(sp);
out:
	if (efd >= 0)
		otf2w_sys.close(efd);
	otf2w_sys.close(sfd);
	otf2w_sys.free(buf);
	return rc;
}
