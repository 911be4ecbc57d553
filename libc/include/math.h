#ifndef _MATH_H
#define _MATH_H
#include <_libc.h>
#define HUGE_VAL __builtin_huge_val()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
double sqrt(double x) __LIBC(sqrt);
double fabs(double x) __LIBC(fabs);
double floor(double x) __LIBC(floor);
double ceil(double x) __LIBC(ceil);
double trunc(double x) __LIBC(trunc);
double round(double x) __LIBC(round);
double fmod(double x, double y) __LIBC(fmod);
double exp(double x) __LIBC(exp);
double log(double x) __LIBC(log);
double log10(double x) __LIBC(log10);
double log2(double x) __LIBC(log2);
double pow(double x, double y) __LIBC(pow);
double sin(double x) __LIBC(sin);
double cos(double x) __LIBC(cos);
double tan(double x) __LIBC(tan);
double atan(double x) __LIBC(atan);
double atan2(double y, double x) __LIBC(atan2);
double asin(double x) __LIBC(asin);
double acos(double x) __LIBC(acos);
double ldexp(double x, int e) __LIBC(ldexp);
double frexp(double x, int *e) __LIBC(frexp);
double modf(double x, double *ip) __LIBC(modf);
float sqrtf(float x) __LIBC(sqrtf);
float fabsf(float x) __LIBC(fabsf);
#endif
