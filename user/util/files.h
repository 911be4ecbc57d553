/*
 * files.h: making files other programs read while we write them (files.c): the build-id
 * store and cache (model/kstore.c) and perf's kallsyms file (export/perf/buildid_cache.c).
 * A reader never sees half a file: each is written under a temporary name and renamed.
 */
#ifndef OPREPORT_FILES_H
#define OPREPORT_FILES_H

/* mkdir -p of path's directories, and of path itself when dir_too. 0 or -1 (errno). path is
 * written to while it works and restored. */
int files_mkdirs(char *path, int dir_too);

/* Copy src to dst, mode 0755, through dst.PID renamed into place. 0 or -1 (errno). */
int files_copy(const char *src, const char *dst);

#endif
