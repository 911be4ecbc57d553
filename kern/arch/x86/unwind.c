/*
 * The first step of a frame-pointer backtrace, where rbp does not yet (or no longer, or
 * never) describe the interrupted function's own frame. Interrupt or NMI context, any core.
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

/*
 * One cached frameless-leaf answer per core: hot loops sample the same function. An NMI
 * may come in the middle of a timer-interrupt (or fault report) use of its core's cache
 * and use it too: busy marks such a use, and a nested one then looks the symbol up
 * without the cache, so neither sees a range of one function and the answer of another.
 */
static struct leaf_cache {
	uintptr_t start, end;	/* the function's range */
	bool leaf;
	bool busy;		/* in use on this core, by code an NMI may interrupt */
} caches[MAX_CPUS];

static bool in_text(uintptr_t pc)
{
	return pc >= (uintptr_t)__kernel_start && pc + 3 <= (uintptr_t)__rodata_start;
}

static bool cached_leaf(struct leaf_cache *c, uintptr_t pc)
{
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

static bool is_frameless_leaf(uintptr_t pc)
{
	struct leaf_cache *c = &caches[core_id()];
	uintptr_t start, end;
	bool leaf;

	if (c->busy)			/* we interrupted a use of the cache on this core */
		return ksym_frameless_leaf(pc, &start, &end);
	c->busy = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* same core: order against an NMI */
	leaf = cached_leaf(c, pc);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->busy = false;
	return leaf;
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
