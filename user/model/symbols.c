/*
 * symbols.c: symbolization through libdwfl (offline reporting of one ELF at its link
 * addresses: the kernel is a non-PIE static executable). See symbols.h. Called by opreport.c
 * (sym_open, sym_resolve) and by the reports for lines (sym_line).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/symbols.h"
#include "util/strhash.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int init_maps(struct symbols *s)
{
	if (!getcwd(s->cwd, sizeof(s->cwd)))
		s->cwd[0] = 0;
	if (u64map_init(&s->addr2chain, 1024) || u64map_init(&s->start2func, 256) ||
	    u64map_init(&s->name2func, 256) || u64map_init(&s->addr2line, 256))
		return -1;
	return 0;
}

int sym_open(struct symbols *s, const char *path, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (access(path, R_OK)) {
		snprintf(err, errlen, "cannot read kernel ELF %s", path);
		return 1;
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
		sym_close(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
dwerr:
	snprintf(err, errlen, "cannot load kernel ELF %s: %s", path, dwfl_errmsg(-1));
	return 1;
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

static const char *shorten(const struct symbols *s, const char *path);
static uint32_t intern_file(struct symbols *s, const char *name);
static void symbol_decl(struct symbols *s, uint32_t id, uint64_t addr);

/* Append a function; its id, or UINT32_MAX (no memory). */
static uint32_t new_func(struct symbols *s, const char *name, uint64_t start, int resolved)
{
	if (s->nfuncs == s->funccap) {
		uint32_t cap = s->funccap ? 2 * s->funccap : 256;
		struct func *f = realloc(s->funcs, cap * sizeof(*f));

		if (!f)
			return UINT32_MAX;
		s->funcs = f;
		s->funccap = cap;
	}
	struct func *f = &s->funcs[s->nfuncs];
	*f = (struct func){ strdup(name), start, resolved, 0, NULL };
	return f->name ? s->nfuncs++ : UINT32_MAX;
}

/*
 * The function named name: the first symbol of that name if one was seen, else a function
 * made for the name (an inlined function, or a synthetic frame). *made says which.
 */
static uint32_t named_func(struct symbols *s, const char *name, int *made)
{
	*made = 0;
	for (uint64_t h = str_hash(name);; h++) {	/* probe successive hashes past collisions */
		uint64_t *v = u64map_get(&s->name2func, h);

		if (!v)
			return UINT32_MAX;
		if (*v && strcmp(s->funcs[*v - 1].name, name))
			continue;
		if (!*v) {
			uint32_t id = new_func(s, name, 0, 1);

			if (id == UINT32_MAX)
				return UINT32_MAX;
			*v = id + 1u;
			*made = 1;
		}
		return (uint32_t)(*v - 1);
	}
}

/* Function id for a symbol at start, or for a raw address (sym NULL: named by its hex). */
static uint32_t func_for(struct symbols *s, uint64_t start, const char *sym)
{
	/* Raw keys are complemented so a raw address never collides with a symbol start. */
	uint64_t *v = u64map_get(&s->start2func, sym ? start : ~start);
	char hex[32];
	int made;

	if (!v)
		return UINT32_MAX;
	if (*v)
		return (uint32_t)(*v - 1);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, start);
	uint32_t id = new_func(s, sym ? sym : hex, start, sym != NULL);
	if (id == UINT32_MAX || (sym && named_func(s, sym, &made) == UINT32_MAX))
		return UINT32_MAX;	/* (named_func registers the name for inlined copies) */
	*v = id + 1u;
	if (sym && s->mod)
		symbol_decl(s, id, start);
	return id;
}

uint32_t sym_truncated(struct symbols *s)
{
	int made;
	uint32_t id = named_func(s, "[truncated]", &made);

	if (made)
		s->funcs[id].resolved = 0;
	return id;
}

uint32_t sym_synthetic(struct symbols *s, const char *name)
{
	int made;
	uint32_t id = named_func(s, name, &made);

	if (made && id != UINT32_MAX)
		s->funcs[id].resolved = 0;
	return id;
}

/* Room for n more frames in the chain pool. */
static int chain_room(struct symbols *s, size_t n)
{
	if (s->nchain + n <= s->chaincap)
		return 0;
	size_t cap = s->chaincap ? 2 * s->chaincap : 1024;
	while (cap < s->nchain + n)
		cap *= 2;
	struct frame *f = realloc(s->chains, cap * sizeof(*f));
	if (!f)
		return -1;
	s->chains = f;
	s->chaincap = cap;
	return 0;
}

/* The line of addr into *line (0 when DWARF does not say); 0, or -1 when out of memory. */
static int line_at(struct symbols *s, uint64_t addr, int *line)
{
	const char *file;
	int r = sym_line(s, addr, &file, line);

	if (r)
		*line = 0;
	return r < 0 ? -1 : 0;
}

/* Where DWARF says a function (subprogram or abstract origin) is declared, into f. */
static void set_decl(struct symbols *s, struct func *f, Dwarf_Die *die)
{
	const char *file = dwarf_decl_file(die);
	uint32_t fi = file ? intern_file(s, shorten(s, file)) : UINT32_MAX;
	int line = 0;

	if (fi == UINT32_MAX || dwarf_decl_line(die, &line) || line <= 0)
		return;
	f->decl_line = line;
	f->decl_file = s->files[fi];
}

