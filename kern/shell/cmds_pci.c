/*
 * The pci shell command: one line per function, lspci style, then its BARs:
 *
 *	00:03.0 1af4:1009 class 00:ff:00 irq 11 pin A  virtio 9p
 *	        bar0 io   0xc000 size 0x40
 */
#include "error.h"
#include "pci.h"
#include "shell.h"

static void bar_print(int i, struct pci_bar *b)
{
	static const char *const kind[] = { "", "io", "mem32", "mem64" };

	if (b->kind == BAR_NONE)
		return;
	shell_printf("        bar%d %-5s 0x%llx size 0x%llx%s\n", i, kind[b->kind],
		     (unsigned long long)b->base, (unsigned long long)b->size,
		     b->prefetch ? " prefetchable" : "");
}

static void dev_print(struct pci_dev *d)
{
	shell_printf("%02x:%02x.%x %04x:%04x class %02x:%02x:%02x", d->bus, d->dev, d->fn,
		     d->vendor, d->device, d->class, d->subclass, d->progif);
	if (d->irq_pin)
		shell_printf(" irq %d pin %c", d->irq_line, 'A' + d->irq_pin - 1);
	shell_printf("  %s\n", pci_name(d));
	for (int i = 0; i < PCI_NBAR; i++)
		bar_print(i, &d->bar[i]);
}

static int cmd_pci(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return -EINVAL;
	pci_scan();
	for (struct pci_dev *d = pci_first(); d; d = d->next)
		dev_print(d);
	return 0;
}
SHELL_CMD("pci", "pci", "list the PCI functions and their BARs", cmd_pci);
