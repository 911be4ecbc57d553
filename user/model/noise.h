/*
 * noise.h: how sure a share is (noise.c). A share of a profile is estimated from samples:
 * each sample either counts toward it or not, weighing its periods. Every report that prints
 * a share prints its 95% half-width beside it (the column headed "±", in points), --diff
 * marks a change beyond the half-width of its two sides, and the scheduler views give the
 * samples' share of time the same way.
 *
 * The model (docs/FORMAT.md, "How sure a share is"): n samples, sample i weighing w_i
 * periods, W = sum w_i; the share of a function (thread, ...) is p = sum of the w_i of the
 * samples that count toward it, over W. Taking the samples as independent draws, each in
 * the share with probability p, the variance of that weighted share is
 *	Var(p) = ((1 - p)^2 * S_in + p^2 * (S_all - S_in)) / W^2
 * with S_in the sum of w_i^2 over the samples in the share and S_all over all of them
 * (with every w_i = 1, Var(p) = p (1 - p) / n: the binomial). It is taken as Agresti and
 * Coull do: with 1.96^2 / 2 samples added to the share and as many outside it, each of
 * weight S_all / W (1 when unweighted), so that a share of few or no samples is not taken
 * for a sure one (0 of 224 samples: 0.00 +- 1.19, not +- 0). The half-width is
 * 1.96 * sqrt(Var(p)), in points. A difference of two independent shares has the sum of
 * their variances.
 *
 * Several runs of one workload (sessions, files) often vary more than sampling explains (an
 * emulator's time slices alias with the workload; the host is busier in one run, leaving
 * more idle time between two commands): a side of --diff with several runs takes for each
 * share the larger of its sampling variance times the runs' dispersion (all functions'
 * at once) and its own runs' spread (noise_runs_var: for what varies most, the idle time).
 */
#ifndef OPREPORT_NOISE_H
#define OPREPORT_NOISE_H

#include <stdint.h>

#define NOISE_Z95	1.959964	/* a two-sided 95% interval of a normal */

/* The plain variance (in squared points) of the share in/all whose samples' squared weights
 * add up to sw2_in (of the share) and sw2_all (all of them). 0 when all is 0. */
double noise_var(double in, double all, double sw2_in, double sw2_all);

/* The variance taken as Agresti and Coull do (above), squared points. */
double noise_var_ac(double in, double all, double sw2_in, double sw2_all);

/* The 95% half-width of the share, in points (Agresti-Coull, above). */
double noise_hw(double in, double all, double sw2_in, double sw2_all);

/*
 * How much more the runs of a profile vary than sampling explains: Pearson's dispersion of
 * the functions' self counts by run (x[f * nruns + r] of run_total[r]) about their pooled
 * shares -- X^2 over (runs - 1)(functions - 1) degrees of freedom, from the functions with
 * at least 10 samples' worth a run -- and 1 when that is less, or with fewer than 2 runs.
 * A share's variance times it is its run-to-run variance (quasi-binomial): estimated from
 * all functions at once, it does not shrink by chance as one function's spread over a few
 * runs would.
 */
double noise_dispersion(const uint64_t *x, const uint64_t *run_total, uint32_t nfuncs,
			uint32_t nruns);

/* The variance of the mean of a share over n runs (x[r] of run_total[r]), from their spread,
 * scaled so that 1.96 * sqrt(it) is Student's 95% half-width for n - 1 degrees of freedom
 * (a spread from few runs is a rough guess: with 3, 4.30 standard errors, not 1.96);
 * squared points, 0 with fewer than 2 runs. */
double noise_runs_var(const uint64_t *x, const uint64_t *run_total, uint32_t n);

#endif
