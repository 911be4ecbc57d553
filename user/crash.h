/*
 * crash.h: what opreport keeps of a crash dump (a session with OPF_S_CRASH; docs/FORMAT.md,
 * "Crash dumps") and how it reports it: the cause, the panicking core's stack, every
 * core's state when the panic stopped it, and whether the dump arrived whole.
 */
#ifndef OPREPORT_CRASH_H
#define OPREPORT_CRASH_H

#include <stdio.h>
#include <stdint.h>

#include "stream.h"

#define CRASH_MAX_FRAMES 64

/* r's own frames[] is empty (its frames are copied to frames): r stays last, as a struct
 * ending in a flexible array must. */
struct crash_core {
	int seen;			/* its OPF_CRASH_CORE was in the dump */
	uint64_t frames[CRASH_MAX_FRAMES];
	struct opf_crash_core r;
};

struct crash_info {
	int seen;			/* OPF_CRASH was in the dump */
	uint64_t frames[CRASH_MAX_FRAMES];
	struct crash_core *cores;	/* ncores */
	uint32_t ncores;
	int have_end;			/* OPF_CRASH_END: the dump arrived whole */
	struct opf_crash_end end;
	uint64_t end_off;		/* stream offset of OPF_CRASH_END, from the session's */
	uint64_t cut_at;		/* the stream ended inside a record at this offset (0: no) */
	struct opf_crash r;		/* last: see crash_core */
};

struct profile;
struct session;
struct ctx;

/* Sink handlers (profile.c's table) for OPF_CRASH, OPF_CRASH_CORE, OPF_CRASH_END. */
int crash_on_crash(void *arg, const struct opf_view *v, char *err, size_t errlen);
int crash_on_core(void *arg, const struct opf_view *v, char *err, size_t errlen);
int crash_on_end(void *arg, const struct opf_view *v, char *err, size_t errlen);

int session_is_crash(const struct session *s);
/* Header lines of a crash dump's report (nothing for another stream). */
void crash_header(const struct ctx *c, FILE *out);
/* --stats: what a crash dump lets be checked, and what not; sets *fail, *incomplete. */
void crash_audit(const struct session *s, FILE *out, int *fail, int *incomplete);
void crash_free(struct crash_info *ci);

#endif
