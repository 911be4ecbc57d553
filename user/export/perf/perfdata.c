/*
 * perfdata.c: --perf-data FILE, called by opreport.c: the profile as a perf.data file (the
 * PERFILE2 format of Linux perf) that `perf report`, `perf script`, `perf annotate` and
 * hotspot read.
 *
 * perf_collect() runs while the stream is read (profile.c calls its hook for every reported
 * sample) and keeps each sample as a PERF_RECORD_SAMPLE in a temporary file: the event's id
 * (PERF_SAMPLE_IDENTIFIER, first, as perf record writes it), cpu, tid, time (ns since boot,
 * from the sample's TSC), the interrupted pc, the call chain (kernel context, pc, then each
 * return address minus one, so it lies in the calling function) and a period of the
 * nanoseconds it stands for (its weight times the session's period), so perf's overhead
 * matches opreport's weighted shares. report_perf() then writes the file: the header; one
 * attribute (software cpu-clock; sample_id_all, so every record carries pid/tid, time, cpu
 * and the id) with its id list; the data: a kernel mmap named "[kernel.kallsyms]_text" over
 * the kernel's text, a comm per named thread, the samples; then the feature sections
 * (features.c), whose build-id is how perf finds the ELF in its build-id cache
 * (buildid_cache.c puts it there). All samples are kernel samples (PERF_RECORD_MISC_KERNEL):
 * the profiled code is the kernel. A stream with scheduler events adds three tracepoint
 * attributes (ids 2 to 4; tracepoints.c), their samples and context switch records
 * (sched_records.c), all of the data then in time order (order.c). The layouts of the
 * records are records.h's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/perf/buildid_cache.h"
#include "export/perf/features.h"
#include "export/perf/order.h"
#include "export/perf/perfdata.h"
#include "export/perf/records.h"
#include "export/perf/sched_records.h"
#include "export/perf/tracepoints.h"
#include "util/textenc.h"

#define PERF_MAGIC	0x32454c4946524550ULL	/* "PERFILE2" */
#define KERNEL_PID	((uint32_t)-1)		/* perf's pid of the host kernel */

struct file_header {
	uint64_t magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t features[4];		/* 256 feature bits */
};

struct perf_samples {
	FILE *tmp;		/* the PERF_RECORD_SAMPLEs, in stream order */
	uint64_t n;
	uint64_t lo, hi;	/* addresses seen */
	int err;
};

/* profile.c's hook: one reported sample, as records.h's cpu_sample_head and its chain. */
static int keep_sample(void *arg, const struct session *s, const struct opf_sample *h,
		       const uint8_t *frames, uint64_t weight)
{
	struct perf_samples *ps = arg;
	uint64_t rec[sizeof(struct cpu_sample_head) / 8 + 4 + OPF_MAX_DEPTH];
	uint64_t *r = rec + sizeof(struct cpu_sample_head) / 8;
	struct cpu_sample_head hd = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 0 },
				      PERF_SAMPLE_ID_VALUE, h->pc, h->tid, h->tid,
				      perf_ns_of(s, h->tsc), h->core, 0,
				      weight * (s->hdr.hz ? 1000000000ULL / s->hdr.hz : 1) };

	*r++ = 2u + h->nframes;
	*r++ = PERF_CONTEXT_KERNEL;
	*r++ = h->pc;
	for (uint16_t i = 0; i < h->nframes; i++, r++) {
		memcpy(r, frames + 8u * i, 8);
		*r -= *r ? 1 : 0;	/* inside the call, as opreport looks it up */
	}
	hd.h.size = (uint16_t)((char *)r - (char *)rec);
	memcpy(rec, &hd, sizeof(hd));
	ps->lo = h->pc < ps->lo ? h->pc : ps->lo;
	ps->hi = h->pc > ps->hi ? h->pc : ps->hi;
	ps->n++;
	if (fwrite(rec, 1, hd.h.size, ps->tmp) != hd.h.size)
		ps->err = 1;
	return 0;
}

struct perf_samples *perf_collect(struct profile *p)
{
	struct perf_samples *ps = calloc(1, sizeof(*ps));

	if (!ps || !(ps->tmp = tmpfile())) {
		free(ps);
		return NULL;
	}
	ps->lo = UINT64_MAX;
	p->hook = keep_sample;
	p->hook_arg = ps;
	return ps;
}

