/*
 * dd: copy a file to another in blocks, timing it and checksumming what was written:
 *
 *	kern> dd if=/dev/random of=rand.bin bs=65536 count=160
 *	10485760 bytes in 1.234 s = 8.4 MB/s, crc32 0x1c291ca3
 *
 * The CRC is CRC-32/IEEE (zlib's crc32) of the bytes written, so a test compares it with
 * the host's checksum of the file. Each block is one kread (which may return less than
 * bs: then the block is shorter) and one kwrite of all of it; the copy stops at end of
 * input, after count blocks, on an error (printed as "dd: PATH: reason"), or on Ctrl-C.
 * rate=BYTES paces the copy: after each block dd sleeps until it has copied no more than
 * BYTES a second since it began (a slow reader on purpose, e.g. of /dev/oprofile, to see
 * the output cap drop blocks). The result goes through shell_printf (redirectable),
 * complaints to the console.
 */
#include "arch.h"
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "shell.h"
#include "thread.h"

#define DD_BS		65536
#define DD_BS_MAX	(16u << 20)

/* ---- CRC-32/IEEE, slicing by 8 (the tables are built on first use) ---- */

static uint32_t crc_tab[8][256];
static bool crc_ready;		/* tables built; release/acquire */

static void crc_init(void)
{
	if (__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_tab[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++) {
			uint32_t prev = crc_tab[t - 1][i];

			crc_tab[t][i] = (prev >> 8) ^ crc_tab[0][prev & 0xff];
		}
	/* two threads may both build them: they write the same values */
	__atomic_store_n(&crc_ready, true, __ATOMIC_RELEASE);
}

/* crc is the running value with the pre/post inversion removed: start at 0. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t q;
		uint32_t a, b;

		memcpy(&q, p, 8);	/* one load: memory accesses are what TCG makes slow */
		a = (uint32_t)q ^ crc;
		b = (uint32_t)(q >> 32);
		crc = crc_tab[7][a & 0xff] ^ crc_tab[6][(a >> 8) & 0xff] ^
		      crc_tab[5][(a >> 16) & 0xff] ^ crc_tab[4][a >> 24] ^
		      crc_tab[3][b & 0xff] ^ crc_tab[2][(b >> 8) & 0xff] ^
		      crc_tab[1][(b >> 16) & 0xff] ^ crc_tab[0][b >> 24];
	}
	while (n--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- arguments ---- */

struct dd_args {
	const char *in, *out;
	uint64_t bs;
	uint64_t count;		/* blocks; 0: until end of input */
	uint64_t rate;		/* bytes a second at most; 0: as fast as it goes */
};


static int dd_parse(int argc, char **argv, struct dd_args *a)
{
	*a = (struct dd_args){ .bs = DD_BS };
	for (int i = 1; i < argc; i++) {
		char *s = argv[i];

		if (!strncmp(s, "if=", 3) && s[3])
			a->in = s + 3;
		else if (!strncmp(s, "of=", 3) && s[3])
			a->out = s + 3;
		else if (!strncmp(s, "bs=", 3) && parse_size(s + 3, 1, &a->bs) == 0 && a->bs)
			continue;
		else if (!strncmp(s, "count=", 6) && parse_size(s + 6, 1, &a->count) == 0 && a->count)
			continue;
		else if (!strncmp(s, "rate=", 5) && parse_size(s + 5, 1, &a->rate) == 0 && a->rate)
			continue;
		else
			return -EINVAL;
	}
	return a->in && a->out && a->bs <= DD_BS_MAX ? 0 : -EINVAL;
}

/* ---- the copy ---- */

struct dd_run {
	int in, out;
	uint8_t *buf;
	uint64_t bytes;
	uint64_t t0;		/* nsec() when the copy began */
	uint32_t crc;
};

/* rate=: sleep until the bytes copied took at least 1/rate s each; 0, or -EINTR. */
static int dd_pace(const struct dd_args *a, const struct dd_run *r)
{
	uint64_t due, now;

	if (!a->rate)
		return 0;
	due = r->bytes / a->rate * 1000000000ull + r->bytes % a->rate * 1000000000ull / a->rate;
	now = nsec() - r->t0;
	return due > now ? thread_sleep_us((due - now) / 1000 + 1) : 0;
}

/* Copy blocks; 0, or 1 after printing what failed. */
static int dd_copy(struct dd_args *a, struct dd_run *r)
{
	for (uint64_t blk = 0; !a->count || blk < a->count; blk++) {
		long n = kread(r->in, r->buf, a->bs), w;
		int paced;

		if (n < 0) {
			shell_eprintf("dd: %s: %s\n", a->in, strerror((int)n));
			return 1;
		}
		if (n == 0)
			break;
		w = kwrite(r->out, r->buf, (size_t)n);
		if (w < 0) {
			shell_eprintf("dd: %s: %s\n", a->out, strerror((int)w));
			return 1;
		}
		r->crc = crc32_update(r->crc, r->buf, (size_t)n);
		r->bytes += (uint64_t)n;
		paced = dd_pace(a, r);
		if (thread_interrupted() || paced == -EINTR) {
			shell_eprintf("dd: %s\n", strerror(-EINTR));
			return 1;
		}
	}
	return 0;
}

static void dd_report(struct dd_run *r, uint64_t ns)
{
	uint64_t ms = ns / 1000000, kbps = ns ? r->bytes * 1000000 / ns : 0;	/* kB/s */

	shell_printf("%llu bytes in %llu.%03llu s = %llu.%llu MB/s, crc32 0x%08x\n",
		     (unsigned long long)r->bytes, (unsigned long long)(ms / 1000),
		     (unsigned long long)(ms % 1000), (unsigned long long)(kbps / 1000),
		     (unsigned long long)(kbps % 1000 / 100), r->crc);
}

/*
 * The report is printed after both files are closed: a command's descriptors are the
 * lowest free ones, so without a redirection of = FILE may be descriptor 1, where
 * shell_printf writes.
 */
static int cmd_dd(int argc, char **argv)
{
	struct dd_args a;
	struct dd_run r = { .in = -1, .out = -1 };
	uint64_t t0 = 0, t1 = 0;
	int ret = 1;

	if (dd_parse(argc, argv, &a) < 0)
		return -EINVAL;
	crc_init();
	if (!(r.buf = kmalloc(a.bs)))
		return -ENOMEM;
	if ((r.in = kopen(a.in, OREAD)) < 0)
		shell_eprintf("dd: %s: %s\n", a.in, strerror(r.in));
	else if ((r.out = kcreate(a.out, OWRITE | OTRUNC, 0644)) < 0)
		shell_eprintf("dd: %s: %s\n", a.out, strerror(r.out));
	else {
		t0 = r.t0 = nsec();
		ret = dd_copy(&a, &r);
		t1 = nsec();
	}
	if (r.in >= 0)
		kclose(r.in);
	if (r.out >= 0)
		kclose(r.out);
	kfree(r.buf);
	if (t1)
		dd_report(&r, t1 - t0);
	return ret;
}
SHELL_CMD("dd", "dd if=FILE of=FILE [bs=BYTES] [count=N] [rate=BYTES]",
	  "copy blocks (bs default 64k; rate: bytes a second at most), print the rate and the "
	  "crc32 of the data", cmd_dd);
