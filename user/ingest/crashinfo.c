/*
 * crashinfo.c: the records only a crash dump holds (docs/FORMAT.md, "Crash dumps"), kept for
 * the report. Called by profile.c's sink for OPF_CRASH, OPF_CRASH_CORE and OPF_CRASH_END,
 * with the session they belong to; the header's crash lines (text/crash_header.c) and the
 * audit (ingest/audit.c) read what it keeps.
 *
 * A dump is one session (flags OPF_S_CRASH) that the kernel wrote at a panic: every core's
 * last window of the crash recorder, which the report counts like any samples, plus who
 * panicked, why and with which stack, and each core's state when it was stopped. It ends
 * with OPF_CRASH_END; without it the dump was cut short (the machine died while writing,
 * or the file was truncated), and everything before the cut is reported as it stands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/crashinfo.h"

/* The crash_info of a session with header h, made at its first crash record; NULL with a
 * reason in err when the session is not a crash dump or memory ran out. */
static struct crash_info *crash_of(struct crash_info **cip, const struct opf_session *h,
				   char *err, size_t errlen)
{
	if (!(h->flags & OPF_S_CRASH)) {
		snprintf(err, errlen, "crash record in a stream that is not a crash dump");
		return NULL;
	}
	if (!*cip) {
		snprintf(err, errlen, "out of memory");
		if (!(*cip = calloc(1, sizeof(**cip))))
			return NULL;
		(*cip)->ncores = h->ncores;
		if (!((*cip)->cores = calloc(h->ncores, sizeof(*(*cip)->cores))))
			return NULL;
	}
	return *cip;
}

/* The frames after a record's fixed part: at most what its length holds, and our room. */
static uint16_t copy_frames(uint64_t *dst, const struct opf_view *v, uint32_t fixed,
			    uint16_t n)
{
	uint32_t room = v->len > fixed ? (v->len - fixed) / 8 : 0;

	if (n > room)
		n = (uint16_t)room;
	if (n > CRASH_MAX_FRAMES)
		n = CRASH_MAX_FRAMES;
	memcpy(dst, v->tail, 8 * (size_t)n);
	return n;
}

int crash_add(struct crash_info **cip, const struct opf_session *h, uint64_t session_off,
	      const struct opf_view *v, char *err, size_t errlen)
{
	struct crash_info *ci = crash_of(cip, h, err, errlen);
	struct crash_core *cc;

	if (!ci)
		return -1;
	switch (v->r->h.type) {
	case OPF_CRASH:
		ci->seen = 1;
		ci->r = v->r->crash;
		ci->r.msg[OPF_CRASH_MSG - 1] = 0;
		ci->r.nframes = copy_frames(ci->frames, v, sizeof(struct opf_crash),
					    ci->r.nframes);
		break;
	case OPF_CRASH_CORE:	/* the parser checked its core against the session's */
		cc = &ci->cores[v->r->crash_core.core];
		cc->seen = 1;
		cc->r = v->r->crash_core;
		cc->r.nframes = copy_frames(cc->frames, v, sizeof(struct opf_crash_core),
					    cc->r.nframes);
		break;
	default:		/* OPF_CRASH_END */
		ci->have_end = 1;
		ci->end = v->r->crash_end;
		ci->end_off = v->off - session_off;
	}
	return 0;
}

void crash_free(struct crash_info *ci)
{
	if (ci)
		free(ci->cores);
	free(ci);
}
