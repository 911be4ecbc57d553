/*
 * The always-on crash recorder: every online core keeps a bounded window of its own most
 * recent samples, from boot on, so that a panic can hand the host the last seconds of
 * every core (crashdump.c writes them).
 *
 * Contexts. crash_nmi runs in NMI context on each online core, from the NMI source's
 * background function (arch_nmi_background), whatever else the core was doing and whether
 * or not a profiling session runs: it is the only writer of its core's window, and NMIs do
 * not nest, so a window needs no lock, no guard and no atomic. crash_init runs on the boot
 * core at boot; crash_start, crash_configure and crash_print_status in a thread (the shell).
 * The dump reads the windows after every other core was stopped by an NMI, which can only
 * land between two crash_nmi calls of that core: a window is always whole up to wp.
 *
 * A window is CRASH_NBLOCKS blocks of window_kb / CRASH_NBLOCKS bytes, each framed like a
 * session's (an OPF_BLOCK header, filled when the block is sealed, with the core's block
 * sequence number), used round robin: when cur is full it is sealed and the oldest block
 * becomes cur, its samples counted overwritten. So memory is fixed at start and bounded,
 * and per core the sealed blocks of a window carry consecutive sequence numbers, which is
 * what opreport --stats checks in a dump. A sample is taken at most every 1/hz seconds
 * (the TSC decides): the source runs faster while a session samples by NMI.
 *
 * Settings: the host's fw_cfg options at boot ("on" or "off", "hz=N window=KB watchdog=
 * panic|warn|off wdms=MS", each optional; "bootpanic=1", for tests, panics just before the
 * recorder would start), and the shell's `crash` after.
 */
#include "crash.h"
#include "crashrec.h"
#include "arch.h"
#include "cpu.h"
#include "error.h"
#include "kmalloc.h"
#include "oprofile.h"
#include "thread.h"

struct crash_state crash;
struct crec crecs[MAX_CPUS];

/* "key=value" pairs separated by spaces, into cfg; 0, or -1 on a bad one. */
static int parse_option(struct crash_cfg *cfg, const char *key, const char *val)
{
	uint64_t v = 0;

	if (!strcmp(key, "watchdog")) {
		cfg->wd_mode = !strcmp(val, "panic") ? WD_PANIC : !strcmp(val, "warn") ? WD_WARN
			     : !strcmp(val, "off") ? WD_OFF : 99;
		return cfg->wd_mode == 99 ? -1 : 0;
	}
	if (parse_u64(val, &v) < 0 || v > UINT32_MAX)
		return -1;
	if (!strcmp(key, "hz"))
		cfg->hz = (uint32_t)v;
	else if (!strcmp(key, "window"))
		cfg->window_kb = (uint32_t)v;
	else if (!strcmp(key, "wdms"))
		cfg->wd_ms = (uint32_t)v;
	else if (!strcmp(key, "bootpanic"))	/* tests: panic before the recorder starts */
		crash.boot_panic = v != 0;
	else
		return -1;
	return 0;
}

/* Space-separated: "on", "off", or key=value (parse_option). 0, or -1 on a bad one. */
static int parse_options(struct crash_cfg *cfg, char *s)
{
	char *tok = s;

	while (tok && *tok) {
		char *sp = strchr(tok, ' '), *eq;

		if (sp)
			*sp++ = 0;
		eq = strchr(tok, '=');
		if (!strcmp(tok, "off") || !strcmp(tok, "on"))
			cfg->record = !strcmp(tok, "on");
		else if (*tok && (!eq || (*eq = 0, parse_option(cfg, tok, eq + 1) < 0)))
			return -1;
		tok = sp;
	}
	return 0;
}

