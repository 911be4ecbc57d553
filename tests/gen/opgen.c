/*
 * opgen.c: writes profiler streams (kern/include/abi/oprofile.h) for opreport's tests, fuzz
 * corpus and benchmark; run by tests/t/opreport-*, tests/golden/streams.sh, user/Makefile
 * (fuzz seeds) and tests/bench. Deterministic for a given command line.
 *
 * Samples come from explicit specs (-S, exact counts, for golden tests) and/or a random mode
 * (-n, for volume). Function addresses come from a real ELF (-e: symbol table via libelf,
 * "name@line" via the DWARF line table through libdw, and its build-id), or else from a
 * built-in table of fake kernel addresses.
 *
 * Format 2 (the default; --v1 writes format 1) frames the stream in blocks as the kernel does:
 * each core appends its records to its own block and pushes it when the next record would
 * not fit (-b BYTES), the generator's own records (threads, drops, snapshot marks, closing
 * records) go to the stream writer's blocks (core OPF_CORE_STREAM), and every pushed block
 * gets the writer's next sequence number. A pushed block may then be dropped (--drop, listed
 * in an OPF_DROP; --unlisted, only counted), overwritten (--overwritten), held for a flight
 * recorder dump (--snapshots), skipped as sent to an earlier reader (--resumed), or written
 * wrong on purpose (--break) so that the tests can show opreport --stats catching it.
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
#define MAXCORES	1024
#define MAXLIST		256		/* most of each repeatable event option */
#define BLOCK_HDR	((uint32_t)sizeof(struct opf_block))

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
	uint32_t gap;			/* periods from the core's previous sample (1: on time) */
	uint64_t addr[OPF_MAX_DEPTH + 1];	/* leaf (pc) first */
};

static struct spec specs[MAXSPEC];
static size_t nspecs;

static struct {
	uint32_t cores, hz, depth, unknown, snapshots, pause, no_core_end, no_session_end, v1_end;
	uint32_t version, block_bytes, discard, nmi, machine, clock, long_switches, same_switches;
	uint32_t in_order, jitter, has_jitter;
	int32_t icount_shift;
	uint64_t seed, random_n, templates, tsc_hz, resumed, marks_lost, jitter_seed;
	const char *out, *funcs, *build_id;
} opt = { .cores = 2, .hz = 1000, .depth = 16, .templates = 4096, .tsc_hz = 1000000000ULL,
	  .seed = 1, .version = 2, .block_bytes = 65536 };

struct percore {
	uint64_t delivered, lost[OPF_LOST_NREASONS], overwritten, taken_bias, delivered_bias;
	uint64_t lost_bias[OPF_LOST_NREASONS];	/* in OPF_CORE_END only, not in OPF_LOST */
	uint64_t truncated, depth_cut, throttles, missed;
	uint64_t blocks_dropped, blocks_unlisted, blocks_overwritten, unlisted_samples;
	uint32_t final_hz;
	uint64_t next_tsc;
	uint64_t ev_dropped;		/* switches in blocks the worker dropped (lost output full) */
	uint64_t ev_lost[OPF_LOST_NREASONS];	/* --ev-lost: events lost with no record */
};
static struct percore *pc_;

/*
 * A writer's open block (format 2): records after its OPF_BLOCK header, and the blocks a
 * flight recorder holds until the next dump. Writers 0..cores-1 are the cores, writer
 * `cores` is the stream's own.
 */
struct writer {
	uint8_t *buf;
	uint32_t n, samples;
	uint64_t pushed;		/* blocks pushed so far: the next block's seq */
	uint32_t truncated, depth_cut;	/* flagged samples in the open block */
	uint64_t drop_samples;		/* samples of the listed drop being gathered */
	FILE *held;			/* flight recorder: blocks pushed since the last dump */
	char *heldbuf;
	size_t heldlen;
};
static struct writer *wr;

struct thr { uint32_t tid, core; char name[OPF_MAX_NAME + 1]; };
static struct thr threads[256];
static size_t nthreads;
struct lostspec { uint32_t core, reason; uint64_t n; };
static struct lostspec losts[MAXLIST];
static size_t nlosts;
struct throttlespec { uint32_t core, old_hz, new_hz; };
static struct throttlespec throttles[MAXLIST];
static size_t nthrottles;
/* -E: a context switch on core at us microseconds after the start (session gets OPF_S_SCHED),
 * with prev's stack (leaf first) when given; -W: a wake-up (wake: prev is the woken thread,
 * next the waker), in the same list: the two options together in time order */
struct switchspec {
	uint32_t core, prev, next, why, wake;
	uint64_t us;
	char name[OPF_OBJ_NAME + 1];
	uint16_t nframes;
	uint64_t frames[OPF_MAX_DEPTH + 1];
};
static struct switchspec switches[MAXLIST];
static size_t nswitches;

/* What happens to pushed blocks seq .. seq + n - 1 of a core. */
enum fate { F_DROP, F_UNLISTED, F_MISSING, F_REPEAT, F_LIE_SAMPLES, F_LIE_BYTES };
static const char *const fate_name[] = { "drop", "unlisted", "missing", "repeat", "samples",
					 "bytes" };
struct blockspec { enum fate fate; uint32_t core; uint64_t seq, n; };
static struct blockspec bspecs[MAXLIST];
static size_t nbspecs;

static FILE *out;
static uint64_t written;
static uint64_t session_blocks_dropped;
static uint64_t unwritten_bytes;	/* --break: written as the kernel counts, not the stream */
static int resume_point;		/* --resumed: a core's block has reached this reader */

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

