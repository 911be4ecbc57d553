/*
 * stacks.c: hash table of unique stacks (open addressing, linear probing, arena-allocated
 * entries); see stacks.h. Called by profile.c for every sample: the hot path of opreport, one
 * hash and usually one compare per sample.
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/stacks.h"

#define ARENA_CHUNK	(1u << 20)

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w * 0x9e3779b97f4a7c15ULL;
	h = (h << 27 | h >> 37) * 0xbf58476d1ce4e5b9ULL;
	return h;
}

static inline uint64_t finish(uint64_t h)
{
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

int stacks_init(struct stacks *t, uint32_t ncores)
{
	memset(t, 0, sizeof(*t));
	t->ncores = ncores;
	t->mask = 1023;
	t->tab = calloc(t->mask + 1, sizeof(*t->tab));
	return t->tab ? 0 : -1;
}

static void *arena_alloc(struct stacks *t, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n > t->arena_left) {
		size_t sz = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		void **c = realloc(t->chunks, (t->nchunks + 1) * sizeof(*c));

		if (!c)
			return NULL;
		t->chunks = c;
		t->arena = malloc(sz);
		if (!t->arena)
			return NULL;
		t->chunks[t->nchunks++] = t->arena;
		t->arena_left = sz;
	}
	void *p = t->arena;
	t->arena += n;
	t->arena_left -= n;
	return p;
}

static int grow(struct stacks *t)
{
	size_t nmask = t->mask * 2 + 1;
	struct stack_slot *nt = calloc(nmask + 1, sizeof(*nt));

	if (!nt)
		return -1;
	for (size_t i = 0; i <= t->mask; i++) {
		if (!t->tab[i].s)
			continue;
		size_t j = t->tab[i].hash & nmask;
		while (nt[j].s)
			j = (j + 1) & nmask;
		nt[j] = t->tab[i];
	}
	free(t->tab);
	t->tab = nt;
	t->mask = nmask;
	return 0;
}

static inline int same(const struct stack *s, const struct stack_pending *p)
{
	if (s->tid != p->tid || s->naddr != p->nframes + 1 || s->addr[0] != p->pc ||
	    s->cut != p->cut || s->run != p->run)
		return 0;
	for (uint16_t i = 0; i < p->nframes; i++)
		if (s->addr[1 + i] != load64(p->frames + 8 * i))
			return 0;
	return 1;
}

static int add_one(struct stacks *t, const struct stack_pending *p)
{
	size_t j = p->hash & t->mask;
	struct stack *s;

	while ((s = t->tab[j].s)) {
		if (t->tab[j].hash == p->hash && same(s, p)) {
			s->total++;
			s->weight += p->weight;
			s->weight2 += p->weight * p->weight;
			stack_cores(s)[p->core]++;
			stack_cores(s)[t->ncores + p->core] += p->weight;
			return 0;
		}
		j = (j + 1) & t->mask;
	}
	s = arena_alloc(t, sizeof(*s) + 8u * (1u + p->nframes + 2u * t->ncores));
	if (!s)
		return -1;
	s->total = 1;
	s->weight = p->weight;
	s->weight2 = p->weight * p->weight;
	s->tid = p->tid;
	s->naddr = (uint16_t)(p->nframes + 1);
	s->nfids = 0;
	s->fids = NULL;
	s->cut = p->cut;
	s->run = p->run;
	s->addr[0] = p->pc;
	memcpy(s->addr + 1, p->frames, 8u * p->nframes);
	memset(stack_cores(s), 0, 16u * t->ncores);
	stack_cores(s)[p->core] = 1;
	stack_cores(s)[t->ncores + p->core] = p->weight;
	t->tab[j].hash = p->hash;
	t->tab[j].s = s;
	if (t->n == t->listcap) {
		size_t nc = t->listcap ? t->listcap * 2 : 1024;
		struct stack **nl = realloc(t->list, nc * sizeof(*nl));

		if (!nl)
			return -1;
		t->list = nl;
		t->listcap = nc;
	}
	t->list[t->n++] = s;
	if (t->n * 2 > t->mask)
		return grow(t);
	return 0;
}

int stacks_flush(struct stacks *t)
{
	/* The slots were prefetched by stacks_add; now prefetch the entries they point at. */
	for (uint32_t i = 0; i < t->nbatch; i++) {
		struct stack *s = t->tab[t->batch[i].hash & t->mask].s;

		if (s)
			__builtin_prefetch(s, 1);
	}
	for (uint32_t i = 0; i < t->nbatch; i++) {
		if (add_one(t, &t->batch[i])) {
			t->nbatch = 0;
			return -1;
		}
	}
	t->nbatch = 0;
	return 0;
}

int stacks_add(struct stacks *t, uint32_t tid, uint16_t core, uint32_t cut, uint64_t weight,
	       uint64_t pc, const uint8_t *frames, uint16_t nframes)
{
	uint64_t h = mix(mix(0x243f6a8885a308d3ULL ^ t->run,
			     (uint64_t)cut << 48 | (uint64_t)tid << 16 | nframes), pc);

	for (uint16_t i = 0; i < nframes; i++)
		h = mix(h, load64(frames + 8 * i));
	h = finish(h);
	__builtin_prefetch(&t->tab[h & t->mask]);
	t->batch[t->nbatch++] = (struct stack_pending){ h, pc, frames, tid, core, nframes, cut,
							t->run, weight };
	if (t->nbatch == STACK_BATCH)
		return stacks_flush(t);
	return 0;
}

void stacks_free(struct stacks *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->list[i]->fids);
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->list);
	free(t->tab);
	memset(t, 0, sizeof(*t));
}
