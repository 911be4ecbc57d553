/*
 * strhash.c: the string hashes of strhash.h, used by model/symbols.c and export/pprof.c
 * (str_hash) and by export/flame.c and export/timeline.c (name_hash).
 */
#include "util/strhash.h"

uint64_t str_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}
