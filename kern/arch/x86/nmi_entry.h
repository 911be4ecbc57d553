/*
 * What the NMI vector's entry (trapentry.S: nmi_entry) and nmi.c share: the layout of the
 * record at the top of a core's NMI stack and of its counters, the constants the entry
 * tests, and the state it reads. Included by trapentry.S (only the numbers) and nmi.c,
 * which checks every number against the C definitions (static assertions).
 */
#ifndef NMI_ENTRY_H
#define NMI_ENTRY_H

#define NMI_TOP_MAGIC		0x4e4d4931	/* "NMI1" */

/* struct nmi_top, from its start (IST2 points there) */
#define NMI_TOP_CORE		4
#define NMI_TOP_CPU		8
#define NMI_TOP_SAVE_RAX	16	/* the entry's two scratch registers */
#define NMI_TOP_SAVE_RDX	24
#define NMI_TOP_SIZE		32

/* struct nmi_cpu */
#define NMI_CPU_COUNT		0
#define NMI_CPU_IRQOFF		8
#define NMI_CPU_EXTRA		24
#define NMI_CPU_IN_FN		32
#define NMI_CPU_DEPTH		36
#define NMI_CPU_NEXT_PERIOD	40

#define NMI_FAN_NONE		0	/* enum fanout's FAN_NONE */
#define NMI_RFLAGS_IF		0x200	/* x86.h's RFLAGS_IF */
#define NMI_HPET_MAIN_LO	0x0f0	/* arch_x86.h's HPET_MAIN_LO */
#define NMI_T_NMI		2	/* arch_x86.h's T_NMI */

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

struct trapframe;
extern bool nmi_quiet;			/* a panic is under way */
extern int nmi_fanout;			/* enum fanout: NMI_FAN_NONE when no source runs */
void nmi_period(struct trapframe *tf, uint32_t late);
#endif

#endif
