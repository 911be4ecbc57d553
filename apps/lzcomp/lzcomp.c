/*
 * lzcomp: an LZ77 compressor with hash chains, over text it generates itself.
 *
 *	lzcomp [KIB [ROUNDS]]	(default 64 KiB, 4 rounds)
 *
 * Each round generates KIB KiB of pseudo-English (gen_text), compresses it (lz_compress:
 * a hash of the next 3 bytes finds earlier positions to try, the longest match wins),
 * decompresses the result (lz_decompress) and checks it against the input with a CRC-32
 * (crc32). It times each phase with clock_gettime and prints each one's share of the total,
 * so that a profile's inclusive shares of the four functions can be checked against the
 * program's own account. Exit status 0 when every round decompressed to its input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW		32768
#define HASH_BITS	14
#define MAX_CHAIN	48
#define MIN_MATCH	3
#define MAX_MATCH	258

enum { GEN, COMP, DECOMP, CRC, PHASES };
static const char *const phase_names[PHASES] = { "gen_text", "lz_compress", "lz_decompress",
						 "crc32" };

static const char *const words[] = {
	"the", "of", "and", "profile", "kernel", "sample", "core", "thread", "a", "to", "in",
	"is", "that", "every", "stack", "frame", "compress", "window", "match", "literal",
	"hash", "chain", "buffer", "time", "counts", "function", "hot", "cold", "path", "for",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Words picked by a linear congruential generator, with punctuation and line breaks. */
__attribute__((noinline)) size_t gen_text(unsigned char *buf, size_t n, uint32_t seed)
{
	size_t len = 0;

	while (len + 16 < n) {
		const char *w;

		seed = seed * 1103515245u + 12345u;
		w = words[(seed >> 16) % (sizeof(words) / sizeof(words[0]))];
		memcpy(buf + len, w, strlen(w));
		len += strlen(w);
		buf[len++] = (seed & 0x700) == 0 ? '.' : (seed & 0xf800) == 0 ? '\n' : ' ';
	}
	return len;
}

static unsigned hash3(const unsigned char *p)
{
	return ((unsigned)p[0] << 10 ^ (unsigned)p[1] << 5 ^ p[2]) * 2654435761u >> (32 - HASH_BITS);
}

/* Longest earlier match for position i, following the hash chain; its length (0: none). */
static int find_match(const unsigned char *in, size_t i, size_t n, const int32_t *prev,
		      int32_t cand, size_t *dist)
{
	int best = 0;

	for (int k = 0; k < MAX_CHAIN && cand >= 0 && i - (size_t)cand < WINDOW; k++) {
		int len = 0;

		while (len < MAX_MATCH && i + (size_t)len < n && in[cand + len] == in[i + (size_t)len])
			len++;
		if (len > best) {
			best = len;
			*dist = i - (size_t)cand;
		}
		cand = prev[cand % WINDOW];
	}
	return best >= MIN_MATCH ? best : 0;
}

/*
 * Output: a flag byte before every 8 items, bit set for a match; a literal is its byte, a
 * match 3 bytes: distance (little-endian, 15 bits) and length - MIN_MATCH.
 */
__attribute__((noinline)) size_t lz_compress(const unsigned char *in, size_t n,
					     unsigned char *out, int32_t *head, int32_t *prev)
{
	size_t o = 0, flag = 0, i = 0;
	int item = 8;

	for (int h = 0; h < (1 << HASH_BITS); h++)
		head[h] = -1;
	while (i < n) {
		size_t dist = 0;
		int len = 0;

		if (item == 8)
			flag = o++, out[flag] = 0, item = 0;
		if (i + MIN_MATCH <= n)
			len = find_match(in, i, n, prev, head[hash3(in + i)], &dist);
		if (len) {
			out[flag] |= (unsigned char)(1 << item);
			out[o++] = (unsigned char)dist;
			out[o++] = (unsigned char)(dist >> 8);
			out[o++] = (unsigned char)(len - MIN_MATCH);
		} else {
			out[o++] = in[i];
			len = 1;
		}
		for (int k = 0; k < len; k++, i++)
			if (i + MIN_MATCH <= n) {
				unsigned h = hash3(in + i);

				prev[i % WINDOW] = head[h];
				head[h] = (int32_t)i;
			}
		item++;
	}
	return o;
}

__attribute__((noinline)) size_t lz_decompress(const unsigned char *in, size_t m,
					       unsigned char *out)
{
	size_t i = 0, o = 0;

	while (i < m) {
		unsigned flag = in[i++];

		for (int item = 0; item < 8 && i < m; item++) {
			if (flag & (1u << item)) {
				size_t dist = in[i] | (size_t)in[i + 1] << 8;
				int len = in[i + 2] + MIN_MATCH;

				for (int k = 0; k < len; k++, o++)
					out[o] = out[o - dist];
				i += 3;
			} else {
				out[o++] = in[i++];
			}
		}
	}
	return o;
}

/* CRC-32 (IEEE), bit by bit: slow on purpose, a third hot spot of its own */
__attribute__((noinline)) uint32_t crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int b = 0; b < 8; b++)
			c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

struct bufs {
	unsigned char *text, *packed, *back;
	int32_t *head, *prev;
};

/* One round; adds each phase's time to ns[]. Returns 0 when the text came back intact. */
static int round_once(struct bufs *b, size_t cap, uint32_t seed, uint64_t *ns, size_t *sizes)
{
	uint64_t t0 = now_ns(), t1, t2, t3, t4;
	size_t n = gen_text(b->text, cap, seed), m, back;
	uint32_t c1, c2;

	t1 = now_ns();
	m = lz_compress(b->text, n, b->packed, b->head, b->prev);
	t2 = now_ns();
	back = lz_decompress(b->packed, m, b->back);
	t3 = now_ns();
	c1 = crc32(b->text, n);
	c2 = crc32(b->back, back);
	t4 = now_ns();
	ns[GEN] += t1 - t0, ns[COMP] += t2 - t1, ns[DECOMP] += t3 - t2, ns[CRC] += t4 - t3;
	sizes[0] += n, sizes[1] += m;
	return back == n && c1 == c2 ? 0 : -1;
}

int main(int argc, char **argv)
{
	size_t cap = (argc > 1 ? strtoul(argv[1], NULL, 10) : 64) * 1024, sizes[2] = { 0, 0 };
	int rounds = argc > 2 ? atoi(argv[2]) : 4, bad = 0;
	uint64_t ns[PHASES] = { 0 }, total = 0;
	struct bufs b = { malloc(cap), malloc(cap + cap / 8 + 16), malloc(cap),
			  malloc(sizeof(int32_t) << HASH_BITS), malloc(sizeof(int32_t) * WINDOW) };

	if (!b.text || !b.packed || !b.back || !b.head || !b.prev || cap < 1024 || rounds < 1) {
		fprintf(stderr, "lzcomp: usage: lzcomp [KIB >= 1 [ROUNDS >= 1]], or out of memory\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		bad |= round_once(&b, cap, 12345u + (uint32_t)r, ns, sizes);
	for (int p = 0; p < PHASES; p++)
		total += ns[p];
	printf("lzcomp: %zu bytes -> %zu (%.1f%%) in %d rounds, %s\n", sizes[0], sizes[1],
	       100.0 * (double)sizes[1] / (double)sizes[0], rounds, bad ? "MISMATCH" : "verified");
	for (int p = 0; p < PHASES; p++)
		printf("lzcomp: share %s %.1f%%\n", phase_names[p], 100.0 * (double)ns[p] / (double)total);
	free(b.text), free(b.packed), free(b.back), free(b.head), free(b.prev);
	return bad;
}
