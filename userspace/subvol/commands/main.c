// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * subvol: volumes and snapshots of the dm-subvol target.  The commands,
 * their help, and the global options.
 */
#include "commands/commands.h"

#include <getopt.h>
#include <libdevmapper.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool needs_dm;		/* refuses at once without device-mapper */
	bool needs_root;	/* changes images, seals or devices */
	const char *help;
	bool internal;		/* left out of --help: the udev rules' helper */
};

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "pool", cmd_pool, false, false,
	  "pool create [--name NAME] [AUTOEXTEND...] DIRECTORY\n"
	  "pool import [--name NAME] DIRECTORY\n"
	  "pool set AUTOEXTEND... POOL\n"
	  "pool status [options] POOL\n"
	  "pool list [options]\n"
	  "pool export POOL\n"
	  "pool remove [--yes] POOL\n"
	  "\n"
	  "  create   make DIRECTORY (on a host XFS with reflink) a pool and\n"
	  "           register its name (default: the directory's name)\n"
	  "  import   register an existing pool directory, e.g. after a move or\n"
	  "           export; --name renames it (a copy of a registered pool\n"
	  "           also gets a new id)\n"
	  "  set      change the pool's autoextend policy\n"
	  "  status   the pool's volumes, sizes, host space, policy, and what\n"
	  "           subvol monitor did last\n"
	  "  list     the registered pools\n"
	  "  export   unregister the name; the directory and images stay\n"
	  "  remove   delete the pool's images, its attribute and its name; the\n"
	  "           directory stays.  With volumes, needs --yes or a terminal's\n"
	  "           confirmation.  Both refused while a volume is active.\n"
	  "\n"
	  "AUTOEXTEND options of create and set (subvol monitor acts on them):\n"
	  "      --autoextend-threshold PERCENT|SIZE\n"
	  "                         act when the host filesystem is more than\n"
	  "                         PERCENT used (1-99; 100 or off: never), or\n"
	  "                         has less than SIZE (with a unit) free\n"
	  "      --autoextend-step PERCENT%|SIZE\n"
	  "                         grow its LVM LV (lvextend -r) by PERCENT% of\n"
	  "                         the LV or by SIZE (default 20%; 0: do not)\n"
	  "      --autoextend-max SIZE  not beyond SIZE (none: the VG's free space)\n"
	  "      --autoextend-command CMD\n"
	  "                         run CMD (sh -c) too, or instead where there\n"
	  "                         is no LV; \"\" for none\n"
	  "\n"
	  "Options of status and list:\n"
	  "  -o, --output COLUMNS   the columns, comma-separated; +COLUMNS adds to\n"
	  "                         the defaults; repeated -o add up\n"
	  "  -O, --sort COLUMNS     list: sort by these (-COLUMN: descending)\n"
	  "  -n, --noheadings       no heading line (status: values without labels)\n"
	  "      --separator STR    fields apart by STR, not aligned\n"
	  "  -J, --json             JSON\n"
	  "  -b, --bytes            sizes in bytes\n"
	  "      --units UNIT       sizes in UNIT (h, b, s, k..e, K..E; see list)\n"
	  "      --nosuffix         sizes without their unit (with --units)\n"
	  "\n"
	  "  status fields: pool,path,id,created,volumes,snapshots,active,\n"
	  "    virtual_size,allocated,host_size,host_free,host_lv,\n"
	  "    autoextend_threshold,autoextend_step,autoextend_max,\n"
	  "    autoextend_command,extensions,last_extension,last_extension_time,\n"
	  "    last_command,last_command_time,last_error,last_error_time\n"
	  "  list columns: name,path,volumes,snapshots,host_free; also id,created,\n"
	  "    active,virtual_size,allocated,host_size,host_lv,autoextend_threshold,\n"
	  "    autoextend_step,autoextend_max,autoextend_command,extensions,\n"
	  "    last_extension,last_extension_time,last_command,last_command_time,\n"
	  "    last_error,last_error_time\n" },
	{ "monitor", cmd_monitor, false, true,
	  "monitor [--interval SECS] [--once | --daemon [--pidfile FILE]]\n"
	  "\n"
	  "  Follow every active subvol device and every pool, and act on a\n"
	  "  pool's autoextend policy when its host filesystem is past the\n"
	  "  threshold: grow the LVM logical volume under it (lvextend -r), run\n"
	  "  its command.  Checks at each device-mapper event of a device (its\n"
	  "  low-water mark, by default the pool's threshold), every second for\n"
	  "  a minute after one, and every SECS seconds.\n"
	  "  Logs every action and failure to syslog, and to stderr unless that\n"
	  "  is the journal; runs in the foreground (subvol-monitor.service).\n"
	  "\n"
	  "  -i, --interval SECS  the periodic check (1-3600, default 10)\n"
	  "      --once           check every pool once and exit: 1 if anything\n"
	  "                       failed\n"
	  "      --daemon         detach, and log to syslog only\n"
	  "      --pidfile FILE   with --daemon: write its pid to FILE\n" },
	{ "create", cmd_create, false, true,
	  "create --size SIZE [options] POOL/VOLUME\n"
	  "\n"
	  "  -s, --size SIZE             virtual size (K, M, G, T, P, E; rounded up to\n"
	  "                              host blocks)\n"
	  "      --guarantee full|none   back every promise to the filesystem on top\n"
	  "                              with claimed host space (default full)\n"
	  "      --no-space error|queue  a write the host has no space for: ENOSPC at\n"
	  "                              once (default) or held until space appears\n"
	  "      --no-space-timeout SECS how long queue holds a write (1-3600)\n"
	  "      --low-water SIZE        a dm event when the space left drops below\n"
	  "                              (default: the pool's autoextend threshold)\n"
	  "      --ignore-discard        never punch holes for discards\n"
	  "      --extent-size SIZE      host extent size hint (few extents, fast\n"
	  "                              clones; needs --guarantee none)\n"
	  "      --mkfs[=xfs|ext4]       make a filesystem on it (default xfs)\n"
	  "      --host-lvm              host LVM may scan and activate PVs on it\n"
	  "                              (default: they are its user's, a VM's)\n"
	  "      --inactive              do not activate it\n" },
	{ "import", cmd_import, false, true,
	  "import [--move] FILE POOL/VOLUME\n"
	  "\n"
	  "  Make a raw image FILE (e.g. from qemu-img convert -O raw) an inactive\n"
	  "  volume: a reflink clone when FILE is on the pool's filesystem, else a\n"
	  "  copy of its data (holes stay holes); the size is rounded up to host\n"
	  "  blocks.  --move removes FILE after.\n" },
	{ "activate", cmd_activate, true, true,
	  "activate POOL/VOLUME...\n"
	  "\n"
	  "  Make the device /dev/mapper/subvol-POOL-VOLUME (link\n"
	  "  /dev/subvol/POOL/VOLUME); snapshots are activated read-only.\n" },
	{ "deactivate", cmd_deactivate, true, true,
	  "deactivate POOL/VOLUME...\n"
	  "\n"
	  "  Remove the device; refused while it is open (mounted).\n" },
	{ "list", cmd_list, false, false,
	  "list [options] [POOL | POOL/VOLUME...]\n"
	  "\n"
	  "  The volumes and snapshots of the pools (default: every registered\n"
	  "  pool), or of POOL/VOLUME the volume and its snapshots: size, space\n"
	  "  allocated on the host, origin, device.  EXCLUSIVE (-o +exclusive) is\n"
	  "  the host space no other image shares: what removing it frees.\n"
	  "\n"
	  "  -o, --output COLUMNS   the columns, comma-separated; +COLUMNS adds to\n"
	  "                         the defaults; repeated -o add up\n"
	  "  -O, --sort COLUMNS     sort by these columns (-COLUMN: descending)\n"
	  "  -t, --type KINDS       volume, snapshot or all (comma-separated)\n"
	  "  -n, --noheadings       no heading line\n"
	  "      --separator STR    fields apart by STR, not aligned\n"
	  "  -H                     scripted (zfs -H): no headings, tabs between\n"
	  "  -J, --json             JSON\n"
	  "  -b, --bytes            sizes in bytes\n"
	  "      --units UNIT       sizes in UNIT: h (human, default), b, s, k, m, g,\n"
	  "                         t, p, e (powers of 1024), K..E (of 1000)\n"
	  "      --nosuffix         sizes without their unit (with --units)\n"
	  "\n"
	  "  Columns: pool,name,kind,size,alloc,origin,device,created; also id,\n"
	  "  origin_id,image,guarantee,no_space,no_space_timeout,low_water_mark,\n"
	  "  ignore_discard,extent_size,host_lvm,state,exclusive,shared\n" },
	{ "status", cmd_status, false, false,
	  "status [options] POOL/VOLUME...\n"
	  "\n"
	  "  Each volume's options as it was created with them, and its sizes and\n"
	  "  space as the target reports them (virtual size, backed, shared,\n"
	  "  promised, copy-on-write reserve, host free); a blank line between\n"
	  "  volumes, one JSON array of them.\n"
	  "\n"
	  "  -o, --output FIELDS    the fields, comma-separated; +FIELDS adds to\n"
	  "                         the defaults; repeated -o add up\n"
	  "  -n, --noheadings       values alone, without their labels\n"
	  "      --separator STR    NAME STR VALUE lines, not aligned\n"
	  "  -J, --json             JSON\n"
	  "  -b, --bytes            sizes in bytes\n"
	  "      --units UNIT       sizes in UNIT (h, b, s, k..e, K..E; see list)\n"
	  "      --nosuffix         sizes without their unit (with --units)\n"
	  "\n"
	  "  Fields: pool,volume,kind,state,device,image,size,guarantee,no_space,\n"
	  "  no_space_timeout,low_water_mark,ignore_discard,extent_size,host_lvm,backed,\n"
	  "  mapped,shared,promised,cow_reserve,pool_claimed,pool_committed,\n"
	  "  uncovered,host_free,client,low_water,accounting_errors,snapshot_copy,\n"
	  "  origin,origin_id,created,id\n"
	  "  (those the volume's state lacks: with -o only)\n" },
	{ "snapshot", cmd_snapshot, false, true,
	  "snapshot [--writable] [--activate] [--wait|--no-wait] POOL/VOLUME NAME\n"
	  "\n"
	  "  A snapshot NAME of VOLUME, read-only unless --writable.  An active\n"
	  "  volume is suspended (its filesystem frozen) only to fix the point in\n"
	  "  time and claim the copy-on-write reserve (or the snapshot is refused\n"
	  "  with nothing changed); the device then copies the image by reflink\n"
	  "  while the guest runs, and NAME appears when the copy is complete.\n"
	  "  --wait (the default) waits for it, with a progress line on a\n"
	  "  terminal; --no-wait returns at once and a background process names\n"
	  "  the snapshot when done.  A copy whose process was killed is\n"
	  "  cancelled by the next snapshot or subvol monitor.  A writable\n"
	  "  snapshot of an XFS gets a new filesystem UUID, of an LVM PV new PV\n"
	  "  and VG UUIDs and a new VG name (vgimportclone).\n" },
	{ "clone", cmd_clone, false, true,
	  "clone [--activate] POOL/SNAPSHOT NAME\n"
	  "\n"
	  "  A writable volume NAME from a snapshot, with a new XFS UUID, or new\n"
	  "  LVM PV and VG UUIDs and a new VG name (vgimportclone).\n" },
	{ "rollback", cmd_rollback, false, true,
	  "rollback [--force] POOL/VOLUME SNAPSHOT\n"
	  "\n"
	  "  Replace an inactive VOLUME's content (and size) with SNAPSHOT's, in\n"
	  "  one step; --force allows a snapshot of another volume.\n" },
	{ "resize", cmd_resize, false, true,
	  "resize --size [+|-]SIZE [--resizefs] [--yes] POOL/VOLUME\n"
	  "\n"
	  "  Grow a volume, active or not (then run xfs_growfs in the guest).\n"
	  "  Shrinking needs the volume inactive and --yes or a terminal's\n"
	  "  confirmation: data past the new end is lost.\n"
	  "\n"
	  "  -s, -L, --size [+|-]SIZE  the new size; +SIZE grows by, -SIZE\n"
	  "                         shrinks by (as lvresize -L)\n"
	  "  -r, --resizefs         grow its filesystem too, mounted on this host\n"
	  "                         (xfs_growfs, resize2fs); refused, with nothing\n"
	  "                         changed, when it is not\n"
	  "  -y, --yes              shrink without asking\n" },
	{ "set", cmd_set, false, true,
	  "set [options] POOL/VOLUME\n"
	  "\n"
	  "      --no-space error|queue  a write the host has no space for\n"
	  "      --no-space-timeout SECS how long queue holds a write (1-3600)\n"
	  "      --low-water SIZE        a dm event when the space left drops below\n"
	  "                              (below the volume's size; 0: the pool's\n"
	  "                              autoextend threshold, if it has one)\n"
	  "      --ignore-discard        never punch holes for discards\n"
	  "      --no-ignore-discard     punch holes for discards again\n"
	  "      --host-lvm              host LVM may scan and activate PVs on it\n"
	  "      --no-host-lvm           host LVM leaves them alone (the default)\n"
	  "\n"
	  "  Change a volume's options in its metadata and, if it is active, in\n"
	  "  its live table.  Not for snapshots (read-only).\n" },
	{ "rename", cmd_rename, false, true,
	  "rename POOL/VOLUME NEW\n"
	  "\n"
	  "  Rename an inactive volume or snapshot within its pool.\n" },
	{ "remove", cmd_remove, false, true,
	  "remove POOL/VOLUME...\n"
	  "\n"
	  "  Delete volumes or snapshots; refused while active.  Snapshots and\n"
	  "  clones do not depend on their origin.\n" },
	{ "diff", cmd_diff, false, false,
	  "diff [--json] POOL/OLD [POOL/]NEW\n"
	  "\n"
	  "  The byte ranges where NEW differs from OLD (\"OFFSET LENGTH data|hole\"),\n"
	  "  from the images' extent maps: blocks both share by reflink are\n"
	  "  unchanged and not read.  Images that share no extents are compared\n"
	  "  by content, and diff says so on stderr.\n" },
	{ "send", cmd_send, false, false,
	  "send [--from BASE] [--dry-run] [--summary] [--quiet] POOL/SNAPSHOT\n"
	  "\n"
	  "  Write SNAPSHOT as a stream on stdout: all of it (holes as holes), or\n"
	  "  with --from only what differs from the snapshot BASE, which the\n"
	  "  receiver must hold.  Progress on stderr when it is a terminal (for\n"
	  "  rates, pipe through pv); --summary prints bytes, ranges and time as\n"
	  "  JSON on stderr.  -n, --dry-run writes no stream: it says on stdout\n"
	  "  what it would send and the stream's size.\n" },
	{ "receive", cmd_receive, false, true,
	  "receive [--summary] [--quiet] POOL [NAME]\n"
	  "\n"
	  "  Read a stream on stdin and make it a snapshot in POOL (named as the\n"
	  "  sender's, or NAME).  An incremental stream is applied to a clone of\n"
	  "  the pool's copy of its base.  Every record and the whole stream are\n"
	  "  checked before the snapshot appears; a corrupt, cut or refused\n"
	  "  stream leaves nothing.\n" },
	{ "lvm-filter", cmd_lvm_filter, false, false,
	  "lvm-filter [--check | --remove] [--file FILE]\n"
	  "\n"
	  "  Install in lvm.conf (default $LVM_SYSTEM_DIR/lvm.conf, /etc/lvm/lvm.conf)\n"
	  "  the devices/global_filter that keeps host LVM away from PVs inside\n"
	  "  volumes, but those of volumes set --host-lvm; refused if lvm.conf has\n"
	  "  a global_filter of its own.  make install runs it.\n"
	  "\n"
	  "      --check        whether the filter is there (exit 0) or not (1)\n"
	  "      --remove       take the filter out again\n"
	  "      --file FILE    the lvm.conf to change\n" },
	{ "help", cmd_help, false, false,
	  "help [COMMAND]\n"
	  "\n"
	  "  The commands, or COMMAND's usage (as COMMAND --help).\n" },
	{ "udev-name", cmd_udev_name, false, false,
	  "udev-name DM_NAME [DM_UUID]\n"
	  "\n"
	  "  For 56-dm-subvol.rules: SUBVOL_POOL= and SUBVOL_VOLUME= lines for a\n"
	  "  device-mapper name subvol-POOL-VOLUME, and SUBVOL_HOST_LVM=1 when\n"
	  "  the volume with that DM_UUID is set --host-lvm; nothing, exit 1, for\n"
	  "  any other name.\n", true },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The command running, for the checks made once its options are parsed. */
