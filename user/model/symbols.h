/*
 * symbols.h: address -> function and address -> source line for the kernel ELF, through
 * elfutils (libdwfl); opreport.c opens it and resolves the stacks, the reports look up lines.
 * Every lookup is cached per unique address. Without an ELF, every address is its own
 * "function" named by its hex value.
 */
#ifndef OPREPORT_SYMBOLS_H
#define OPREPORT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/stacks.h"
#include "util/u64map.h"

struct func {
	char *name;
	uint64_t start;		/* symbol address, or the raw address when unsymbolized */
	int resolved;		/* 1 if named by a symbol */
	int decl_line;		/* an inlined function's declaration line (0: see start) */
	const char *decl_file;	/* and file (interned; NULL: see start) */
};

/* One frame of a lookup address: a function and the line in it, innermost first. */
struct frame {
	uint32_t fid;
	int32_t line;		/* 0: not known */
};

struct symbols {
	void *dwfl;		/* Dwfl *, NULL without an ELF */
	void *mod;		/* Dwfl_Module * */
	char *path;		/* the ELF opened, for messages and pprof */
	uint64_t low, high;	/* address range of the module */
	struct func *funcs;
	uint32_t nfuncs, funccap;
	struct u64map addr2chain;	/* lookup address -> chain offset << 8 | length */
	struct u64map start2func;	/* func start (or raw address) -> func id + 1 */
	struct u64map name2func;	/* name hash (+ probe) -> func id + 1, by name */
	struct frame *chains;		/* the frames of every looked-up address */
	size_t nchain, chaincap;
	struct u64map addr2line;	/* lookup address -> file id << 32 | line, +1 */
	char **files;		/* interned source file names (shortened) */
	uint32_t nfiles;
	char cwd[4096];
	int no_inline;		/* set after sym_open, before any lookup: no inlined frames, each
				   address in its containing function (opreport --no-inline) */
};

/* Open path. Returns 0; 1 when the ELF cannot be read or loaded, the reason in err; -1 when
 * out of memory. After a failure the symbols are unusable: call sym_init_raw. */
int sym_open(struct symbols *s, const char *path, char *err, size_t errlen);

/* Set up for raw addresses only. Returns 0 or -1 (out of memory). */
int sym_init_raw(struct symbols *s);

/* Build-id of the ELF (pointer and length), length 0 if none or no ELF. */
size_t sym_build_id(struct symbols *s, const uint8_t **id);

/*
 * The frames at a lookup address addr (a pc, or a return address minus 1), innermost first:
 * the functions inlined there (from DWARF's inline scopes), then the function whose symbol
 * covers addr, each with its line (the innermost's from the line table, each outer one's the
 * line it called or inlined the inner one from). With no_inline, the containing function
 * alone, at the line the outermost inlined code was inlined from (its own line where
 * none is). raw is the address as recorded, which names
 * the function when no symbol covers addr. Returns the count (at least 1) with *out valid
 * until the next lookup, or 0 when out of memory.
 */
uint32_t sym_frames(struct symbols *s, uint64_t addr, uint64_t raw, const struct frame **out);

/* The innermost function at a sampled pc. UINT32_MAX only on out of memory. */
uint32_t sym_leaf(struct symbols *s, uint64_t pc);

/* The synthetic root of samples whose backtrace was cut. UINT32_MAX on out of memory. */
uint32_t sym_truncated(struct symbols *s);
/* The function id of a synthetic frame named name (an off-CPU reason), made if new. */
uint32_t sym_synthetic(struct symbols *s, const char *name);

/* The function symbol named name (the ELF's symbol table): its address range [*lo, *hi).
 * Returns how many function symbols have that name (0: none, or no ELF). */
uint32_t sym_named(struct symbols *s, const char *name, uint64_t *lo, uint64_t *hi);

/* Source file and line of a lookup address; returns 0, 1 when DWARF does not say, or -1 when
 * out of memory. */
int sym_line(struct symbols *s, uint64_t addr, const char **file, int *line);

/* Fill stack->fids for every stack: the frames of the pc as is and of the return addresses
 * as (addr - 1), then "[truncated]" for a stack whose backtrace was cut. 0 or -1 (no memory). */
int sym_resolve(struct symbols *s, struct stacks *t);

void sym_close(struct symbols *s);

#endif
