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
 * Two cached frameless-leaf answers per core, a word each, the last used first: hot loops
 * sample the same function, and a sample elsewhere (the loop's caller, the idle thread)
 * does not evict it. An NMI may land in the middle of any use of its core's cache (a timer
 * interrupt's, a fault report's) and use it too; since each word is read once and written
 * once, whole, each use sees an answer of one function, never a range of one and the leaf
 * bit of another: at worst the NMI's answer replaces the interrupted one's, or a word is
 * in both places. A word holds the function's start (low 32 bits: the whole text lies
 * below 2 GiB -- kernel.ld links it at 1 MiB, and the default small code model would not
 * link it higher -- so they name it, and a pc's own low half compares with no subtraction),
 * its length (31 bits) and whether it is a frameless leaf (bit 32); 0 matches no pc.
 */
static uint64_t first[MAX_CPUS], second[MAX_CPUS];

/* w answers for the pc in the text whose low 32 bits are lo */
static inline bool cache_hit(uint64_t w, uint32_t lo)
{
	return lo - (uint32_t)w < (uint32_t)(w >> 33);
}

static bool in_text(uintptr_t pc)
{
	return pc >= (uintptr_t)__kernel_start && pc + 3 <= (uintptr_t)__rodata_start;
}

/*
 * A miss in both words: look the symbol up and remember its answer first, the other word
 * second (unknown pcs are not cached).
 */
static bool leaf_lookup(int id, uintptr_t pc)
{
	uintptr_t start, end;
	bool leaf = ksym_frameless_leaf(pc, &start, &end);

	if (end > start && pc >= start && pc < end && end - start < (1u << 31)) {
		WRITE_ONCE(second[id], READ_ONCE(first[id]));
		WRITE_ONCE(first[id], (uint64_t)(uint32_t)start |
			   (uint64_t)(end - start) << 33 | (uint64_t)leaf << 32);
	}
	return leaf;
}

/* The return address a frameless leaf's caller left at sp, if sp is a slot of the stack. */
static inline uintptr_t return_at(uintptr_t at, uintptr_t sp, uintptr_t lo, uintptr_t hi)
{
	if (sp < lo || sp + 16 > hi || (sp & 7))
		return 0;
	return *(const uintptr_t *)at;
}

/*
 * Not the first word's function, out of line and called last: the common path (the code
 * byte or the first word decides) then keeps its few values in scratch registers and saves
 * none. A hit in the second word makes it the first.
 */
static __noinline uintptr_t leaf_return(int id, uintptr_t pc, uintptr_t sp, uintptr_t lo,
					uintptr_t hi)
{
	uint64_t w = READ_ONCE(second[id]);
	bool leaf;

	if (cache_hit(w, (uint32_t)pc)) {
		WRITE_ONCE(second[id], READ_ONCE(first[id]));
		WRITE_ONCE(first[id], w);
		leaf = w >> 32 & 1;
	} else {
		leaf = leaf_lookup(id, pc);
	}
	return leaf ? return_at(sp, sp, lo, hi) : 0;
}

/*
 * The checks in order of cost: the code byte at pc (prologue, ret) and the cached leaf
 * answer decide whether there is a return address to read at all, and only then is the
 * stack pointer checked against the stack. pc is in the text, so the bytes at pc and just
 * before it can be read.
 */
static __force_inline uintptr_t unlinked_return(uintptr_t pc, uintptr_t sp, uintptr_t lo,
						       uintptr_t hi)
{
	const uint8_t *ip = (const uint8_t *)pc;
	uint64_t w;
	int id;

	if (!in_text(pc))
		return 0;
	if (ip[0] == 0x55 || ip[0] == 0xc3)		/* push %rbp; ret */
		return return_at(sp, sp, lo, hi);
	if (ip[0] == 0x48 && ip[1] == 0x89 && ip[2] == 0xe5 && pc > (uintptr_t)__kernel_start &&
	    ip[-1] == 0x55)				/* mov %rsp,%rbp after push %rbp */
		return return_at(sp + 8, sp, lo, hi);
	id = cpu_here()->id;
	w = READ_ONCE(first[id]);
	if (!cache_hit(w, (uint32_t)pc))
		return leaf_return(id, pc, sp, lo, hi);
	return w >> 32 & 1 ? return_at(sp, sp, lo, hi) : 0;	/* frameless leaf, cached */
}

uintptr_t arch_unlinked_return(uintptr_t pc, uintptr_t sp, uintptr_t lo, uintptr_t hi)
{
	return unlinked_return(pc, sp, lo, hi);
}

/* Once a sample: the check inlined, the results straight into the caller's record. */
uintptr_t arch_tf_where(const struct trapframe *tf, uintptr_t lo, uintptr_t hi, uintptr_t *pc,
			uintptr_t *fp)
{
	uintptr_t rip = tf->rip, sp = tf->rsp;	/* read once: the stores below may alias tf */

	*pc = rip;
	*fp = tf->rbp;
	return unlinked_return(rip, sp, lo, hi);
}