static const struct command *running;
static int running_argc;
static char **running_argv;
static bool checked;

static bool needs_root(const struct command *cmd, int argc, char **argv);

/*
 * Root and device-mapper, before the command does anything: once its
 * options are parsed, so that --help is help, and "-h" the argument of
 * an option is not.  Exits when refused.
 */
static void check_command(void)
{
	if (checked || !running)
		return;
	checked = true;
	if (needs_root(running, running_argc, running_argv) && geteuid() != 0) {
		errmsg("%s: needs root (it changes images, their seals and devices)", running->name);
		exit(EXIT_REFUSED);
	}
	if (running->needs_dm && !dm_available()) {
		errmsg("%s: device-mapper is not available here (%s)", running->name, DM_LOAD_HINT);
		exit(EXIT_REFUSED);
	}
}

#define MAX_OPTIONS	64

int cmd_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	static struct option all[MAX_OPTIONS + 2];
	static char shorts[MAX_OPTIONS * 3];
	int n, c;

	/* The command's options and -v; built anew, getopt keeps no pointers. */
	for (n = 0; longopts[n].name && n < MAX_OPTIONS; n++)
		all[n] = longopts[n];
	all[n++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	all[n] = (struct option){ NULL, 0, NULL, 0 };
	snprintf(shorts, sizeof(shorts), "%sv", shortopts);
	while ((c = getopt_long(argc, argv, shorts, all, NULL)) == 'v') {
		verbosity++;
		verbose = true;
	}
	if (c == -1)
		check_command();
	return c;
}

