/*
 * disasm.h: the instructions of an address range of the kernel ELF, as binutils' objdump
 * disassembles them (perf annotate reads objdump too), for --annotate (text/annotate.c).
 */
#ifndef OPREPORT_DISASM_H
#define OPREPORT_DISASM_H

#include <stddef.h>
#include <stdint.h>

struct insn {
	uint64_t addr;
	char text[112];		/* as objdump prints it ("mov    %edi,%eax"), cut to fit */
};

/*
 * The instructions in [lo, hi) of the ELF at path into *out (malloc'd; *n of them, in address
 * order). 0, or -1 with the reason in err: objdump missing or failing, no memory.
 */
int disasm_range(const char *path, uint64_t lo, uint64_t hi, struct insn **out, uint32_t *n,
		 char *err, size_t errlen);

#endif