/* --build-id: "none", or up to OPF_MAX_BUILD_ID bytes in hex. */
static void set_build_id(const char *hex)
{
	size_t n = strlen(hex);

	build_id_len = 0;
	if (!strcmp(hex, "none"))
		return;
	if (n % 2 || n > 2 * OPF_MAX_BUILD_ID || strspn(hex, "0123456789abcdef") != n)
		die("--build-id wants lowercase hex (at most %d bytes) or none", OPF_MAX_BUILD_ID);
	for (size_t i = 0; i < n / 2; i++)
		sscanf(hex + 2 * i, "%2hhx", &build_id[build_id_len++]);
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

/* The sample flag of a spec's /X: t truncated, d depth cut, i interrupts off; 0 if none. */
static uint16_t spec_flag(char c)
{
	return c == 't' ? OPF_F_TRUNCATED : c == 'd' ? OPF_F_DEPTH : c == 'i' ? OPF_F_IRQOFF : 0;
}

/* COUNT[/t|/d|/i][~GAP][@CORE][:TID]=root;...;leaf */
static void parse_spec(char *arg)
{
	struct spec *sp;
	char *eq = strchr(arg, '='), *p = arg;

	if (nspecs == MAXSPEC)
		die("too many -S");
	if (!eq)
		die("-S wants COUNT[/t][~GAP][@CORE][:TID]=root;...;leaf, not '%s'", arg);
	sp = &specs[nspecs++];
	memset(sp, 0, sizeof(*sp));
	*eq = 0;
	sp->count = strtoull(p, &p, 10);
	sp->tid = 1;
	sp->gap = 1;
	while (*p) {
		if (*p == '/' && spec_flag(p[1])) {
			sp->flags |= spec_flag(p[1]);
			p += 2;
		} else if (*p == '~') {
			sp->gap = (uint32_t)strtoul(p + 1, &p, 10);
			if (!sp->gap)
				die("~GAP wants a number of periods >= 1 in '%s'", arg);
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

/* --- writers: format 1 writes records as they come, format 2 in blocks ----------------- */

static uint32_t stream_writer(void)
{
	return opt.cores;
}

static const struct blockspec *block_fate(uint32_t core, uint64_t seq)
{
	for (size_t i = 0; i < nbspecs; i++)
		if (bspecs[i].core == core && seq >= bspecs[i].seq && seq < bspecs[i].seq + bspecs[i].n)
			return &bspecs[i];
	return NULL;
}

static void push(uint32_t wi);

/* Append a record to writer wi's open block (format 1: straight to the stream). */
static void put(uint32_t wi, const void *rec, uint32_t len)
{
	struct writer *w = &wr[wi];

	if (opt.version == 1) {
		emit(rec, len);
		return;
	}
	if (w->n && BLOCK_HDR + w->n + len > opt.block_bytes)
		push(wi);
	if (BLOCK_HDR + len > opt.block_bytes)
		die("a %u-byte record does not fit a %u-byte block", len, opt.block_bytes);
	memcpy(w->buf + w->n, rec, len);
	w->n += len;
	if (((const struct opf_rec *)rec)->type == OPF_SAMPLE) {
		uint16_t f = ((const struct opf_rec *)rec)->flags;

		w->samples++;
		w->truncated += (f & OPF_F_TRUNCATED) != 0;
		w->depth_cut += (f & OPF_F_DEPTH) != 0;
	}
}

/* A resumed stream's first block of core 0 was begun by an earlier reader: keep the second
 * half of its records, and count only those. */
static uint32_t partial_tail(const uint8_t *body, uint32_t n, uint32_t *samples)
{
	uint32_t nrec = 0, off = 0, skip;

	for (off = 0; off < n; off += ((const struct opf_rec *)(body + off))->len)
		nrec++;
	skip = 0;
	for (uint32_t i = 0, half = nrec / 2; i < half; i++)
		skip += ((const struct opf_rec *)(body + skip))->len;
	*samples = 0;
	for (off = skip; off < n; off += ((const struct opf_rec *)(body + off))->len)
		*samples += ((const struct opf_rec *)(body + off))->type == OPF_SAMPLE;
	return skip;
}

/* Write one pushed block to f, as it should be or as --break makes it. */
static void write_block(FILE *f, uint16_t core, uint64_t seq, const uint8_t *body, uint32_t n,
			uint32_t samples)
{
	struct opf_block b = { { OPF_BLOCK, 0, BLOCK_HDR }, core, 0, samples, seq, BLOCK_HDR + n, 0 };
	const struct blockspec *bs = core == OPF_CORE_STREAM ? NULL : block_fate(core, seq);
	uint32_t skip = 0;

	/* --resumed: what came before the resume point went to the earlier reader */
	if (opt.resumed && (core == OPF_CORE_STREAM ? !resume_point : seq < opt.resumed))
		return;
	resume_point |= core != OPF_CORE_STREAM;
	if (opt.resumed && seq == opt.resumed && core == 0) {
		skip = partial_tail(body, n, &b.samples);
		b.h.flags = OPF_B_PARTIAL;
		b.bytes = BLOCK_HDR + n - skip;
	}
	if (bs && bs->fate == F_MISSING) {
		unwritten_bytes += b.bytes;	/* the kernel thinks it wrote it */
		return;
	}
	if (bs && bs->fate == F_REPEAT)
		unwritten_bytes -= b.bytes;	/* ... once, though the stream has it twice */
	b.samples += bs && bs->fate == F_LIE_SAMPLES;
	b.bytes += bs && bs->fate == F_LIE_BYTES ? 8 : 0;
	for (int copies = bs && bs->fate == F_REPEAT ? 2 : 1; copies > 0; copies--) {
		if (f == out) {
			emit(&b, BLOCK_HDR);
			emit(body + skip, n - skip);
		} else if (fwrite(&b, 1, BLOCK_HDR, f) != BLOCK_HDR ||
			   fwrite(body + skip, 1, n - skip, f) != n - skip) {
			die("memory stream: %s", strerror(errno));
		}
	}
}

/*
 * The worker dropped block seq of core: its samples are lost, not delivered; the losses its
 * OPF_LOST records told are told again in the core's next block. The drop is counted, and
 * listed once its range ends.
 */
static void drop_block(uint32_t core, uint64_t seq, const uint8_t *body, uint32_t n,
		       uint32_t samples, const struct blockspec *bs)
{
	struct percore *c = &pc_[core];

	c->lost[OPF_LOST_OUTPUT_FULL] += samples;
	c->delivered -= samples;
	c->blocks_dropped++;
	session_blocks_dropped++;
	for (uint32_t off = 0; off < n; off += ((const struct opf_rec *)(body + off))->len) {
		uint16_t type = ((const struct opf_rec *)(body + off))->type;

		if (type == OPF_LOST)
			put(core, body + off, ((const struct opf_rec *)(body + off))->len);
		c->ev_dropped += type == OPF_SWITCH || type == OPF_SWITCH_SHORT ||
				 type == OPF_SWITCH_SAME || type == OPF_WAKEUP;
	}
	if (bs->fate == F_UNLISTED) {
		c->blocks_unlisted++;
		c->unlisted_samples += samples;	/* told by one OPF_D_UNLISTED drop at the end */
		return;
	}
	wr[core].drop_samples += samples;
	if (seq + 1 == bs->seq + bs->n) {
		struct opf_drop d = { { OPF_DROP, 0, sizeof(d) }, (uint16_t)core, 0, (uint32_t)bs->n,
				      bs->seq, wr[core].drop_samples };
		wr[core].drop_samples = 0;
		put(stream_writer(), &d, sizeof(d));
		push(stream_writer());
	}
}

/* Push writer wi's open block: to the stream, to the flight recorder's window, or dropped. */
static void push(uint32_t wi)
{
	struct writer *w = &wr[wi];
	uint16_t core = wi == stream_writer() ? OPF_CORE_STREAM : (uint16_t)wi;
	const struct blockspec *bs = core == OPF_CORE_STREAM ? NULL : block_fate(core, w->pushed);
	uint32_t n = w->n, samples = w->samples;
	uint64_t seq;

	if (!n)
		return;
	seq = w->pushed++;
	w->n = w->samples = 0;
	if (bs && (bs->fate == F_DROP || bs->fate == F_UNLISTED)) {
		uint8_t *body = malloc(n);

		pc_[wi].truncated -= w->truncated;
		pc_[wi].depth_cut -= w->depth_cut;
		w->truncated = w->depth_cut = 0;
		memcpy(body, w->buf, n);
		drop_block(wi, seq, body, n, samples, bs);
		free(body);
	} else {
		w->truncated = w->depth_cut = 0;
		write_block(w->held && core != OPF_CORE_STREAM ? w->held : out, core, seq, w->buf, n,
			    samples);
	}
}

/* Flight recorder: seq 0 of a core with --overwritten stands for the reused blocks. */
static void overwrite_first(uint32_t core)
{
	if (pc_[core].overwritten && opt.version >= 2) {
		wr[core].pushed++;
		pc_[core].blocks_overwritten++;
	}
}

static void writers_init(void)
{
	wr = calloc(opt.cores + 1, sizeof(*wr));
	for (uint32_t i = 0; i <= opt.cores; i++) {
		wr[i].buf = malloc(opt.block_bytes);
		if (opt.snapshots && i < opt.cores && opt.version >= 2)
			wr[i].held = open_memstream(&wr[i].heldbuf, &wr[i].heldlen);
		if (i < opt.cores)
			overwrite_first(i);
	}
}

/* Dump the flight recorder: each core's window (held blocks, then its open block). */
static void dump_windows(void)
{
	for (uint32_t i = 0; i < opt.cores; i++) {
		struct writer *w = &wr[i];

		push(i);
		fflush(w->held);
		emit(w->heldbuf, w->heldlen);
		rewind(w->held);
		fflush(w->held);
	}
}

/* --- records ------------------------------------------------------------------------------ */

static uint64_t period(void)
{
	return opt.tsc_hz / (opt.hz ? opt.hz : 1);
}

static uint64_t now_tsc(void)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < opt.cores; i++)
		if (pc_[i].next_tsc > t)
			t = pc_[i].next_tsc;
	return t;
}

static void emit_session(void)
{
	struct opf_session s = { 0 };
	/* without --clock: as before the clock fields; with it, as before the jitter's, unless
	 * --jitter gives those too (the whole record) */
	uint32_t len = opt.version == 1 ? OPF_SESSION_V1_LEN : opt.has_jitter ?
		       (uint32_t)sizeof(s) : opt.clock ? OPF_SESSION_CLOCK_LEN : OPF_SESSION_V2_LEN;

	s.h = (struct opf_rec){ OPF_SESSION, 0, len };
	s.magic = OPF_MAGIC;
	s.version = opt.version;
	s.ncores = opt.cores;
	s.hz = opt.hz;
	s.depth = opt.depth;
	s.tsc_hz = opt.tsc_hz;
	s.start_tsc = opt.tsc_hz;	/* sampling started 1 s after boot */
	s.start_ns = 1000000000ULL;
	s.block_bytes = opt.block_bytes;
	s.period_ms = 10;
	s.flags = (opt.snapshots ? OPF_S_SNAPSHOT : 0) | (opt.resumed ? OPF_S_RESUMED : 0) |
		  (nswitches ? OPF_S_SCHED : 0);
	s.build_id_len = build_id_len;
	memcpy(s.build_id, build_id, build_id_len);
	s.session_id = 1;
	s.source = opt.nmi ? OPF_SRC_NMI : OPF_SRC_TIMER;
	s.cap = 4u << 20;
	s.machine = opt.machine;
	s.clock = opt.clock;
	s.icount_shift = opt.icount_shift;
	s.jitter = opt.jitter;
	s.jitter_seed = opt.jitter_seed;
	if (opt.machine == OPF_MACH_QEMU_TCG)
		memcpy(s.hv_sig, "TCGTCGTCGTCG", 12);
	else if (opt.machine == OPF_MACH_KVM)
		memcpy(s.hv_sig, "KVMKVMKVM", 9);
	emit(&s, len);
}

static void emit_threads(void)
{
	for (size_t i = 0; i < nthreads; i++) {
		union { struct opf_thread t; uint64_t raw[3 + OPF_MAX_NAME / 8 + 1]; } u = { 0 };
		uint16_t nl = (uint16_t)strlen(threads[i].name);

		u.t.h = (struct opf_rec){ OPF_THREAD, 0, opf_thread_len(nl) };
		u.t.tid = threads[i].tid;
		u.t.core = (uint16_t)threads[i].core;
		u.t.namelen = nl;
		u.t.tsc = opt.tsc_hz;
		memcpy(u.t.name, threads[i].name, nl);
		put(stream_writer(), &u, u.t.h.len);
	}
	push(stream_writer());
}

/* Thread tid's running time so far, as the kernel counts it (prev_cpu), and since when. */
static struct { uint32_t tid; uint64_t cpu, in_at; } runtime[2 * MAXLIST];
static size_t nruntime;

static uint64_t *cpu_of(uint32_t tid, uint64_t **in_at)
{
	size_t i = 0;

	while (i < nruntime && runtime[i].tid != tid)
		i++;
	if (i == nruntime) {
		runtime[nruntime].tid = tid;
		runtime[nruntime++].in_at = opt.tsc_hz;	/* running since the start */
	}
	*in_at = &runtime[i].in_at;
	return &runtime[i].cpu;
}

/*
 * --same-switches: switch i as an OPF_SWITCH_SAME, as the kernel writes it -- a wait whose
 * prev's last OPF_SWITCH is in its core's open block (full[j]: the block it went into, or
 * UINT64_MAX for a short one) with the same reason, name and stack, and room for 40 bytes.
 */
static int same_as_before(size_t i, const uint64_t *full)
{
	const struct switchspec *w = &switches[i], *f = NULL;
	const struct writer *wt = &wr[w->core];
	size_t j = i;

	if (!opt.same_switches || opt.version == 1 || !opf_why_waits(w->why))
		return 0;
	while (j-- > 0 && !f)
		if (switches[j].core == w->core && switches[j].prev == w->prev &&
		    full[j] != UINT64_MAX)
			f = &switches[j];
	return f && full[f - switches] == wt->pushed && wt->n &&
	       BLOCK_HDR + wt->n + sizeof(struct opf_switch_short) <= opt.block_bytes &&
	       f->why == w->why && !strcmp(f->name, w->name) && f->nframes == w->nframes &&
	       !memcmp(f->frames, w->frames, 8 * (size_t)w->nframes);
}

/* -W: woken thread prev made runnable by next on core, at w->us. */
static void emit_wakeup(const struct switchspec *w)
{
	struct opf_wakeup r = { { OPF_WAKEUP, 0, sizeof(r) }, (uint16_t)w->core,
				(uint16_t)w->core, w->prev, w->next, 0, 0,
				opt.tsc_hz + w->us * (opt.tsc_hz / 1000000) };

	put(w->core, &r, sizeof(r));
}

/*
 * The -E switches and -W wake-ups (given in time order) due by tsc into their cores' blocks,
 * as the kernel writes them: among the samples, in time order. The rest by the end
 * (UINT64_MAX).
 */
static void emit_switches(uint64_t tsc)
{
	static uint64_t full[MAXLIST];
	static size_t next;

	for (; next < nswitches; next++) {
		size_t i = next;
		const struct switchspec *w = &switches[i];
		struct { struct opf_switch r; uint64_t frames[OPF_MAX_DEPTH + 1]; } rf;

		if (w->wake) {
			emit_wakeup(w);
			full[i] = UINT64_MAX;
			continue;
		}
		struct opf_switch r = { { OPF_SWITCH, 0, opf_switch_len(w->nframes) },
					(uint16_t)w->core, (uint16_t)w->why, w->nframes, 0, w->prev,
					w->next, 0, 0, 0, 0, 0, 0, { 0 } };
		uint64_t *in_at, *cpu;

		r.tsc = opt.tsc_hz + w->us * (opt.tsc_hz / 1000000);
		if (r.tsc > tsc)
			return;
		cpu = cpu_of(w->prev, &in_at);
		*cpu += r.tsc - *in_at;
		r.prev_cpu = *cpu;
		memcpy(r.name, w->name, strlen(w->name));
		cpu_of(w->next, &in_at);
		*in_at = r.tsc;
		if (!opt.long_switches && !w->name[0] && !w->nframes &&
		    !opf_why_waits(w->why))
			r.h = (struct opf_rec){ OPF_SWITCH_SHORT, 0, sizeof(struct opf_switch_short) };
		if (same_as_before(i, full)) {
			r.h = (struct opf_rec){ OPF_SWITCH_SAME, 0, sizeof(struct opf_switch_short) };
			r.nframes = 0;
		}
		rf.r = r;
		memcpy(rf.frames, w->frames, 8 * (size_t)w->nframes);
		put(w->core, &rf, r.h.len);
		full[i] = r.h.type == OPF_SWITCH ? wr[w->core].pushed : UINT64_MAX;
	}
}

static void emit_sched_end(uint32_t core)
{
	struct opf_sched_end e = { { OPF_SCHED_END, 0, sizeof(e) }, core, 0, 0, { 0 }, { 0 }, 0 };

	for (size_t i = 0; i < nswitches; i++)
		e.written[switches[i].wake ? OPF_EV_WAKEUP : OPF_EV_SWITCH] += switches[i].core == core;
	e.lost[OPF_LOST_OUTPUT_FULL] = pc_[core].ev_dropped;
	e.taken = e.written[OPF_EV_SWITCH] + e.written[OPF_EV_WAKEUP];
	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		e.lost[r] += pc_[core].ev_lost[r];
		e.taken += pc_[core].ev_lost[r];
	}
	put(stream_writer(), &e, sizeof(e));
}

static void emit_sample(uint32_t core, uint32_t tid, uint16_t flags, const uint64_t *addr,
			uint16_t naddr, uint32_t gap)
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
	/* a throttled core samples at its own rate: each period of it is longer */
	c->next_tsc += (c->final_hz ? opt.tsc_hz / c->final_hz : period()) * gap;
	c->missed += gap - 1;
	u.s.tsc = c->next_tsc;
	emit_switches(u.s.tsc);
	u.s.pc = addr[0];
	memcpy(u.s.frames, addr + 1, 8u * nf);
	put(core, &u, u.s.h.len);
	c->delivered++;
	c->truncated += (flags & OPF_F_TRUNCATED) != 0;
	c->depth_cut += (flags & OPF_F_DEPTH) != 0;
}

