# The page allocator and kmalloc (kern/src/mem/*.c) on host memory from the shim's
# arch_mem_foreach, with blocks and queues on top: build/host/mem{,-tsan,-asan}
HOST_TESTS += mem
HOST_TEST_SRCS_mem := $(TOP)/tests/host/mem_test.c $(TOP)/kern/src/mem/page.c \
	$(TOP)/kern/src/mem/kmalloc.c $(TOP)/kern/src/io/block.c $(TOP)/kern/src/io/qio.c
