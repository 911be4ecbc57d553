/* u64map.c: see u64map.h; used by symbols.c and the reports as caches. Linear probing, load
 * factor at most 1/2. */
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"

static inline size_t slot(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & mask;
}

int u64map_init(struct u64map *m, size_t hint)
{
	size_t sz = 64;

	while (sz < 2 * hint)
		sz *= 2;
	m->mask = sz - 1;
	m->n = 0;
	m->keys = malloc(sz * sizeof(*m->keys));
	m->vals = malloc(sz * sizeof(*m->vals));
	m->used = calloc(sz, 1);
	if (!m->keys || !m->vals || !m->used) {
		u64map_free(m);
		return -1;
	}
	return 0;
}

static int grow(struct u64map *m)
{
	struct u64map n;

	if (u64map_init(&n, m->mask + 1))
		return -1;
	for (size_t i = 0; i <= m->mask; i++) {
		if (!m->used[i])
			continue;
		size_t j = slot(m->keys[i], n.mask);
		while (n.used[j])
			j = (j + 1) & n.mask;
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	n.n = m->n;
	u64map_free(m);
	*m = n;
	return 0;
}

uint64_t *u64map_find(const struct u64map *m, uint64_t key)
{
	for (size_t j = slot(key, m->mask); m->used[j]; j = (j + 1) & m->mask)
		if (m->keys[j] == key)
			return &m->vals[j];
	return NULL;
}

uint64_t *u64map_get(struct u64map *m, uint64_t key)
{
	uint64_t *v = u64map_find(m, key);

	if (v)
		return v;
	if (2 * (m->n + 1) > m->mask && grow(m))
		return NULL;
	size_t j = slot(key, m->mask);
	while (m->used[j])
		j = (j + 1) & m->mask;
	m->used[j] = 1;
	m->keys[j] = key;
	m->vals[j] = 0;
	m->n++;
	return &m->vals[j];
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}