/* pool: its status and list read; the other subcommands change things. */
static bool needs_root(const struct command *cmd, int argc, char **argv)
{
	if (strcmp(cmd->name, "pool"))
		return cmd->needs_root;
	return argc > 1 && strcmp(argv[1], "status") && strcmp(argv[1], "list");
}

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *out)
{
	size_t i;
	const char *nl;

	fprintf(out, "Usage: %s [--verbose] COMMAND [ARGS...]\n\n"
		"Volumes and snapshots of the dm-subvol target, kept as image files in\n"
		"a pool directory on a host XFS with reflink.\n\nCommands:\n", progname);
	for (i = 0; i < NR_COMMANDS; i++) {
		if (commands[i].internal)
			continue;
		nl = strchr(commands[i].help, '\n');
		fprintf(out, "  %.*s\n", (int)(nl - commands[i].help), commands[i].help);
		if (!strcmp(commands[i].name, "pool"))
			fprintf(out, "  pool import|set|status|list|export|remove ...\n");
	}
	fprintf(out, "\nOptions:\n"
		"  -v, --verbose   say what is done (tables, libdevmapper, child programs);\n"
		"                  anywhere on the line, -vv for libdevmapper's debug\n"
		"  -V, --version   print the version\n"
		"  -h, --help      this help; COMMAND --help (or help COMMAND) for a\n"
		"                  command's\n"
		"\nOptions may follow arguments; -- ends them.\n"
		"Sizes take K, M, G, T, P, E (powers of 1024) or s (512-byte sectors).\n"
		"Commands that change pools, images or devices need root.\n"
		"Exit status: 0 done, 1 refused or failed, 2 usage error.\n"
		"See subvol(8).\n");
}

