/*
 * order.c: the data section of a perf.data file with scheduler events, in time order.
 * Called by perfdata.c's report_perf, with the samples (kept in stream order while the stream was
 * read) and sched_records.c's records (each session's in time order), each in a temporary file.
 *
 * Why: hotspot's parser puts records in time order only within a buffer (32 MB by default);
 * the samples coming first and the scheduler records after them, a longer file would reach
 * it out of order, and it would pair a switch with the wrong sample. perf sorts everything
 * itself, so for it order does not matter. Records of equal time keep their order, samples
 * before scheduler records.
 *
 * The time of a record, from the layouts perfdata.c and sched_records.c write (records.h): a
 * cpu-clock sample (id PERF_SAMPLE_ID_VALUE) starts with struct cpu_sample_head, a tracepoint
 * sample with struct tp_sample_head; any other record ends in struct sample_id.
 */
#include <stdlib.h>
#include <string.h>

#include "export/perf/order.h"
#include "export/perf/records.h"

struct rec_ix {
	uint64_t time;
	uint64_t seq;		/* position among all records: ties keep it */
	const uint8_t *at;
	uint16_t len;
};

struct buf {
	uint8_t *p;
	size_t n;
};

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The time of record r (type, len bytes), where records.h's layouts put it. */
static uint64_t rec_time(const uint8_t *r, uint16_t type, uint16_t len)
{
	const size_t trailer = sizeof(struct sample_id) - offsetof(struct sample_id, time);

	if (type != PERF_RECORD_SAMPLE)
		return len >= sizeof(struct perf_event_header) + trailer ? load64(r + len - trailer)
									: 0;
	if (len < offsetof(struct cpu_sample_head, time) + 8)
		return 0;
	return load64(r + offsetof(struct cpu_sample_head, id)) == PERF_SAMPLE_ID_VALUE ?
	       load64(r + offsetof(struct cpu_sample_head, time)) :
	       load64(r + offsetof(struct tp_sample_head, time));
}

/* The whole of temporary file f. 0, or -1 (reading, memory). */
static int slurp(FILE *f, struct buf *b)
{
	long n;

	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return -1;
	b->n = (size_t)n;
	if (!(b->p = malloc(b->n ? b->n : 1)))
		return -1;
	return fread(b->p, 1, b->n, f) == b->n ? 0 : -1;
}

/* Index b's records after the *n already in ix; ix NULL: only count them. */
static int index_recs(const struct buf *b, struct rec_ix *ix, size_t *n)
{
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= b->n;) {
		struct perf_event_header h;

		memcpy(&h, b->p + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > b->n)
			return -1;
		if (ix)
			ix[*n] = (struct rec_ix){ rec_time(b->p + off, (uint16_t)h.type, h.size),
						  *n, b->p + off, h.size };
		(*n)++;
		off += h.size;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct rec_ix *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int perf_write_ordered(FILE *out, FILE *samples, FILE *sched)
{
	struct buf a = { NULL, 0 }, b = { NULL, 0 };
	struct rec_ix *ix = NULL;
	size_t n = 0;
	int rc = -1;

	if (slurp(samples, &a) || slurp(sched, &b) || index_recs(&a, NULL, &n) ||
	    index_recs(&b, NULL, &n) || !(ix = malloc((n + 1) * sizeof(*ix))))
		goto out;
	n = 0;
	if (index_recs(&a, ix, &n) || index_recs(&b, ix, &n))
		goto out;
	qsort(ix, n, sizeof(*ix), by_time);
	for (size_t i = 0; i < n; i++)
		if (fwrite(ix[i].at, 1, ix[i].len, out) != ix[i].len)
			goto out;
	rc = 0;
out:
	free(ix);
	free(a.p);
	free(b.p);
	return rc;
}
