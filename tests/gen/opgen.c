/*
 * opgen.c: writes profiler streams (kern/include/abi/oprofile.h) for opreport's tests, fuzz
 * corpus and benchmark. Deterministic for a given command line.
 *
 * Samples come from explicit specs (-S, exact counts, for golden tests) and/or a random mode
 * (-n, for volume). Function addresses come from a real ELF (-e: symbol table via libelf,
 * "name@line" via the DWARF line table through libdw, and its build-id), or else from a
 * built-in table of fake kernel addresses.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/oprofile.h"

#define MAXSPEC		256
#define MAXCORES	OPF_MAX_CORES_GEN
#define OPF_MAX_CORES_GEN 1024

static const char *const default_syms[] = {
	"main", "kthread_entry", "worker", "spin", "matrix_mul", "matrix_inner", "fib",
	"idle_loop",
};
#define NDEFAULT (sizeof(default_syms) / sizeof(default_syms[0]))

struct sym {
	char *name;
	uint64_t start, size;
};

static struct sym *syms;
static size_t nsyms;
static Dwarf *dwarf;
static Elf *elf;
static uint8_t build_id[OPF_MAX_BUILD_ID];
static uint32_t build_id_len;

struct spec {
	uint64_t count;
	uint32_t core, tid;
	uint16_t flags;
	uint16_t naddr;			/* pc + frames */
	uint64_t addr[OPF_MAX_DEPTH + 1];	/* leaf (pc) first */
};

static struct spec specs[MAXSPEC];
static size_t nspecs;

static struct {
	uint32_t cores, hz, depth, unknown, snapshots, pause, no_core_end, no_session_end, v1_end;
	uint64_t seed, random_n, templates, tsc_hz;
	const char *out, *funcs;
} opt = { .cores = 2, .hz = 1000, .depth = 16, .templates = 4096, .tsc_hz = 1000000000ULL,
	  .seed = 1 };

struct percore {
	uint64_t delivered, lost[OPF_LOST_NREASONS], overwritten, taken_bias, delivered_bias;
	uint64_t truncated, throttles, blocks, missed;
	uint32_t final_hz;
	uint64_t next_tsc;
};
static struct percore *pc_;

struct thr { uint32_t tid, core; char name[OPF_MAX_NAME + 1]; };
static struct thr threads[256];
static size_t nthreads;
struct lostspec { uint32_t core, reason; uint64_t n; };
static struct lostspec losts[64];
static size_t nlosts;
struct throttlespec { uint32_t core, old_hz, new_hz; };
static struct throttlespec throttles[64];
static size_t nthrottles;

static FILE *out;
static uint64_t written;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "opgen: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void emit(const void *rec, size_t len)
{
	if (fwrite(rec, 1, len, out) != len)
		die("write: %s", strerror(errno));
	written += len;
}

/* --- symbols ------------------------------------------------------------------------ */

static void load_elf(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		die("%s: %s", path, elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		syms = calloc(n, sizeof(*syms));
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			syms[nsyms++] = (struct sym){ strdup(name), s.st_value, s.st_size };
		}
	}
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && n <= OPF_MAX_BUILD_ID) {
		memcpy(build_id, id, (size_t)n);
		build_id_len = (uint32_t)n;
	}
	dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

static void fake_syms(void)
{
	syms = calloc(NDEFAULT, sizeof(*syms));
	for (size_t i = 0; i < NDEFAULT; i++)
		syms[nsyms++] = (struct sym){ strdup(default_syms[i]),
					      0xffffffff80100000ULL + 0x1000 * i, 0x1000 };
	for (uint32_t i = 0; i < 20; i++)
		build_id[i] = (uint8_t)(0xb0 + i);
	build_id_len = 20;
}

static const struct sym *find_sym(const char *name)
{
	for (size_t i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	die("no function '%s'%s", name, dwarf ? " in the ELF" : " in the built-in table");
}

/* Lowest address of a line-table row for line inside s (needs -e with DWARF). */
static uint64_t line_addr(const struct sym *s, int line)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	uint64_t best = UINT64_MAX;

	if (!dwarf)
		die("%s@%d: a line needs -e ELF with DWARF", s->name, line);
	while (dwarf_nextcu(dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_offdie(dwarf, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nl) == 0) {
			for (size_t i = 0; i < nl; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				int ln;

				if (dwarf_lineaddr(l, &a) || dwarf_lineno(l, &ln) || ln != line)
					continue;
				if (a >= s->start && a < s->start + s->size && a < best)
					best = a;
			}
		}
		off = next;
	}
	if (best == UINT64_MAX)
		die("no code for line %d in %s", line, s->name);
	return best;
}