/* Boot core, boot time: the host's options. No options, or no port: nothing is recorded. */
void crash_init(void)
{
	char buf[128];
	struct crash_cfg *cfg = &crash.cfg;

	*cfg = (struct crash_cfg){ true, CRASH_DEF_HZ, CRASH_DEF_WINDOW_KB, WD_PANIC,
				   WATCHDOG_DEF_MS };
	if (arch_crash_options(buf, sizeof(buf)) < 0) {
		cfg->record = false;
		cfg->wd_mode = WD_OFF;
		return;
	}
	crash.host = true;
	crash.channel = arch_crash_channel();
	if (parse_options(cfg, buf) < 0)
		printk("crash: bad options \"%s\": want off, or hz=N window=KB watchdog=panic|"
		       "warn|off wdms=MS\n", buf);
	crash.boot_tsc = tsc_read();
}

/* Seal cur (its header from the core's counts) and make the oldest block cur. */
static void crec_next(struct crec *r)
{
	struct opf_block *h = (struct opf_block *)crec_block(r, r->cur);

	rec_block(h, (uint16_t)(r - crecs), r->samples, r->seq, r->wp);
	r->seq++;
	r->cur = (r->cur + 1) % CRASH_NBLOCKS;
	if (r->nsealed < CRASH_NBLOCKS - 1)
		r->nsealed++;
	else
		r->overwritten += ((struct opf_block *)crec_block(r, r->cur))->samples;
	r->wp = BLK_HDR;
	r->samples = 0;
}

/* NMI context, on the core of r: one sample of tf's context into r's window. */
static void crec_sample(struct crec *r, const struct trapframe *tf, uint64_t now)
{
	struct cpu *c = this_cpu();
	uint64_t frames[CRASH_DEPTH];
	uintptr_t lo = 0, hi = 0, leaf;
	unsigned n = 0, flags = 0;
	bool trunc = false, more = false;
	uint32_t len;

	if (c->cur) {
		thread_stack(c->cur, &lo, &hi);
		leaf = arch_unlinked_return(tf_pc(tf), tf_sp(tf), lo, hi);
		if (leaf)
			frames[n++] = leaf;
		n += oprof_backtrace(tf_fp(tf), lo, hi, frames + n, CRASH_DEPTH - n, &trunc,
				     &more);
	}
	flags = (trunc ? OPF_F_TRUNCATED : 0) | (more ? OPF_F_DEPTH : 0) |
		(tf_irq_enabled(tf) ? 0 : OPF_F_IRQOFF) |
		(c->cur == c->idle && READ_ONCE(c->in_idle) ? OPF_F_IDLE : 0);
	len = opf_sample_len(n);
	if (r->wp + len > crash.bsize)
		crec_next(r);
	rec_sample(crec_block(r, r->cur) + r->wp, len, (uint16_t)c->id,
		   (uint32_t)thread_tid(c->cur), now, tf_pc(tf), frames, n, flags);
	r->samples++;
	r->taken++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* the record is whole before wp says so */
	r->wp += len;
}

/* NMI context, every online core, at the recorder's rate (arch_nmi_background): the
 * recorder and the watchdog. */
void crash_nmi(const struct trapframe *tf)
{
	struct crec *r = &crecs[core_id()];
	uint64_t now = tsc_read();

	must(arch_in_nmi(), "NMI context: the window is written by its core's NMI only");
	watchdog_nmi(tf, now);
	if (!READ_ONCE(crash.recording) || !r->mem || (int64_t)(now - r->next) < 0)
		return;
	r->next = now + crash.period;
	crec_sample(r, tf, now);
}

/* Thread context: windows for every online core; false: out of memory (none kept). */
static bool crec_alloc(uint32_t window_kb)
{
	crash.bsize = window_kb * 1024 / CRASH_NBLOCKS & ~7u;
	for (int i = 0; i < ncpus(); i++) {
		crecs[i] = (struct crec){ .wp = BLK_HDR };
		if (!(crecs[i].mem = kmalloc((size_t)crash.bsize * CRASH_NBLOCKS))) {
			while (i--) {
				kfree(crecs[i].mem);
				crecs[i].mem = NULL;
			}
			return false;
		}
	}
	return true;
}

