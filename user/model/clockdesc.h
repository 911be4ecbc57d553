/*
 * clockdesc.h: what a profile's samples weigh, in the same words everywhere (clockdesc.c):
 * the text header, --stats, the pprof comments and the perf.data CPU description.
 */
#ifndef OPREPORT_CLOCKDESC_H
#define OPREPORT_CLOCKDESC_H

#include <stddef.h>

#include "abi/oprofile.h"

/* The clock in a few words, e.g. "emulation time, QEMU TCG"; buf holds it (n >= 64). */
const char *clock_text(const struct opf_session *h, char *buf, size_t n);
/*
 * How the sampling periods were placed (docs/FORMAT.md, "The jitter"), e.g. "spread 100% of
 * a period (seed 0x5eed): each sample at a random moment"; a stream from
 * before the jitter fields reads as fixed periods, which its kernel used. buf: n >= 96.
 */
const char *jitter_text(const struct opf_session *h, char *buf, size_t n);
/* Under plain TCG, the one sentence a reader needs before trusting caller/callee shares;
 * NULL for another clock. */
const char *clock_advice(const struct opf_session *h);

#endif