/* One frame of a spec; leaf is the pc, else a return address (its minus one lies inside). */
static uint64_t frame_addr(const char *f, int leaf)
{
	char name[256];
	const char *at = strchr(f, '@'), *plus = strchr(f, '+');

	if (!strncmp(f, "0x", 2))
		return strtoull(f, NULL, 16);
	size_t n = at ? (size_t)(at - f) : plus ? (size_t)(plus - f) : strlen(f);
	if (n >= sizeof(name))
		die("frame name too long: %s", f);
	memcpy(name, f, n);
	name[n] = 0;
	const struct sym *s = find_sym(name);
	if (at)
		return line_addr(s, atoi(at + 1)) + (leaf ? 0 : 1);
	if (plus)
		return s->start + strtoull(plus + 1, NULL, 0);
	return s->start + s->size / 2;
}

/* COUNT[/t][@CORE][:TID]=root;...;leaf */
static void parse_spec(char *arg)
{
	struct spec *sp;
	char *eq = strchr(arg, '='), *p = arg;

	if (nspecs == MAXSPEC)
		die("too many -S");
	if (!eq)
		die("-S wants COUNT[/t][@CORE][:TID]=root;...;leaf, not '%s'", arg);
	sp = &specs[nspecs++];
	memset(sp, 0, sizeof(*sp));
	*eq = 0;
	sp->count = strtoull(p, &p, 10);
	sp->tid = 1;
	while (*p) {
		if (!strncmp(p, "/t", 2)) {
			sp->flags |= OPF_F_TRUNCATED;
			p += 2;
		} else if (*p == '@') {
			sp->core = (uint32_t)strtoul(p + 1, &p, 10);
		} else if (*p == ':') {
			sp->tid = (uint32_t)strtoul(p + 1, &p, 10);
		} else {
			die("bad -S prefix '%s'", arg);
		}
	}
	if (sp->tid == 0)
		sp->flags |= OPF_F_IDLE;
	char *frames[OPF_MAX_DEPTH + 1];
	int nf = 0;
	for (char *tok = strtok(eq + 1, ";"); tok; tok = strtok(NULL, ";")) {
		if (nf == OPF_MAX_DEPTH + 1)
			die("too many frames in -S");
		frames[nf++] = tok;
	}
	if (!nf)
		die("-S without frames");
	sp->naddr = (uint16_t)nf;
	for (int i = 0; i < nf; i++)	/* root first in the spec, leaf first in the record */
		sp->addr[i] = frame_addr(frames[nf - 1 - i], i == 0);
}

/* --- records -------------------------------------------------------------------------- */

static void emit_session(void)
{
	struct opf_session s = { 0 };

	s.h = (struct opf_rec){ OPF_SESSION, 0, OPF_SESSION_V1_LEN };
	s.magic = OPF_MAGIC;
	s.version = 1;
	s.ncores = opt.cores;
	s.hz = opt.hz;
	s.depth = opt.depth;
	s.tsc_hz = opt.tsc_hz;
	s.start_tsc = opt.tsc_hz;	/* sampling started 1 s after boot */
	s.start_ns = 1000000000ULL;
	s.block_bytes = 65536;
	s.period_ms = 10;
	s.flags = opt.snapshots ? OPF_S_SNAPSHOT : 0;
	s.build_id_len = build_id_len;
	memcpy(s.build_id, build_id, build_id_len);
	s.session_id = 1;
	emit(&s, OPF_SESSION_V1_LEN);
}

static uint64_t period(void)
{
	return opt.tsc_hz / (opt.hz ? opt.hz : 1);
}

static void emit_sample(uint32_t core, uint32_t tid, uint16_t flags, const uint64_t *addr,
			uint16_t naddr)
{
	union {
		struct opf_sample s;
		uint64_t raw[4 + OPF_MAX_DEPTH + 1];
	} u;
	uint16_t nf = (uint16_t)(naddr - 1);
	struct percore *c = &pc_[core];

	u.s.h = (struct opf_rec){ OPF_SAMPLE, flags, opf_sample_len(nf) };
	u.s.core = (uint16_t)core;
	u.s.nframes = nf;
	u.s.tid = tid;
	c->next_tsc += period();
	u.s.tsc = c->next_tsc;
	u.s.pc = addr[0];
	memcpy(u.s.frames, addr + 1, 8u * nf);
	emit(&u, u.s.h.len);
	c->delivered++;
	if (flags & OPF_F_TRUNCATED)
		c->truncated++;
}

