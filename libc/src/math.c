/*
 * math.h basics for apps: SSE where it has the instruction, the x87 for the
 * transcendental functions (fsin, fyl2x, f2xm1, fpatan). App code. No errno is set.
 */
#include <math.h>

double sqrt(double x) { return __builtin_sqrt(x); }
float sqrtf(float x) { return __builtin_sqrtf(x); }
double fabs(double x) { return __builtin_fabs(x); }
float fabsf(float x) { return __builtin_fabsf(x); }

double trunc(double x)
{
	return fabs(x) < 4503599627370496.0 ? (double)(long long)x : x;
}

double floor(double x)
{
	double t = trunc(x);

	return t > x ? t - 1 : t;
}

double ceil(double x)
{
	double t = trunc(x);

	return t < x ? t + 1 : t;
}

double round(double x) { return x < 0 ? -floor(-x + 0.5) : floor(x + 0.5); }

double fmod(double x, double y)
{
	long double r = x, m = y;

	__asm__("1: fprem; fnstsw %%ax; testw $0x400, %%ax; jnz 1b" : "+t"(r) : "u"(m) : "ax");
	return (double)r;
}

/* log2(x) * y on the x87 */
static long double yl2x(long double x, long double y)
{
	long double r;

	__asm__("fyl2x" : "=t"(r) : "0"(x), "u"(y) : "st(1)");
	return r;
}

/* 2^x on the x87: integer part by fscale, fraction by f2xm1 */
static long double exp2l_(long double x)
{
	long double i, f, r;

	__asm__("frndint" : "=t"(i) : "0"(x));
	f = x - i;
	__asm__("f2xm1" : "=t"(r) : "0"(f));
	r += 1;
	__asm__("fscale" : "=t"(r) : "0"(r), "u"(i));
	return r;
}

double log2(double x) { return x < 0 ? NAN : x == 0 ? -INFINITY : (double)yl2x(x, 1); }
double log(double x) { return x < 0 ? NAN : x == 0 ? -INFINITY : (double)yl2x(x, 0.69314718055994530942L); }
double log10(double x) { return x < 0 ? NAN : x == 0 ? -INFINITY : (double)yl2x(x, 0.30102999566398119521L); }

double exp(double x)
{
	if (x > 710)
		return INFINITY;
	if (x < -746)
		return 0;
	return (double)exp2l_(x * 1.44269504088896340736L);
}

double pow(double x, double y)
{
	if (y == 0 || x == 1)
		return 1;
	if (x == 0)
		return y > 0 ? 0 : INFINITY;
	if (x < 0) {
		double r;

		if (trunc(y) != y)
			return NAN;
		r = (double)exp2l_(yl2x(-x, y));
		return fmod(y, 2) != 0 ? -r : r;
	}
	return (double)exp2l_(yl2x(x, y));
}

double sin(double x)
{
	long double r;

	__asm__("fsin" : "=t"(r) : "0"((long double)x));
	return (double)r;
}

double cos(double x)
{
	long double r;

	__asm__("fcos" : "=t"(r) : "0"((long double)x));
	return (double)r;
}

double tan(double x) { return sin(x) / cos(x); }

double atan2(double y, double x)
{
	long double r;

	__asm__("fpatan" : "=t"(r) : "0"((long double)x), "u"((long double)y) : "st(1)");
	return (double)r;
}

double atan(double x) { return atan2(x, 1); }
double asin(double x) { return atan2(x, sqrt((1 - x) * (1 + x))); }
double acos(double x) { return atan2(sqrt((1 - x) * (1 + x)), x); }
double ldexp(double x, int e) { return x * (double)exp2l_(e); }

double frexp(double x, int *e)
{
	*e = 0;
	if (x == 0 || x != x || isinf(x))
		return x;
	while (fabs(x) >= 1)
		x /= 2, ++*e;
	while (fabs(x) < 0.5)
		x *= 2, --*e;
	return x;
}

double modf(double x, double *ip)
{
	*ip = trunc(x);
	return x - *ip;
}
