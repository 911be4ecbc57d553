/*
 * kstore.h: where each stream's kernel ELF is, found by the build-id its session record
 * carries (kstore.c), so that a profile is always read against the kernel that made it,
 * whatever was built since. Called by opreport.c (finding the ELF; --add-kernel) and by
 * export/perf/buildid_cache.c (the cache's layout, for --perf-data).
 *
 * Every kernel the build links is kept (the Makefile's link step runs opreport --add-kernel):
 *	the store	<top>/build/kernels/<build-id>.elf, <top> the tree this opreport was
 *			built in (it runs as <top>/user/opreport)
 *	the cache	the user's build-id cache, as `perf record` and `perf buildid-cache -a`
 *			lay it out: DIR/<absolute path>/<build-id>/elf, and the link
 *			DIR/.build-id/<first 2 hex>/<rest> -> ../../<absolute path>/<build-id>;
 *			DIR is $PERF_BUILDID_DIR, else ~/.debug
 * A kernel is looked for in the store, then the tree's build/kernel.elf, then the cache;
 * a file found is used only when its own build-id is the one asked for.
 */
#ifndef OPREPORT_KSTORE_H
#define OPREPORT_KSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "abi/oprofile.h"

#define KSTORE_HEX	(2 * OPF_MAX_BUILD_ID + 1)	/* a build-id in hex, NUL included */

/* id[0..n) as lowercase hex into hex (KSTORE_HEX bytes); n is cut to OPF_MAX_BUILD_ID. */
void kstore_hex(char *hex, const uint8_t *id, size_t n);

/* The GNU build-id of the ELF file at path into id (OPF_MAX_BUILD_ID bytes): its length, 0
 * when it has none, -1 when path is not a readable ELF. */
int kstore_elf_id(const char *path, uint8_t *id);

/* <top>/build/kernel.elf, the tree's latest build (malloc'ed; NULL: no memory). */
char *kstore_tree_kernel(void);

/* The kernel whose build-id is id: its path (malloc'ed) and *where ("the store", "the tree's
 * build", "the build-id cache"), or NULL when none of them has it. */
char *kstore_find(const uint8_t *id, size_t n, const char **where);

/* The user's build-id cache directory into dir; 0, or -1 (no HOME). */
int kstore_cache_dir(char *dir, size_t n);

/* elf (absolute path abs, build-id hex) into the cache dir: 1 added, 0 there, -1 (errno). */
int kstore_cache_add(const char *dir, const char *hex, const char *abs);

/* Keep the kernel ELF elf in the store and, when cache, in the user's build-id cache; says
 * on stderr what it added to the cache. 0, or -1 (said on stderr). */
int kstore_add(const char *elf, int cache);

/* What kstore_find looked through for id, for a message: "DIR/build/kernels/, ..." */
void kstore_places(char *buf, size_t n);

#endif