static void emit_unknown(uint32_t i)
{
	uint64_t b[5] = { 0 };
	struct opf_rec h = { (uint16_t)(100 + i % 3), 0, 8 + 8 * (i % 4) };

	memcpy(b, &h, sizeof(h));
	b[1] = 0x5555555555555555ULL;
	put(stream_writer(), b, h.len);
	push(stream_writer());
}

/* Pause and resume: format 1 session-wide, format 2 one pair per core in its own blocks. */
static void emit_pause(uint64_t t)
{
	struct opf_mark m = { { OPF_PAUSE, 0, OPF_MARK_V1_LEN }, t, 0, 0 };
	uint32_t n = opt.version == 1 ? 1 : opt.cores;

	for (uint16_t type = OPF_PAUSE; type <= OPF_RESUME; type++) {
		for (uint32_t i = 0; i < n; i++) {
			m.h.type = type;
			m.h.len = opt.version == 1 ? OPF_MARK_V1_LEN : (uint32_t)sizeof(m);
			m.core = i;
			put(i, &m, m.h.len);
		}
		m.tsc = t + opt.tsc_hz / 2;	/* paused for 0.5 s */
	}
	for (uint32_t i = 0; i < opt.cores; i++)
		pc_[i].next_tsc = t + opt.tsc_hz / 2;
}

