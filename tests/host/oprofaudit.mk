# Interleavings of the profiler's portable core from the review of issue 24
# (tests/host/oprof_audit_test.c), with NMI-mode stop and interrupts modelled. (=: OPROF_SRCS
# is oprofile.mk's, included after this file.)
HOST_TESTS += oprofaudit
HOST_TEST_SRCS_oprofaudit = $(TOP)/tests/host/oprof_audit_test.c $(OPROF_SRCS) \
	$(TOP)/kern/src/io/qio.c $(TOP)/kern/src/io/block.c $(TOP)/kern/src/lib/parse.c \
	$(TOP)/kern/src/thread/qlock.c

$(OUT)/oprofaudit $(OUT)/oprofaudit-tsan $(OUT)/oprofaudit-asan: \
	$(TOP)/kern/src/oprofile/internal.h
