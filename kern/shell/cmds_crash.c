/*
 * The crash recorder's shell commands (crash.h): `crash` shows and changes its settings
 * and the watchdog's; `panic` panics on purpose (to try a crash dump). Shell thread.
 */
#include "crash.h"
#include "error.h"
#include "shell.h"

/* One "-x VALUE" option of crash into cfg; -EINVAL if it is not one. */
static int crash_opt(struct crash_cfg *cfg, const char *opt, const char *val)
{
	uint64_t v;

	if (!strcmp(opt, "-W")) {
		cfg->wd_mode = !strcmp(val, "panic") ? WD_PANIC : !strcmp(val, "warn") ? WD_WARN
			     : !strcmp(val, "off") ? WD_OFF : 99;
		return cfg->wd_mode == 99 ? -EINVAL : 0;
	}
	if (parse_u64(val, &v) < 0 || v > UINT32_MAX)
		return -EINVAL;
	if (!strcmp(opt, "-f"))
		cfg->hz = (uint32_t)v;
	else if (!strcmp(opt, "-w"))
		cfg->window_kb = (uint32_t)v;
	else if (!strcmp(opt, "-t"))
		cfg->wd_ms = (uint32_t)v;
	else
		return -EINVAL;
	return 0;
}

static int cmd_crash(int argc, char **argv)
{
	struct crash_cfg cfg;
	char err[96];
	bool channel;
	int i = 1;

	crash_get(&cfg, &channel);
	if (argc > 1 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off")))
		cfg.record = !strcmp(argv[i++], "on");
	for (; i < argc; i += 2)
		if (i + 1 >= argc || crash_opt(&cfg, argv[i], argv[i + 1]) < 0)
			return -EINVAL;
	if (argc > 1 && crash_configure(&cfg, err, sizeof(err)) < 0) {
		shell_eprintf("crash: %s\n", err);
		return 1;
	}
	crash_print_status(shell_printf);
	return 0;
}
SHELL_CMD("crash", "crash [on|off] [-f HZ] [-w KB] [-W panic|warn|off] [-t MS]",
	  "the crash recorder (rate, window per core) and the NMI watchdog (mode, time)",
	  cmd_crash);

static int cmd_panic(int argc, char **argv)
{
	char msg[OPF_CRASH_MSG] = "";
	size_t n = 0;

	if (argc < 2)
		return -EINVAL;		/* never by accident: a message is required */
	for (int i = 1; i < argc && n < sizeof(msg); i++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s", i > 1 ? " " : "", argv[i]);
	panic("%s", msg);
}
SHELL_CMD("panic", "panic MESSAGE", "panic on purpose (writes a crash dump)", cmd_panic);
