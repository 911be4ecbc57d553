/*
 * The kernel shell: a line editor on the console, a tokenizer, and a table of commands
 * that any file adds rows to:
 *
 *	static int cmd_echo(int argc, char **argv) { ... }
 *	SHELL_CMD("echo", "echo [ARGS...]", "print the arguments", cmd_echo);
 *
 * A command runs in the shell's thread with argv[0] its own name; it returns 0 or a
 * negative error (error.h). -EINVAL means "wrong arguments": the shell prints
 * "usage: <usage>". Any other error is printed as "<name>: <strerror>". Commands write
 * their output with shell_printf/shell_write (the output a "> FILE" redirection
 * captures) and complaints with shell_eprintf (always the console).
 */
#ifndef SHELL_H
#define SHELL_H

#include "kernel.h"

#define SHELL_MAXARGS	32	/* arguments per command line, argv[0] included */
#define SHELL_LINE_MAX	8192	/* bytes per line, NUL included */

struct cmd {
	const char *name;	/* what the user types */
	const char *usage;	/* one line, starting with the name: "sleep SECONDS" */
	const char *help;	/* one line: what it does */
	int (*fn)(int argc, char **argv);
};

/*
 * A row of the command table: a const struct cmd in section shell_cmds, which the linker
 * gathers into one array between __start_shell_cmds and __stop_shell_cmds. fn names the
 * row, so it must be unique across the kernel (it is the command's function anyway).
 */
#define SHELL_CMD(name_, usage_, help_, fn_)						\
	static const struct cmd shell_cmd_##fn_						\
	__attribute__((used, section("shell_cmds"), aligned(8))) = {			\
		.name = (name_), .usage = (usage_), .help = (help_), .fn = (fn_),	\
	}

extern const struct cmd __start_shell_cmds[], __stop_shell_cmds[];

/* A parsed command line. Pointers point into the line that was parsed. */
struct shell_job {
	int argc;			/* 0 for an empty line */
	char *argv[SHELL_MAXARGS + 1];	/* NULL-terminated */
	const char *redirect;		/* FILE of "> FILE" or ">> FILE", NULL for none */
	bool append;			/* ">>" rather than ">" */
	bool background;		/* trailing "&" */
};

/* Never returns: prompt, read a line, run it, forever. Thread context. */
__noreturn void shell_run(void);
/* Parse and run one line (modified in place). Returns the command's result. */
int shell_exec_line(char *line);
/*
 * Split line in place into job: words separated by spaces or tabs, "double quotes" group
 * (a quoted ">" or "&" is a plain word), unquoted ">", ">>" and "&" are operators even
 * without spaces around them. Returns 0, or -EINVAL with *why set to a message.
 */
int shell_parse(char *line, struct shell_job *job, const char **why);
/*
 * Read one edited line from the console into buf (cap bytes, NUL included), echoing.
 * Returns its length, or -EINTR when Ctrl-C cancelled it, or (said on the console) -E2BIG
 * when it did not fit in cap and -EIO when the console lost some of its bytes: a line is
 * never cut. Thread context.
 */
int shell_readline(char *buf, size_t cap);

const struct cmd *shell_lookup(const char *name);	/* NULL when there is none */
/* The result of the shell's previous line: 0, or the -error it reported. Shell thread only. */
int shell_last_status(void);

/* Command output (redirectable). */
int shell_printf(const char *fmt, ...) __printf(1, 2);
void shell_write(const char *s, size_t n);
/* Diagnostics: always to the console. */
int shell_eprintf(const char *fmt, ...) __printf(1, 2);

#endif
