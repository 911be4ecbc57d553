/*
 * failalloc.c: an LD_PRELOAD library that makes one of a program's own allocations fail, for
 * the tests of what a tool says when memory runs out (tests/t/opreport-diff-errors):
 *	FAILALLOC=N	the Nth allocation the program's own code asks for returns NULL, ENOMEM
 *	FAILALLOC=0	none fails; at exit "failalloc: N allocations" on stderr (the count)
 * Counted: malloc, calloc, realloc, aligned_alloc, strdup, asprintf and realpath(p, NULL)
 * called from the main program's text. Allocations libraries make for themselves are never
 * failed (libdw, for one, exits or crashes on them: its own bug, not the program's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uintptr_t text_lo = UINTPTR_MAX, text_hi;	/* the main program's loaded segments */
static long counted, fail_at = -1;

/* The first object dl_iterate_phdr reports is the main program. */
static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < text_lo)
			text_lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > text_hi)
			text_hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* Should this allocation, asked for from caller, fail? */
static int failing(void *caller)
{
	uintptr_t pc = (uintptr_t)caller;

	if (fail_at < 0) {
		const char *e = getenv("FAILALLOC");

		fail_at = e ? atol(e) : 0;
		dl_iterate_phdr(main_program, NULL);
	}
	if (pc < text_lo || pc >= text_hi)
		return 0;
	if (++counted != fail_at)
		return 0;
	errno = ENOMEM;
	return 1;
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t k);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

void *malloc(size_t n)
{
	return failing(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t k)
{
	return failing(__builtin_return_address(0)) ? NULL : __libc_calloc(n, k);
}

void *realloc(void *p, size_t n)
{
	return failing(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return failing(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}

char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = failing(__builtin_return_address(0)) ? NULL : __libc_malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

int asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (failing(__builtin_return_address(0)))
		return -1;
	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}

char *realpath(const char *path, char *resolved)
{
	static char *(*next)(const char *, char *);
	char buf[PATH_MAX];

	if (!next)
		next = (char *(*)(const char *, char *))dlsym(RTLD_NEXT, "realpath");
	if (resolved)
		return next(path, resolved);
	if (failing(__builtin_return_address(0)) || !next(path, buf))
		return NULL;
	return strdup(buf);
}

__attribute__((destructor)) static void report(void)
{
	if (fail_at == 0)
		fprintf(stderr, "failalloc: %ld allocations\n", counted);
}
