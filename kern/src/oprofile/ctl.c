/*
 * /dev/oprofilectl: the profiler's command language, one command per line.
 *
 * Two tables are the whole language: cmds (start, stop, ...) and settings (hz, depth, ...,
 * each a field of struct oprof_cfg with its range). Everything that lists the language
 * -- the unknown-command message, `oprofile help` (oprof_ctl_help) -- is made from them.
 *
 * Runs in the writing thread (it may sleep); oprof_ctl takes the session lock around the
 * whole command, so commands, worker passes and stat snapshots never interleave. Handlers
 * check the state and their arguments and fill err with one line starting "oprofile: "
 * that says what was wrong and what is allowed; session.c and flight.c do the work.
 *
 * Settings are the defaults of the next session ("start" options override hz, depth,
 * block size, flight-recorder mode and window for that session only). Rates above
 * OPROF_MAX_HZ are accepted only once "maxhz" was raised: they are for stress, guarded
 * by the overhead budget, not rates the profiler promises to keep up with. Changing a
 * setting while a session runs is refused: the hot path reads the session's settings
 * without a lock, which is safe only because they are constant from start to stop.
 */
#include "internal.h"
#include "error.h"

#define CTL_MAXARGS	12

typedef int (*ctl_fn)(int argc, char **argv, char *err, size_t errlen);

struct ctl_cmd {
	const char *name;
	const char *usage;
	const char *help;	/* one line: what it does */
	ctl_fn fn;
	bool args;		/* takes arguments; if not, any are refused with the usage */
};

/*
 * A setting: a cfg field with its range; size settings take K/M/G suffixes (unit: MiB);
 * named settings take one of names (the field holds its index).
 */
struct ctl_setting {
	const char *name;
	const char *what;	/* for messages: "bad <what> X: must be ..." */
	const char *unit;	/* of its value ("Hz", "ms"), or "" (a size, a name, a count) */
	const char *about;	/* for `oprofile help`: what it sets */
	const char *opt;	/* the "start" option that sets it for one session, or NULL */
	size_t off;		/* offsetof(struct oprof_cfg, field) */
	bool wide;		/* uint64_t field, else uint32_t */
	bool size;		/* takes a size with suffix */
	uint64_t min, max;
	const char *const *names;	/* value names, indexed by value; NULL: a number */
};

/* The sampling sources, by enum opf_source. */
static const char *const source_names[] = { "timer", "nmi", NULL };
/* What a session records besides samples: nothing, or scheduler and lock events. */
static const char *const event_names[] = { "none", "sched", NULL };

#define CFG32(f)	offsetof(struct oprof_cfg, f), false
#define CFG64(f)	offsetof(struct oprof_cfg, f), true

