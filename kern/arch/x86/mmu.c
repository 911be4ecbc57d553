/*
 * Holes in the identity map. boot.S maps the first 4 GiB with 2 MiB pages; a page that must
 * fault (page 0, so that a NULL dereference faults in kernel and app code alike; the guard
 * page below each app stack) needs its 2 MiB page split into 4 KiB ones first.
 *
 * mmu_init: boot core, once, before other cores start (they share boot_pml4 and load it
 * fresh). arch_page_unmap/arch_page_map: thread context. A split keeps every translation
 * as it was, so other cores' TLB entries for the 2 MiB page stay right; unmapping flushes
 * only this core's TLB, so a core that cached the 2 MiB entry may still reach the page:
 * the thread whose guard it is flushes it on its own core (arch_page_flush) before use.
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"
#include "lock.h"

#define PTE_P		0x1ull
#define PTE_W		0x2ull
#define PTE_PS		0x80ull
#define PTE_ADDR	0x000ffffffffff000ull

static uint64_t low_pt[512] __aligned(PGSIZE);	/* the first 2 MiB, split at boot */
static struct spinlock mmu_lock = SPINLOCK_INIT("mmu");

static inline void invlpg(uintptr_t va)
{
	__asm__ volatile("invlpg (%0)" :: "r"(va) : "memory");
}

/* The page-directory entry that maps va (below 4 GiB: identity-mapped tables). */
static uint64_t *pd_entry(uintptr_t va)
{
	uint64_t *pml4 = (uint64_t *)(read_cr3() & PTE_ADDR);
	uint64_t *pdpt = (uint64_t *)(pml4[(va >> 39) & 511] & PTE_ADDR);
	uint64_t *pd = (uint64_t *)(pdpt[(va >> 30) & 511] & PTE_ADDR);

	return &pd[(va >> 21) & 511];
}

/*
 * The 4 KiB entry for va, splitting its 2 MiB page if needed into the page *spare, which
 * is then taken (*spare = NULL; page tables are never given back: one per 2 MiB at most).
 */
static uint64_t *pte_of(uintptr_t va, void **spare)
{
	uint64_t *pde = pd_entry(va), *pt;

	if (*pde & PTE_PS) {
		uint64_t base = *pde & ~(uint64_t)(PGSIZE - 1) & PTE_ADDR;

		if (!spare || !(pt = *spare))
			return NULL;
		*spare = NULL;
		for (int i = 0; i < 512; i++)
			pt[i] = (base + (uint64_t)i * PGSIZE) | PTE_P | PTE_W;
		__atomic_store_n(pde, (uintptr_t)pt | PTE_P | PTE_W, __ATOMIC_RELEASE);
		invlpg(va);
	}
	return &((uint64_t *)(*pde & PTE_ADDR))[(va >> 12) & 511];
}

void mmu_init(void)
{
	void *spare = low_pt;
	uint64_t *pte = pte_of(0, &spare);

	*pte = 0;
	invlpg(0);
}

int arch_page_unmap(uintptr_t va, void **spare)
{
	uint64_t *pte;

	spin_lock(&mmu_lock);
	pte = pte_of(va, spare);
	if (pte) {
		*pte &= ~PTE_P;
		invlpg(va);
	}
	spin_unlock(&mmu_lock);
	return pte ? 0 : -1;
}

/* Undo arch_page_unmap(va). */
void arch_page_map(uintptr_t va)
{
	uint64_t *pte;

	spin_lock(&mmu_lock);
	pte = pte_of(va, NULL);		/* NULL: never split, so mapped */
	if (pte)
		*pte |= PTE_P;
	invlpg(va);
	spin_unlock(&mmu_lock);
}

void arch_page_flush(uintptr_t va) { invlpg(va); }
