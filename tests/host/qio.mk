# Blocks and queues (kern/src/io/block.c, kern/src/io/qio.c): build/host/qio{,-tsan,-asan}
HOST_TESTS += qio
HOST_TEST_SRCS_qio := $(TOP)/tests/host/qio_test.c $(TOP)/kern/src/io/qio.c $(TOP)/kern/src/io/block.c
