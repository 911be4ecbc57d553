/*
 * The first step of a frame-pointer backtrace, where rbp does not yet (or no longer, or
 * never) describe the interrupted function's own frame. Interrupt context, any core.
 *
 * A sampled pc may be at a function's first instruction (push %rbp not done), at the
 * mov %rsp,%rbp right after it, at a ret, or anywhere in a frameless leaf (the build
 * marks those; see scripts/gensyms). In each case rbp still names the caller's frame, so
 * a plain walk would skip the caller; its return address is instead on the stack at sp
 * (or sp + 8 after the push). Reads are bounds-checked against the stack [lo, hi), and
 * the code bytes at pc are read only inside the kernel's text.
 */
#include "arch.h"
#include "arch_x86.h"
#include "cpu.h"

extern char __kernel_start[], __rodata_start[];

/* One cached frameless-leaf answer per core: hot loops sample the same function. */
static struct leaf_cache {
	uintptr_t start, end;	/* the function's range */
	bool leaf;
} caches[MAX_CPUS];

static bool in_text(uintptr_t pc)
{
	return pc >= (uintptr_t)__kernel_start && pc + 3 <= (uintptr_t)__rodata_start;
}

static bool is_frameless_leaf(uintptr_t pc)
{
	struct leaf_cache *c = &caches[core_id()];

	if (pc < c->start || pc >= c->end) {
		if (!ksym_frameless_leaf(pc, &c->start, &c->end)) {
			c->leaf = false;
			if (c->end <= c->start)
				c->end = c->start = 0;
			return false;
		}
		c->leaf = true;
	}
	return c->leaf;
}

uintptr_t arch_unlinked_return(uintptr_t pc, uintptr_t sp, uintptr_t lo, uintptr_t hi)
{
	const uint8_t *ip = (const uint8_t *)pc;
	uintptr_t at;

	if (!in_text(pc) || sp < lo || sp + 16 > hi || (sp & 7))
		return 0;
	if (ip[0] == 0x55 || ip[0] == 0xc3)		/* push %rbp; ret */
		at = sp;
	else if (ip[0] == 0x48 && ip[1] == 0x89 && ip[2] == 0xe5 && pc > (uintptr_t)__kernel_start &&
		 ip[-1] == 0x55)			/* mov %rsp,%rbp after push %rbp */
		at = sp + 8;
	else if (is_frameless_leaf(pc))
		at = sp;
	else
		return 0;
	return *(const uintptr_t *)at;
}
