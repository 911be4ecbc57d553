/*
 * What the kernel gives an app's C library (libc/src/sys.h), on the host: so that an app
 * and libc/ itself, compiled with the app flags exactly as the kernel links them in, run
 * as a host program -- under valgrind, for the instruction counts a guest profile is judged
 * against (tests/t/profile-truth). Compiled with the host's own headers and library (its
 * names do not clash: libc/'s functions are all named libc_NAME).
 */
#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <x86intrin.h>

void *app_malloc(size_t n) { return malloc(n); }
void app_free(void *p) { free(p); }
size_t app_block_size(void *p) { return malloc_usable_size(p); }
void app_exit(int status) { exit(status); }
void app_abort(const char *why) { fprintf(stderr, "abort: %s\n", why); abort(); }

void app_write(const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(1, s, n);

		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

/* The app's clock only times its phases: any steady counter will do. */
uint64_t tsc_read(void) { return __rdtsc(); }
uint64_t tsc_hz(void) { return 1000000000u; }