void perf_free(struct perf_samples *ps)
{
	if (ps)
		fclose(ps->tmp);
	free(ps);
}

/* The kernel's text as an mmap of "[kernel.kallsyms]_text", at its link addresses. */
static void put_mmap(const struct ctx *c, const struct perf_samples *ps, FILE *f)
{
	struct { uint32_t pid, tid; uint64_t addr, len, pgoff; char name[24]; } m = { 0 };
	uint64_t lo = c->sym->mod ? c->sym->low : ps->lo, hi = c->sym->mod ? c->sym->high : ps->hi + 1;

	if (lo > hi)
		lo = hi = 0;
	m.pid = KERNEL_PID;
	m.addr = lo;
	m.len = hi - lo;
	m.pgoff = lo;
	strcpy(m.name, "[kernel.kallsyms]_text");
	perf_put_rec(f, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &m, sizeof(m), KERNEL_PID, 0,
		     0, 0);
}

static void put_comms(const struct profile *p, FILE *f)
{
	for (uint32_t i = 0; i < p->nthreads; i++) {
		struct { uint32_t pid, tid; char comm[SHOWN_SIZE(OPF_MAX_NAME)]; } cm = { 0 };
		const struct thread_name *t = &p->threads[i];

		cm.pid = cm.tid = t->tid;
		shown_copy(cm.comm, sizeof(cm.comm), t->name);	/* perf prints it as it is */
		perf_put_rec(f, PERF_RECORD_COMM, 0, &cm, 8 + strlen(cm.comm) + 1, t->tid, t->tid,
			     0, 0);
	}
}

static struct file_attr cpu_clock(const struct ctx *c)
{
	struct file_attr a;
	uint32_t hz = c->p->sess[0].hdr.hz;

	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.size = sizeof(a.attr);
	a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a.attr.sample_period = hz ? 1000000000ULL / hz : 1;
	a.attr.sample_type = PERF_CPU_SAMPLE_TYPE;	/* records.h's cpu_sample_head */
	a.attr.sample_id_all = 1;
	a.attr.exclude_user = a.attr.exclude_hv = 1;
	a.attr.mmap = a.attr.comm = 1;
	return a;
}

/* Copy the kept samples after the other records. */
static int copy_samples(struct perf_samples *ps, FILE *f)
{
	char buf[1 << 16];
	size_t n;

	rewind(ps->tmp);
	while ((n = fread(buf, 1, sizeof(buf), ps->tmp)) > 0)
		if (fwrite(buf, 1, n, f) != n)
			return -1;
	return ferror(ps->tmp) ? -1 : 0;
}

/* perf finds the kernel by build-id only: say when the stream's cannot be matched. */
static void check_id(const struct ctx *c, const char *path)
{
	uint32_t n = c->p->sess[0].hdr.build_id_len;

	if (n < 20)
		fprintf(stderr, "opreport: warning: %s: the stream carries %s build-id (%u bytes); "
			"perf will not find the kernel ELF for it\n", path,
			n ? "a truncated" : "no", n);
}

/* The kernel ELF into perf's build-id cache, when it is the stream's kernel. */
static void cache_kernel(const struct ctx *c)
{
	const struct opf_session *h0 = &c->p->sess[0].hdr;
	const uint8_t *id;
	size_t n = c->kernel_path ? sym_build_id(c->sym, &id) : 0;

	if (c->o->no_buildid_cache || !n || n != h0->build_id_len || memcmp(id, h0->build_id, n))
		return;
	buildid_cache_add(c->kernel_path, id, n);
}

/* The header's sections for n attributes, their ids (one each) and the data after them. */
static void layout(struct file_header *h, struct file_attr *a, uint32_t n)
{
	h->attrs = (struct file_section){ sizeof(*h), n * sizeof(*a) };
	for (uint32_t i = 0; i < n; i++)
		a[i].ids = (struct file_section){ sizeof(*h) + n * sizeof(*a) + 8 * i, 8 };
	h->data.offset = sizeof(*h) + n * (sizeof(*a) + 8);
}

/*
 * Keep in ps->tmp only the samples the filters keep by their thread and stack (their core
 * and time were judged as the stream was read: the thread's name may come later). 0 or -1.
 */
