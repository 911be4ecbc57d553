/*
 * buildid_cache.h: the kernel ELF into the user's perf build-id cache (buildid_cache.c),
 * called by perfdata.c once the perf.data file is written.
 */
#ifndef OPREPORT_BUILDID_CACHE_H
#define OPREPORT_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Put the kernel ELF elf (whose build-id is id, n bytes) into the cache, as `perf record`
 * and `perf buildid-cache -a` do, plus the kallsyms file hotspot looks for; says what it
 * added on stderr. Returns 0, or -1 (said on stderr).
 */
int buildid_cache_add(const char *elf, const uint8_t *id, size_t n);

#endif
