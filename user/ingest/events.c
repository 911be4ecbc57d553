/*
 * events.c: scheduler and lock events (OPF_SWITCH(_SHORT, _SAME), OPF_WAKEUP, OPF_LOCKWAIT,
 * OPF_SCHED_END, and OPF_THREAD for when a thread began), kept while parsing. Called by
 * profile.c's handlers during the parse, on the profile's struct sched_data only; the
 * accounting (model/sched_acct.c) and every view of the events read what it keeps.
 *
 * Each event record becomes a struct sev of its session in stream order, its frames copied
 * into one pool; an OPF_SWITCH_SAME takes the wait and frames of its thread's OPF_SWITCH
 * earlier in the block (same_wait). The samples and pause marks of a session with events
 * are kept too, for the checks and the timeline.
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/events.h"

static const char *const why_names[OPF_WHY_N] = {
	"preempted", "yield", "sleep", "rendez", "qlock", "io", "exit",
};

const char *sched_why_name(unsigned why)
{
	return why < OPF_WHY_N ? why_names[why] : "?";
}

double sched_ms(const struct sched_sess *s, uint64_t ticks)
{
	return s->tsc_hz ? 1e3 * (double)ticks / (double)s->tsc_hz : 0;
}

uint64_t sched_len(const struct sched_sess *s)
{
	uint64_t a = s->start > s->from ? s->start : s->from, b = s->end < s->to ? s->end : s->to;

	return b > a ? b - a : 0;
}

/* Room for one more of an array of elem-sized things with *n used of *cap. 0 or -1. */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	uint32_t nc = *cap ? 2 * *cap : 256;
	void *na = realloc(*arr, (size_t)nc * elem);

	if (!na)
		return -1;
	*arr = na;
	*cap = nc;
	return 0;
}

static struct sched_sess *cur_sess(struct sched_data *d)
{
	return d->nsess ? &d->sess[d->nsess - 1] : NULL;
}

int sched_session(struct sched_data *d, const struct opf_session *h)
{
	struct sched_sess *ns = realloc(d->sess, (d->nsess + 1) * sizeof(*ns));

	if (!ns)
		return -1;
	d->sess = ns;
	ns = &d->sess[d->nsess++];
	memset(ns, 0, sizeof(*ns));
	ns->on = (h->flags & OPF_S_SCHED) != 0;
	ns->ncores = h->ncores;
	ns->start = h->start_tsc;
	ns->tsc_hz = h->tsc_hz;
	ns->period = h->hz ? h->tsc_hz / h->hz : 0;
	ns->to = UINT64_MAX;
	ns->cores = calloc(ns->ncores, sizeof(*ns->cores));
	return ns->cores ? 0 : -1;
}

/*
 * Copy n frames (unaligned, from the record's tail) into the pool; their index, or -1. The
 * pool is made at the first event, with frames or not: the views index it for every switch
 * and lock event, nframes 0 too, and NULL + 0 is no pointer.
 */
static int64_t keep_frames(struct sched_data *d, const uint8_t *tail, unsigned n)
{
	size_t at = d->nframes;

	if (d->nframes + n > d->framecap || !d->frames) {
		size_t nc = d->framecap ? 2 * d->framecap : 4096;
		uint64_t *nf;

		while (nc < d->nframes + n)
			nc *= 2;
		if (!(nf = realloc(d->frames, nc * sizeof(*nf))))
			return -1;
		d->frames = nf;
		d->framecap = nc;
	}
	memcpy(d->frames + at, tail, 8 * (size_t)n);
	d->nframes += n;
	return (int64_t)at;
}

static void name_of(char dst[OPF_OBJ_NAME + 1], const char *src)
{
	memcpy(dst, src, OPF_OBJ_NAME);
	dst[OPF_OBJ_NAME] = 0;
}

/* The event record v as a struct sev (frames kept in the pool). 0 or -1 (memory). */
static int decode(struct sched_data *d, const struct opf_view *v, struct sev *e)
{
	const union opf_any *r = v->r;
	int64_t at = 0;

	memset(e, 0, sizeof(*e));
	e->seq = d->seq++;
	switch (r->h.type) {
	case OPF_SWITCH_SHORT:	/* the parser zero-extended it: no object, name or frames */
	case OPF_SWITCH_SAME:	/* ... and sched_add gives it its OPF_SWITCH's wait */
	case OPF_SWITCH:
		*e = (struct sev){ r->sw.tsc, e->seq, r->sw.prev_cpu, r->sw.obj, r->sw.site,
				   r->sw.prev_tid, r->sw.next_tid, r->sw.holder, 0,
				   r->sw.nframes, r->sw.core, r->sw.why, SEV_SWITCH, 0, "" };
		name_of(e->name, r->sw.name);
		at = keep_frames(d, v->tail, r->sw.nframes);
		break;
	case OPF_WAKEUP:	/* core: the waker's (sched_add counts it for the block's) */
		*e = (struct sev){ .tsc = r->wakeup.tsc, .seq = e->seq, .a = r->wakeup.tid,
				   .b = r->wakeup.waker,
				   .core = r->wakeup.h.flags & OPF_W_RESUMED ? r->wakeup.waker_core
									      : r->wakeup.core,
				   .why = r->wakeup.target_core, .kind = SEV_WAKEUP };
		break;
	case OPF_LOCKWAIT:
		*e = (struct sev){ r->lockwait.tsc, e->seq, r->lockwait.wait, r->lockwait.lock, 0,
				   r->lockwait.tid, r->lockwait.holder, 0, 0, r->lockwait.nframes,
				   r->lockwait.core, r->lockwait.kind, SEV_LOCK, 0, "" };
		name_of(e->name, r->lockwait.name);
		at = keep_frames(d, v->tail, r->lockwait.nframes);
		break;
	default:	/* OPF_THREAD */
		*e = (struct sev){ .tsc = r->thread.tsc, .seq = e->seq, .a = r->thread.tid,
				   .core = r->thread.core, .kind = SEV_CREATE };
	}
	e->frames = (uint32_t)at;
	return at < 0 ? -1 : 0;
}

