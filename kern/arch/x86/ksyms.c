/*
 * The kernel's own symbol table, for backtraces. scripts/gensyms writes it at build time
 * from the first link (nm), as section .ksyms, which the linker script puts last so that
 * the second link moves nothing. Layout: u64 count, then count entries of
 * { u64 addr; u32 name offset; u32 size | KSYM_LEAF }, sorted by addr, then the
 * NUL-terminated names. KSYM_LEAF marks a frameless leaf (see scripts/gensyms).
 */
#include "arch_x86.h"
#include "arch.h"

struct ksym { uint64_t addr; uint32_t name; uint32_t size; };
#define KSYM_LEAF	0x80000000u
#define KSYM_SIZE	0x7fffffffu

extern char __ksyms_start[], __ksyms_end[];

/* The symbol containing pc, or NULL. Any context (reads only the table). */
static const struct ksym *ksym_find(uintptr_t pc)
{
	uint64_t n;
	const struct ksym *s;
	size_t lo = 0, hi;

	if (__ksyms_end - __ksyms_start < 8)
		return NULL;
	n = *(uint64_t *)__ksyms_start;
	s = (const struct ksym *)(__ksyms_start + 8);
	hi = n;
	/* last symbol with addr <= pc */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s += lo - 1;
	if ((s->size & KSYM_SIZE) && pc >= s->addr + (s->size & KSYM_SIZE) + 64)
		return NULL;
	return s;
}

bool ksym_lookup(uintptr_t pc, const char **name, uintptr_t *off)
{
	const struct ksym *s = ksym_find(pc);
	uint64_t n;

	if (!s)
		return false;
	n = *(uint64_t *)__ksyms_start;
	*name = (const char *)((const struct ksym *)(__ksyms_start + 8) + n) + s->name;
	*off = pc - s->addr;
	return true;
}

/* pc is inside a function that never links a frame nor moves %rsp. */
bool ksym_frameless_leaf(uintptr_t pc, uintptr_t *start, uintptr_t *end)
{
	const struct ksym *s = ksym_find(pc);

	if (!s)
		return false;
	*start = s->addr;
	*end = s->addr + (s->size & KSYM_SIZE);
	return s->size & KSYM_LEAF;
}

/* The GNU build-id note, which the linker script keeps at __build_id_note. */
extern char __build_id_note[];

const uint8_t *kernel_build_id(size_t *len)
{
	uint32_t *n = (uint32_t *)__build_id_note;	/* namesz, descsz, type, "GNU\0" */

	if (n[2] != 3 || n[0] != 4) {
		*len = 0;
		return NULL;
	}
	*len = n[1];
	return (const uint8_t *)(n + 4);
}
