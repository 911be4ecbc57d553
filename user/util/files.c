/*
 * files.c: the writers of files.h, used by the stages that leave files behind for other
 * tools (model/kstore.c: the kernel ELF store and build-id cache; export/perf/buildid_cache.c:
 * perf's kallsyms). Plain POSIX, no state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/files.h"

int files_mkdirs(char *path, int dir_too)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int bad = mkdir(path, 0755) && errno != EEXIST;
		*p = '/';
		if (bad)
			return -1;
	}
	return dir_too && mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

int files_copy(const char *src, const char *dst)
{
	char *tmp, buf[1 << 16];
	FILE *in, *out;
	size_t n;
	int rc = -1;

	if (asprintf(&tmp, "%s.%d", dst, (int)getpid()) < 0)
		return -1;
	if (!(in = fopen(src, "rb"))) {
		free(tmp);
		return -1;
	}
	if (!(out = fopen(tmp, "wb"))) {
		fclose(in);
		free(tmp);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0 && fwrite(buf, 1, n, out) == n)
		;
	if (!ferror(in) && !ferror(out))
		rc = 0;
	fclose(in);
	if (fclose(out) || rc || chmod(tmp, 0755) || rename(tmp, dst)) {
		unlink(tmp);
		rc = -1;
	}
	free(tmp);
	return rc;
}
