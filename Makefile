# The front door. `make` builds the kernel ELF (build/kernel.elf, symbols and a GNU
# build-id kept), the bootable ISO (build/kern.iso) and the host tools (user/opreport).
# `make qemu`, `make qemu-gdb`, `make test`, `make bench`, `make fuzz`, `make mutants`.
# CROSS is a toolchain prefix (e.g. CROSS=x86_64-elf-); the host gcc works as it is.
CROSS ?=
CC := $(CROSS)gcc
LD := $(CROSS)ld
NM := $(CROSS)nm
B := build
NCPU ?= $(shell n=$$(nproc); echo $$((n < 4 ? n : 4)))
MEM ?= 512M
ACCEL ?= tcg

KCFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pie -fno-pic -fno-stack-protector \
	-mno-red-zone -mgeneral-regs-only -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-asynchronous-unwind-tables -fno-common \
	-Wall -Wextra -Werror -Wno-unused-parameter -Wmissing-prototypes -Ikern/include -MMD -MP
# Apps (make APPS="dir1 dir2", scripts/applink) and their C library (libc/): compiled for
# ordinary programs (SSE and x87 allowed, their own headers), yet the kernel's ABI: no red
# zone (interrupts use the same stack), frame pointers (profiles' call graphs), probes of
# every stack page (so that a large local array hits the guard page below the stack).
APPS ?=
APP_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -nostdinc -isystem libc/include -fno-pie -fno-pic \
	-fno-stack-protector -mno-red-zone -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-asynchronous-unwind-tables -fno-common \
	-fstack-clash-protection -fno-math-errno -Wall -Werror=implicit-function-declaration
# libc/ itself: no memcpy or memset calls made up by the compiler (it defines them)
LIBC_CFLAGS := $(APP_CFLAGS) -Wextra -Werror -fno-tree-loop-distribute-patterns
LIBC_SRCS := $(addprefix libc/src/, string.c ctype.c printf.c fmtfloat.c stdio.c stdlib.c \
	strto.c time.c math.c setjmp.S)
LIBC_OBJS := $(patsubst %,$(B)/%.o,$(basename $(LIBC_SRCS)))
KASFLAGS := -Ikern/include -Ikern/arch/x86 -MMD -MP
KLDFLAGS := -n -nostdlib -T kern/arch/x86/kernel.ld --build-id=sha1 -z max-page-size=4096 \
	-z noexecstack --no-warn-rwx-segments

# The layers, bottom up. A file includes headers of its own layer and those below it
# (kern/include holds them all); only kern/arch sees the arch's private headers.
# arch: boot, traps, interrupt controllers, clocks, other cores (implements arch.h)
ARCH_SRCS := $(addprefix kern/arch/x86/, boot.S trampoline.S trapentry.S swtch.S main.c \
	fpu.c mmu.c appctx.S appfault.c uart.c cpu.c gdt.c trap.c multiboot.c acpi.c lapic.c \
	ioapic.c hpet.c nmi.c fwcfg.c tsc.c machine.c smp.c ksyms.c thread_x86.c unwind.c io.c \
	pci_x86.c crashport.c turns.c)
# portable core: the C library, memory, threads and time, blocks and I/O, files
CORE_SRCS := $(addprefix kern/src/lib/, printf.c string.c parse.c errstr.c panic.c) \
	$(addprefix kern/src/mem/, page.c kmalloc.c) \
	$(addprefix kern/src/thread/, spinlock.c qlock.c rendez.c sched.c schedev.c alarm.c) \
	$(addprefix kern/src/io/, block.c qio.c cons.c) \
	$(addprefix kern/src/fs/, ns.c devtab.c ramfs.c devcons.c devrandom.c)
# the profiler: its portable core (also built for the host tests, tests/host/oprofile.mk,
# which asks `make print-OPROF_PORTABLE`) and the kernel-only files that tie it to the
# kernel (the sampling source, the hooks and worker thread, the device files, the crash
# recorder, its dump and the NMI watchdog)
OPROF_PORTABLE := $(addprefix kern/src/oprofile/, hotpath.c ring.c budget.c flight.c opcore.c \
	encode.c stream.c clock.c pool.c worker.c session.c ctl.c reader.c stat.c backtrace.c \
	sched_events.c top.c)
OPROF_KERNEL := $(addprefix kern/src/oprofile/, sampler.c glue.c devoprofile.c crashrec.c \
	crashdump.c watchdog.c)
OPROF_SRCS := $(OPROF_PORTABLE) $(OPROF_KERNEL)
# drivers: PCI, virtio, the 9P client and its device
DRIVER_SRCS := $(addprefix kern/drivers/, pci.c virtio_pci.c ninep.c dev9p.c)
# the shell and its commands (the kernel's user interface: nothing below uses it), the
# built-in workloads, benchmark-only code, and init, which wires every layer together
SHELL_SRCS := $(addprefix kern/shell/, shell.c cmds_sys.c cmds_fs.c cmds_thread.c \
	cmds_oprofile.c cmds_dd.c cmds_pci.c cmds_9p.c cmds_crash.c)
APP_SRCS := kern/apps/workloads.c kern/apps/split.c kern/apps/alias.c kern/apps/lockcost.c \
	kern/apps/iowrite.c kern/apps/wakewait.c kern/apps/app.c kern/apps/appheap.c
BENCH_SRCS := $(addprefix kern/bench/, baseline.c opbench.c)
INIT_SRCS := $(addprefix kern/init/, init.c init_late.c)
KSRCS := $(ARCH_SRCS) $(CORE_SRCS) $(OPROF_SRCS) $(DRIVER_SRCS) $(SHELL_SRCS) $(APP_SRCS) \
	$(BENCH_SRCS) $(INIT_SRCS)
