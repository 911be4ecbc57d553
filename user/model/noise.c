/*
 * noise.c: the variance of a share estimated from weighted samples, and of a mean of runs
 * (noise.h says the model). Pure functions, called by every report that prints a "±"
 * (text/), by --diff for its "*", and by model/sched_check.c.
 */
#include <math.h>

#include "model/noise.h"

double noise_var(double in, double all, double sw2_in, double sw2_all)
{
	double p, v;

	if (all <= 0)
		return 0;
	p = in / all;
	v = ((1 - p) * (1 - p) * sw2_in + p * p * (sw2_all - sw2_in)) / (all * all);
	return v > 0 ? v * 1e4 : 0;	/* in squared points */
}

double noise_hw(double in, double all, double sw2_in, double sw2_all)
{
	return NOISE_Z95 * sqrt(noise_var(in, all, sw2_in, sw2_all));
}

double noise_spread(const double *x, uint32_t n)
{
	double mean = 0, ss = 0;

	if (n < 2)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		mean += x[i];
	mean /= n;
	for (uint32_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	return ss / (n - 1) / n;
}

double noise_side_var(double in, double all, double sw2_in, double sw2_all,
		      const uint64_t *runs, const uint64_t *run_total, uint32_t nruns)
{
	double var = noise_var(in, all, sw2_in, sw2_all), sh[256], spread;
	uint32_t n = 0;

	for (uint32_t r = 0; runs && r < nruns && n < 256; r++)
		if (run_total[r])
			sh[n++] = 100.0 * (double)runs[r] / (double)run_total[r];
	spread = noise_spread(sh, n);
	return spread > var ? spread : var;
}
