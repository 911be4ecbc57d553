/*
 * noise.h: how sure a share is (noise.c). A share of a profile is estimated from samples:
 * each sample either counts toward it or not, weighing its periods. Every report that prints
 * a share prints its 95% half-width beside it (the column headed "±", in points), --diff
 * marks a change beyond the half-widths of its two sides, and --stats and the scheduler
 * views compare the samples' share of time with the switches' by the same measure.
 *
 * The model (docs/FORMAT.md, "How sure a share is"): n samples, sample i weighing w_i
 * periods, W = sum w_i; the share of a function (thread, ...) is p = sum of the w_i of the
 * samples that count toward it, over W. Taking the samples as independent draws, each in
 * the share with probability p, the variance of that weighted share is
 *	Var(p) = ((1 - p)^2 * S_in + p^2 * (S_all - S_in)) / W^2
 * with S_in the sum of w_i^2 over the samples in the share and S_all over all of them
 * (with every w_i = 1, Var(p) = p (1 - p) / n: the binomial). The half-width is
 * 1.96 * sqrt(Var(p)), in points. A difference of two independent shares has the sum of
 * their variances. Several runs of one workload (sessions, files) vary more than that when
 * the machine does: their spread is used instead when larger (noise_spread).
 */
#ifndef OPREPORT_NOISE_H
#define OPREPORT_NOISE_H

#include <stdint.h>

#define NOISE_Z95	1.959964	/* a two-sided 95% interval of a normal */

/* The variance (in squared points) of the share in/all whose samples' squared weights add
 * up to sw2_in (of the share) and sw2_all (all of them). 0 when all is 0. */
double noise_var(double in, double all, double sw2_in, double sw2_all);

/* Its 95% half-width, in points. */
double noise_hw(double in, double all, double sw2_in, double sw2_all);

/* The variance of the mean of n runs' shares x[0..n) (points) by their spread: the sample
 * variance over n; 0 with fewer than 2 runs. */
double noise_spread(const double *x, uint32_t n);

/* The variance of one side's share in/all for --diff (squared points): its sampling variance,
 * or the spread of its runs' shares (runs[r] of run_total[r], nruns runs; NULL: one run)
 * when that is larger. */
double noise_side_var(double in, double all, double sw2_in, double sw2_all,
		      const uint64_t *runs, const uint64_t *run_total, uint32_t nruns);

#endif
