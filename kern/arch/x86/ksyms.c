/*
 * The kernel's own symbol table, for backtraces. scripts/gensyms writes it at build time
 * from the first link (nm), as section .ksyms, which the linker script puts last so that
 * the second link moves nothing. Layout: u64 count, then count entries of
 * { u64 addr; u32 name offset; u32 size }, sorted by addr, then the NUL-terminated names.
 */
#include "arch_x86.h"
#include "arch.h"

struct ksym { uint64_t addr; uint32_t name; uint32_t size; };

extern char __ksyms_start[], __ksyms_end[];

bool ksym_lookup(uintptr_t pc, const char **name, uintptr_t *off)
{
	uint64_t n;
	const struct ksym *s;
	const char *names;
	size_t lo = 0, hi;

	if (__ksyms_end - __ksyms_start < 8)
		return false;
	n = *(uint64_t *)__ksyms_start;
	s = (const struct ksym *)(__ksyms_start + 8);
	names = (const char *)(s + n);
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
		return false;
	s += lo - 1;
	if (s->size && pc >= s->addr + s->size + 64)
		return false;
	*name = names + s->name;
	*off = pc - s->addr;
	return true;
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
