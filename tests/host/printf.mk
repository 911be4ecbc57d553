# Host tests of the console-side portable files: printf.c formats (against a table and
# against libc) and shell.c (tokenizer, dispatch, line editor, fuzzed input).
HOST_TESTS += printf shell
HOST_TEST_SRCS_printf := $(TOP)/tests/host/printf_test.c $(TOP)/kern/src/lib/printf.c
HOST_TEST_SRCS_shell := $(TOP)/tests/host/shell_test.c $(TOP)/kern/shell/shell.c \
	$(TOP)/kern/src/lib/printf.c
