# The profiler's portable core under pthreads (tests/host/oprof/*.c).
# The top Makefile names the portable files (OPROF_PORTABLE); the kernel-only ones stay out.
OPROF_SRCS := $(addprefix $(TOP)/,$(shell $(MAKE) -s --no-print-directory -C $(TOP) \
	print-OPROF_PORTABLE))
HOST_TESTS += oprof
HOST_TEST_SRCS_oprof := $(wildcard $(TOP)/tests/host/oprof/*.c) $(OPROF_SRCS) \
	$(TOP)/kern/src/io/qio.c $(TOP)/kern/src/io/block.c $(TOP)/kern/src/lib/parse.c \
	$(TOP)/kern/src/thread/qlock.c

# the profiler's private headers are dependencies too (backtrace.h holds the walk itself)
$(OUT)/oprof $(OUT)/oprof-tsan $(OUT)/oprof-asan: $(wildcard $(TOP)/kern/src/oprofile/*.h) \
	$(TOP)/tests/host/oprof/oprof_host.h

# Native benchmark of the hot path (tests/bench/hotpath.sh): -O2, no sanitizers.
$(OUT)/oprof-bench: $(TOP)/tests/host/oprof_bench.c $(OPROF_SRCS) \
		$(TOP)/kern/bench/baseline.c $(TOP)/kern/src/io/qio.c \
		$(TOP)/kern/src/io/block.c $(TOP)/kern/src/lib/parse.c \
		$(TOP)/kern/src/thread/qlock.c $(SHIM) \
		$(wildcard $(TOP)/kern/include/*.h $(TOP)/kern/src/oprofile/*.h)
	@mkdir -p $(OUT)
	$(CC) $(HOST_CFLAGS) -DOPROF_BENCH -o $@ $(filter %.c,$^)
host-all: $(OUT)/oprof-bench
