/*
 * Multiboot2 boot information: the memory map is kept for the page allocator, which asks
 * for it (arch_mem_foreach), and the ACPI RSDP copy for acpi.c. multiboot_parse runs once
 * on the boot core before anything allocates. Memory under 1 MiB (the AP trampoline lives
 * there), the kernel image and the boot information itself are never handed out.
 */
#include "arch_x86.h"
#include "arch.h"

#define TAG_END		0
#define TAG_CMDLINE	1
#define TAG_MMAP	6
#define TAG_ACPI_OLD	14
#define TAG_ACPI_NEW	15
#define MMAP_AVAILABLE	1

struct mb_tag { uint32_t type, size; };
struct mb_mmap { uint32_t type, size, entry_size, entry_version; };
struct mb_mmap_entry { uint64_t addr, len; uint32_t type, zero; };

extern char __kernel_start[], __kernel_end[];
static uint8_t rsdp_copy[64] __aligned(16);

#define MAX_RAM		32

/* Available RAM as the memory map listed it, and the boot information's own pages. */
static struct { uint64_t start, end; } ram[MAX_RAM];
static int nram;
static uint64_t mbi_start, mbi_end;

typedef void (*range_fn)(uintptr_t start, uintptr_t end);

/* fn([start, end) minus the hole [hs, he)). */
static void give_minus(range_fn fn, uint64_t start, uint64_t end, uint64_t hs, uint64_t he)
{
	if (end <= hs || start >= he) {
		fn(start, end);
		return;
	}
	if (start < hs)
		fn(start, hs);
	if (end > he)
		fn(he, end);
}

/* fn(each part of [start, end) that is neither low memory, the kernel nor the boot info). */
static void give_ram(range_fn fn, uint64_t start, uint64_t end)
{
	uint64_t ks = (uintptr_t)__kernel_start, ke = (uintptr_t)__kernel_end;

	if (end > (1ull << 32))
		end = 1ull << 32;	/* only the first 4 GiB is mapped */
	if (start < 0x100000)
		start = 0x100000;
	if (start >= end)
		return;
	/* cut the kernel, then the boot info, out of the range */
	if (end <= ks || start >= ke) {
		give_minus(fn, start, end, mbi_start, mbi_end);
		return;
	}
	if (start < ks)
		give_minus(fn, start, ks, mbi_start, mbi_end);
	if (end > ke)
		give_minus(fn, ke, end, mbi_start, mbi_end);
}

void arch_mem_foreach(void (*fn)(uintptr_t start, uintptr_t end))
{
	for (int i = 0; i < nram; i++)
		give_ram(fn, ram[i].start, ram[i].end);
}

void multiboot_parse(uint32_t mbi, struct mb_info *out)
{
	uint32_t total = *(uint32_t *)(uintptr_t)mbi;
	struct mb_tag *t;
	struct mb_mmap *mm = NULL;

	out->rsdp = 0;
	out->cmdline[0] = 0;
	for (t = (struct mb_tag *)(uintptr_t)(mbi + 8); t->type != TAG_END;
	     t = (struct mb_tag *)((uintptr_t)t + ROUNDUP(t->size, 8))) {
		switch (t->type) {
		case TAG_CMDLINE:
			strlcpy(out->cmdline, (char *)(t + 1), sizeof(out->cmdline));
			break;
		case TAG_MMAP:
			mm = (struct mb_mmap *)t;
			break;
		case TAG_ACPI_OLD:
		case TAG_ACPI_NEW:
			if (!out->rsdp || t->type == TAG_ACPI_NEW) {
				memcpy(rsdp_copy, t + 1, MIN(t->size - 8, sizeof(rsdp_copy)));
				out->rsdp = (uintptr_t)rsdp_copy;
			}
			break;
		}
	}
	if (!mm)
		panic("multiboot: no memory map");
	mbi_start = ROUNDDOWN((uint64_t)mbi, PGSIZE);
	mbi_end = ROUNDUP((uint64_t)mbi + total, PGSIZE);
	for (uint8_t *p = (uint8_t *)(mm + 1); p < (uint8_t *)mm + mm->size; p += mm->entry_size) {
		struct mb_mmap_entry *e = (struct mb_mmap_entry *)p;

		if (e->type != MMAP_AVAILABLE)
			continue;
		if (nram == MAX_RAM) {
			printk("multiboot: more than %d RAM ranges; ignoring the rest\n", MAX_RAM);
			break;
		}
		ram[nram].start = e->addr;
		ram[nram++].end = e->addr + e->len;
	}
}