/* Events placed half way through the samples. */
static void emit_middle(void)
{
	uint64_t t = now_tsc();

	for (size_t i = 0; i < nlosts; i++) {
		struct opf_lost l = { { OPF_LOST, 0, sizeof(l) }, (uint16_t)losts[i].core,
				      (uint16_t)losts[i].reason, 0, losts[i].n, t };
		put(losts[i].core, &l, sizeof(l));
		pc_[losts[i].core].lost[losts[i].reason] += losts[i].n;
	}
	for (size_t i = 0; i < nthrottles; i++) {
		struct opf_throttle th = { { OPF_THROTTLE, 0, sizeof(th) }, throttles[i].core,
					   throttles[i].new_hz, t, throttles[i].old_hz, 5 };
		put(throttles[i].core, &th, sizeof(th));
		if (throttles[i].new_hz < throttles[i].old_hz)	/* a raise is not a throttle */
			pc_[throttles[i].core].throttles++;
		pc_[throttles[i].core].final_hz = throttles[i].new_hz;
	}
	if (opt.pause)
		emit_pause(t);
}

/* A snapshot mark; format 2 writes a dump's begin mark, the windows and the end at once. */
static void emit_snapshot(uint16_t flag, uint64_t seq)
{
	struct opf_snapshot s = { { OPF_SNAPSHOT, flag, sizeof(s) }, seq, now_tsc() };

	if (opt.version == 1) {
		emit(&s, sizeof(s));
		return;
	}
	if (flag == OPF_SNAP_BEGIN)
		return;
	s.h.flags = OPF_SNAP_BEGIN;
	put(stream_writer(), &s, sizeof(s));
	push(stream_writer());
	dump_windows();
	s.h.flags = OPF_SNAP_END;
	put(stream_writer(), &s, sizeof(s));
	push(stream_writer());
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
		      uint16_t naddr, uint32_t gap)
{
	if (progress.snap_every && progress.done % progress.snap_every == 0)
		emit_snapshot(OPF_SNAP_BEGIN, ++progress.snap);
	emit_sample(core, tid, flags, addr, naddr, gap);
	progress.done++;
	if (progress.snap_every && (progress.done % progress.snap_every == 0 ||
				    progress.done == progress.total))
		emit_snapshot(OPF_SNAP_END, progress.snap);
	if (progress.unknown_every && progress.done % progress.unknown_every == 0 &&
	    progress.unknown_done < opt.unknown)
		emit_unknown(progress.unknown_done++);
	if (!progress.middle_done && progress.done * 2 >= progress.total) {
		emit_middle();
		progress.middle_done = 1;
	}
}

