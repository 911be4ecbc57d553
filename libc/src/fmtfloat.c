/*
 * printf's floating point: %f %e %g (and upper case). Digits come from the x87's long double
 * (64-bit mantissa): right to about 18 significant digits; a value wider than that (%f
 * of 1e100) prints zeros for the digits beyond. App code.
 */
#include <string.h>
#include "fmt.h"

#define MAXDIG 18

static long double pow10l_(int k)
{
	long double r = 1, b = 10;

	for (; k; k >>= 1, b *= b)
		if (k & 1)
			r *= b;
	return r;
}

/* v * 10^k: exact when it can be (10^k for k <= 27 is exact in a long double) */
static long double scale10(long double v, int k)
{
	return k >= 0 ? v * pow10l_(k) : v / pow10l_(-k);
}

/*
 * nd (1..MAXDIG) significant digits of v > 0 into d, rounded to nearest, ties to even (as
 * glibc's printf); returns the first digit's power of 10.
 */
static int digits(double v, int nd, char *d)
{
	long double m = v, q, frac;
	unsigned long long t, lo = 1;
	int e = 0;

	while (m >= 1e16L)
		m /= 1e16L, e += 16;
	while (m >= 10)
		m /= 10, e++;
	while (m < 1e-16L)
		m *= 1e16L, e -= 16;
	while (m < 1)
		m *= 10, e--;
	for (int i = 1; i < nd; i++)
		lo *= 10;
	for (;;) {		/* e may be one off from the scaling above: then again */
		q = scale10(v, nd - 1 - e);
		if (q >= lo * 10 && q - (long double)(lo * 10) >= 0)
			e++;
		else if (q < lo)
			e--;
		else
			break;
	}
	t = (unsigned long long)q;
	frac = q - (long double)t;
	if (frac > 0.5L || (frac == 0.5L && (t & 1)))
		t++;
	if (t >= lo * 10)
		t /= 10, e++;
	for (int i = nd - 1; i >= 0; i--, t /= 10)
		d[i] = (char)('0' + t % 10);
	return e;
}

static char digit_at(const char *d, int nd, int i) { return i >= 0 && i < nd ? d[i] : '0'; }

/* body of %f from nd digits whose first weighs 10^e; returns its length */
static int render_fixed(char *out, const char *d, int nd, int e, int prec, bool alt)
{
	int n = 0;

	for (int i = e < 0 ? e : 0; i <= e; i++)	/* i from e<0: just one "0" */
		out[n++] = i < 0 ? '0' : digit_at(d, nd, i);
	if (e < 0)
		n = 1;
	if (prec || alt)
		out[n++] = '.';
	for (int k = 1; k <= prec; k++)
		out[n++] = digit_at(d, nd, e + k);
	return n;
}

static int render_exp(char *out, const char *d, int nd, int e, int prec, bool alt, char ec)
{
	int n = 0, a = e < 0 ? -e : e;

	out[n++] = d[0];
	if (prec || alt)
		out[n++] = '.';
	for (int k = 1; k <= prec; k++)
		out[n++] = digit_at(d, nd, k);
	out[n++] = ec;
	out[n++] = e < 0 ? '-' : '+';
	if (a >= 100)
		out[n++] = (char)('0' + a / 100);
	out[n++] = (char)('0' + a / 10 % 10);
	out[n++] = (char)('0' + a % 10);
	return n;
}

/* %f: the digits that reach prec places after the point */
static int body_f(char *out, double v, int prec, bool alt)
{
	char d[MAXDIG];
	int e, nd;

	if (v == 0)
		return render_fixed(out, "0", 1, 0, prec, alt);
	e = digits(v, MAXDIG, d);
	nd = e + 1 + prec;
	if (nd <= 0) {		/* all digits below the last place: 0 or one unit of it */
		bool up = scale10(v, prec) > 0.5L;	/* a tie goes to the even 0 */

		return render_fixed(out, "1", up, -prec, prec, alt);
	}
	e = digits(v, nd < MAXDIG ? nd : MAXDIG, d);
	return render_fixed(out, d, nd < MAXDIG ? nd : MAXDIG, e, prec, alt);
}

static int body_e(char *out, double v, int prec, bool alt, char ec)
{
	char d[MAXDIG];
	int nd = prec + 1 < MAXDIG ? prec + 1 : MAXDIG;

	if (v == 0)
		return render_exp(out, "0", 1, 0, prec, alt, ec);
	return render_exp(out, d, nd, digits(v, nd, d), prec, alt, ec);
}

/* %g without '#': the fraction's trailing zeros go, and the point if nothing follows it */
static int strip_zeros(char *out, int n, char ec)
{
	char *dot = memchr(out, '.', (size_t)n), *e = memchr(out, ec, (size_t)n);
	int tail = e ? (int)(e - out) : n, end = tail;

	if (!dot)
		return n;
	while (out + end - 1 > dot && out[end - 1] == '0')
		end--;
	if (out + end - 1 == dot)
		end--;
	memmove(out + end, out + tail, (size_t)(n - tail));
	return end + (n - tail);
}

static int body_g(char *out, double v, int prec, bool alt, char ec)
{
	char d[MAXDIG];
	int p = prec < 0 ? 6 : prec ? prec : 1, e = 0, n;

	if (v != 0)
		e = digits(v, p < MAXDIG ? p : MAXDIG, d);
	if (e >= -4 && e < p)
		n = body_f(out, v, p - 1 - e, alt);
	else
		n = body_e(out, v, p - 1, alt, ec);
	return alt ? n : strip_zeros(out, n, ec);
}

void fmt_float(struct fmt_out *o, struct fmt_spec *sp, double v)
{
	char body[720], pre[2] = "";
	bool up = sp->conv >= 'A' && sp->conv <= 'Z';
	int n, prec = sp->prec < 0 ? 6 : sp->prec > 340 ? 340 : sp->prec;

	if (__builtin_signbit(v))
		pre[0] = '-', v = -v;
	else if (sp->plus || sp->space)
		pre[0] = sp->plus ? '+' : ' ';
	if (v != v || __builtin_isinf(v)) {
		sp->zero = false;
		fmt_field(o, sp, pre, v != v ? (up ? "NAN" : "nan") : (up ? "INF" : "inf"), 3, 0);
		return;
	}
	if ((sp->conv | 32) == 'f')
		n = body_f(body, v, prec, sp->alt);
	else if ((sp->conv | 32) == 'e')
		n = body_e(body, v, prec, sp->alt, up ? 'E' : 'e');
	else
		n = body_g(body, v, sp->prec, sp->alt, up ? 'E' : 'e');
	fmt_field(o, sp, pre, body, n, 0);
}
