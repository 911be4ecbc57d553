/*
 * shell_test.c: run by tests/t/host-printf (build/host/shell{,-tsan,-asan}), on the shared harness.
 * Host test of kern/shell/shell.c: the tokenizer (quotes, operators, limits), command
 * dispatch and its messages, and the line editor fed scripted console bytes, then random
 * bytes (under ASan/UBSan this is the "nothing typed may crash" check). The console is
 * replaced here: cons_getc reads a script, cons_write appends to a capture buffer.
 * Prints PASS/FAIL per subtest (harness.h); the exit status is the verdict.
 */
#include <stdio.h>
#include <stdlib.h>
/* No <string.h>: its strerror clashes with error.h's; kernel.h declares what we use. */

#include "kernel.h"
#include "harness.h"
#include "error.h"
#include "cons.h"
#include "shell.h"
#include "thread.h"

/* ---- console stand-in ---- */

static const char *script;	/* bytes cons_getc hands out */
static size_t script_len, script_pos;
static char captured[1 << 16];
static size_t captured_len;

int cons_getc(void)
{
	if (script_pos >= script_len) {
		printf("cons_getc: script exhausted\n");
		exit(1);
	}
	return (unsigned char)script[script_pos++];
}

/*
 * The shell's other neighbours, as a host stand-in: no descriptors (so output goes to
 * the console and redirections report their error), no new threads (current() and the
 * interrupt flag are the shim's).
 */
long kwrite(int fd, const void *buf, size_t n) { (void)fd; (void)buf; (void)n; return -EBADF; }
int kcreate(const char *path, int omode, uint32_t perm) { (void)path; (void)omode; (void)perm; return -ENOSYS; }
int kdup2(int a, int b) { (void)a; (void)b; return -EBADF; }
int kclose(int fd) { (void)fd; return -EBADF; }
int kwerror(int fd) { (void)fd; return 0; }
struct thread *kthread_create(const char *name, int core, thread_fn fn, void *arg)
{
	(void)name; (void)core; (void)fn; (void)arg;
	return NULL;
}
void kthread_detach(struct thread *t) { (void)t; }
void cons_flush_through_ctrl_c(void) {}
static uint64_t lost_bytes;	/* what the console says it dropped: a test sets it */
uint64_t cons_lost(void) { return lost_bytes; }
void cons_set_intr_hook(void (*fn)(void)) { (void)fn; }

void cons_write(const char *s, size_t n)
{
	n = MIN(n, sizeof(captured) - 1 - captured_len);
	memcpy(captured + captured_len, s, n);
	captured_len += n;
	captured[captured_len] = '\0';
}

static void feed(const char *s, size_t n)
{
	script = s;
	script_len = n;
	script_pos = 0;
	captured_len = 0;
	captured[0] = '\0';
}

/* ---- test commands ---- */

static int last_argc;
static char last_argv[SHELL_MAXARGS][SHELL_LINE_MAX];

static int cmd_targs(int argc, char **argv)
{
	last_argc = argc;
	for (int i = 0; i < argc; i++)
		snprintf(last_argv[i], sizeof(last_argv[i]), "%s", argv[i]);
	return 0;
}
SHELL_CMD("targs", "targs [ARGS...]", "record the arguments", cmd_targs);

static int cmd_tinval(int argc, char **argv)
{
	(void)argc, (void)argv;
	return -EINVAL;
}
SHELL_CMD("tinval", "tinval NEVER-RIGHT", "always wrong arguments", cmd_tinval);

/* ---- parse ---- */

/* want: words separated by '|', then optional " >F", " >>F", " &" markers. */
static void check_parse(const char *line, int want_rc, int want_argc, const char *want_words,
			const char *want_redirect, bool want_append, bool want_bg)
{
	char buf[512], words[512] = "";
	struct shell_job job;
	const char *why;
	int rc;

	snprintf(buf, sizeof(buf), "%s", line);
	rc = shell_parse(buf, &job, &why);
	if (rc != want_rc) {
		FAIL("parse \"%s\": rc %d want %d (%s)", line, rc, want_rc, why ? why : "");
		return;
	}
	if (rc)
		return;
	for (int i = 0; i < job.argc; i++)
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
			 i ? "|" : "", job.argv[i]);
	CHECKF(!(job.argc != want_argc || strcmp(words, want_words) || job.argv[job.argc]),
		"parse \"%s\": %d words \"%s\", want %d \"%s\"", line, job.argc, words,
		     want_argc, want_words);
	CHECKF(!((want_redirect == NULL) != (job.redirect == NULL) ||
	    (want_redirect && strcmp(want_redirect, job.redirect)) ||
	    job.append != want_append || job.background != want_bg),
		"parse \"%s\": redirect \"%s\" append %d bg %d", line,
		     job.redirect ? job.redirect : "(none)", job.append, job.background);
}

