/*
 * ACPI tables, just enough to find the cores and the IOAPIC (RSDP -> XSDT or RSDT ->
 * MADT), soft-off (FADT, DSDT) and the HPET (its own table). Runs once on the boot core.
 * The tables are in the identity-mapped first 4 GiB.
 */
#include "arch_x86.h"
#include "arch.h"

struct rsdp {
	char sig[8];
	uint8_t checksum;
	char oem[6];
	uint8_t rev;
	uint32_t rsdt;
	uint32_t length;
	uint64_t xsdt;
	uint8_t xchecksum;
	uint8_t rsvd[3];
} __attribute__((packed));

struct sdt {
	char sig[4];
	uint32_t length;
	uint8_t rev, checksum;
	char oem[6], oem_table[8];
	uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));

struct madt {
	struct sdt h;
	uint32_t lapic_addr;
	uint32_t flags;
} __attribute__((packed));

#define MADT_LAPIC	0
#define MADT_IOAPIC	1
#define MADT_ISO	2
#define MADT_LAPIC_ADDR	5

struct acpi_info acpi;

static bool sum_ok(const void *p, size_t n)
{
	uint8_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += ((const uint8_t *)p)[i];
	return s == 0;
}

static struct sdt *find_table(struct rsdp *r, const char *sig)
{
	bool x = r->rev >= 2 && r->xsdt;
	struct sdt *root = (struct sdt *)(uintptr_t)(x ? r->xsdt : r->rsdt);
	size_t esz = x ? 8 : 4;
	size_t n = (root->length - sizeof(*root)) / esz;

	for (size_t i = 0; i < n; i++) {
		uint8_t *e = (uint8_t *)(root + 1) + i * esz;
		uint64_t a = x ? *(uint64_t *)e : *(uint32_t *)e;
		struct sdt *t = (struct sdt *)(uintptr_t)a;

		if (!memcmp(t->sig, sig, 4) && sum_ok(t, t->length))
			return t;
	}
	return NULL;
}

static void madt_entry(uint8_t *e)
{
	switch (e[0]) {
	case MADT_LAPIC: {
		uint32_t flags = *(uint32_t *)(e + 4);

		/* enabled, or online capable */
		if (!(flags & 3))
			break;
		acpi.lapics++;
		if (acpi.ncpus < MAX_CPUS)
			acpi.apic_ids[acpi.ncpus++] = e[3];
		break;
	}
	case MADT_IOAPIC:
		if (!acpi.ioapic_addr) {
			acpi.ioapic_addr = *(uint32_t *)(e + 4);
			acpi.ioapic_gsi_base = *(uint32_t *)(e + 8);
		}
		break;
	case MADT_ISO:
		if (e[3] < 16) {
			acpi.isa_gsi[e[3]] = *(uint32_t *)(e + 4);
			acpi.isa_flags[e[3]] = *(uint16_t *)(e + 8);
		}
		break;
	case MADT_LAPIC_ADDR:
		acpi.lapic_addr = *(uint64_t *)(e + 4);
		break;
	}
}

/*
 * Soft-off needs PM1a_CNT from the FADT and the S5 sleep type from the \_S5 package in
 * the DSDT's AML. We look for the bytes "_S5_" followed by a package (0x12) and take its
 * first element (a BytePrefix 0x0a value, or the Zero/One opcodes).
 */
static void fadt_init(struct rsdp *r)
{
	uint8_t *f = (uint8_t *)find_table(r, "FACP");
	struct sdt *dsdt;
	uint8_t *p, *end;

	if (!f)
		return;
	acpi.pm1a_cnt = *(uint32_t *)(f + 64);
	acpi.pm1b_cnt = *(uint32_t *)(f + 68);
	dsdt = (struct sdt *)(uintptr_t)*(uint32_t *)(f + 40);
	if (!dsdt || memcmp(dsdt->sig, "DSDT", 4))
		return;
	end = (uint8_t *)dsdt + dsdt->length;
	for (p = (uint8_t *)(dsdt + 1); p + 8 < end; p++) {
		if (memcmp(p, "_S5_", 4) || p[4] != 0x12)
			continue;
		p += 5;
		p += (*p >> 6) + 1;	/* PkgLength: 1 + the count of extra bytes */
		p++;			/* NumElements */
		acpi.s5_typ = *p == 0x0a ? p[1] : (*p == 0x01 ? 1 : 0);
		break;
	}
}

/*
 * The HPET table: after the header, the event timer block id (4 bytes), then the base
 * address as a Generic Address Structure (space id, bit width, bit offset, access size,
 * then the 64-bit address). Only a memory-space block is usable.
 */
static void hpet_table(struct rsdp *r)
{
	uint8_t *t = (uint8_t *)find_table(r, "HPET");

	if (!t || ((struct sdt *)t)->length < 56 || t[40] != 0)
		return;
	acpi.hpet_addr = *(uint64_t *)(t + 44);
}

void acpi_init(uintptr_t rsdp_addr)
{
	struct rsdp *r = (struct rsdp *)rsdp_addr;
	struct madt *m;

	for (int i = 0; i < 16; i++)
		acpi.isa_gsi[i] = i;
	if (!r || memcmp(r->sig, "RSD PTR ", 8))
		panic("acpi: no RSDP from the boot loader");
	m = (struct madt *)find_table(r, "APIC");
	if (!m)
		panic("acpi: no MADT");
	acpi.lapic_addr = m->lapic_addr;
	for (uint8_t *e = (uint8_t *)(m + 1); e < (uint8_t *)m + m->h.length; e += e[1]) {
		if (e[1] < 2)
			break;
		madt_entry(e);
	}
	fadt_init(r);
	hpet_table(r);
	if (acpi.ncpus == 0 || !acpi.ioapic_addr)
		panic("acpi: MADT lists %d cores and %s IOAPIC", acpi.ncpus,
		      acpi.ioapic_addr ? "an" : "no");
}