/* The declaration of the function whose code is at addr, from its subprogram DIE. */
static void symbol_decl(struct symbols *s, uint32_t id, uint64_t addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(s->mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;

	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			set_decl(s, &s->funcs[id], &scopes[i]);
			break;
		}
	free(scopes);
}

/* An inlined subroutine's function: by the name of its abstract origin. */
static uint32_t inline_func(struct symbols *s, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &at));
	int made;

	if (!name)
		return UINT32_MAX - 1;		/* nameless: not a frame a user can use */
	uint32_t id = named_func(s, name, &made);

	if (made && id != UINT32_MAX)
		set_decl(s, &s->funcs[id], die);
	return id;
}

static int call_line(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Word w;

	return dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &at), &w) ? 0 : (int)w;
}

/*
 * Push the inlined frames at addr onto the pool, innermost first, and return how many; *outer
 * gets the line the outermost inlined one was inlined at (its caller's line). -1: no memory.
 * With s->no_inline none is pushed (0), and *outer is still the containing function's line.
 */
static int inline_frames(struct symbols *s, uint64_t addr, int *outer)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = s->mod ? dwfl_module_addrdie(s->mod, addr, &bias) : NULL;
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0, k = 0;

	if (line_at(s, addr, outer)) {
		free(scopes);
		return -1;
	}
	for (int i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (s->no_inline) {
			*outer = call_line(&scopes[i]);
			continue;
		}
		uint32_t id = inline_func(s, &scopes[i]);
		if (id == UINT32_MAX || chain_room(s, (size_t)k + 1) || k == 254) {
			free(scopes);
			return -1;
		}
		if (id != UINT32_MAX - 1)
			s->chains[s->nchain + k++] = (struct frame){ id, *outer };
		*outer = call_line(&scopes[i]);
	}
	free(scopes);
	return k;
}

/* Look addr up: the inlined frames, then the symbol's (or the raw address's) function. */
static int make_chain(struct symbols *s, uint64_t addr, uint64_t raw, uint32_t *n)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = s->mod ? dwfl_module_addrinfo(s->mod, addr, &off, &sym, NULL, NULL,
							  NULL) : NULL;
	int line = 0, k = name && *name ? inline_frames(s, addr, &line) : 0;
	uint32_t id;

	if (k < 0 || chain_room(s, (size_t)k + 1))
		return -1;
	if (name && *name)
		id = func_for(s, addr - off, name);
	else
		id = func_for(s, raw, NULL), line = 0;
	if (id == UINT32_MAX)
		return -1;
	s->chains[s->nchain + (size_t)k] = (struct frame){ id, line };
	*n = (uint32_t)k + 1;
	return 0;
}

uint32_t sym_frames(struct symbols *s, uint64_t addr, uint64_t raw, const struct frame **out)
{
	uint64_t *v = u64map_find(&s->addr2chain, addr);
	uint32_t n;

	if (!v) {
		size_t at = s->nchain;

		if (make_chain(s, addr, raw, &n) || !(v = u64map_get(&s->addr2chain, addr)))
			return 0;
		*v = (uint64_t)at << 8 | n;
		s->nchain += n;
	}
	*out = &s->chains[*v >> 8];
	return (uint32_t)(*v & 0xff);
}

uint32_t sym_leaf(struct symbols *s, uint64_t pc)
{
	const struct frame *f;

	return sym_frames(s, pc, pc, &f) ? f[0].fid : UINT32_MAX;
}

uint32_t sym_named(struct symbols *s, const char *name, uint64_t *lo, uint64_t *hi)
{
	int n = s->mod ? dwfl_module_getsymtab(s->mod) : 0;
	uint32_t found = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(s->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!nm || GELF_ST_TYPE(sym.st_info) != STT_FUNC || strcmp(nm, name))
			continue;
		if (!found++) {
			*lo = addr;
			*hi = addr + (sym.st_size ? sym.st_size : 1);
		}
	}
	return found;
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
		return 1;
	*file = s->files[(*v - 1) >> 32];
	*line = (int)(uint32_t)(*v - 1);
	return 0;
}

/* The frames of stack st, leaf first, into st->fids. 0 or -1 (no memory). */
static int resolve_stack(struct symbols *s, struct stack *st)
{
	uint32_t cap = st->naddr + 1u, n = 0;

	free(st->fids);
	st->fids = malloc(cap * sizeof(*st->fids));
	for (uint16_t j = 0; st->fids && j < st->naddr; j++) {
		uint64_t a = st->addr[j];
		const struct frame *f;
		uint32_t k = sym_frames(s, j && a ? a - 1 : a, a, &f);

		if (!k)
			return -1;
		if (n + k + 1 > cap) {
			uint32_t *nf = realloc(st->fids, (cap = 2 * (n + k + 1)) * sizeof(*nf));

			if (!nf)
				return -1;
			st->fids = nf;
		}
		for (uint32_t i = 0; i < k; i++)
			st->fids[n++] = f[i].fid;
	}
	if (!st->fids)
		return -1;
	if (st->cut && (st->fids[n++] = sym_truncated(s)) == UINT32_MAX)
		return -1;
	st->nfids = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
	return 0;
}

int sym_resolve(struct symbols *s, struct stacks *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (resolve_stack(s, t->list[i]))
			return -1;
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
	u64map_free(&s->addr2chain);
	u64map_free(&s->name2func);
	free(s->chains);
	u64map_free(&s->start2func);
	u64map_free(&s->addr2line);
	memset(s, 0, sizeof(*s));
}
