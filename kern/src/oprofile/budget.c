/*
 * The overhead budget: a core whose sampling takes more than its share of the core's time
 * lowers its own rate.
 *
 * One tick in OPROF_BUDGET_EVERY adds its hot-path time (from the interrupt's TSC to the
 * end), times OPROF_BUDGET_EVERY, to the window's cost -- reading the TSC costs as much as
 * a third of a record, and ticks cost alike. Every OPROF_BUDGET_MS the core compares the
 * cost with cfg.budget percent of the window and, if over in OPROF_BUDGET_STRIKES windows
 * in a row, halves its own rate through hooks->set_rate (from inside its own timer
 * callback) and writes an OPF_THROTTLE record. A throttled core that stays under a quarter
 * of the budget for OPROF_RAISE_WINDOWS windows doubles its rate back (never above the
 * session's), with an OPF_THROTTLE record too: doubled, it is still under half the budget,
 * so the two never chase each other.
 *
 * Contexts: hot_budget (internal.h: the count, inline; one tick in OPROF_BUDGET_EVERY
 * calls hot_budget_timed here) runs on the core at the end of its tick (between hot_enter
 * and hot_leave); budget_reset in the ctl thread before the core is enabled.
 */
#include "guard.h"

/* Session lock held, core not enabled: a fresh budget at the session's rate. */
void budget_reset(struct opcore *c)
{
	must(!hot_on(c), "core not enabled");
	c->bud.hz = oprof.cfg.hz;
	c->bud.tick_max = MIN(oprof.tick_max_ticks, OPROF_TICK_MAX_PERIODS * (tsc_hz() / c->bud.hz));
	c->bud.win_start = tsc_read();
	c->bud.win_cost = c->bud.load_pm = c->bud.throttles = c->bud.raises = 0;
	c->bud.calm = c->bud.strikes = c->bud.n = 0;
}

/* Change this core's rate (the budget's verdict); tell the timer and the stream. */
static void hot_set_hz(struct opcore *c, uint32_t hz, uint64_t tsc)
{
	uint32_t old = c->bud.hz;
	int core = (int)(c - opcores);
	void *t;

	__atomic_store_n(&c->bud.hz, hz, __ATOMIC_RELAXED);
	c->bud.tick_max = MIN(oprof.tick_max_ticks, OPROF_TICK_MAX_PERIODS * (tsc_hz() / hz));
	cnt_add(hz < old ? &c->bud.throttles : &c->bud.raises, 1);
	if (oprof.hooks && oprof.hooks->set_rate)
		oprof.hooks->set_rate(core, hz);
	if ((t = hot_reserve_slow(c, sizeof(struct opf_throttle), tsc)))
		rec_throttle(t, core, old, hz, tsc, oprof.cfg.budget);
	/* else: the count in OPF_CORE_END is what counts */
}

/*
 * The tick that began at start (TSC) is done: charge it to the budget window, and at the
 * end of a window throttle if the hot path took more than its share for a while. Two
 * things keep a core that is not overloaded from throttling: a tick is charged at most
 * OPROF_TICK_MAX_PERIODS periods of the core's rate and never more than OPROF_TICK_MAX_US
 * (a longer one was descheduled -- by the emulator or a hypervisor -- or spun on a lock
 * whose holder was: the hot path itself takes microseconds; a core overloaded for real
 * still shows most of its time, as sampler.c leaves only a period between ticks), and it takes
 * OPROF_BUDGET_STRIKES windows over budget in a row (a real overload lasts; a burst of lock
 * contention does not). Not while paused: no record may be written then, and a paused
 * tick costs next to nothing.
 */
void hot_budget_timed(struct opcore *c, uint64_t start)
{
	uint64_t now, span, cost;
	bool over, calm, judged;

	now = tsc_read();
	cost = now > start ? now - start : 0;
	c->bud.win_cost += MIN(cost, c->bud.tick_max) * OPROF_BUDGET_EVERY;
	span = now - c->bud.win_start;
	if (span < oprof.budget_ticks || !span)
		return;
	__atomic_store_n(&c->bud.load_pm, c->bud.win_cost * 1000 / span, __ATOMIC_RELAXED);
	judged = oprof.cfg.budget < 100 && !flag_get(&oprof.paused);
	over = judged && c->bud.win_cost * 100 > span * oprof.cfg.budget;
	calm = judged && c->bud.win_cost * 400 < span * oprof.cfg.budget;
	c->bud.strikes = over ? c->bud.strikes + 1 : 0;
	c->bud.calm = calm && c->bud.hz < oprof.cfg.hz ? c->bud.calm + 1 : 0;
	if (c->bud.strikes >= OPROF_BUDGET_STRIKES && c->bud.hz > 1) {
		hot_set_hz(c, c->bud.hz / 2, now);
		c->bud.strikes = c->bud.calm = 0;	/* the next windows judge the new rate afresh */
	} else if (c->bud.calm >= OPROF_RAISE_WINDOWS) {
		hot_set_hz(c, MIN(c->bud.hz * 2, oprof.cfg.hz), now);
		c->bud.strikes = c->bud.calm = 0;
	}
	c->bud.win_cost = 0;
	c->bud.win_start = now;
}
