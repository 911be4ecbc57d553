/*
 * noise.c: the variance of a share estimated from weighted samples, and how much more runs
 * vary (noise.h says the model). Pure functions, called by every report that prints a "±"
 * (text/), by --diff for its "*", and by model/sched_check.c.
 */
#include <math.h>
#include <stddef.h>

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

double noise_var_ac(double in, double all, double sw2_in, double sw2_all)
{
	/* Agresti-Coull: z^2/2 samples more in the share and as many out of it, each weighing
	 * the samples' mean square weight over their mean weight (1 each, unweighted) */
	double w = all > 0 ? sw2_all / all : 0, k = NOISE_Z95 * NOISE_Z95 / 2;

	return noise_var(in + k * w, all + 2 * k * w, sw2_in + k * w * w, sw2_all + 2 * k * w * w);
}

double noise_hw(double in, double all, double sw2_in, double sw2_all)
{
	return NOISE_Z95 * sqrt(noise_var_ac(in, all, sw2_in, sw2_all));
}

double noise_dispersion(const uint64_t *x, const uint64_t *run_total, uint32_t nfuncs,
			uint32_t nruns)
{
	double all = 0, chi2 = 0, phi;
	uint32_t used = 0, runs = 0;

	for (uint32_t r = 0; r < nruns; r++) {
		all += (double)run_total[r];
		runs += run_total[r] > 0;
	}
	if (runs < 2)
		return 1;
	for (uint32_t f = 0; f < nfuncs; f++) {
		double in = 0, p;

		for (uint32_t r = 0; r < nruns; r++)
			in += (double)x[(size_t)f * nruns + r];
		if (in < 10.0 * runs || all - in < 10.0 * runs)	/* too few expected a run */
			continue;
		p = in / all;
		used++;
		for (uint32_t r = 0; r < nruns; r++) {
			double n = (double)run_total[r], d = (double)x[(size_t)f * nruns + r] - n * p;

			if (n > 0)
				chi2 += d * d / (n * p * (1 - p));
		}
	}
	if (!used)
		return 1;
	phi = chi2 / ((double)(runs - 1) * (double)(used > 1 ? used - 1 : 1));
	return phi > 1 ? phi : 1;
}

/* Student's t for a two-sided 95% interval with dof degrees of freedom (dof >= 1). */
static double t95(uint32_t dof)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131 };

	if (dof < sizeof(t) / sizeof(t[0]))
		return t[dof];
	return dof < 30 ? 2.086 : 2.042;
}

double noise_runs_var(const uint64_t *x, const uint64_t *run_total, uint32_t n)
{
	double sh[256], mean = 0, ss = 0, t;
	uint32_t k = 0;

	for (uint32_t r = 0; r < n && k < 256; r++)
		if (run_total[r])
			sh[k++] = 100.0 * (double)x[r] / (double)run_total[r];
	if (k < 2)
		return 0;
	for (uint32_t r = 0; r < k; r++)
		mean += sh[r];
	mean /= k;
	for (uint32_t r = 0; r < k; r++)
		ss += (sh[r] - mean) * (sh[r] - mean);
	t = t95(k - 1) / NOISE_Z95;
	return t * t * ss / (k - 1) / k;
}