/* Flight recorder: bytes some core's window still holds. */
static int window_left(void)
{
	for (uint32_t i = 0; i < opt.cores; i++) {
		fflush(wr[i].held);
		if (wr[i].heldlen || wr[i].n)
			return 1;
	}
	return 0;
}

static void emit_core_end(uint32_t i)
{
	struct percore *c = &pc_[i];
	struct opf_core_end e = { 0 };
	uint64_t lost = 0;

	if (c->blocks_unlisted) {	/* as the kernel does: the drops it could not name */
		struct opf_drop d = { { OPF_DROP, OPF_D_UNLISTED, sizeof(d) }, (uint16_t)i, 0,
				      (uint32_t)c->blocks_unlisted, 0, c->unlisted_samples };

		put(stream_writer(), &d, sizeof(d));
	}
	e.h = (struct opf_rec){ OPF_CORE_END, 0, sizeof(e) };
	e.core = i;
	e.delivered = c->delivered + c->delivered_bias;
	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		e.lost[r] = c->lost[r] + c->lost_bias[r];
		lost += e.lost[r];
	}
	e.overwritten = c->overwritten;
	e.taken = e.delivered + lost + e.overwritten + c->taken_bias;
	e.truncated = c->truncated;
	e.blocks = opt.version == 1 ? c->delivered / 400 + 1 : wr[i].pushed;
	e.throttles = c->throttles;
	e.final_hz = c->final_hz;
	e.missed = c->missed;
	e.blocks_dropped = c->blocks_dropped;
	e.blocks_unlisted = c->blocks_unlisted;
	e.blocks_overwritten = c->blocks_overwritten;
	e.depth_cut = c->depth_cut;
	e.h.len = opt.v1_end ? OPF_CORE_END_MIN_LEN : opt.version == 1 ? OPF_CORE_END_V1_LEN :
		  (uint32_t)sizeof(e);
	put(stream_writer(), &e, e.h.len);
}

static void emit_end(void)
{
	struct opf_session_end e = { { OPF_SESSION_END, 0, OPF_SESSION_END_V1_LEN }, now_tsc(), 0,
				     session_blocks_dropped, 0, opt.marks_lost };

	emit_switches(UINT64_MAX);
	for (uint32_t i = 0; i < opt.cores && !opt.discard; i++)
		push(i);
	if (opt.version >= 2 && opt.snapshots && !opt.discard && window_left())
		emit_snapshot(OPF_SNAP_END, ++progress.snap);	/* stop dumps what is left */
	e.blocks_dropped = session_blocks_dropped;
	for (uint32_t i = 0; i < opt.cores && !opt.no_core_end && !opt.discard; i++)
		emit_core_end(i);
	for (uint32_t i = 0; i < opt.cores && nswitches && !opt.no_core_end && !opt.discard; i++)
		emit_sched_end(i);
	if (opt.no_session_end) {
		push(stream_writer());
		return;
	}
	e.end_ns = 1000000000ULL + (e.end_tsc - opt.tsc_hz) * 1000000000ULL / opt.tsc_hz;
	if (opt.version >= 2) {
		e.h.len = sizeof(e);
		e.h.flags = opt.discard ? OPF_SE_DISCARDED : 0;
	}
	e.bytes = written + unwritten_bytes + (opt.version >= 2 ? BLOCK_HDR + wr[stream_writer()].n : 0);
	put(stream_writer(), &e, e.h.len);
	push(stream_writer());
}