/* hz's max is the cfg's maxhz (0 here): rates above OPROF_MAX_HZ are an explicit choice. */
static const struct ctl_setting settings[] = {
	{ "hz", "rate", "Hz", "samples a second on each core", "-f", CFG32(hz), false, 1, 0,
	  NULL },
	{ "depth", "depth", "frames", "return addresses a sample's backtrace keeps at most", "-d",
	  CFG32(depth), false, 0, OPF_MAX_DEPTH, NULL },
	{ "blockbytes", "block size", "bytes", "each buffer block's size", "-b",
	  CFG32(block_bytes), false, OPROF_MIN_BLOCK, OPROF_MAX_BLOCK, NULL },
	{ "period", "period", "ms", "time between the worker's passes over the cores", NULL,
	  CFG32(period_ms), false, 1, 10000, NULL },
	{ "cap", "cap", "", "memory the unread stream may take (a plain number is MiB)", NULL,
	  CFG64(cap), true, 64 << 10, 1ull << 40, NULL },
	{ "stale", "staleness", "periods", "worker periods a partly filled block may wait",
	  NULL, CFG32(stale), false, 1, 1000, NULL },
	{ "emptydepth", "empty-queue depth", "blocks", "empty blocks kept ready on each core",
	  NULL, CFG32(emptydepth), false, 1, OPROF_MAX_EMPTYDEPTH, NULL },
	{ "window", "window", "blocks", "each core's window in flight-recorder mode (-s)", "-w",
	  CFG32(window), false, 1, OPROF_MAX_WINDOW, NULL },
	{ "budget", "budget", "%", "of a core's time sampling may take before its rate halves",
	  NULL, CFG32(budget), false, 1, 100, NULL },
	{ "maxhz", "rate limit", "Hz", "the highest rate hz takes", NULL, CFG32(maxhz), false,
	  OPROF_MAX_HZ, OPROF_ABS_MAX_HZ, NULL },
	{ "mode", "sampling source", "", "what interrupts a core to take a sample", "-m",
	  CFG32(source), false, 0, 1, source_names },
	{ "events", "events", "", "what a session records besides samples", "-e", CFG32(events),
	  false, 0, 1, event_names },
	{ "jitter", "jitter", "%", "of a period each sample's moment spreads over (0: fixed)",
	  "-j", CFG32(jitter), false, 0, 100, NULL },
	{ "seed", "jitter seed", "", "the jitter's seed (0: a new one each session)", NULL,
	  CFG64(seed), true, 0, UINT64_MAX, NULL },
};

static bool setting_is(const struct ctl_setting *st, size_t off)
{
	return st->off == off;
}

/* Parse s into st's field of cfg; 0 or -EINVAL with the range in err. */
static int setting_parse(const struct ctl_setting *st, const char *s, struct oprof_cfg *cfg,
			 char *err, size_t errlen)
{
	uint64_t v = 0, max = st->max ? st->max : cfg->maxhz;
	char *field = (char *)cfg + st->off;
	bool blocks = setting_is(st, offsetof(struct oprof_cfg, block_bytes));
	int bad = -1;

	if (st->names) {
		for (v = 0; st->names[v] && bad < 0; v++)
			if (!strcmp(st->names[v], s))
				bad = 0;
		v -= !bad;
	} else {
		bad = st->size ? parse_size(s, 1ull << 20, &v) : parse_u64(s, &v);
	}
	if (bad < 0 || v < st->min || v > max || (blocks && v % 8)) {
		if (st->names)
			snprintf(err, errlen, "oprofile: bad %s %s: must be %s or %s", st->what, s,
				 st->names[0], st->names[1]);
		else if (st->size)
			snprintf(err, errlen, "oprofile: bad %s %s: must be %luK..%luG "
				 "(plain numbers are MiB)", st->what, s,
				 (unsigned long)(st->min >> 10), (unsigned long)(st->max >> 30));
		else
			snprintf(err, errlen, "oprofile: bad %s %s: must be %lu..%lu%s",
				 st->what, s, (unsigned long)st->min, (unsigned long)max,
				 blocks ? ", a multiple of 8" : !st->max && max < OPROF_ABS_MAX_HZ ?
				 " (raise the limit with 'maxhz N')" : "");
		return -EINVAL;
	}
	if (st->wide)
		memcpy(field, &v, sizeof(uint64_t));
	else
		memcpy(field, &(uint32_t){ (uint32_t)v }, sizeof(uint32_t));
	return 0;
}

static const struct ctl_setting *setting_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		if (!strcmp(settings[i].name, name))
			return &settings[i];
	return NULL;
}

static const struct ctl_setting *setting_by_opt(const char *opt)
{
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		if (settings[i].opt && !strcmp(settings[i].opt, opt))
			return &settings[i];
	return NULL;
}

static bool ctl_running(void)
{
	return flag_get(&oprof.state) != OPROF_IDLE && flag_get(&oprof.state) != OPROF_DRAINING;
}

static int ctl_not_running(char *err, size_t errlen)
{
	snprintf(err, errlen, "oprofile: not running");
	return -EINVAL;
}

