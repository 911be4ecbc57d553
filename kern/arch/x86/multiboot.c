/*
 * Multiboot2 boot information: the memory map feeds the page allocator and the ACPI RSDP
 * copy is kept for acpi.c. Runs once on the boot core before anything allocates. Memory
 * under 1 MiB (the AP trampoline lives there), the kernel image and the boot information
 * itself are never handed out.
 */
#include "arch_x86.h"
#include "arch.h"
#include "page.h"

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

/* Add [start, end) minus the hole [hs, he). */
static void add_minus(uint64_t start, uint64_t end, uint64_t hs, uint64_t he)
{
	if (end <= hs || start >= he) {
		page_add_region(start, end);
		return;
	}
	if (start < hs)
		page_add_region(start, hs);
	if (end > he)
		page_add_region(he, end);
}

static void add_ram(uint64_t start, uint64_t end, uint64_t mbi, uint64_t mbi_end)
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
		add_minus(start, end, mbi, mbi_end);
		return;
	}
	if (start < ks)
		add_minus(start, ks, mbi, mbi_end);
	if (end > ke)
		add_minus(ke, end, mbi, mbi_end);
}

void multiboot_parse(uint32_t mbi, struct mb_info *out)
{
	uint32_t total = *(uint32_t *)(uintptr_t)mbi;
	uint64_t mbi_end = ROUNDUP((uint64_t)mbi + total, PGSIZE);
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
	for (uint8_t *p = (uint8_t *)(mm + 1); p < (uint8_t *)mm + mm->size; p += mm->entry_size) {
		struct mb_mmap_entry *e = (struct mb_mmap_entry *)p;

		if (e->type == MMAP_AVAILABLE)
			add_ram(e->addr, e->addr + e->len, ROUNDDOWN((uint64_t)mbi, PGSIZE), mbi_end);
	}
}
