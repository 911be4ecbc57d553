/*
 * /dev/oprofilestat: a text snapshot, one "name value" per line.
 *
 * Runs in the reading thread with the session lock held, so the per-core queues it looks at
 * exist for the whole snapshot and no pass is half done. The cores keep counting
 * meanwhile; their counters are read with relaxed loads, so lines of a running session
 * are each exact but not taken at one instant. While a session runs, "delivered" counts
 * samples written into blocks and neither dropped nor overwritten (some are still on their
 * way; flight recorder: in the windows until a snapshot); after stop it equals the
 * OPF_CORE_END value, and taken == delivered + lost_* + overwritten. cpuN.hz is the
 * core's current rate (lower than hz once throttled), load_permille the hot path's share
 * of its time over the last budget window, missed the timer expiries it was too late for.
 * machine, hypervisor (CPUID signature), clock and icount_shift say what samples weigh
 * (clock.c).
 * Per-core lines stay until the next start.
 */
#include "internal.h"

struct sbuf {
	char *buf;
	size_t n;	/* size of buf */
	size_t len;	/* length of the whole text so far (may exceed n) */
};

/* Append; past the end of buf only the length grows (buf stays NUL terminated). */
static __printf(2, 3) void putf(struct sbuf *sb, const char *fmt, ...)
{
	size_t room = sb->len < sb->n ? sb->n - sb->len : 0;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, ap);
	va_end(ap);
	if (k > 0)
		sb->len += (size_t)k;
}

static void put(struct sbuf *sb, const char *name, uint64_t v)
{
	putf(sb, "%s %lu\n", name, (unsigned long)v);
}

static void put_cpu(struct sbuf *sb, int core, const char *what, uint64_t v)
{
	char name[40];

	snprintf(name, sizeof(name), "cpu%d.%s", core, what);
	put(sb, name, v);
}

static void stat_cpu(struct sbuf *sb, int i)
{
	struct opcore *c = &opcores[i];

	put_cpu(sb, i, "taken", cnt_get(&c->cnt.taken));
	put_cpu(sb, i, "delivered", opcore_delivered(c));
	put_cpu(sb, i, "lost_noblock", cnt_get(&c->cnt.lost[OPF_LOST_NO_BLOCK]));
	put_cpu(sb, i, "lost_outfull", c->w.dropped_samples);
	put_cpu(sb, i, "lost_paused", cnt_get(&c->cnt.lost[OPF_LOST_PAUSED]));
	put_cpu(sb, i, "lost_other", cnt_get(&c->cnt.lost[OPF_LOST_OTHER]));
	put_cpu(sb, i, "overwritten", cnt_get(&c->fr.overwritten));
	put_cpu(sb, i, "truncated", opcore_truncated(c));
	put_cpu(sb, i, "blocks", cnt_get(&c->cnt.blocks));
	put_cpu(sb, i, "blocks_dropped", c->w.dropped_blocks);
	put_cpu(sb, i, "emptyq", c->buf.empty.slot ? ring_count(&c->buf.empty) : 0);
	put_cpu(sb, i, "emptyq_target", c->w.target);
	put_cpu(sb, i, "window_blocks",
		c->buf.full.slot && oprof.cfg.snapshot ? ring_count(&c->buf.full) : 0);
	put_cpu(sb, i, "blocks_overwritten", cnt_get(&c->fr.ow_blocks));
	put_cpu(sb, i, "blocks_unlisted", c->w.unlisted);
	put_cpu(sb, i, "depth_cut", opcore_depth_cut(c));
	put_cpu(sb, i, "marks_lost", cnt_get(&c->cnt.marks_lost));
	put_cpu(sb, i, "threads", cnt_get(&c->cnt.threads));
	put_cpu(sb, i, "threads_lost", cnt_get(&c->cnt.threads_lost));
	put_cpu(sb, i, "threads_dropped", c->w.threads_dropped);
	put_cpu(sb, i, "threads_overwritten", cnt_get(&c->fr.threads_ow));
	put_cpu(sb, i, "hz", flag_get(&c->bud.hz));
	put_cpu(sb, i, "throttles", cnt_get(&c->bud.throttles));
	put_cpu(sb, i, "raises", cnt_get(&c->bud.raises));
	put_cpu(sb, i, "load_permille", cnt_get(&c->bud.load_pm));
	put_cpu(sb, i, "missed", cnt_get(&c->cnt.missed));
}

static void stat_global(struct sbuf *sb)
{
	uint32_t state = flag_get(&oprof.state);
	const struct oprof_cfg *cfg = state == OPROF_IDLE ? &oprof.next : &oprof.cfg;
	uint64_t alloc, pooled, max;

	putf(sb, "state %s\n", session_state_name(state));
	pool_stats(&alloc, &pooled, &max);
	put(sb, "session", oprof.session_id);
	put(sb, "ncores", (uint64_t)oprof.ncores);
	put(sb, "hz", cfg->hz);
	put(sb, "depth", cfg->depth);
	put(sb, "block_bytes", cfg->block_bytes);
	put(sb, "period_ms", cfg->period_ms);
	put(sb, "stale", cfg->stale);
	put(sb, "emptydepth", cfg->emptydepth);
	putf(sb, "mode %s\n", cfg->snapshot ? "snapshot" : "stream");
	putf(sb, "source %s\n", cfg->source == OPF_SRC_NMI ? "nmi" : "timer");
	putf(sb, "machine %s\n", clock_machine_name());
	putf(sb, "hypervisor %s\n", arch_machine()->hv_sig[0] ? arch_machine()->hv_sig : "-");
	putf(sb, "clock %s\n", clock_name());
	putf(sb, "icount_shift %d\n", arch_machine()->icount_shift);	/* -1: not -icount */
	put(sb, "window", cfg->window);
	put(sb, "snapshots", oprof.snapshots);
	put(sb, "budget", cfg->budget);
	put(sb, "maxhz", cfg->maxhz);
	put(sb, "outq_bytes", qlen(oprof.outq));
	put(sb, "outq_blocks", qblocks(oprof.outq));
	/* the cap bounds outq_mem: the memory the queued blocks really hold (BMEM) */
	put(sb, "outq_mem", qmem(oprof.outq));
	put(sb, "outq_cap", state == OPROF_IDLE ? cfg->cap : oprof.cap);	/* in effect */
	put(sb, "cap_setting", cfg->cap);
	put(sb, "marks_lost", oprof.marks_lost);
	put(sb, "stream_bytes", oprof.stream_bytes);
	put(sb, "blocks_alloc", alloc);
	put(sb, "blocks_max", max);
	put(sb, "blocks_pooled", pooled);
	put(sb, "blocks_inflight", alloc - pooled);
	put(sb, "blocks_dropped", oprof.blocks_dropped);
	put(sb, "reader", reader_is_open());
}

size_t oprof_stat_text(char *buf, size_t n)
{
	struct sbuf sb = { .buf = buf, .n = n, .len = 0 };

	if (n)
		buf[0] = '\0';
	session_lock();
	stat_global(&sb);
	for (int i = 0; i < oprof.ncores; i++)
		stat_cpu(&sb, i);
	session_unlock();
	return sb.len;
}