static void test_parse(void)
{
	char many[512] = "";

	check_parse("", 0, 0, "", NULL, false, false);
	check_parse("  \t ", 0, 0, "", NULL, false, false);
	check_parse("echo a  b\tc", 0, 4, "echo|a|b|c", NULL, false, false);
	check_parse("  echo   x  ", 0, 2, "echo|x", NULL, false, false);
	check_parse("echo \"a b\" c", 0, 3, "echo|a b|c", NULL, false, false);
	check_parse("echo x\"y z\"w", 0, 2, "echo|xy zw", NULL, false, false);
	check_parse("echo \"\"", 0, 2, "echo|", NULL, false, false);
	check_parse("echo \"a > b &\"", 0, 2, "echo|a > b &", NULL, false, false);
	check_parse("echo \"unterminated", -EINVAL, 0, "", NULL, false, false);
	check_parse("cat f > out", 0, 2, "cat|f", "out", false, false);
	check_parse("cat f>out", 0, 2, "cat|f", "out", false, false);
	check_parse("cat f>>out", 0, 2, "cat|f", "out", true, false);
	check_parse("cat \"f\">\"o u\"", 0, 2, "cat|f", "o u", false, false);
	check_parse("cat /dev/oprofile > prof.out &", 0, 2, "cat|/dev/oprofile", "prof.out",
		    false, true);
	check_parse("sleep 3&", 0, 2, "sleep|3", NULL, false, true);
	check_parse("a&b", -EINVAL, 0, "", NULL, false, false);
	check_parse("a > b > c", -EINVAL, 0, "", NULL, false, false);
	check_parse("a >", -EINVAL, 0, "", NULL, false, false);
	check_parse("a > &", -EINVAL, 0, "", NULL, false, false);
	check_parse("> f", -EINVAL, 0, "", NULL, false, false);
	check_parse("&", -EINVAL, 0, "", NULL, false, false);
	for (int i = 0; i < SHELL_MAXARGS; i++)
		memcpy(many + 2 * i, "x ", 3);
	check_parse(many, 0, SHELL_MAXARGS, "x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|x|"
		    "x|x|x|x|x|x", NULL, false, false);
	memcpy(many + 2 * SHELL_MAXARGS, "x", 2);
	check_parse(many, -EINVAL, 0, "", NULL, false, false);
}

/* ---- exec ---- */

static void check_exec(const char *line, int want_rc, const char *want_out)
{
	char buf[512];
	int rc;

	snprintf(buf, sizeof(buf), "%s", line);
	feed("", 0);
	rc = shell_exec_line(buf);
	CHECKF(!(rc != want_rc || strcmp(captured, want_out)),
		"exec \"%s\": rc %d output \"%s\", want %d \"%s\"", line, rc, captured,
		     want_rc, want_out);
}

static void test_exec(void)
{
	check_exec("", 0, "");
	check_exec("targs 1 \"2 3\"", 0, "");
	CHECKF(!(last_argc != 3 || strcmp(last_argv[0], "targs") || strcmp(last_argv[2], "2 3")),
		"targs got %d args", last_argc);
	check_exec("nosuch a b", -ENOENT, "unknown command: nosuch (try help)\n");
	check_exec("tinval", -EINVAL, "usage: tinval NEVER-RIGHT\n");
	check_exec("echo \"x", -EINVAL, "shell: unterminated quote\n");
	check_exec("targs > f", -ENOSYS, "shell: f: error\n");	/* the stand-in kcreate fails */
	CHECKF(!(!shell_lookup("targs") || shell_lookup("targ") || shell_lookup("")),
		"shell_lookup");
}

/* ---- line editor ---- */

static void check_line(const char *in, size_t n, int want_rc, const char *want_line,
		       const char *want_echo)
{
	char buf[SHELL_LINE_MAX];
	int rc;

	feed(in, n);
	rc = shell_readline(buf, sizeof(buf));
	CHECKF(!(rc != want_rc || (rc >= 0 && strcmp(buf, want_line)) ||
	    (want_echo && strcmp(captured, want_echo))),
		"readline: rc %d line \"%s\" echo \"%s\", want %d \"%s\" \"%s\"", rc,
		     rc >= 0 ? buf : "", captured, want_rc, want_line, want_echo ? want_echo : "*");
}
#define LINE(s, ...) check_line(s, sizeof(s) - 1, __VA_ARGS__)