KOBJS := $(patsubst %,$(B)/%.o,$(basename $(KSRCS))) $(LIBC_OBJS) $(B)/apps/apps.o

all: $(B)/kernel.elf $(B)/kern.iso user

# V=1 shows the commands
Q := $(if $(V),,@)

# the arch's private headers (x86.h, arch_x86.h) are visible to kern/arch only
$(B)/kern/arch/%.o: KCFLAGS += -Ikern/arch/x86

$(B)/libc/%.o: libc/%.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC $<")
	$(Q)$(CC) $(LIBC_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libc/%.o: libc/%.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -MMD -MP -c $< -o $@

# every build: scripts/applink replaces apps.o only when the apps changed
$(B)/apps/apps.o: FORCE scripts/applink $(filter-out $(B)/apps/apps.o,$(KOBJS))
	$(Q)CC="$(CC)" LD="$(LD)" NM="$(NM)" OBJCOPY="$(CROSS)objcopy" APP_CFLAGS="$(APP_CFLAGS)" \
		KCFLAGS="$(filter-out -MMD -MP,$(KCFLAGS))" \
		scripts/applink $(B)/apps "$(APPS)" $(filter-out $(B)/apps/apps.o,$(KOBJS))

FORCE:

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC $<")
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

$(B)/%.o: %.S
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  AS $<")
	$(Q)$(CC) $(KASFLAGS) -c $< -o $@

# Two links: the first gives the addresses for the symbol table (.ksyms), which the
# linker script places last, so the second link moves no other symbol (checked).
$(B)/kernel.0.elf: $(KOBJS) kern/arch/x86/kernel.ld
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS)

$(B)/ksyms.S: $(B)/kernel.0.elf scripts/gensyms
	$(Q)scripts/gensyms $< $@

$(B)/ksyms.o: $(B)/ksyms.S
	$(Q)$(CC) -c $< -o $@

# Every kernel linked is kept by its build-id: build/kernels/ID.elf, and the user's build-id
# cache ($$PERF_BUILDID_DIR or ~/.debug, as perf record keeps what it profiled) unless
# BUILDID_CACHE=0. A profile carries the build-id of the kernel that made it, and opreport
# finds that kernel there after any rebuild (user/model/kstore.h).
BUILDID_CACHE ?= 1
$(B)/kernel.elf: $(B)/kernel.0.elf $(B)/ksyms.o
	@$(if $(V),,echo "  LD $@")
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(B)/ksyms.o
	@$(NM) -n $(B)/kernel.0.elf | grep -v __ksyms | grep -v __kernel_end > $(B)/syms.0
	@$(NM) -n $@ | grep -v __ksyms | grep -v __kernel_end > $(B)/syms.1
	@cmp -s $(B)/syms.0 $(B)/syms.1 || { echo "kernel.elf: symbols moved between links"; exit 1; }
	$(Q)$(MAKE) -s -C user opreport
	@$(if $(V),,echo "  KEEP build/kernels/$$(readelf -n $@ | awk '/Build ID/ { print $$3 }').elf")
	$(Q)user/opreport --add-kernel $@ $(if $(filter 0,$(BUILDID_CACHE)),--no-buildid-cache)

$(B)/kern.iso: $(B)/kernel.elf scripts/grub.cfg
	@mkdir -p $(B)/iso/boot/grub
	$(Q)cp $(B)/kernel.elf $(B)/iso/boot/kernel.elf
	$(Q)cp scripts/grub.cfg $(B)/iso/boot/grub/grub.cfg
	@$(if $(V),,echo "  ISO $@")
	$(Q)grub-mkrescue -o $@ $(B)/iso 2>/dev/null

user:
	$(MAKE) -s -C user

# `make print-VAR`: the value of a variable, for other makefiles (tests/host)
print-%:
	@echo '$($*)'

kernel: $(B)/kernel.elf

deps:
	scripts/deps

qemu: all
	scripts/qemu

qemu-gdb: all
	@echo "set confirm off" > .gdbinit
	@echo "file $(B)/kernel.elf" >> .gdbinit
	@echo "target remote localhost:1234" >> .gdbinit
	@echo "QEMU waits for gdb: run 'gdb' in this directory (.gdbinit connects)"
	scripts/qemu -s -S

test: deps
	$(MAKE) all
	$(MAKE) -s -C tests/host
	tests/run '$(T)'

bench: deps
	$(MAKE) all
	tests/bench/run

fuzz: deps
	$(MAKE) -C user fuzz

# each deliberate bug of tests/mutants/ against the tests that must catch it (not in `test`:
# slow); M=pattern picks mutants
mutants: deps
	$(MAKE) all
	$(MAKE) -s -C tests/host
	tests/mutants/run '$(M)'

# the flags of apps and of libc/ (and its sources), for a test that builds an app and libc/
# for the host (tests/t/profile-truth)
app-cflags:
	@echo '$(APP_CFLAGS)'
libc-cflags:
	@echo '$(LIBC_CFLAGS)'
libc-srcs:
	@echo '$(LIBC_SRCS)'

clean:
	rm -rf $(B) .gdbinit
	$(MAKE) -s -C user clean

.PHONY: FORCE all user kernel deps qemu qemu-gdb test bench fuzz mutants clean app-cflags libc-cflags \
	libc-srcs

-include $(KOBJS:.o=.d)
