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
 * machine, hypervisor (CPUID signature), clock and icount_shift (-1: not -icount) say
 * what samples weigh (clock.c).
 * Per-core lines stay until the next start.
 *
 * Two tables are the whole file: the session's lines (stat_global) and every core's, which
 * are the rows of its accounting view (OPCORE_ACCT, internal.h) -- the same numbers the
 * closing records carry. A new line is a row.
 */
#include "internal.h"

/* Append; past the end of buf only the length grows (buf stays NUL terminated). */
void sbuf_printf(struct sbuf *sb, const char *fmt, ...)
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

/* A line: "name value", the value a number or, if str is set, a word. */
struct stat_line {
	const char *name;
	uint64_t v;
	const char *str;
};

static void put_lines(struct sbuf *sb, const char *prefix, const struct stat_line *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].str)
			sbuf_printf(sb, "%s%s %s\n", prefix, l[i].name, l[i].str);
		else
			sbuf_printf(sb, "%s%s %lu\n", prefix, l[i].name, (unsigned long)l[i].v);
	}
}

/* Every core's lines: the fields of struct opcore_acct, in its order. */
static const struct {
	const char *name;
	size_t off;
} acct_rows[] = {
#define STAT_ACCT_ROW(name, expr)	{ #name, offsetof(struct opcore_acct, name) },
	OPCORE_ACCT(STAT_ACCT_ROW)
#undef STAT_ACCT_ROW
};

static void stat_cpu(struct sbuf *sb, int i)
{
	struct stat_line l[ARRAY_SIZE(acct_rows)];
	struct opcore_acct a;
	char prefix[16];

	opcore_account(&opcores[i], &a);
	for (size_t k = 0; k < ARRAY_SIZE(acct_rows); k++) {
		l[k].name = acct_rows[k].name;
		memcpy(&l[k].v, (const char *)&a + acct_rows[k].off, sizeof(uint64_t));
		l[k].str = NULL;
	}
	snprintf(prefix, sizeof(prefix), "cpu%d.", i);
	put_lines(sb, prefix, l, ARRAY_SIZE(l));
}

/* The session's lines; idle, the settings are the next session's. */
static void stat_global(struct sbuf *sb)
{
	uint32_t state = flag_get(&oprof.state);
	const struct oprof_cfg *cfg = state == OPROF_IDLE ? &oprof.next : &oprof.cfg;
	const char *hv = arch_machine()->hv_sig;
	uint64_t alloc, pooled, max;
	char shift[12];

	pool_stats(&alloc, &pooled, &max);
	snprintf(shift, sizeof(shift), "%d", arch_machine()->icount_shift);
	const struct stat_line l[] = {
		{ "state", 0, session_state_name(state) },
		{ "session", oprof.session_id, NULL },
		{ "ncores", (uint64_t)oprof.ncores, NULL },
		{ "hz", cfg->hz, NULL },
		{ "depth", cfg->depth, NULL },
		{ "block_bytes", cfg->block_bytes, NULL },
		{ "period_ms", cfg->period_ms, NULL },
		{ "stale", cfg->stale, NULL },
		{ "emptydepth", cfg->emptydepth, NULL },
		{ "mode", 0, cfg->snapshot ? "snapshot" : "stream" },
		{ "source", 0, cfg->source == OPF_SRC_NMI ? "nmi" : "timer" },
		{ "machine", 0, clock_machine_name() },
		{ "hypervisor", 0, hv[0] ? hv : "-" },
		{ "clock", 0, clock_name() },
		{ "icount_shift", 0, shift },
		{ "window", cfg->window, NULL },
		{ "snapshots", oprof.snapshots, NULL },
		{ "budget", cfg->budget, NULL },
		{ "maxhz", cfg->maxhz, NULL },
		{ "outq_bytes", qlen(oprof.outq), NULL },
		{ "outq_blocks", qblocks(oprof.outq), NULL },
		/* the cap bounds outq_mem: the memory the queued blocks really hold (BMEM) */
		{ "outq_mem", qmem(oprof.outq), NULL },
		/* the cap in effect */
		{ "outq_cap", state == OPROF_IDLE ? cfg->cap : oprof.cap, NULL },
		{ "cap_setting", cfg->cap, NULL },
		{ "marks_lost", oprof.marks_lost, NULL },
		{ "stream_bytes", oprof.stream_bytes, NULL },
		{ "blocks_alloc", alloc, NULL },
		{ "blocks_max", max, NULL },
		{ "blocks_pooled", pooled, NULL },
		{ "blocks_inflight", alloc - pooled, NULL },
		{ "blocks_dropped", oprof.blocks_dropped, NULL },
		{ "reader", reader_is_open(), NULL },
	};

	put_lines(sb, "", l, ARRAY_SIZE(l));
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