static int filter_samples(const struct ctx *c, struct perf_samples *ps)
{
	uint64_t rec[sizeof(struct cpu_sample_head) / 8 + 4 + OPF_MAX_DEPTH];
	const size_t hn = sizeof(struct cpu_sample_head);
	struct perf_event_header h;
	FILE *out;

	if (!c->fu.f || !c->fu.f->on)
		return 0;
	if (!(out = tmpfile()))
		return -1;
	rewind(ps->tmp);
	while (fread(rec, 8, 1, ps->tmp) == 1) {	/* each as keep_sample wrote it */
		const uint64_t *chain = rec + hn / 8;	/* nr, the context, the pc, ... */
		struct cpu_sample_head hd;
		struct fitem it = { FI_NONE, FI_NONE, 0, FI_NONE, 0, 0, NULL, 0, chain + 2, 0 };

		memcpy(&h, rec, sizeof(h));
		if (h.size < hn + 24 || h.size > sizeof(rec) ||
		    fread(rec + 1, h.size - 8, 1, ps->tmp) != 1)
			break;
		memcpy(&hd, rec, hn);
		it.tid = hd.tid;
		it.naddrs = (uint32_t)chain[0] - 1;
		if (filter_judge(c->fu.f, c->p, &it, FJ_WHO | FJ_WHAT | FJ_IDLE) != FV_KEEP)
			ps->n--;
		else if (fwrite(rec, h.size, 1, out) != 1)
			break;
	}
	if (ferror(ps->tmp) || ferror(out) || !feof(ps->tmp) || fflush(out)) {
		fclose(out);
		return -1;
	}
	fclose(ps->tmp);
	ps->tmp = out;
	return 0;
}

/* The data: the kernel's mmap, the comms, the samples; with sched, the samples and the
 * scheduler records in time order (order.c). */
static int put_data(const struct ctx *c, struct perf_samples *ps, FILE *f, int sched)
{
	FILE *tmp;
	int rc;

	put_mmap(c, ps, f);
	put_comms(c->p, f);
	if (!sched)
		return copy_samples(ps, f);
	if (!(tmp = tmpfile()))
		return -1;
	rc = perf_sched_samples(c, tmp) || fflush(tmp) || fflush(ps->tmp) ||
	     perf_write_ordered(f, ps->tmp, tmp) ? -1 : 0;
	fclose(tmp);
	return rc;
}

int report_perf(const struct ctx *c, const char *path)
{
	struct file_header h = { PERF_MAGIC, sizeof(h), sizeof(struct file_attr), { 0, 0 },
				 { 0, 0 }, { 0, 0 }, { 0, 0, 0, 0 } };
	struct file_attr a[1 + PERF_SCHED_NATTR] = { cpu_clock(c) };
	const char *names[1 + PERF_SCHED_NATTR] = { PERF_EVENT_NAME };
	int sched = perf_sched_on(c);
	struct perf_events ev = { a, names, sched ? 1 + PERF_SCHED_NATTR : 1 };
	uint64_t id[1 + PERF_SCHED_NATTR];
	struct perf_samples *ps = c->perf;
	FILE *f = fopen(path, "wb");
	int rc = -1;

	if (!f)
		return -1;
	if (!ps || ps->err)
		goto out;
	check_id(c, path);
	if (sched)
		perf_sched_attrs(a + 1);
	for (uint32_t i = 0; i < ev.n; i++) {
		id[i] = PERF_SAMPLE_ID_VALUE + i;
		names[i] = i ? perf_sched_names[i - 1] : PERF_EVENT_NAME;
	}
	layout(&h, a, ev.n);
	if (filter_samples(c, ps) || fseek(f, (long)h.data.offset, SEEK_SET) ||
	    put_data(c, ps, f, sched))
		goto out;
	h.data.size = (uint64_t)ftell(f) - h.data.offset;
	if (perf_write_features(c, &ev, f, h.features))
		goto out;
	rewind(f);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(a, sizeof(a[0]), ev.n, f);
	fwrite(id, sizeof(id[0]), ev.n, f);
	rc = ferror(f) ? -1 : 0;
out:
	if (fclose(f))
		rc = -1;
	if (!rc)
		cache_kernel(c);
	return rc;
}
