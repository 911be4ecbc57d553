/*
 * symbols.c: symbolization through libdwfl (offline reporting of one ELF at its link
 * addresses: the kernel is a non-PIE static executable). See symbols.h. Called by opreport.c
 * (sym_open, sym_resolve) and by the reports for lines (sym_line).
 */
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int init_maps(struct symbols *s)
{
	if (!getcwd(s->cwd, sizeof(s->cwd)))
		s->cwd[0] = 0;
	if (u64map_init(&s->addr2func, 1024) || u64map_init(&s->start2func, 256) ||
	    u64map_init(&s->addr2line, 256))
		return -1;
	return 0;
}

int sym_open(struct symbols *s, const char *path, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (access(path, R_OK)) {
		snprintf(err, errlen, "cannot read kernel ELF %s", path);
		return -1;
	}
	Dwfl *d = dwfl_begin(&offline_callbacks);
	if (!d)
		goto dwerr;
	Dwfl_Module *m = dwfl_report_offline(d, "kernel", path, -1);
	if (!m || dwfl_report_end(d, NULL, NULL)) {
		dwfl_end(d);
		goto dwerr;
	}
	Dwarf_Addr bias;
	if (!dwfl_module_getelf(m, &bias)) {
		dwfl_end(d);
		goto dwerr;
	}
	s->dwfl = d;
	s->mod = m;
	dwfl_module_info(m, NULL, &s->low, &s->high, NULL, NULL, NULL, NULL);
	s->path = strdup(path);
	if (!s->path || init_maps(s)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
dwerr:
	snprintf(err, errlen, "cannot load kernel ELF %s: %s", path, dwfl_errmsg(-1));
	return -1;
}

int sym_init_raw(struct symbols *s)
{
	memset(s, 0, sizeof(*s));
	return init_maps(s);
}

size_t sym_build_id(struct symbols *s, const uint8_t **id)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	if (!s->mod)
		return 0;
	int n = dwfl_module_build_id(s->mod, &bits, &vaddr);
	if (n <= 0)
		return 0;
	*id = bits;
	return (size_t)n;
}

/* Function id for key (resolved 1: a symbol start; 0: a raw address; 2: the synthetic
 * "[truncated]" root), creating it named name. */
static uint32_t func_for(struct symbols *s, uint64_t key, const char *name, int resolved)
{
	/* Symbolized and raw functions live in one table; raw keys get a tag bit pattern
	 * mixed in so a raw address never collides with a symbol start. */
	uint64_t k = resolved == 1 ? key : resolved ? UINT64_MAX - 1 : ~key;
	uint64_t *v = u64map_get(&s->start2func, k);

	if (!v)
		return UINT32_MAX;
	if (*v)
		return (uint32_t)(*v - 1);
	if (s->nfuncs == s->funccap) {
		uint32_t cap = s->funccap ? 2 * s->funccap : 256;
		struct func *f = realloc(s->funcs, cap * sizeof(*f));

		if (!f)
			return UINT32_MAX;
		s->funcs = f;
		s->funccap = cap;
	}
	char buf[32];
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, key);
		name = buf;
	}
	struct func *f = &s->funcs[s->nfuncs];
	f->name = strdup(name);
	if (!f->name)
		return UINT32_MAX;
	f->start = key;
	f->resolved = resolved == 1;
	*v = ++s->nfuncs;
	return s->nfuncs - 1;
}

uint32_t sym_func(struct symbols *s, uint64_t addr, uint64_t raw)
{
	uint64_t *v = u64map_find(&s->addr2func, addr);

	if (v)
		return (uint32_t)*v;
	uint32_t id;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = NULL;

	if (s->mod)
		name = dwfl_module_addrinfo(s->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (name && *name)
		id = func_for(s, addr - off, name, 1);
	else
		id = func_for(s, raw, NULL, 0);
	if (id == UINT32_MAX || !(v = u64map_get(&s->addr2func, addr)))
		return UINT32_MAX;
	*v = id;
	return id;
}

uint32_t sym_leaf(struct symbols *s, uint64_t pc)
{
	return sym_func(s, pc, pc);
}

/* Present path relative to the working directory when it lies below it. */
static const char *shorten(const struct symbols *s, const char *path)
{
	size_t n = strlen(s->cwd);

	if (n && !strncmp(path, s->cwd, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

static uint32_t intern_file(struct symbols *s, const char *name)
{
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i], name))
			return i;
	if ((s->nfiles & (s->nfiles - 1)) == 0) {
		char **f = realloc(s->files, (s->nfiles ? 2 * s->nfiles : 16) * sizeof(*f));

		if (!f)
			return UINT32_MAX;
		s->files = f;
	}
	s->files[s->nfiles] = strdup(name);
	if (!s->files[s->nfiles])
		return UINT32_MAX;
	return s->nfiles++;
}

int sym_line(struct symbols *s, uint64_t addr, const char **file, int *line)
{
	uint64_t *v = u64map_find(&s->addr2line, addr);

	if (!v) {
		uint64_t val = 0;

		if (s->mod) {
			Dwfl_Line *l = dwfl_module_getsrc(s->mod, addr);
			int lineno = 0;
			const char *f = l ? dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;

			if (f && lineno > 0) {
				uint32_t fi = intern_file(s, shorten(s, f));

				if (fi == UINT32_MAX)
					return -1;
				val = ((uint64_t)fi << 32 | (uint32_t)lineno) + 1;
			}
		}
		v = u64map_get(&s->addr2line, addr);
		if (!v)
			return -1;
		*v = val;
	}
	if (!*v)
		return -1;
	*file = s->files[(*v - 1) >> 32];
	*line = (int)(uint32_t)(*v - 1);
	return 0;
}

int sym_resolve(struct symbols *s, struct stacks *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct stack *st = t->list[i];

		free(st->fids);
		st->fids = malloc((st->naddr + 1u) * sizeof(*st->fids));
		if (!st->fids)
			return -1;
		st->nfids = st->naddr;
		if (st->cut) {
			st->fids[st->nfids] = func_for(s, 0, "[truncated]", 2);
			if (st->fids[st->nfids++] == UINT32_MAX)
				return -1;
		}
		for (uint16_t j = 0; j < st->naddr; j++) {
			uint64_t a = st->addr[j];

			st->fids[j] = sym_func(s, j && a ? a - 1 : a, a);
			if (st->fids[j] == UINT32_MAX)
				return -1;
		}
	}
	return 0;
}

void sym_close(struct symbols *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (uint32_t i = 0; i < s->nfuncs; i++)
		free(s->funcs[i].name);
	for (uint32_t i = 0; i < s->nfiles; i++)
		free(s->files[i]);
	free(s->funcs);
	free(s->files);
	free(s->path);
	u64map_free(&s->addr2func);
	u64map_free(&s->start2func);
	u64map_free(&s->addr2line);
	memset(s, 0, sizeof(*s));
}