/* --- command line ------------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr,
		"usage: opgen [options]   (writes a profiler stream, format 2 unless --v1)\n"
		"  -o FILE             output (default stdout)\n"
		"  -e ELF              functions and build-id from ELF (default: built-in fake table)\n"
		"  -c N                cores (default 2)      -r HZ  rate (default 1000)\n"
		"  -d N                session depth; frames per random sample (default 16)\n"
		"  -b BYTES            block size (default 65536)\n"
		"  -s SEED             random seed (default 1)\n"
		"  -n N                N random samples over the function set (main at the root)\n"
		"  -T K                distinct random stack templates (default 4096)\n"
		"  -f F1,F2,...        function set of random mode, F1 the root (default: main,\n"
		"                      kthread_entry, worker, spin, matrix_mul, matrix_inner, fib,\n"
		"                      idle_loop)\n"
		"  -S SPEC             COUNT[/t|/d|/i][~GAP][@CORE][:TID]=root;...;leaf exact samples;\n"
		"                      frames are NAME, NAME@LINE, NAME+OFF or 0xADDR; /t truncated,\n"
		"                      /d cut at the depth limit, /i interrupts off; ~GAP: each sample\n"
		"                      GAP periods after the core's previous one (GAP-1 missed ticks);\n"
		"                      TID 0 is idle (default core 0, tid 1); repeatable\n"
		"  --in-order          each -S's samples after the previous one's (default: a\n"
		"                      sample of each in turn), so each has its own stretch of time\n"
		"  -t TID:CORE:NAME    thread name record (repeatable)\n"
		"  -l CORE:REASON:N    N samples lost for REASON 0..3 (repeatable; not 1 in format 2)\n"
		"  --overwritten CORE:N, --taken-bias CORE:N, --delivered-bias CORE:N\n"
		"  --lost-bias CORE:REASON:N   N more lost in OPF_CORE_END than OPF_LOST says\n"
		"  --throttle CORE:OLD:NEW   a throttle event\n"
		"  -E CORE:US:PREV:NEXT:WHY[:NAME][=root;...;leaf]\n"
		"                      a context switch US microseconds after the start (WHY\n"
		"                      0..6 as enum opf_why), with PREV's stack when given;\n"
		"                      repeatable, in time order; the session then has scheduler\n"
		"                      events (OPF_S_SCHED); WHY 0, 1 and 6 without a NAME or a\n"
		"                      stack are written as OPF_SWITCH_SHORT, as the kernel does\n"
		"  -W CORE:US:TID:WAKER  WAKER on CORE made TID runnable US microseconds after the\n"
		"                      start (OPF_WAKEUP); in time order among the -E\n"
		"  --long-switches     every -E as an OPF_SWITCH (as kernels before the short one)\n"
		"  --ev-lost CORE:REASON:N   N scheduler events of CORE lost for REASON 0..3 (only\n"
		"                      OPF_SCHED_END says so: as the kernel counts them)\n"
		"  --same-switches     a blocking -E whose thread's last OPF_SWITCH in the block has\n"
		"                      the same reason, name and stack as OPF_SWITCH_SAME (as the\n"
		"                      kernel's stack cache writes it)\n"
		"  --unknown N         N records of unknown types spread through the stream\n"
		"  --snapshots N       flight-recorder session with N snapshot dumps\n"
		"  --pause             a 0.5 s pause/resume half way\n"
		"  --no-core-end, --no-session-end   leave the closing records out\n"
		"  --missed CORE:N     timer ticks the core missed (OPF_CORE_END.missed)\n"
		"  --v1-core-end       write OPF_CORE_END as before missed was appended\n"
		"  --tsc-hz HZ         (default 1000000000)\n"
		"format 2 only:\n"
		"  --drop CORE:SEQ[:N]       the worker drops blocks SEQ.. of CORE, listed in OPF_DROP\n"
		"  --unlisted CORE:SEQ[:N]   ... dropped and only counted (blocks_unlisted)\n"
		"  --break KIND:CORE:SEQ     write block SEQ of CORE wrong: missing, repeat, samples\n"
		"                            (header says one more), bytes (header says 8 more)\n"
		"  --resumed N         a reader that opened mid-stream: blocks below seq N went to an\n"
		"                      earlier one, core 0's block N is partial\n"
		"  --discard           the session is discarded at the end (no closing totals)\n"
		"  --nmi               sampling source NMI      --marks-lost N\n"
		"  --clock KIND        the session's clock: tcg, icount:SHIFT, kvm or bare (without:\n"
		"                      a session record from before the clock fields)\n"
		"  --jitter PCT:SEED   the session's jitter fields (a whole record; without: one from\n"
		"                      before them, whose periods were fixed)\n"
		"  --build-id HEX|none the session's build-id instead of the ELF's (or the fake one)\n");
	exit(2);
}

static void pair(const char *arg, uint32_t *core, uint64_t *n)
{
	if (sscanf(arg, "%u:%" SCNu64, core, n) != 2 || *core >= opt.cores)
		die("bad CORE:N '%s' (use -c before it)", arg);
}

enum { O_OVER = 256, O_TAKEN, O_DELIV, O_THROTTLE, O_UNKNOWN, O_SNAP, O_PAUSE, O_NOCE, O_NOSE,
       O_TSCHZ, O_MISSED, O_V1END, O_V1, O_DROP, O_UNLISTED, O_BREAK, O_RESUMED, O_DISCARD,
       O_LOSTBIAS, O_NMI, O_MARKSLOST, O_CLOCK, O_JITTER, O_LONGSW, O_SAMESW, O_INORDER, O_BUILDID,
       O_EVLOST };

/* Options whose meaning depends on -c are kept and applied after the whole line is read. */
struct deferred_opt {
	int kind;
	char *arg;
};
static struct deferred_opt deferred[512];
static size_t ndef;

static void thread_opt(char *a)
{
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
}

static void lost_opt(const char *a, int bias)
{
	struct lostspec l;

	if (nlosts == MAXLIST || sscanf(a, "%u:%u:%" SCNu64, &l.core, &l.reason, &l.n) != 3 ||
	    l.core >= opt.cores || l.reason >= OPF_LOST_NREASONS)
		die("bad %s '%s'", bias ? "--lost-bias" : "-l", a);
	if (bias)
		pc_[l.core].lost_bias[l.reason] += l.n;
	else if (l.reason == OPF_LOST_OUTPUT_FULL && opt.version >= 2)
		die("-l %s: in format 2 output-full losses are dropped blocks (--drop)", a);
	else
		losts[nlosts++] = l;
}

/* -E CORE:US:PREV:NEXT:WHY[:NAME][=root;...;leaf] (prev's stack, as -S gives one) */
static void switch_opt(char *a)
{
	struct switchspec *w = &switches[nswitches];
	char *eq = strchr(a, '='), *frames[OPF_MAX_DEPTH + 1];
	int n = 0, nf = 0;

	if (eq)
		*eq = 0;
	if (nswitches == MAXLIST || sscanf(a, "%u:%" SCNu64 ":%u:%u:%u%n", &w->core, &w->us,
					   &w->prev, &w->next, &w->why, &n) != 5 ||
	    w->core >= opt.cores || w->why >= OPF_WHY_N || (a[n] && a[n] != ':'))
		die("bad -E '%s' (use -c before it)", a);
	snprintf(w->name, sizeof(w->name), "%s", a[n] ? a + n + 1 : "");
	for (char *tok = eq ? strtok(eq + 1, ";") : NULL; tok; tok = strtok(NULL, ";")) {
		if (nf == OPF_MAX_DEPTH + 1)
			die("too many frames in -E");
		frames[nf++] = tok;
	}
	w->nframes = (uint16_t)nf;
	for (int i = 0; i < nf; i++)	/* root first in the option, leaf first in the record */
		w->frames[i] = frame_addr(frames[nf - 1 - i], i == 0);
	nswitches++;
}

/* -W CORE:US:TID:WAKER */
static void wake_opt(const char *a)
{
	struct switchspec *w = &switches[nswitches];

	memset(w, 0, sizeof(*w));
	if (nswitches == MAXLIST || sscanf(a, "%u:%" SCNu64 ":%u:%u", &w->core, &w->us, &w->prev,
					   &w->next) != 4 || w->core >= opt.cores)
		die("bad -W '%s' (use -c before it)", a);
	w->wake = 1;
	nswitches++;
}