/* A whole session's settings must fit together, whichever way they were set. */
static int cfg_check(const struct oprof_cfg *cfg, char *err, size_t errlen)
{
	uint32_t need = opf_sample_len(cfg->depth) + BLK_HDR;	/* a block's header, and one */

	if (cfg->block_bytes < need) {
		snprintf(err, errlen, "oprofile: block size %u too small for depth %u "
			 "(need at least %u)", cfg->block_bytes, cfg->depth, need);
		return -EINVAL;
	}
	if (cfg->hz > cfg->maxhz) {
		snprintf(err, errlen, "oprofile: rate %u is over the limit %u (raise it with "
			 "'maxhz N')", cfg->hz, cfg->maxhz);
		return -EINVAL;
	}
	if (cfg->cap < 2ull * block_mem_of(cfg->block_bytes)) {
		snprintf(err, errlen, "oprofile: cap %luK too small for block size %u "
			 "(need room for two blocks)", (unsigned long)(cfg->cap >> 10),
			 cfg->block_bytes);
		return -EINVAL;
	}
	return 0;
}

#define START_USAGE	"start [-f HZ] [-d DEPTH] [-b BLOCKBYTES] [-m timer|nmi] [-e none|sched] " \
			"[-j PERCENT] [-s [-w BLOCKS]]"

static int ctl_start(int argc, char **argv, char *err, size_t errlen)
{
	struct oprof_cfg cfg = oprof.next;
	bool window = false;
	int rc;

	if (ctl_running()) {
		snprintf(err, errlen, "oprofile: already running (stop it first)");
		return -EBUSY;
	}
	if (flag_get(&oprof.state) == OPROF_DRAINING) {
		snprintf(err, errlen, "oprofile: the last session is not read yet "
			 "(read /dev/oprofile to its end, or 'discard' it)");
		return -EBUSY;
	}
	cfg.snapshot = 0;
	for (int i = 1; i < argc; i++) {
		const struct ctl_setting *st = setting_by_opt(argv[i]);

		if (!strcmp(argv[i], "-s")) {
			cfg.snapshot = 1;
			continue;
		}
		if (!st || i + 1 >= argc) {
			const char *what = st ? "missing value after" : "unknown option";

			snprintf(err, errlen, "oprofile: %s %s (usage: %s)", what, argv[i],
				 START_USAGE);
			return -EINVAL;
		}
		window |= setting_is(st, offsetof(struct oprof_cfg, window));
		if ((rc = setting_parse(st, argv[++i], &cfg, err, errlen)) < 0)
			return rc;
	}
	if (window && !cfg.snapshot) {
		snprintf(err, errlen, "oprofile: -w sets the flight recorder's window: it needs "
			 "-s (usage: %s)", START_USAGE);
		return -EINVAL;
	}
	if ((rc = cfg_check(&cfg, err, errlen)) < 0)
		return rc;
	return session_start(&cfg, err, errlen);
}

int ctl_start_default(char *err, size_t errlen)
{
	char start[] = "start", *argv[] = { start, NULL };

	must_hold_session();
	return ctl_start(1, argv, err, errlen);
}

static int ctl_stop(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (!session_active())
		return ctl_not_running(err, errlen);
	session_stop();
	return 0;
}

static int ctl_pause(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (!session_active())
		return ctl_not_running(err, errlen);
	if (flag_get(&oprof.state) == OPROF_PAUSED) {
		snprintf(err, errlen, "oprofile: already paused");
		return -EINVAL;
	}
	session_pause(true);
	return 0;
}

static int ctl_resume(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (flag_get(&oprof.state) != OPROF_PAUSED) {
		snprintf(err, errlen, "oprofile: not paused");
		return -EINVAL;
	}
	session_pause(false);
	return 0;
}

static int ctl_flush(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (!session_active())
		return ctl_not_running(err, errlen);
	if (oprof.cfg.snapshot) {
		snprintf(err, errlen, "oprofile: flush does not apply to the flight recorder "
			 "(use 'snapshot')");
		return -EINVAL;
	}
	session_flush();
	return 0;
}

