/*
 * kstore.c: the kernel ELF store and the build-id cache (kstore.h): finding a stream's
 * kernel by build-id, and keeping every kernel the build links. Called by opreport.c (which
 * kernel a stream needs; --add-kernel, run by the Makefile's link step) and by
 * export/perf/buildid_cache.c (the cache's entries). Files are read through libelf for
 * their build-id only; symbols.c opens the one chosen.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/kstore.h"
#include "util/files.h"

void kstore_hex(char *hex, const uint8_t *id, size_t n)
{
	if (n > OPF_MAX_BUILD_ID)
		n = OPF_MAX_BUILD_ID;
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	hex[2 * n] = 0;
}

int kstore_elf_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY), n = -1;
	Elf *e;
	const void *bits;
	ssize_t len;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) && elf_kind(e) == ELF_K_ELF) {
		len = dwelf_elf_gnu_build_id(e, &bits);
		n = len > 0 && len <= OPF_MAX_BUILD_ID ? (int)len : 0;
		if (n)
			memcpy(id, bits, (size_t)n);
	}
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

/* The tree this opreport was built in: two folders up from the executable. 0 or -1. */
static int top_dir(char *top, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return -1;
	exe[len] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash)
			return -1;
		*slash = 0;
	}
	return snprintf(top, n, "%s", exe) < (int)n ? 0 : -1;
}

char *kstore_tree_kernel(void)
{
	char top[PATH_MAX], *path;

	if (top_dir(top, sizeof(top)))
		return strdup("build/kernel.elf");
	return asprintf(&path, "%s/build/kernel.elf", top) < 0 ? NULL : path;
}

int kstore_cache_dir(char *dir, size_t n)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

	if (env && *env)
		return snprintf(dir, n, "%s", env) < (int)n ? 0 : -1;
	if (!home || !*home)
		return -1;
	return snprintf(dir, n, "%s/.debug", home) < (int)n ? 0 : -1;
}

/* path, when it is a file whose build-id is id[0..n): path (now the caller's); else freed. */
static char *if_same(char *path, const uint8_t *id, size_t n)
{
	uint8_t got[OPF_MAX_BUILD_ID];
	struct stat st;

	if (path && !stat(path, &st) && S_ISREG(st.st_mode) &&
	    kstore_elf_id(path, got) == (int)n && !memcmp(got, id, n))
		return path;
	free(path);
	return NULL;
}

/* The cache's entry for hex: the link's target is the entry's folder (perf since 4.x, its
 * "elf" inside) or, in older caches, the ELF itself. */
static char *cache_path(const char *hex, const uint8_t *id, size_t n)
{
	char dir[PATH_MAX], *path = NULL;
	struct stat st;

	if (kstore_cache_dir(dir, sizeof(dir)) ||
	    asprintf(&path, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) < 0)
		return NULL;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		char *elf;

		if (asprintf(&elf, "%s/elf", path) < 0)
			elf = NULL;
		free(path);
		path = elf;
	}
	return if_same(path, id, n);
}

char *kstore_find(const uint8_t *id, size_t n, const char **where)
{
	char top[PATH_MAX], hex[KSTORE_HEX], *path = NULL;

	if (!n || n > OPF_MAX_BUILD_ID)
		return NULL;
	kstore_hex(hex, id, n);
	if (!top_dir(top, sizeof(top))) {
		*where = "the store";
		if (asprintf(&path, "%s/build/kernels/%s.elf", top, hex) >= 0 &&
		    (path = if_same(path, id, n)))
			return path;
		*where = "the tree's build";
		if ((path = if_same(kstore_tree_kernel(), id, n)))
			return path;
	}
	*where = "the build-id cache";
	return cache_path(hex, id, n);
}

void kstore_places(char *buf, size_t n)
{
	char top[PATH_MAX], dir[PATH_MAX];

	if (top_dir(top, sizeof(top)))
		snprintf(top, sizeof(top), "?");
	if (kstore_cache_dir(dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "~/.debug (no HOME)");
	snprintf(buf, n, "%s/build/kernels/, %s/build/kernel.elf, %s", top, top, dir);
}

int kstore_cache_add(const char *dir, const char *hex, const char *abs)
{
	char *path = NULL, *link = NULL, *target = NULL;
	int rc = -1;

	if (asprintf(&path, "%s%s/%s/elf", dir, abs, hex) < 0 ||
	    asprintf(&link, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) < 0 ||
	    asprintf(&target, "../..%s/%s", abs, hex) < 0)
		goto out;
	if (!access(path, R_OK) && !access(link, R_OK)) {
		rc = 0;
		goto out;
	}
	if (files_mkdirs(path, 0) || files_copy(abs, path) || files_mkdirs(link, 0))
		goto out;
	unlink(link);
	rc = symlink(target, link) ? -1 : 1;
out:
	free(path);
	free(link);
	free(target);
	return rc;
}

/* elf into <top>/build/kernels/HEX.elf unless there. 0 or -1 (errno). */
static int store_add(const char *elf, const char *hex)
{
	char top[PATH_MAX], *path;
	int rc;

	if (top_dir(top, sizeof(top)) || asprintf(&path, "%s/build/kernels/%s.elf", top, hex) < 0)
		return -1;
	rc = !access(path, R_OK) ? 0 : files_mkdirs(path, 0) || files_copy(elf, path) ? -1 : 0;
	free(path);
	return rc;
}

int kstore_add(const char *elf, int cache)
{
	char abs[PATH_MAX], dir[PATH_MAX], hex[KSTORE_HEX];
	uint8_t id[OPF_MAX_BUILD_ID];
	int n = kstore_elf_id(elf, id), added;

	if (n <= 0 || !realpath(elf, abs)) {
		fprintf(stderr, "opreport: cannot keep %s: %s\n", elf, n < 0 ? "not a readable ELF" :
			"it has no GNU build-id (link with --build-id)");
		return -1;
	}
	kstore_hex(hex, id, (size_t)n);
	if (store_add(abs, hex)) {
		fprintf(stderr, "opreport: cannot keep %s in the store: %s\n", elf, strerror(errno));
		return -1;
	}
	if (!cache)
		return 0;
	if (kstore_cache_dir(dir, sizeof(dir)) || (added = kstore_cache_add(dir, hex, abs)) < 0) {
		fprintf(stderr, "opreport: cannot add %s to the build-id cache: %s\n", elf,
			errno ? strerror(errno) : "no HOME");
		return -1;
	}
	if (added)
		fprintf(stderr, "opreport: added %s (build-id %s) to the build-id cache %s\n", elf,
			hex, dir);
	return 0;
}