static uint64_t now_tsc(void)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < opt.cores; i++)
		if (pc_[i].next_tsc > t)
			t = pc_[i].next_tsc;
	return t;
}

static void emit_unknown(uint32_t i)
{
	uint64_t b[5] = { 0 };
	struct opf_rec h = { (uint16_t)(100 + i % 3), 0, 8 + 8 * (i % 4) };

	memcpy(b, &h, sizeof(h));
	b[1] = 0x5555555555555555ULL;
	emit(b, h.len);
}

/* Events placed half way through the samples. */
static void emit_middle(void)
{
	uint64_t t = now_tsc();

	for (size_t i = 0; i < nlosts; i++) {
		struct opf_lost l = { { OPF_LOST, 0, sizeof(l) }, (uint16_t)losts[i].core,
				      (uint16_t)losts[i].reason, 0, losts[i].n, t };
		emit(&l, sizeof(l));
		pc_[losts[i].core].lost[losts[i].reason] += losts[i].n;
	}
	for (size_t i = 0; i < nthrottles; i++) {
		struct opf_throttle th = { { OPF_THROTTLE, 0, sizeof(th) }, throttles[i].core,
					   throttles[i].new_hz, t, throttles[i].old_hz, 5 };
		emit(&th, sizeof(th));
		if (throttles[i].new_hz < throttles[i].old_hz)	/* a raise is not a throttle */
			pc_[throttles[i].core].throttles++;
		pc_[throttles[i].core].final_hz = throttles[i].new_hz;
	}
	if (opt.pause) {
		struct opf_mark m = { { OPF_PAUSE, 0, OPF_MARK_V1_LEN }, t, 0, 0 };
		emit(&m, OPF_MARK_V1_LEN);
		t += opt.tsc_hz / 2;	/* paused for 0.5 s */
		m = (struct opf_mark){ { OPF_RESUME, 0, OPF_MARK_V1_LEN }, t, 0, 0 };
		emit(&m, OPF_MARK_V1_LEN);
		for (uint32_t i = 0; i < opt.cores; i++)
			pc_[i].next_tsc = t;
	}
}

static void emit_snapshot(uint16_t flag, uint64_t seq)
{
	struct opf_snapshot s = { { OPF_SNAPSHOT, flag, sizeof(s) }, seq, now_tsc() };

	emit(&s, sizeof(s));
}

/* Where the sample sequence is: which events are due between samples. */
static struct {
	uint64_t total, done;		/* samples in all, and emitted */
	uint64_t snap_every, unknown_every;	/* 0: none */
	uint32_t snap, unknown_done;
	int middle_done;
} progress;

/*
 * The next sample of the stream, with the snapshot brackets, unknown records and half-way
 * events that fall around it.
 */
static void emit_next(uint32_t core, uint32_t tid, uint16_t flags, const uint64_t *addr,
		      uint16_t naddr)
{
	if (progress.snap_every && progress.done % progress.snap_every == 0)
		emit_snapshot(OPF_SNAP_BEGIN, ++progress.snap);
	emit_sample(core, tid, flags, addr, naddr);
	progress.done++;
	if (progress.snap_every && (progress.done % progress.snap_every == 0 || progress.done == progress.total))
		emit_snapshot(OPF_SNAP_END, progress.snap);
	if (progress.unknown_every && progress.done % progress.unknown_every == 0 &&
	    progress.unknown_done < opt.unknown)
		emit_unknown(progress.unknown_done++);
	if (!progress.middle_done && progress.done * 2 >= progress.total) {
		emit_middle();
		progress.middle_done = 1;
	}
}