static int ctl_snapshot(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (!session_active())
		return ctl_not_running(err, errlen);
	if (!oprof.cfg.snapshot) {
		snprintf(err, errlen, "oprofile: not in flight-recorder mode (start -s); the "
			 "stream already has everything");
		return -EINVAL;
	}
	return flight_snapshot();
}

static int ctl_discard(int argc, char **argv, char *err, size_t errlen)
{
	(void)argc, (void)argv;
	if (flag_get(&oprof.state) != OPROF_DRAINING) {
		snprintf(err, errlen, "oprofile: nothing to discard (only a stopped, unread "
			 "session can be)");
		return -EINVAL;
	}
	session_discard();
	return 0;
}

/* Any context: disarm fault and say whether it was armed (oprofile.h). */
bool oprof_fault_take(unsigned fault)
{
	uint32_t old = __atomic_load_n(&oprof.faults, __ATOMIC_RELAXED);

	/* armed by "inject" and taken under the session lock (worker), but the glue asks too */
	while (old & fault)
		if (__atomic_compare_exchange_n(&oprof.faults, &old, old & ~fault, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* "inject WHAT": arm a failure for a test (oprofile.h, OPROF_FAULT_*). */
static int ctl_inject(int argc, char **argv, char *err, size_t errlen)
{
	static const struct { const char *name; unsigned fault; } faults[] = {
		{ "drop", OPROF_FAULT_DROP_BLOCK }, { "arm", OPROF_FAULT_ARM },
		{ "nomem", OPROF_FAULT_NOMEM },
	};

	for (size_t i = 0; argc == 2 && i < ARRAY_SIZE(faults); i++) {
		if (!strcmp(argv[1], faults[i].name)) {
			__atomic_or_fetch(&oprof.faults, faults[i].fault, __ATOMIC_RELAXED);
			return 0;
		}
	}
	snprintf(err, errlen, "oprofile: usage: inject drop|arm|nomem (test aids: drop frees one "
		 "full block uncounted; arm fails the next start's arming; nomem: the pool "
		 "refuses its next block)");
	return -EINVAL;
}

static int ctl_set(int argc, char **argv, char *err, size_t errlen)
{
	const struct ctl_setting *st = setting_find(argv[0]);
	struct oprof_cfg cfg = oprof.next;
	int rc;

	if (argc != 2) {
		snprintf(err, errlen, "oprofile: usage: %s VALUE", argv[0]);
		return -EINVAL;
	}
	if (ctl_running()) {
		snprintf(err, errlen, "oprofile: cannot change %s while running (stop it first)",
			 argv[0]);
		return -EBUSY;
	}
	if ((rc = setting_parse(st, argv[1], &cfg, err, errlen)) < 0)
		return rc;
	oprof.next = cfg;
	flag_set(&oprof.wait_ms, cfg.period_ms);
	return 0;
}

static const struct ctl_cmd cmds[] = {
	{ "start", START_USAGE, "start a session (-s: flight recorder keeping BLOCKS per core)",
	  ctl_start, true },
	{ "stop", "stop", "stop sampling, flush every core, close the stream", ctl_stop, false },
	{ "pause", "pause", "count samples as lost (paused) until resume", ctl_pause, false },
	{ "resume", "resume", "sample again after pause", ctl_resume, false },
	{ "flush", "flush", "every core pushes its partial block now", ctl_flush, false },
	{ "snapshot", "snapshot", "flight recorder: dump every core's window to the stream",
	  ctl_snapshot, false },
	{ "discard", "discard", "throw a stopped session's unread stream away", ctl_discard,
	  false },
	{ "inject", "inject drop|arm|nomem", "tests: lose one block silently, fail the next "
	  "arming, or the pool's next block",
	  ctl_inject, true },
};
static const struct ctl_cmd set_cmd = { "SETTING", "SETTING VALUE", NULL, ctl_set, true };

/* Split line into words in buf; returns the count, or -1 if the line is too long. */
static int ctl_split(const char *line, char *buf, char **argv)
{
	size_t len = strnlen(line, OPROF_CTL_LINE);
	int argc = 0;
	char *p;

	if (len >= OPROF_CTL_LINE)
		return -1;
	memcpy(buf, line, len + 1);
	for (p = buf; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc == CTL_MAXARGS)
			return -1;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
	}
	return argc;
}

static const struct ctl_cmd *ctl_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return setting_find(name) ? &set_cmd : NULL;
}

/* Append "name name ..." of both tables to buf (size n, NUL terminated). */
static void ctl_names(char *buf, size_t n)
{
	struct sbuf sb = { .buf = buf, .n = n, .len = strlen(buf) };

	sbuf_printf(&sb, "commands:");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		sbuf_printf(&sb, " %s", cmds[i].name);
	sbuf_printf(&sb, "; settings:");
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		sbuf_printf(&sb, " %s", settings[i].name);
}

int oprof_ctl(const char *line, char *err, size_t errlen)
{
	char buf[OPROF_CTL_LINE], *argv[CTL_MAXARGS];
	int argc = ctl_split(line, buf, argv), rc;
	const struct ctl_cmd *cmd;

	if (errlen)
		err[0] = '\0';
	if (argc < 0) {
		snprintf(err, errlen, "oprofile: command too long");
		return -EINVAL;
	}
	if (argc == 0)
		return 0;
	if (!(cmd = ctl_find(argv[0]))) {
		snprintf(err, errlen, "oprofile: unknown command '%s' (", argv[0]);
		ctl_names(err, errlen);
		if (strlen(err) + 1 < errlen)
			memcpy(err + strlen(err), ")", 2);
		return -EINVAL;
	}
	if (!cmd->args && argc > 1) {
		snprintf(err, errlen, "oprofile: usage: %s", cmd->usage);
		return -EINVAL;
	}
	session_lock();
	rc = cmd->fn(argc, argv, err, errlen);
	session_unlock();
	return rc;
}

/* One setting's help line: its values (range and unit), what it sets, its start option,
 * its value now: "hz  1..20000 Hz: samples a second on each core; start -f [1000 Hz]". */
static void ctl_help_setting(struct sbuf *sb, const struct ctl_setting *st)
{
	uint64_t v = 0, max = st->max ? st->max : oprof.next.maxhz;
	const char *sp = st->unit[0] ? " " : "", *start = st->opt ? "; start " : "";

	memcpy(&v, (const char *)&oprof.next + st->off, st->wide ? 8 : 4);
	if (st->names)
		sbuf_printf(sb, "    %-12s %s or %s: %s%s%s [%s]\n", st->name, st->names[0],
			    st->names[1], st->about, start, st->opt ? st->opt : "", st->names[v]);
	else if (st->size)
		sbuf_printf(sb, "    %-12s %luK..%luG: %s%s%s [%luK]\n", st->name,
			    (unsigned long)(st->min >> 10), (unsigned long)(st->max >> 30), st->about,
			    start, st->opt ? st->opt : "", (unsigned long)(v >> 10));
	else
		sbuf_printf(sb, "    %-12s %lu..%lu%s%s: %s%s%s [%lu%s%s]\n", st->name,
			    (unsigned long)st->min, (unsigned long)max, sp, st->unit, st->about,
			    start, st->opt ? st->opt : "", (unsigned long)v, sp, st->unit);
}

size_t oprof_ctl_help(char *buf, size_t n)
{
	struct sbuf sb = { .buf = buf, .n = n, .len = 0 };

	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		sbuf_printf(&sb, "  %-58s %s\n", cmds[i].usage, cmds[i].help);
	sbuf_printf(&sb, "  SETTING VALUE: the next session's default (the current one in "
		    "brackets)\n");
	for (size_t i = 0; i < ARRAY_SIZE(settings); i++)
		ctl_help_setting(&sb, &settings[i]);
	return sb.len;
}
