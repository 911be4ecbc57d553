/*
 * x86-64 instructions as inline functions. Only files under kern/arch/x86 include this.
 */
#ifndef X86_H
#define X86_H

#include "kernel.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c,
			 uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t read_cr2(void) { uint64_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint64_t read_rflags(void) { uint64_t v; __asm__ volatile("pushfq; popq %0" : "=r"(v)); return v; }
static inline uint64_t read_rbp(void) { uint64_t v; __asm__ volatile("mov %%rbp, %0" : "=r"(v)); return v; }
static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void pause(void) { __asm__ volatile("pause" ::: "memory"); }
/*
 * One more on a counter only its own core writes and any core may read (READ_ONCE): one
 * increment of the word in memory, whose store is whole (an aligned quadword), as
 * WRITE_ONCE(*p, *p + 1) but one instruction where that is a load, an add and a store.
 */
static inline void count_own(uint64_t *p) { __asm__ volatile("incq %0" : "+m"(*p)); }

#define RFLAGS_IF	0x200
#define MSR_GS_BASE	0xc0000101
#define MSR_APIC_BASE	0x1b
#define MSR_TSC_DEADLINE 0x6e0

/* Segment selectors of the GDT in gdt.c */
#define SEG_KCODE	0x08
#define SEG_KDATA	0x10
#define SEG_TSS		0x18

#endif
