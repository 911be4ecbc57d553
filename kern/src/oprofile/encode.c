/*
 * The stream encoder: every record the profiler writes is built here (encode.h has the
 * contract and the hot path's inline records). docs/FORMAT.md and
 * kern/include/abi/oprofile.h say what each record means; user/ingest/parser.c decodes them.
 *
 * Pure builders: each fills a record in memory its caller reserved and owns, and reads no
 * session state, so any context may call them -- a core's hot path (hotpath.c, budget.c)
 * writing into its own blocks, or the stream writer (stream.c) writing the kernel's own
 * records into pool blocks. blk_salvage counts what a block that will never be read held.
 */
#include "internal.h"

void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc)
{
	struct opf_lost *l = p;

	l->h.type = OPF_LOST;
	l->h.flags = 0;
	l->h.len = sizeof(*l);
	l->core = core;
	l->reason = reason;
	l->pad = 0;
	l->count = count;
	l->tsc = tsc;
}

bool rec_lost_all(uint64_t count[OPF_LOST_NREASONS], uint16_t core, uint64_t tsc,
		  rec_reserve_fn reserve, void *arg)
{
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		void *p;

		if (!count[r])
			continue;
		if (!(p = reserve(arg, sizeof(struct opf_lost))))
			return false;
		rec_lost(p, core, (uint16_t)r, count[r], tsc);
		count[r] = 0;
	}
	return true;
}

static uint16_t name_len(const char *name)
{
	return (uint16_t)strnlen(name ? name : "", OPF_MAX_NAME);
}

uint32_t rec_thread_len(const char *name)
{
	return opf_thread_len(name_len(name));
}

void rec_thread(void *p, uint32_t tid, int core, const char *name, uint64_t tsc)
{
	uint16_t namelen = name_len(name);
	struct opf_thread *t = p;

	memset(t, 0, opf_thread_len(namelen));
	t->h.type = OPF_THREAD;
	t->h.len = opf_thread_len(namelen);
	t->tid = tid;
	t->core = (uint16_t)core;
	t->namelen = namelen;
	t->tsc = tsc;
	memcpy(t->name, name, namelen);
}

void rec_throttle(void *p, int core, uint32_t old_hz, uint32_t new_hz, uint64_t tsc,
		  uint32_t budget)
{
	struct opf_throttle *t = p;

	t->h.type = OPF_THROTTLE;
	t->h.flags = 0;
	t->h.len = sizeof(*t);
	t->core = (uint32_t)core;
	t->new_hz = new_hz;
	t->tsc = tsc;
	t->old_hz = old_hz;
	t->budget_pct = budget;
}

void rec_mark(void *p, uint16_t type, uint16_t core, uint64_t tsc)
{
	struct opf_mark *m = p;

	m->h.type = type;
	m->h.flags = 0;
	m->h.len = sizeof(*m);
	m->tsc = tsc;
	m->core = core;
	m->pad = 0;
}

void rec_snapshot(void *p, uint16_t flags, uint64_t seq, uint64_t tsc)
{
	struct opf_snapshot *m = p;

	m->h.type = OPF_SNAPSHOT;
	m->h.flags = flags;
	m->h.len = sizeof(*m);
	m->seq = seq;
	m->tsc = tsc;
}

void rec_drop(void *p, uint16_t flags, uint16_t core, uint64_t seq, uint32_t blocks,
	      uint64_t samples)
{
	struct opf_drop *d = p;

	d->h.type = OPF_DROP;
	d->h.flags = flags;
	d->h.len = sizeof(*d);
	d->core = core;
	d->pad = 0;
	d->blocks = blocks;
	d->seq = seq;
	d->samples = samples;
}

/*
 * The block was written by our own hot path, so its records are well formed; the walk
 * stops at anything that is not.
 */
void rec_salvage(const struct block *b, struct salvage *sv)
{
	memset(sv, 0, sizeof(*sv));
	for (const uint8_t *p = b->rp; p + sizeof(struct opf_rec) <= b->wp;) {
		const struct opf_rec *r = (const void *)p;

		if (r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
			break;
		if (r->type == OPF_SAMPLE) {
			sv->samples++;
			sv->truncated += (r->flags & OPF_F_TRUNCATED) != 0;
			sv->depth_cut += (r->flags & OPF_F_DEPTH) != 0;
		} else if (r->type == OPF_LOST) {
			const struct opf_lost *l = (const void *)r;

			if (l->reason < OPF_LOST_NREASONS)
				sv->lost[l->reason] += l->count;
		} else if (r->type == OPF_THREAD) {
			sv->threads++;
		} else if (r->type == OPF_PAUSE || r->type == OPF_RESUME ||
			   r->type == OPF_THROTTLE) {
			sv->marks++;	/* pause time and rates a reader can no longer tell */
		} else if (r->type >= OPF_SWITCH && r->type <= OPF_LOCKWAIT) {
			sv->ev[r->type - OPF_SWITCH]++;
		} else if (r->type == OPF_SWITCH_SHORT || r->type == OPF_SWITCH_SAME) {
			sv->ev[OPF_EV_SWITCH]++;
		}
		p += r->len;
	}
}

uint64_t blk_salvage(const struct block *b, struct blk_gone *gone,
		     uint64_t unreported[OPF_LOST_NREASONS], uint32_t *pending)
{
	struct salvage sv;

	rec_salvage(b, &sv);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		if (!sv.lost[r])
			continue;
		unreported[r] += sv.lost[r];
		if (pending)
			*pending = 1;
	}
	cnt_add(&gone->blocks, 1);
	cnt_add(&gone->samples, sv.samples);
	cnt_add(&gone->truncated, sv.truncated);
	cnt_add(&gone->depth_cut, sv.depth_cut);
	cnt_add(&gone->threads, sv.threads);
	cnt_add(&gone->marks, sv.marks);
	for (unsigned k = 0; k < OPF_EV_N; k++)
		cnt_add(&gone->ev[k], sv.ev[k]);
	return sv.samples;
}
