/*
 * Per-core GDT and TSS. Ring 0 only, so the TSS exists just for its interrupt stacks:
 * IST1, the double fault's own small stack, so a kernel stack overflow still gets a
 * report; IST2, the NMI's (nmi.c), so an NMI never runs on, or depends on, the stack it
 * interrupted, and its handler finds its core at the top of that stack; IST3, the page
 * fault's, so that an app's stack overflow into its guard page is reported (the CPU would
 * otherwise push the fault's frame into the guard: a double fault).
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"

struct tss {
	uint32_t rsvd0;
	uint64_t rsp[3];
	uint64_t rsvd1;
	uint64_t ist[7];
	uint64_t rsvd2;
	uint16_t rsvd3;
	uint16_t iomap;
} __attribute__((packed));

struct gdt {
	uint64_t null, kcode, kdata;
	uint64_t tss_lo, tss_hi;
} __aligned(16);

#define DF_STACK 4096

static struct gdt gdts[MAX_CPUS];
static struct tss tsss[MAX_CPUS];
static uint8_t df_stacks[MAX_CPUS][DF_STACK] __aligned(16);
#define PF_STACK 8192
static uint8_t pf_stacks[MAX_CPUS][PF_STACK] __aligned(16);

void gdt_init_cpu(int core)
{
	struct gdt *g = &gdts[core];
	struct tss *t = &tsss[core];
	uintptr_t base = (uintptr_t)t;
	uint64_t lim = sizeof(*t) - 1;

	t->ist[0] = (uintptr_t)&df_stacks[core][DF_STACK];
	t->ist[1] = nmi_stack_top(core);
	t->ist[2] = (uintptr_t)&pf_stacks[core][PF_STACK];
	t->iomap = sizeof(*t);
	g->null = 0;
	g->kcode = 0x00af9a000000ffffull;
	g->kdata = 0x00cf92000000ffffull;
	g->tss_lo = (lim & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
		    (((lim >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	g->tss_hi = base >> 32;

	struct { uint16_t lim; uint64_t base; } __attribute__((packed)) d = {
		sizeof(*g) - 1, (uintptr_t)g
	};
	__asm__ volatile(
		"lgdt %0\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"movw %2, %%ax\n\t"
		"movw %%ax, %%ds\n\t"
		"movw %%ax, %%es\n\t"
		"movw %%ax, %%ss\n\t"
		"ltr %w3"
		:: "m"(d), "i"(SEG_KCODE), "i"(SEG_KDATA), "r"(SEG_TSS) : "rax", "memory");
}
