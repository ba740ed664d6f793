// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * subvol monitor: its options; the monitor itself is policy/monitor.c's.
 */
#include "commands/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

static int parse_interval(const char *arg, unsigned int *interval)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || !v ||
	    v > MONITOR_INTERVAL_MAX)
		return usage_error("monitor", "--interval: \"%s\" is not a number of seconds from 1 to %d",
				   arg, MONITOR_INTERVAL_MAX);
	*interval = v;
	return 0;
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct monitor_opts o = { .interval = MONITOR_INTERVAL_DEFAULT };
	int c;

	while ((c = cmd_getopt(argc, argv, "i:h", opts)) != -1) {
		switch (c) {
		case 'i':
			if (parse_interval(optarg, &o.interval))
				return EXIT_USAGE;
			break;
		case '1':
			o.once = true;
			break;
		case 'd':
			o.daemonize = true;
			break;
		case 'p':
			o.pidfile = optarg;
			break;
		case 'h':
			return command_help("monitor");
		default:
			return usage_error("monitor", NULL);
		}
	}
	if (optind != argc)
		return usage_error("monitor", "takes no arguments");
	if (o.once && o.daemonize)
		return usage_error("monitor", "--once or --daemon, not both");
	if (o.pidfile && !o.daemonize)
		return usage_error("monitor", "--pidfile needs --daemon");
	return monitor_run(&o);
}
