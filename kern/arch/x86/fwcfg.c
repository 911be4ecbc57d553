/*
 * QEMU's firmware configuration device (fw_cfg, legacy I/O interface): named files the
 * QEMU command line can hand the guest (`-fw_cfg name=opt/...,string=...`), which is how
 * a test asks the kernel for a boot-time behaviour without a kernel command line (the
 * ISO's GRUB configuration is fixed). Boot core, boot time only: the selector is global
 * device state, so two users must not overlap.
 *
 * Interface: write a 16-bit key to the selector port, then read the item's bytes one at
 * a time from the data port. Key 0 holds the signature "QEMU"; key 0x19 the file
 * directory: a big-endian 32-bit count, then per file a big-endian 32-bit size, 16-bit
 * key, 16 reserved bits and a 56-byte NUL-terminated name.
 */
#include "x86.h"
#include "arch_x86.h"

#define FWCFG_SEL	0x510
#define FWCFG_DATA	0x511
#define KEY_SIGNATURE	0x0000
#define KEY_FILE_DIR	0x0019

static void read_bytes(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n--)
		*p++ = inb(FWCFG_DATA);
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/*
 * Copy the file called name into buf (at most len - 1 bytes, NUL-terminated). Returns
 * the file's length, or -1 when there is no fw_cfg device or no such file.
 */
int fwcfg_read_file(const char *name, char *buf, size_t len)
{
	uint8_t sig[4], e[64];
	uint32_t n, size;

	outw(FWCFG_SEL, KEY_SIGNATURE);
	read_bytes(sig, 4);
	if (memcmp(sig, "QEMU", 4))
		return -1;
	outw(FWCFG_SEL, KEY_FILE_DIR);
	read_bytes(e, 4);
	n = be32(e);
	for (uint32_t i = 0; i < n; i++) {
		read_bytes(e, sizeof(e));
		e[63] = 0;
		if (strcmp((char *)e + 8, name))
			continue;
		size = be32(e);
		outw(FWCFG_SEL, (uint16_t)(e[4] << 8 | e[5]));
		read_bytes(buf, MIN(size, len - 1));
		buf[MIN(size, len - 1)] = 0;
		return (int)size;
	}
	return -1;
}
