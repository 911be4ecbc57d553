/*
 * /dev/random: a fast, endless stream of pseudo-random bytes (not cryptographic), for
 * filling test files. splitmix64 over a shared 64-bit counter seeded from the TSC at boot:
 * a read reserves as many counter steps as it needs with one atomic add, then generates
 * them locally, so concurrent readers on any cores get disjoint parts of one stream and
 * take no lock. Thread context (it is a file); never sleeps.
 */
#include "arch.h"
#include "dev.h"

#define GOLDEN	0x9e3779b97f4a7c15ull

static uint64_t counter;	/* next splitmix64 state; atomic */

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static long random_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	size_t words = (n + 7) / 8;
	uint64_t x = __atomic_fetch_add(&counter, words * GOLDEN, __ATOMIC_RELAXED);
	uint8_t *p = buf;
	size_t i = 0;

	(void)c;
	(void)off;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = mix(x += GOLDEN);

		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = mix(x += GOLDEN);

		memcpy(p + i, &v, n - i);
	}
	return (long)n;
}

static const struct devfile random_file = {
	.name = "random", .perm = 0444, .read = random_read,
};

/* Boot, thread context, once: seed and add /dev/random. */
void devrandom_init(void)
{
	__atomic_store_n(&counter, mix(tsc_read() ^ GOLDEN), __ATOMIC_RELAXED);
	devfs_add(&random_file);
}