static void emit_end(void)
{
	for (uint32_t i = 0; i < opt.cores && !opt.no_core_end; i++) {
		struct percore *c = &pc_[i];
		struct opf_core_end e = { 0 };
		uint64_t lost = 0;

		e.h = (struct opf_rec){ OPF_CORE_END, 0, sizeof(e) };
		e.core = i;
		e.delivered = c->delivered + c->delivered_bias;
		for (int r = 0; r < OPF_LOST_NREASONS; r++) {
			e.lost[r] = c->lost[r];
			lost += c->lost[r];
		}
		e.overwritten = c->overwritten;
		e.taken = e.delivered + lost + e.overwritten + c->taken_bias;
		e.truncated = c->truncated;
		e.blocks = c->delivered / 400 + 1;
		e.throttles = c->throttles;
		e.final_hz = c->final_hz;
		e.missed = c->missed;
		e.h.len = opt.v1_end ? OPF_CORE_END_MIN_LEN : OPF_CORE_END_V1_LEN;
		emit(&e, e.h.len);
	}
	if (!opt.no_session_end) {
		struct opf_session_end e = { { OPF_SESSION_END, 0, OPF_SESSION_END_V1_LEN },
					     now_tsc(), 0, 0, written, 0 };
		e.end_ns = 1000000000ULL + (e.end_tsc - opt.tsc_hz) * 1000000000ULL / opt.tsc_hz;
		emit(&e, OPF_SESSION_END_V1_LEN);
	}
}