static void throttle_opt(const char *a)
{
	struct throttlespec *t = &throttles[nthrottles];

	if (nthrottles == MAXLIST || sscanf(a, "%u:%u:%u", &t->core, &t->old_hz, &t->new_hz) != 3 ||
	    t->core >= opt.cores)
		die("bad --throttle '%s'", a);
	nthrottles++;
}

/* --drop/--unlisted CORE:SEQ[:N], --break KIND:CORE:SEQ */
static void block_opt(int kind, const char *a)
{
	struct blockspec *b = &bspecs[nbspecs];
	char k[16];

	if (opt.version < 2)
		die("'%s': blocks are format 2 only", a);
	b->n = 1;
	if (kind == O_BREAK) {
		if (sscanf(a, "%15[a-z]:%u:%" SCNu64, k, &b->core, &b->seq) != 3)
			die("bad --break '%s'", a);
		for (b->fate = F_MISSING; b->fate <= F_LIE_BYTES; b->fate++)
			if (!strcmp(k, fate_name[b->fate]))
				break;
		if (b->fate > F_LIE_BYTES)
			die("--break %s: KIND is missing, repeat, samples or bytes", a);
	} else if (sscanf(a, "%u:%" SCNu64 ":%" SCNu64, &b->core, &b->seq, &b->n) < 2 || !b->n) {
		die("bad CORE:SEQ[:N] '%s'", a);
	} else {
		b->fate = kind == O_DROP ? F_DROP : F_UNLISTED;
	}
	if (nbspecs == MAXLIST || b->core >= opt.cores)
		die("bad block option '%s' (use -c before it)", a);
	nbspecs++;
}

/* --ev-lost CORE:REASON:N */
static void ev_lost_opt(const char *a)
{
	uint32_t core, reason;
	uint64_t n;

	if (sscanf(a, "%u:%u:%" SCNu64, &core, &reason, &n) != 3 || core >= opt.cores ||
	    reason >= OPF_LOST_NREASONS)
		die("bad --ev-lost '%s' (CORE:REASON:N, use -c before it)", a);
	pc_[core].ev_lost[reason] += n;
}

static void apply_deferred(void)
{
	uint32_t core;
	uint64_t n;

	for (size_t i = 0; i < ndef; i++) {
		char *a = deferred[i].arg;

		switch (deferred[i].kind) {
		case 't': thread_opt(a); break;
		case 'l': lost_opt(a, 0); break;
		case O_LOSTBIAS: lost_opt(a, 1); break;
		case O_THROTTLE: throttle_opt(a); break;
		case 'E': switch_opt(a); break;
		case 'W': wake_opt(a); break;
		case O_DROP: case O_UNLISTED: case O_BREAK: block_opt(deferred[i].kind, a); break;
		case O_OVER: pair(a, &core, &n); pc_[core].overwritten += n; break;
		case O_TAKEN: pair(a, &core, &n); pc_[core].taken_bias += n; break;
		case O_DELIV: pair(a, &core, &n); pc_[core].delivered_bias += n; break;
		case O_MISSED: pair(a, &core, &n); pc_[core].missed += n; break;
		case O_EVLOST: ev_lost_opt(a); break;
		}
	}
}

/* --jitter PCT:SEED: the jitter fields of the session record. */
static void jitter_opt(const char *a)
{
	char *end;
	unsigned long pct = strtoul(a, &end, 10);

	if (*end != ':' || pct > 100)
		die("bad --jitter '%s' (PCT:SEED, PCT 0..100)", a);
	opt.jitter = (uint32_t)pct;
	opt.jitter_seed = strtoull(end + 1, NULL, 0);
	opt.has_jitter = 1;
}

/* --clock KIND: the machine and clock fields of the session record. */
static void clock_opt(const char *a)
{
	opt.icount_shift = -1;
	opt.machine = OPF_MACH_QEMU_TCG;
	if (!strcmp(a, "tcg"))
		opt.clock = OPF_CLOCK_EMULATION;
	else if (sscanf(a, "icount:%d", &opt.icount_shift) == 1)
		opt.clock = OPF_CLOCK_INSN;
	else if (!strcmp(a, "kvm") || !strcmp(a, "bare")) {
		opt.clock = OPF_CLOCK_HARDWARE;
		opt.machine = a[0] == 'k' ? OPF_MACH_KVM : OPF_MACH_BARE;
	} else
		die("bad --clock '%s' (tcg, icount:SHIFT, kvm or bare)", a);
}

/* A no-argument option that sets a flag, or an option with a numeric argument. */
static int simple_opt(int ch, const char *a)
{
	switch (ch) {
	case 'o': opt.out = a; return 1;
	case 'c': opt.cores = (uint32_t)atoi(a); return 1;
	case 'r': opt.hz = (uint32_t)atoi(a); return 1;
	case 'd': opt.depth = (uint32_t)atoi(a); return 1;
	case 'b': opt.block_bytes = (uint32_t)atoi(a); return 1;
	case 's': opt.seed = strtoull(a, NULL, 0); return 1;
	case 'n': opt.random_n = strtoull(a, NULL, 0); return 1;
	case 'f': opt.funcs = a; return 1;
	case 'T': opt.templates = strtoull(a, NULL, 0); return 1;
	case O_UNKNOWN: opt.unknown = (uint32_t)atoi(a); return 1;
	case O_SNAP: opt.snapshots = (uint32_t)atoi(a); return 1;
	case O_PAUSE: opt.pause = 1; return 1;
	case O_NOCE: opt.no_core_end = 1; return 1;
	case O_NOSE: opt.no_session_end = 1; return 1;
	case O_TSCHZ: opt.tsc_hz = strtoull(a, NULL, 0); return 1;
	case O_V1END: opt.v1_end = 1; return 1;
	case O_V1: opt.version = 1; return 1;
	case O_RESUMED: opt.resumed = strtoull(a, NULL, 0); return 1;
	case O_DISCARD: opt.discard = 1; return 1;
	case O_NMI: opt.nmi = 1; return 1;
	case O_MARKSLOST: opt.marks_lost = strtoull(a, NULL, 0); return 1;
	case O_CLOCK: clock_opt(a); return 1;
	case O_JITTER: jitter_opt(a); return 1;
	case O_LONGSW: opt.long_switches = 1; return 1;
	case O_SAMESW: opt.same_switches = 1; return 1;
	case O_INORDER: opt.in_order = 1; return 1;
	case O_BUILDID: opt.build_id = a; return 1;
	}
	return 0;
}

