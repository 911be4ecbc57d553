/*
 * kernels.h: which kernels (build-ids) the sessions of streams name (kernels.c), so that
 * opreport.c can read several streams together, each session against its own kernel, and
 * the profile sink restricted to the sessions of one of them.
 */
#ifndef OPREPORT_KERNELS_H
#define OPREPORT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/profile.h"

#define KERNELS_MAX	16	/* distinct kernels one report reads */

struct kernels {
	uint8_t id[KERNELS_MAX][OPF_MAX_BUILD_ID];
	uint8_t len[KERNELS_MAX];	/* 0: a session without a build-id */
	uint32_t n;
};

/*
 * Add the build-ids the sessions of stream path name to k (each once, in order of first
 * appearance), reading nothing else. 0, or -1 with the reason in err (an invalid stream, or
 * more than KERNELS_MAX kernels).
 */
int kernels_of(const char *path, struct kernels *k, char *err, size_t errlen);

/* The profile sink (profile.c) that keeps only the sessions of build-id (id, n) and skips
 * every record of the others; its argument is the struct profile, whose skipping it sets. */
void kernels_sink(struct opf_sink *out);

#endif