void sched_block(struct sched_data *d, uint32_t core, int partial)
{
	struct sched_sess *s = cur_sess(d);

	if (s && core < s->ncores) {
		s->cores[core].nsame = 0;
		s->cores[core].partial = partial;
	}
}

/* The slot of the core's open block that holds thread tid's last OPF_SWITCH, or NULL. */
static uint32_t *same_slot(struct sched_sess *s, struct sched_core *c, uint32_t tid)
{
	for (uint32_t i = 0; i < c->nsame; i++)
		if (s->ev[c->same[i]].a == tid)
			return &c->same[i];
	return NULL;
}

/*
 * e, a switch of core c: an OPF_SWITCH is its thread's last in the block; an
 * OPF_SWITCH_SAME takes that one's wait and frames (abi/oprofile.h). 0, or -1 with err.
 */
static int same_wait(struct sched_sess *s, uint16_t type, struct sev *e, char *err,
		     size_t errlen)
{
	struct sched_core *c = &s->cores[e->core];
	uint32_t *at = same_slot(s, c, e->a);

	if (type == OPF_SWITCH) {
		if (!at && grow((void **)&c->same, &c->samecap, c->nsame, sizeof(*c->same)))
			return -1;
		*(at ? at : &c->same[c->nsame++]) = s->nev;
		return 0;
	}
	if (at) {
		const struct sev *f = &s->ev[*at];

		e->obj = f->obj;
		e->site = f->site;
		e->holder = f->holder;
		e->frames = f->frames;
		e->nframes = f->nframes;
		memcpy(e->name, f->name, sizeof(e->name));
		return 0;
	}
	if (c->partial) {	/* an earlier reader's file has it: no stack here */
		c->same_unknown++;
		return 0;
	}
	snprintf(err, errlen, "OPF_SWITCH_SAME of thread %u on core %u: no OPF_SWITCH of it "
		 "earlier in its block", e->a, e->core);
	return -1;
}

int sched_add(struct sched_data *d, const struct opf_view *v, char *err, size_t errlen)
{
	struct sched_sess *s = cur_sess(d);
	uint16_t type = v->r->h.type;
	struct sev e;

	if (!s || !s->on)
		return 0;
	if (type == OPF_SCHED_END) {
		if (v->r->sched_end.core < s->ncores) {
			s->cores[v->r->sched_end.core].have_end = 1;
			s->cores[v->r->sched_end.core].end = v->r->sched_end;
		}
		return 0;
	}
	if (decode(d, v, &e) || grow((void **)&s->ev, &s->evcap, s->nev, sizeof(e)))
		return -1;
	if ((type == OPF_SWITCH || type == OPF_SWITCH_SAME) && e.core < s->ncores &&
	    same_wait(s, type, &e, err, errlen))
		return -1;
	/* per core as the kernel counts them: by the block's core (a wake-up's core field) */
	uint32_t k = type == OPF_WAKEUP ? v->r->wakeup.core : e.core;

	if (e.kind != SEV_CREATE && k < s->ncores)
		s->cores[k].recs[e.kind]++;
	s->ev[s->nev++] = e;
	return 0;
}

int sched_sample(struct sched_data *d, const struct opf_sample *h)
{
	struct sched_sess *s = cur_sess(d);

	if (!s || !s->on)
		return 0;
	if (grow((void **)&s->smp, &s->smpcap, s->nsmp, sizeof(*s->smp)))
		return -1;
	s->smp[s->nsmp++] = (struct ssample){ h->tsc, h->tid, h->core };
	return 0;
}

int sched_mark(struct sched_data *d, uint16_t type, uint64_t tsc, uint16_t core)
{
	struct sched_sess *s = cur_sess(d);

	if (!s || !s->on)
		return 0;
	if (grow((void **)&s->marks, &s->markcap, s->nmarks, sizeof(*s->marks)))
		return -1;
	s->marks[s->nmarks++] = (struct smark){ tsc, core, type };
	return 0;
}

void sched_free(struct sched_data *d)
{
	for (uint32_t i = 0; i < d->nsess; i++) {
		free(d->sess[i].ev);
		free(d->sess[i].smp);
		for (uint32_t k = 0; d->sess[i].cores && k < d->sess[i].ncores; k++)
			free(d->sess[i].cores[k].same);
		free(d->sess[i].cores);
		free(d->sess[i].thr);
		free(d->sess[i].off);
		free(d->sess[i].marks);
	}
	free(d->sess);
	free(d->frames);
	free(d->roots);
	free(d->root_sess);
	memset(d, 0, sizeof(*d));
}

int sched_any(const struct sched_data *d)
{
	for (uint32_t i = 0; i < d->nsess; i++)
		if (d->sess[i].on)
			return 1;
	return 0;
}