static void test_readline(void)
{
	static char big[SHELL_LINE_MAX + 100];
	char want[64];

	LINE("ls\r", 2, "ls", "ls\n");
	LINE("\nab\n", 2, "ab", "ab\n");	/* the LF after the last line's CR is its tail */
	LINE("\n\r", 0, "", "\n");		/* but after an LF, an LF is an empty line */
	LINE("x\r", 1, "x", "x\n");
	LINE("\nabc\x7f\x08" "d\r", 2, "ad", "abc\b \b\b \bd\n");
	LINE("\n\x7f\x7fz\r", 1, "z", "z\n");	/* backspace on an empty line */
	LINE("\nabc\x15xy\r", 2, "xy", "abc\b \b\b \b\b \bxy\n");
	LINE("\nabc\x03", -EINTR, "", "abc^C\n");
	/* control bytes and escape sequences go; bytes >= 0x80 stay, as typed */
	LINE("a\x01\x02\x09\x80\xff\x1b[A\x1b\x1b[1;5Cb\x1bOPc\r", 5, "a\x80\xff" "bc",
	     "a\x80\xff" "bc\n");
	LINE("\n\x1b[12\x03", -EINTR, "", "^C\n");	/* Ctrl-C inside an escape sequence */
	/* UTF-8: kept whole; backspace takes a whole character, one column */
	LINE("gr\xc3\xb6\xc3\x9f" "e\r", 7, "gr\xc3\xb6\xc3\x9f" "e", "gr\xc3\xb6\xc3\x9f" "e\n");
	LINE("\nz\xe2\x82\xac\x7f" "y\r", 2, "zy", "z\xe2\x82\xac\b \by\n");
	/* a line longer than the buffer is refused whole, said, never cut */
	memset(big, 'q', sizeof(big));
	big[sizeof(big) - 1] = '\r';
	feed(big, sizeof(big));
	{
		char buf[SHELL_LINE_MAX];
		int rc = shell_readline(buf, sizeof(buf)), bells = 0;
		size_t n;

		snprintf(want, sizeof(want), "shell: line of %zu bytes is longer than %d: not run\n",
			 sizeof(big) - 1, SHELL_LINE_MAX - 1);
		n = strlen(want);
		for (size_t i = 0; i < captured_len; i++)
			bells += captured[i] == '\a';
		CHECKF(rc == -E2BIG && captured_len > n && !strcmp(captured + captured_len - n, want)
		       && bells == 1, "long line: rc %d, %d bells, said '%s'", rc, bells,
		       captured + (captured_len > 80 ? captured_len - 80 : 0));
	}
	/* bytes the console dropped while the line was typed: refused, said; the next is fine */
	lost_bytes = 3;
	LINE("\nab\r", -EIO, "", "ab\nshell: 3 bytes of this line were lost (typed faster than "
	     "read): not run\n");
	LINE("\ncd\r", 2, "cd", "cd\n");
}

/* Random bytes through the editor and the parser: must never crash or overflow. */
static void test_fuzz(void)
{
	static char in[4096];
	char buf[SHELL_LINE_MAX];
	unsigned seed = 12345;

	for (int round = 0; round < 2000; round++) {
		size_t n = 2 + (size_t)(seed = seed * 1103515245 + 12345) % (sizeof(in) - 2);

		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245 + 12345;
			in[i] = round % 2 ? (char)(seed >> 16) : " \"ab>&\t\x7f\x03\x1b["[(seed >> 16) % 12];
		}
		in[n - 2] = in[n - 1] = '\n';	/* ends a line even after a CR */
		feed(in, n);
		while (script_pos < script_len) {
			int rc = shell_readline(buf, sizeof(buf));

			CHECKF(!(rc >= 0 && (size_t)rc >= sizeof(buf)),
				"fuzz: line length %d", rc);
			if (rc >= 0)
				shell_exec_line(buf);
			captured_len = 0;
		}
	}
}

static const struct harness_test tests[] = {
	{ "parse", test_parse },
	{ "exec", test_exec },
	{ "readline", test_readline },
	{ "fuzz", test_fuzz },
};

int main(int argc, char **argv)
{
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 60, NULL }, argc, argv);
}
