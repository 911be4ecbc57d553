/*
 * records.c: the small pieces of a perf.data file (records.h), called by every part of the
 * writer: perfdata.c, sched_records.c, features.c and tracepoints.c.
 */
#include "export/perf/records.h"

uint64_t perf_ns_of(const struct session *s, uint64_t tsc)
{
	const struct opf_session *h = &s->hdr;

	if (!h->tsc_hz || tsc < h->start_tsc)
		return h->start_ns;
	return h->start_ns + (uint64_t)((unsigned __int128)(tsc - h->start_tsc) * 1000000000u /
					h->tsc_hz);
}

void perf_put_rec(FILE *f, uint32_t type, uint16_t misc, const void *body, size_t n,
		  uint32_t pid, uint32_t tid, uint64_t ns, uint32_t cpu)
{
	static const uint8_t zero[8];
	size_t pad = (8 - n % 8) % 8;
	struct sample_id id = { pid, tid, ns, cpu, 0, PERF_SAMPLE_ID_VALUE };
	struct perf_event_header h = { type, misc, (uint16_t)(sizeof(h) + n + pad + sizeof(id)) };

	fwrite(&h, sizeof(h), 1, f);
	fwrite(body, 1, n, f);
	fwrite(zero, 1, pad, f);
	fwrite(&id, sizeof(id), 1, f);
}

void perf_put_u32(FILE *f, uint32_t v)
{
	fwrite(&v, sizeof(v), 1, f);
}

void perf_put_u64(FILE *f, uint64_t v)
{
	fwrite(&v, sizeof(v), 1, f);
}
