/*
 * crashinfo.h: what opreport keeps of a crash dump (a session with OPF_S_CRASH;
 * docs/FORMAT.md, "Crash dumps"): the cause, the panicking core's stack, every core's state
 * when the panic stopped it, and whether the dump arrived whole (crashinfo.c keeps it; the
 * text header and the audit read it).
 */
#ifndef OPREPORT_CRASHINFO_H
#define OPREPORT_CRASHINFO_H

#include <stdint.h>

#include "ingest/parser.h"

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

/*
 * profile.c's sink, for OPF_CRASH, OPF_CRASH_CORE and OPF_CRASH_END of the session whose
 * header is h, at stream offset session_off: keep the record in *cip (made at the first).
 * 0, or -1 with a reason in err (the session is not a crash dump; out of memory).
 */
int crash_add(struct crash_info **cip, const struct opf_session *h, uint64_t session_off,
	      const struct opf_view *v, char *err, size_t errlen);
void crash_free(struct crash_info *ci);

#endif