static void crec_free(void)
{
	for (int i = 0; i < ncpus(); i++) {
		kfree(crecs[i].mem);
		crecs[i].mem = NULL;
	}
}

static int check_cfg(const struct crash_cfg *c, char *err, size_t errlen)
{
	if (c->hz < 1 || c->hz > CRASH_MAX_HZ)
		snprintf(err, errlen, "rate %u Hz not in 1..%u", c->hz, CRASH_MAX_HZ);
	else if (c->window_kb < CRASH_MIN_WINDOW_KB || c->window_kb > CRASH_MAX_WINDOW_KB)
		snprintf(err, errlen, "window %u KB not in %u..%u", c->window_kb,
			 CRASH_MIN_WINDOW_KB, CRASH_MAX_WINDOW_KB);
	else if (c->wd_ms < WATCHDOG_MIN_MS)
		snprintf(err, errlen, "watchdog time %u ms below %u", c->wd_ms, WATCHDOG_MIN_MS);
	else
		return 0;
	return -EINVAL;
}

/*
 * Thread context: stop the background function, set cfg, restart what it asks for. The
 * windows start empty. Not concurrently with itself (the shell is one thread).
 */
int crash_configure(const struct crash_cfg *cfg, char *err, size_t errlen)
{
	int r;

	if ((r = check_cfg(cfg, err, errlen)) < 0)
		return r;
	arch_nmi_background(0, NULL);
	WRITE_ONCE(crash.recording, false);
	crec_free();
	crash.cfg = *cfg;
	crash.period = tsc_hz() / cfg->hz;
	watchdog_configure(cfg->wd_mode, cfg->wd_ms, cfg->hz);
	if (cfg->record && !crec_alloc(cfg->window_kb)) {
		crash.cfg.record = false;
		snprintf(err, errlen, "no memory for %u KB windows", cfg->window_kb);
		r = -ENOMEM;
	}
	if (crash.cfg.record) {
		crash.start_tsc = tsc_read();
		crash.start_ns = nsec();
		WRITE_ONCE(crash.recording, true);
	}
	if (crash.cfg.record || cfg->wd_mode != WD_OFF) {
		int e = arch_nmi_background(cfg->hz, crash_nmi);

		if (e < 0 && !r) {
			snprintf(err, errlen, "no NMI source: %s", strerror(e));
			r = e;
		}
	}
	return r;
}

/* Shell thread, late init: what the host asked for at boot. */
void crash_start(void)
{
	char err[96];

	if (!crash.host)
		return;
	if (crash.boot_panic)
		panic("crash: a panic during boot, before the crash recorder started (bootpanic=1)");
	watchdog_start();
	if (crash_configure(&crash.cfg, err, sizeof(err)) < 0)
		printk("crash: recorder not started: %s\n", err);
	else if (!crash.channel)
		printk("crash: the host connected no crash port: dumps go nowhere\n");
}

void crash_get(struct crash_cfg *cfg, bool *channel)
{
	*cfg = crash.cfg;
	*channel = crash.channel;
}

void crash_print_status(int (*out)(const char *fmt, ...))
{
	static const char *const wd[] = { "off", "warn", "panic" };
	const struct crash_cfg *c = &crash.cfg;
	uint64_t taken = 0, ow = 0;

	for (int i = 0; i < ncpus(); i++) {
		taken += crecs[i].taken;
		ow += crecs[i].overwritten;
	}
	out("crash recorder: %s, %u Hz, window %u KB per core (%u cores); dump channel: %s\n",
	    crash.recording ? "on" : "off", c->hz, c->window_kb, ncpus(),
	    crash.channel ? "crash port (a file on the host)" : "none");
	out("  samples taken %lu, overwritten %lu\n", (unsigned long)taken, (unsigned long)ow);
	out("watchdog: %s, %u ms without a timer interrupt\n", wd[c->wd_mode], c->wd_ms);
}
