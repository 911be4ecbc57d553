# An app run's heap (kern/apps/appheap.c) on the shim's kmalloc and pages, pthreads as its
# instances, the kernel's own formatter for its messages: build/host/appheap{,-tsan,-asan}
HOST_TESTS += appheap
HOST_TEST_SRCS_appheap := $(TOP)/tests/host/appheap_test.c $(TOP)/kern/apps/appheap.c \
	$(TOP)/kern/src/lib/printf.c