int command_help(const char *cmd)
{
	const struct command *c = find(cmd);
	const char *p, *nl;
	bool first = true;

	if (!c || !c->help)
		return 0;
	/* Synopsis lines get the program's name; the rest as it is. */
	for (p = c->help; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == p)
			break;
		printf("%s %s %.*s\n", first ? "Usage:" : "      ", progname, (int)(nl - p), p);
		first = false;
	}
	fputs(p, stdout);
	return 0;
}

/* subvol help [COMMAND]: as subvol --help and subvol COMMAND --help. */
static int cmd_help(int argc, char **argv)
{
	if (argc > 2)
		return usage_error("help", "give at most one COMMAND");
	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return command_help("help");
	if (!find(argv[1])) {
		errmsg("help: unknown command \"%s\"", argv[1]);
		fprintf(stderr, "Try '%s --help'.\n", progname);
		return EXIT_USAGE;
	}
	return command_help(argv[1]);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "%s %s: ", progname, cmd);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "Try '%s %s --help'.\n", progname, cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct command *cmd;
	static char argv0[64];
	int c, i;

	/* Names print as the user's locale has them (UTF-8 rather than \xc3). */
	setlocale(LC_CTYPE, "");
	while ((c = getopt_long(argc, argv, "+vVh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbosity++;
			break;
		case 'V':
			printf("subvol %s (target interface %d.%d.%d)\n", SUBVOL_TOOL_VERSION,
			       DM_SUBVOL_VERSION_MAJOR, DM_SUBVOL_VERSION_MINOR,
			       DM_SUBVOL_VERSION_PATCH);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", progname);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		errmsg("no command given");
		fprintf(stderr, "Try '%s --help'.\n", progname);
		return EXIT_USAGE;
	}
	cmd = find(argv[optind]);
	if (!cmd) {
		errmsg("unknown command \"%s\"", argv[optind]);
		fprintf(stderr, "Try '%s --help'.\n", progname);
		return EXIT_USAGE;
	}
	/*
	 * Without -h or --help among the arguments, nothing is help: check
	 * now.  With one, the command's own parse tells (cmd_getopt).
	 */
	running = cmd;
	running_command = cmd->name;
	running_argc = argc - optind;
	running_argv = argv + optind;
	verbose = verbosity > 0;
	dm_setup_logging();
	for (i = optind + 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			break;
	if (i == argc || !strcmp(argv[i], "--"))
		check_command();
	argc -= optind;
	argv += optind;
	optind = 0;	/* the command parses its own options, reinitialised (permuting) */
	/* getopt names argv[0] in its messages: "subvol create: ..." */
	snprintf(argv0, sizeof(argv0), "%s %s", progname, cmd->name);
	argv[0] = argv0;
	return cmd->fn(argc, argv);
}
