/* Number parsing for apps: strtol, strtoul, strtod and the ato* shorthands. App code. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

/* Magnitude of the digits at *sp in base (0: by prefix); *over on overflow of 64 bits. */
static unsigned long parse_mag(const char **sp, int base, bool *over, bool *any)
{
	const char *s = *sp;
	unsigned long v = 0;

	if ((base == 0 || base == 16) && s[0] == '0' && (s[1] | 32) == 'x' && isxdigit(s[2]))
		s += 2, base = 16;
	else if (base == 0)
		base = s[0] == '0' ? 8 : 10;
	for (;; s++) {
		int d = isdigit(*s) ? *s - '0' : isalpha(*s) ? (*s | 32) - 'a' + 10 : 99;

		if (d >= base)
			break;
		if (v > (ULONG_MAX - (unsigned)d) / (unsigned)base)
			*over = true;
		v = v * (unsigned)base + (unsigned)d;
		*any = true;
	}
	*sp = s;
	return v;
}

static unsigned long parse_int(const char *s, char **end, int base, bool *neg, bool *over)
{
	const char *start = s;
	bool any = false;
	unsigned long v;

	while (isspace(*s))
		s++;
	*neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	v = parse_mag(&s, base, over, &any);
	if (end)
		*end = (char *)(any ? s : start);
	return v;
}

long strtol(const char *restrict s, char **restrict end, int base)
{
	bool neg, over = false;
	unsigned long v = parse_int(s, end, base, &neg, &over);

	if (over || v > (unsigned long)LONG_MAX + neg) {
		errno = ERANGE;
		return neg ? LONG_MIN : LONG_MAX;
	}
	return neg ? (long)(0ul - v) : (long)v;
}

unsigned long strtoul(const char *restrict s, char **restrict end, int base)
{
	bool neg, over = false;
	unsigned long v = parse_int(s, end, base, &neg, &over);

	if (over) {
		errno = ERANGE;
		return ULONG_MAX;
	}
	return neg ? 0ul - v : v;
}

int atoi(const char *s) { return (int)strtol(s, NULL, 10); }
long atol(const char *s) { return strtol(s, NULL, 10); }

static long double pow10l_(int e)
{
	long double r = 1, b = 10;
	unsigned a = (unsigned)(e < 0 ? -e : e);

	for (; a; a >>= 1, b *= b)
		if (a & 1)
			r *= b;
	return e < 0 ? 1 / r : r;
}

/* Decimal digits with an optional point and exponent; infinity and nan by name. */
double strtod(const char *restrict s, char **restrict end)
{
	const char *p = s;
	unsigned long long m = 0;
	int e = 0, nd = 0;
	bool neg, any = false;

	while (isspace(*p))
		p++;
	neg = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	if ((p[0] | 32) == 'i' && (p[1] | 32) == 'n' && (p[2] | 32) == 'f') {
		if (end)
			*end = (char *)p + ((p[3] | 32) == 'i' ? 8 : 3);
		return neg ? -__builtin_inf() : __builtin_inf();
	}
	if ((p[0] | 32) == 'n' && (p[1] | 32) == 'a' && (p[2] | 32) == 'n') {
		if (end)
			*end = (char *)p + 3;
		return __builtin_nan("");
	}
	for (bool frac = false;; p++) {
		if (*p == '.' && !frac) {
			frac = true;
			continue;
		}
		if (!isdigit(*p))
			break;
		any = true;
		if (nd < 19)
			m = m * 10 + (unsigned)(*p - '0'), nd += m != 0, e -= frac;
		else
			e += !frac;
	}
	if (any && (*p | 32) == 'e') {
		char *q;
		long x = strtol(p + 1, &q, 10);

		if (q != p + 1)
			p = q, e += x > 9999 ? 9999 : x < -9999 ? -9999 : (int)x;
	}
	if (end)
		*end = (char *)(any ? p : s);
	long double v = m * pow10l_(e);
	return neg ? -(double)v : (double)v;
}

float strtof(const char *restrict s, char **restrict end) { return (float)strtod(s, end); }
double atof(const char *s) { return strtod(s, NULL); }