/* --- main ----------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: opgen [options]   (writes a profiler stream)\n"
		"  -o FILE             output (default stdout)\n"
		"  -e ELF              functions and build-id from ELF (default: built-in fake table)\n"
		"  -c N                cores (default 2)      -r HZ  rate (default 1000)\n"
		"  -d N                session depth; frames per random sample (default 16)\n"
		"  -s SEED             random seed (default 1)\n"
		"  -n N                N random samples over the function set (main at the root)\n"
		"  -T K                distinct random stack templates (default 4096)\n"
		"  -f F1,F2,...        function set of random mode, F1 the root (default: main,\n"
		"                      kthread_entry, worker, spin, matrix_mul, matrix_inner, fib,\n"
		"                      idle_loop)\n"
		"  -S SPEC             COUNT[/t][@CORE][:TID]=root;...;leaf exact samples; frames are\n"
		"                      NAME, NAME@LINE, NAME+OFF or 0xADDR; /t flags truncated;\n"
		"                      TID 0 is idle (default core 0, tid 1); repeatable\n"
		"  -t TID:CORE:NAME    thread name record (repeatable)\n"
		"  -l CORE:REASON:N    N samples lost for REASON 0..3 (repeatable)\n"
		"  --overwritten CORE:N, --taken-bias CORE:N, --delivered-bias CORE:N\n"
		"  --throttle CORE:OLD:NEW   a throttle event\n"
		"  --unknown N         N records of unknown types spread through the stream\n"
		"  --snapshots N       flight-recorder session with N snapshot dumps\n"
		"  --pause             a 0.5 s pause/resume half way\n"
		"  --no-core-end, --no-session-end   leave the closing records out\n"
		"  --missed CORE:N   timer ticks the core missed (OPF_CORE_END.missed)\n"
		"  --v1-core-end     write OPF_CORE_END as before missed was appended\n"
		"  --tsc-hz HZ         (default 1000000000)\n");
	exit(2);
}

static void pair(const char *arg, uint32_t *core, uint64_t *n)
{
	if (sscanf(arg, "%u:%" SCNu64, core, n) != 2 || *core >= opt.cores)
		die("bad CORE:N '%s' (use -c before it)", arg);
}

int main(int argc, char **argv)
{
	enum { O_OVER = 256, O_TAKEN, O_DELIV, O_THROTTLE, O_UNKNOWN, O_SNAP, O_PAUSE, O_NOCE,
	       O_NOSE, O_TSCHZ, O_MISSED, O_V1END };
	static const struct option lopts[] = {
		{ "overwritten", 1, NULL, O_OVER }, { "taken-bias", 1, NULL, O_TAKEN },
		{ "delivered-bias", 1, NULL, O_DELIV }, { "throttle", 1, NULL, O_THROTTLE },
		{ "unknown", 1, NULL, O_UNKNOWN }, { "snapshots", 1, NULL, O_SNAP },
		{ "pause", 0, NULL, O_PAUSE }, { "no-core-end", 0, NULL, O_NOCE },
		{ "no-session-end", 0, NULL, O_NOSE }, { "tsc-hz", 1, NULL, O_TSCHZ },
		{ "missed", 1, NULL, O_MISSED }, { "v1-core-end", 0, NULL, O_V1END },
		{ NULL, 0, NULL, 0 },
	};
	const char *elfpath = NULL;
	char **spec_args = calloc((size_t)argc, sizeof(char *));
	size_t nspec_args = 0;
	struct { int kind; char *arg; } deferred[512];
	size_t ndef = 0;
	int ch;

	while ((ch = getopt_long(argc, argv, "o:e:c:r:d:s:n:T:S:t:l:f:", lopts, NULL)) != -1) {
		switch (ch) {
		case 'o': opt.out = optarg; break;
		case 'e': elfpath = optarg; break;
		case 'c': opt.cores = (uint32_t)atoi(optarg); break;
		case 'r': opt.hz = (uint32_t)atoi(optarg); break;
		case 'd': opt.depth = (uint32_t)atoi(optarg); break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'n': opt.random_n = strtoull(optarg, NULL, 0); break;
		case 'f': opt.funcs = optarg; break;
		case 'T': opt.templates = strtoull(optarg, NULL, 0); break;
		case 'S': spec_args[nspec_args++] = optarg; break;
		case O_UNKNOWN: opt.unknown = (uint32_t)atoi(optarg); break;
		case O_SNAP: opt.snapshots = (uint32_t)atoi(optarg); break;
		case O_PAUSE: opt.pause = 1; break;
		case O_NOCE: opt.no_core_end = 1; break;
		case O_NOSE: opt.no_session_end = 1; break;
		case O_TSCHZ: opt.tsc_hz = strtoull(optarg, NULL, 0); break;
		case O_V1END: opt.v1_end = 1; break;
		case 't': case 'l': case O_OVER: case O_TAKEN: case O_DELIV: case O_THROTTLE:
		case O_MISSED:
			if (ndef == 512)
				die("too many options");
			deferred[ndef].kind = ch;
			deferred[ndef++].arg = optarg;
			break;
		default: usage();
		}
	}
	if (optind != argc || opt.cores == 0 || opt.cores > MAXCORES || opt.depth > OPF_MAX_DEPTH ||
	    !opt.tsc_hz || !opt.templates)
		usage();
	if (elfpath)
		load_elf(elfpath);
	else
		fake_syms();
	pc_ = calloc(opt.cores, sizeof(*pc_));
	for (uint32_t i = 0; i < opt.cores; i++) {
		pc_[i].final_hz = opt.hz;
		pc_[i].next_tsc = opt.tsc_hz;
	}
	for (size_t i = 0; i < ndef; i++) {
		char *a = deferred[i].arg;
		uint32_t core;
		uint64_t n;

		switch (deferred[i].kind) {
		case 't': {
			struct thr *t = &threads[nthreads];
			char *c1 = strchr(a, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

			if (nthreads == 256 || !c2)
				die("bad -t '%s'", a);
			t->tid = (uint32_t)atoi(a);
			t->core = (uint32_t)atoi(c1 + 1);
			snprintf(t->name, sizeof(t->name), "%s", c2 + 1);
			if (t->core >= opt.cores)
				die("bad core in -t '%s'", a);
			nthreads++;
			break;
		}
		case 'l': {
			struct lostspec *l = &losts[nlosts];

			if (nlosts == 64 || sscanf(a, "%u:%u:%" SCNu64, &l->core, &l->reason, &l->n) != 3 ||
			    l->core >= opt.cores || l->reason >= OPF_LOST_NREASONS)
				die("bad -l '%s'", a);
			nlosts++;
			break;
		}
		case O_THROTTLE: {
			struct throttlespec *t = &throttles[nthrottles];

			if (nthrottles == 64 ||
			    sscanf(a, "%u:%u:%u", &t->core, &t->old_hz, &t->new_hz) != 3 ||
			    t->core >= opt.cores)
				die("bad --throttle '%s'", a);
			nthrottles++;
			break;
		}
		case O_OVER: pair(a, &core, &n); pc_[core].overwritten += n; break;
		case O_TAKEN: pair(a, &core, &n); pc_[core].taken_bias += n; break;
		case O_DELIV: pair(a, &core, &n); pc_[core].delivered_bias += n; break;
		case O_MISSED: pair(a, &core, &n); pc_[core].missed += n; break;
		}
	}
	for (size_t i = 0; i < nspec_args; i++) {
		parse_spec(spec_args[i]);
		if (specs[nspecs - 1].core >= opt.cores)
			die("core out of range in -S '%s'", spec_args[i]);
	}
	rng_state = opt.seed;

	out = stdout;
	if (opt.out && !(out = fopen(opt.out, "w")))
		die("%s: %s", opt.out, strerror(errno));
	static char obuf[1 << 20];
	setvbuf(out, obuf, _IOFBF, sizeof(obuf));

	emit_session();
	for (size_t i = 0; i < nthreads; i++) {
		union { struct opf_thread t; uint64_t raw[3 + OPF_MAX_NAME / 8 + 1]; } u = { 0 };
		uint16_t nl = (uint16_t)strlen(threads[i].name);

		u.t.h = (struct opf_rec){ OPF_THREAD, 0, opf_thread_len(nl) };
		u.t.tid = threads[i].tid;
		u.t.core = (uint16_t)threads[i].core;
		u.t.namelen = nl;
		u.t.tsc = opt.tsc_hz;
		memcpy(u.t.name, threads[i].name, nl);
		emit(&u, u.t.h.len);
	}

	/* Random-mode templates: main at the root, then random functions of the set;
	 * nframes = depth. Addresses stay 4 bytes clear of both ends of a function. */
	uint64_t total = opt.random_n;
	for (size_t i = 0; i < nspecs; i++)
		total += specs[i].count;
	uint64_t *tmpl = NULL;
	size_t naddr = (size_t)opt.depth + 1;
	if (opt.random_n) {
		const struct sym *set[64];
		size_t nset = 0;
		char *list = strdup(opt.funcs ? opt.funcs : "");

		if (opt.funcs) {
			for (char *f = strtok(list, ","); f && nset < 64; f = strtok(NULL, ","))
				set[nset++] = find_sym(f);
		} else {
			for (size_t i = 0; i < NDEFAULT; i++)
				set[nset++] = find_sym(default_syms[i]);
		}
		free(list);
		if (!nset)
			die("-f names no function");
		tmpl = malloc(opt.templates * naddr * sizeof(uint64_t));
		for (uint64_t t = 0; t < opt.templates; t++) {
			uint64_t *a = tmpl + t * naddr;

			for (size_t j = 0; j < naddr; j++) {
				const struct sym *s = j == naddr - 1 || nset == 1 ? set[0] :
						      set[1 + rnd() % (nset - 1)];
				a[j] = s->size > 8 ? s->start + 4 + rnd() % (s->size - 8) :
						     s->start + s->size / 2;
			}
		}
	}

	progress.total = total;
	progress.unknown_every = opt.unknown ? total / opt.unknown + 1 : 0;
	progress.snap_every = opt.snapshots ? total / opt.snapshots + 1 : 0;
	uint64_t left[MAXSPEC];
	for (size_t i = 0; i < nspecs; i++)
		left[i] = specs[i].count;
	uint64_t rand_left = opt.random_n;
	uint64_t addr[OPF_MAX_DEPTH + 1];

	for (;;) {
		int any = 0;

		/* One round: one sample of each spec with samples left, then a random chunk. */
		for (size_t i = 0; i < nspecs; i++) {
			if (!left[i])
				continue;
			any = 1;
			emit_next(specs[i].core, specs[i].tid, specs[i].flags, specs[i].addr,
				  specs[i].naddr);
			left[i]--;
		}
		for (int k = 0; k < 64 && rand_left; k++) {
			any = 1;
			/* Skewed choice: a few templates are hot, as in real profiles. */
			double u = (double)(rnd() >> 11) / 9007199254740992.0;
			uint64_t t = (uint64_t)(u * u * u * (double)opt.templates);
			memcpy(addr, tmpl + t * naddr, naddr * sizeof(uint64_t));
			addr[0] -= rnd() & 3;	/* a few pcs per template: bounded unique stacks */
			uint32_t core = (uint32_t)(rnd() % opt.cores);
			emit_next(core, 1 + (uint32_t)(t % (2 * opt.cores)), 0, addr, (uint16_t)naddr);
			rand_left--;
		}
		if (!any)
			break;
	}
	if (!progress.middle_done)
		emit_middle();
	while (progress.unknown_done < opt.unknown)
		emit_unknown(progress.unknown_done++);
	emit_end();
	if (fflush(out) || (out != stdout && fclose(out)))
		die("write: %s", strerror(errno));
	return 0;
}
