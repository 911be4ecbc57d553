/*
 * features.c: the feature sections of a perf.data file, called by perfdata.c's report_perf
 * once the data is written. Readers rely on them: perf report --header and hotspot show the
 * host name, OS release, architecture, CPUs, CPU description (which names the clock the
 * samples weigh: clockdesc.c) and command line; hotspot's parser takes the
 * event (its name and sample ids) from EVENT_DESC only, and without HOSTNAME or CMDLINE it
 * believes the feature bits are byte-swapped ("bad feature data"); perf finds the kernel ELF
 * through BUILD_ID.
 *
 * Layout (perf's tools/perf/Documentation/perf.data-file-format.txt): after the data, one
 * {offset, size} per feature bit set in the header, in bit order, then the sections. A string
 * is a u32 length (the string's bytes with its NUL, padded with NULs to 64) and the bytes.
 * Adding a feature is adding a row to feats[].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/perf/features.h"
#include "export/perf/tracepoints.h"
#include "model/clockdesc.h"

enum {	/* perf's feature bits (HEADER_*) */
	FEAT_TRACING_DATA = 1, FEAT_BUILD_ID = 2, FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_ARCH = 6, FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8, FEAT_CMDLINE = 11, FEAT_EVENT_DESC = 12,
};

#define NAME_ALIGN		64		/* perf pads strings and file names to this */
#define MISC_BUILD_ID_SIZE	(1 << 15)	/* the build-id record says its size */
#define GUEST_NAME		"kern"		/* the profiled machine: this kernel, not the host */

struct build_id_rec {
	struct perf_event_header header;
	int32_t pid;
	uint8_t build_id[20];
	uint8_t size, res1;
	uint16_t res2;
};

static void put_string(FILE *f, const char *s)
{
	static const char zero[NAME_ALIGN];
	size_t n = strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	perf_put_u32(f, (uint32_t)len);
	fwrite(s, 1, n, f);
	fwrite(zero, 1, len - n, f);
}

/* The build-id table: the kernel's, under perf's name for the kernel. */
static void feat_build_id(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	static const char name[NAME_ALIGN] = "[kernel.kallsyms]";
	const struct opf_session *h0 = &c->p->sess[0].hdr;
	struct build_id_rec b = { { 0, PERF_RECORD_MISC_KERNEL | MISC_BUILD_ID_SIZE,
				    (uint16_t)(sizeof(b) + sizeof(name)) }, -1, { 0 }, 0, 0, 0 };

	(void)ev;
	b.size = (uint8_t)(h0->build_id_len < 20 ? h0->build_id_len : 20);
	memcpy(b.build_id, h0->build_id, b.size);
	fwrite(&b, sizeof(b), 1, f);
	fwrite(name, sizeof(name), 1, f);
}

static void feat_hostname(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)c, (void)ev;
	put_string(f, GUEST_NAME);
}

/* "kern-" and the first 6 bytes of the build-id in hex: which build of the kernel. */
static void feat_osrelease(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	const struct opf_session *h0 = &c->p->sess[0].hdr;
	char s[sizeof(GUEST_NAME) + 16] = GUEST_NAME;

	(void)ev;
	for (uint32_t i = 0; i < 6 && i < h0->build_id_len; i++)
		sprintf(s + strlen(s), "%s%02x", i ? "" : "-", h0->build_id[i]);
	put_string(f, s);
}

static void feat_arch(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)c, (void)ev;
	put_string(f, "x86_64");
}

/* CPUs available, then online: both the session's cores. */
static void feat_nrcpus(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)ev;
	perf_put_u32(f, c->ncores);
	perf_put_u32(f, c->ncores);
}

/* The CPU description: what the samples weigh (clockdesc.c), so `perf report --header` says it. */
static void feat_cpudesc(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	char clk[128], s[192];

	(void)ev;
	snprintf(s, sizeof(s), "kern guest, clock: %s",
		 clock_text(&c->p->sess[0].hdr, clk, sizeof(clk)));
	put_string(f, s);
}

/*
 * The command that wrote the file (perf record writes its own), after an empty first word:
 * hotspot's summary drops the first word (perf's path, for perf record) and shows "perf "
 * and the rest, so opreport's own name must come second to be shown ("perf
 * user/opreport --perf-data ..."); perf report --header prints every word.
 */
static void feat_cmdline(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)ev;
	perf_put_u32(f, (uint32_t)c->o->argc + 1);
	put_string(f, "");
	for (int i = 0; i < c->o->argc; i++)
		put_string(f, c->o->argv[i]);
}

/* The events: each one's attribute, its one id, its name. */
static void feat_event_desc(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)c;
	perf_put_u32(f, ev->n);
	perf_put_u32(f, sizeof(ev->a[0].attr));
	for (uint32_t i = 0; i < ev->n; i++) {
		uint64_t id = PERF_SAMPLE_ID_VALUE + i;

		fwrite(&ev->a[i].attr, sizeof(ev->a[i].attr), 1, f);
		perf_put_u32(f, 1);
		put_string(f, ev->names[i]);
		fwrite(&id, sizeof(id), 1, f);
	}
}

/* The tracepoints' formats: only a file with the sched events has this section. */
static void feat_tracing_data(const struct ctx *c, const struct perf_events *ev, FILE *f)
{
	(void)c, (void)ev;
	perf_sched_tracing_data(f);
}

static const struct {
	int bit;
	void (*write)(const struct ctx *c, const struct perf_events *ev, FILE *f);
	int sched;	/* written only with the sched tracepoints */
} feats[] = {	/* in bit order, as the section table is */
	{ FEAT_TRACING_DATA, feat_tracing_data, 1 },
	{ FEAT_BUILD_ID, feat_build_id, 0 },
	{ FEAT_HOSTNAME, feat_hostname, 0 },
	{ FEAT_OSRELEASE, feat_osrelease, 0 },
	{ FEAT_ARCH, feat_arch, 0 },
	{ FEAT_NRCPUS, feat_nrcpus, 0 },
	{ FEAT_CPUDESC, feat_cpudesc, 0 },
	{ FEAT_CMDLINE, feat_cmdline, 0 },
	{ FEAT_EVENT_DESC, feat_event_desc, 0 },
};
#define NFEATS (sizeof(feats) / sizeof(feats[0]))

int perf_write_features(const struct ctx *c, const struct perf_events *ev, FILE *f,
			uint64_t features[4])
{
	struct file_section sec[NFEATS];
	long table = ftell(f);
	size_t n = 0;

	for (size_t i = 0; i < NFEATS; i++)
		n += !feats[i].sched || ev->n > 1;
	if (table < 0 || fseek(f, (long)(n * sizeof(sec[0])), SEEK_CUR))
		return -1;
	n = 0;
	for (size_t i = 0; i < NFEATS; i++) {
		if (feats[i].sched && ev->n == 1)
			continue;
		sec[n].offset = (uint64_t)ftell(f);
		feats[i].write(c, ev, f);
		sec[n].size = (uint64_t)ftell(f) - sec[n].offset;
		n++;
		features[feats[i].bit / 64] |= 1ULL << feats[i].bit % 64;
	}
	if (fseek(f, table, SEEK_SET))
		return -1;
	fwrite(sec, sizeof(sec[0]), n, f);
	return ferror(f) ? -1 : 0;
}