static const char *parse_options(int argc, char **argv, char **spec_args, size_t *nspec_args)
{
	static const struct option lopts[] = {
		{ "overwritten", 1, NULL, O_OVER }, { "taken-bias", 1, NULL, O_TAKEN },
		{ "delivered-bias", 1, NULL, O_DELIV }, { "throttle", 1, NULL, O_THROTTLE },
		{ "unknown", 1, NULL, O_UNKNOWN }, { "snapshots", 1, NULL, O_SNAP },
		{ "pause", 0, NULL, O_PAUSE }, { "no-core-end", 0, NULL, O_NOCE },
		{ "no-session-end", 0, NULL, O_NOSE }, { "tsc-hz", 1, NULL, O_TSCHZ },
		{ "missed", 1, NULL, O_MISSED }, { "v1-core-end", 0, NULL, O_V1END },
		{ "v1", 0, NULL, O_V1 }, { "drop", 1, NULL, O_DROP },
		{ "unlisted", 1, NULL, O_UNLISTED }, { "break", 1, NULL, O_BREAK },
		{ "resumed", 1, NULL, O_RESUMED }, { "discard", 0, NULL, O_DISCARD },
		{ "lost-bias", 1, NULL, O_LOSTBIAS }, { "nmi", 0, NULL, O_NMI },
		{ "marks-lost", 1, NULL, O_MARKSLOST }, { "clock", 1, NULL, O_CLOCK },
		{ "jitter", 1, NULL, O_JITTER },
		{ "long-switches", 0, NULL, O_LONGSW }, { "same-switches", 0, NULL, O_SAMESW },
		{ "in-order", 0, NULL, O_INORDER },
		{ "build-id", 1, NULL, O_BUILDID }, { "ev-lost", 1, NULL, O_EVLOST },
		{ NULL, 0, NULL, 0 },
	};
	const char *elfpath = NULL;
	int ch;

	while ((ch = getopt_long(argc, argv, "o:e:c:r:d:b:s:n:T:S:t:l:f:E:W:", lopts, NULL)) != -1) {
		if (ch == 'e')
			elfpath = optarg;
		else if (ch == 'S')
			spec_args[(*nspec_args)++] = optarg;
		else if (ch == '?' || ch == ':')
			usage();
		else if (!simple_opt(ch, optarg) && ndef < 512)
			deferred[ndef++] = (struct deferred_opt){ ch, optarg };
		else if (ndef == 512)
			die("too many options");
	}
	if (optind != argc || opt.cores == 0 || opt.cores > MAXCORES || opt.depth > OPF_MAX_DEPTH ||
	    !opt.tsc_hz || !opt.templates || opt.block_bytes < 256 || opt.block_bytes % 8)
		usage();
	return elfpath;
}

/* --- samples -------------------------------------------------------------------------- */

/* Random-mode templates: main at the root, then random functions of the set; nframes =
 * depth. Addresses stay 4 bytes clear of both ends of a function. */
static uint64_t *make_templates(size_t naddr)
{
	const struct sym *set[64];
	size_t nset = 0;
	char *list = strdup(opt.funcs ? opt.funcs : "");
	uint64_t *tmpl;

	if (opt.funcs)
		for (char *f = strtok(list, ","); f && nset < 64; f = strtok(NULL, ","))
			set[nset++] = find_sym(f);
	else
		for (size_t i = 0; i < NDEFAULT; i++)
			set[nset++] = find_sym(default_syms[i]);
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
	return tmpl;
}

/* One random sample from the templates: skewed, a few templates are hot as in real profiles. */
static void emit_random(const uint64_t *tmpl, size_t naddr)
{
	uint64_t addr[OPF_MAX_DEPTH + 1];
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	uint64_t t = (uint64_t)(u * u * u * (double)opt.templates);

	memcpy(addr, tmpl + t * naddr, naddr * sizeof(uint64_t));
	addr[0] -= rnd() & 3;	/* a few pcs per template: bounded unique stacks */
	uint32_t core = (uint32_t)(rnd() % opt.cores);
	emit_next(core, 1 + (uint32_t)(t % (2 * opt.cores)), 0, addr, (uint16_t)naddr, 1);
}

/* Rounds of one sample of each spec with samples left (--in-order: a spec's all before the
 * next one's), then a chunk of random ones. */
static void emit_samples(void)
{
	size_t naddr = (size_t)opt.depth + 1;
	uint64_t *tmpl = opt.random_n ? make_templates(naddr) : NULL;
	uint64_t left[MAXSPEC], rand_left = opt.random_n;
	int any = 1;

	progress.total = opt.random_n;
	for (size_t i = 0; i < nspecs; i++)
		progress.total += left[i] = specs[i].count;
	progress.unknown_every = opt.unknown ? progress.total / opt.unknown + 1 : 0;
	progress.snap_every = opt.snapshots ? progress.total / opt.snapshots + 1 : 0;
	while (any) {
		any = 0;
		for (size_t i = 0; i < nspecs; i++) {
			if (!left[i])
				continue;
			any = 1;
			emit_next(specs[i].core, specs[i].tid, specs[i].flags, specs[i].addr,
				  specs[i].naddr, specs[i].gap);
			left[i]--;
			if (opt.in_order)
				break;
		}
		for (int k = 0; k < 64 && rand_left; k++, rand_left--, any = 1)
			emit_random(tmpl, naddr);
	}
	free(tmpl);
}

int main(int argc, char **argv)
{
	char **spec_args = calloc((size_t)argc, sizeof(char *));
	size_t nspec_args = 0;
	const char *elfpath = parse_options(argc, argv, spec_args, &nspec_args);
	static char obuf[1 << 20];

	if (elfpath)
		load_elf(elfpath);
	else
		fake_syms();
	if (opt.build_id)
		set_build_id(opt.build_id);
	pc_ = calloc(opt.cores, sizeof(*pc_));
	for (uint32_t i = 0; i < opt.cores; i++) {
		pc_[i].final_hz = opt.hz;
		pc_[i].next_tsc = opt.tsc_hz;
	}
	apply_deferred();
	for (size_t i = 0; i < nspec_args; i++) {
		parse_spec(spec_args[i]);
		if (specs[nspecs - 1].core >= opt.cores)
			die("core out of range in -S '%s'", spec_args[i]);
	}
	rng_state = opt.seed;
	out = stdout;
	if (opt.out && !(out = fopen(opt.out, "w")))
		die("%s: %s", opt.out, strerror(errno));
	setvbuf(out, obuf, _IOFBF, sizeof(obuf));
	writers_init();
	emit_session();
	emit_threads();
	emit_samples();
	if (!progress.middle_done)
		emit_middle();
	while (progress.unknown_done < opt.unknown)
		emit_unknown(progress.unknown_done++);
	emit_end();
	if (fflush(out) || (out != stdout && fclose(out)))
		die("write: %s", strerror(errno));
	return 0;
}
