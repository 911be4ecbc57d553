/*
 * Numbers typed by users: shell arguments and the profiler's ctl file. Pure functions, any
 * context; also compiled into host tests (no libc names, so no clash there).
 */
#include "kernel.h"

/* Parse all of s as a decimal number; 0, or -1 if s is empty, not a number or too big. */
int parse_u64(const char *s, uint64_t *v)
{
	size_t n = strlen(s);

	if (!n || s[n - 1] < '0' || s[n - 1] > '9')
		return -1;
	return parse_size(s, 1, v);
}

/*
 * A decimal with an optional k/K, m/M or g/G suffix (binary multiples) into *v; without a
 * suffix the number is multiplied by unit (1 for plain counts, 1 << 20 for "MiB unless
 * said otherwise"). 0, or -1 if malformed or too big.
 */
int parse_size(const char *s, uint64_t unit, uint64_t *v)
{
	uint64_t n = 0;

	if (!*s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (*s) {
		if (s[1])
			return -1;
		switch (*s) {
		case 'k': case 'K': unit = 1ull << 10; break;
		case 'm': case 'M': unit = 1ull << 20; break;
		case 'g': case 'G': unit = 1ull << 30; break;
		default: return -1;
		}
	}
	if (unit && n > UINT64_MAX / unit)
		return -1;
	*v = n * unit;
	return 0;
}

/*
 * Seconds as typed ("2", "0.5", "1.25"): a decimal of at most 1000000 with up to 3
 * fraction digits (more are ignored) into milliseconds. 0, or -1 if malformed or too big.
 */
int parse_ms(const char *s, uint64_t *ms)
{
	uint64_t v = 0, frac = 0;
	int fd = 0;

	if (!*s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > 1000000)
			return -1;
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(*s - '0'), fd++;
	if (*s)
		return -1;
	while (fd++ < 3)
		frac *= 10;
	*ms = v * 1000 + frac;
	return 0;
}
