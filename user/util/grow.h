/*
 * grow.h: room for one more element in a growing array. *v holds n elements of size bytes
 * in room for *cap; when full, it doubles (first elements the first time). 0, or -1 when
 * out of memory (the array unchanged). Any stage, single-threaded like all of opreport.
 */
#ifndef UTIL_GROW_H
#define UTIL_GROW_H

#include <stdint.h>
#include <stdlib.h>

static inline int grow_room(void **v, uint32_t *cap, uint32_t n, size_t size, uint32_t first)
{
	uint32_t nc;
	void *nv;

	if (n < *cap)
		return 0;
	nc = *cap ? 2 * *cap : first;
	if (!(nv = realloc(*v, (size_t)nc * size)))
		return -1;
	*v = nv;
	*cap = nc;
	return 0;
}

#endif
