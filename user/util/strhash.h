/*
 * strhash.h: hashes of a string (FNV-1a), one copy for every stage (strhash.c): the 64-bit
 * one keys the caches of names (symbols.c's functions by name, pprof.c's string table), the
 * 32-bit one picks a name's colour (the flame graph, the timeline), the same in every run.
 */
#ifndef OPREPORT_STRHASH_H
#define OPREPORT_STRHASH_H

#include <stdint.h>

uint64_t str_hash(const char *s);	/* 64-bit FNV-1a */
unsigned name_hash(const char *s);	/* 32-bit FNV-1a, for a name's colour */

#endif
