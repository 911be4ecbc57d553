/*
 * u64map.h: open-addressing map from uint64 keys to uint64 values, used for address and
 * edge caches. Keys are arbitrary (0 included); values start at 0 when first looked up.
 */
#ifndef OPREPORT_U64MAP_H
#define OPREPORT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t mask;
	size_t n;
};

/* Returns 0 or -1 (out of memory). */
int u64map_init(struct u64map *m, size_t hint);

/* Pointer to the value of key, inserting 0 if absent; NULL when out of memory. The pointer is
 * valid until the next insertion. */
uint64_t *u64map_get(struct u64map *m, uint64_t key);

/* Pointer to the value of key, or NULL if absent. */
uint64_t *u64map_find(const struct u64map *m, uint64_t key);

void u64map_free(struct u64map *m);

#endif
