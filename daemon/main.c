/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "advise.h"
#include "caps.h"
#include "config.h"
#include "context.h"
#include "control.h"
#include "daemon.h"
#include "engine.h"
#include "report.h"
#include "runtime.h"
#include "trace.h"

#define EXIT_USAGE 2
/* --status with no daemon to ask, as LSB init scripts say "not running". */
#define EXIT_NOT_RUNNING 3

struct options {
	bool report;
	bool status;
	bool json;
	bool by_cgroup;
	bool check_config;
	bool verbose;
	bool dry_run;
	bool foreground;
	const char *root;
	const char *config_path;
	const char *record_path;
	const char *replay_path;
	const char *runtime_dir;
	const char *advise;
	uint64_t report_min_rss_mb;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: numaplaced [OPTION]...\n"
		"Place tasks next to their memory on NUMA machines.\n"
		"Without --report or --check-config, run as a daemon until SIGTERM.\n"
		"\n"
		"      --dry-run         run, but only log what would be done\n"
		"      --record=FILE     while running, write what is observed to FILE\n"
		"      --replay=FILE     run the scan scheduler over a recorded trace and\n"
		"                        print its counts\n"
		"  -f, --foreground      do not detach from the terminal\n"
		"  -r, --report          print where every task's memory is and exit\n"
		"      --status          print the running daemon's view of every task it\n"
		"                        looked at, and exit (3 when no daemon runs)\n"
		"  -j, --json            with --report or --status: print JSON\n"
		"      --by-cgroup       with --report: memory per node per cgroup\n"
		"  -w, --advise=VCPUS:MIB print the nodes that have room for VCPUS busy CPUs\n"
		"                        and MIB MiB now, as numad -w does, and exit\n"
		"      --min-rss=MIB     with --report: leave out tasks below MIB (default 1)\n"
		"      --root=DIR        read /proc and /sys under DIR instead of /\n"
		"      --runtime-dir=DIR keep the control socket and the CPU masks to put\n"
		"                        back after a crash in DIR; with --status, ask the\n"
		"                        daemon there (default " NP_RUNTIME_DIR_DEFAULT ")\n"
		"  -c, --config=FILE     configuration file (default " NP_CONFIG_DEFAULT_PATH ")\n"
		"  -n, --check-config    check the configuration and exit; with -v print it\n"
		"  -v, --verbose         more output\n"
		"  -h, --help            show this help and exit\n"
		"  -V, --version         show the version and exit\n");
}

__attribute__((format(printf, 3, 0)))
static void log_to_stderr(void *data, int priority, const char *fmt, va_list args)
{
	static const char *const names[] = {"emerg", "alert", "crit", "error",
					    "warning", "notice", "info", "debug"};

	fprintf(stderr, "numaplaced: %s: ", names[priority & 7]);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

/* The context of a one-shot command: the --root tree, its log on stderr at
 * the configured level (--verbose: debug). NULL, said, when it cannot be
 * opened. */
static struct np_ctx *open_ctx(const struct options *opts, const struct np_config *cfg)
{
	struct np_ctx *ctx;
	int err = np_ctx_new(opts->root, &ctx);

	if (err) {
		fprintf(stderr, "numaplaced: %s: %s\n", opts->root, strerror(-err));
		return NULL;
	}
	np_ctx_set_log_fn(ctx, log_to_stderr, NULL);
	np_ctx_set_log_priority(ctx, opts->verbose ? LOG_DEBUG : cfg->log_level);
	return ctx;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *opts)
{
	enum {
		OPT_ROOT = 256,
		OPT_MIN_RSS,
		OPT_DRY_RUN,
		OPT_RECORD,
		OPT_REPLAY,
		OPT_RUNTIME_DIR,
		OPT_BY_CGROUP,
		OPT_STATUS,
	};
	static const struct option longopts[] = {
		{"report", no_argument, NULL, 'r'},
		{"status", no_argument, NULL, OPT_STATUS},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"record", required_argument, NULL, OPT_RECORD},
		{"replay", required_argument, NULL, OPT_REPLAY},
		{"foreground", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"by-cgroup", no_argument, NULL, OPT_BY_CGROUP},
		{"advise", required_argument, NULL, 'w'},
		{"min-rss", required_argument, NULL, OPT_MIN_RSS},
		{"root", required_argument, NULL, OPT_ROOT},
		{"runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR},
		{"config", required_argument, NULL, 'c'},
		{"check-config", no_argument, NULL, 'n'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	int c;

	opts->report_min_rss_mb = 1;
	while ((c = getopt_long(argc, argv, "rjw:c:nvfhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opts->report = true;
			break;
		case OPT_STATUS:
			opts->status = true;
			break;
		case 'j':
			opts->json = true;
			break;
		case OPT_BY_CGROUP:
			opts->by_cgroup = true;
			break;
		case 'w':
			opts->advise = optarg;
			break;
		case OPT_MIN_RSS:
			if (parse_u64(optarg, &opts->report_min_rss_mb) ||
			    opts->report_min_rss_mb > UINT64_MAX >> 20) {
				fprintf(stderr, "numaplaced: --min-rss: not a size in MiB: '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_DRY_RUN:
			opts->dry_run = true;
			break;
		case 'f':
			opts->foreground = true;
			break;
		case OPT_RECORD:
			opts->record_path = optarg;
			break;
		case OPT_REPLAY:
			opts->replay_path = optarg;
			break;
		case OPT_ROOT:
			opts->root = optarg;
			break;
		case OPT_RUNTIME_DIR:
			opts->runtime_dir = optarg;
			break;
		case 'c':
			opts->config_path = optarg;
			break;
		case 'n':
			opts->check_config = true;
			break;
		case 'v':
			opts->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		case 'V':
			printf("numaplaced %s\n", NP_VERSION);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "numaplaced: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (opts->json && !opts->report && !opts->status) {
		fprintf(stderr, "numaplaced: --json goes with --report or --status\n");
		return EXIT_USAGE;
	}
	if (opts->by_cgroup && !opts->report) {
		fprintf(stderr, "numaplaced: --by-cgroup goes with --report\n");
		return EXIT_USAGE;
	}
	if (opts->check_config + opts->report + opts->status + !!opts->replay_path +
		    !!opts->advise +
		    (opts->dry_run || opts->foreground || opts->record_path ||
		     (opts->runtime_dir && !opts->status)) >
	    1) {
		fprintf(stderr, "numaplaced: --check-config, --report, --status, --replay, --advise "
				"and running the daemon exclude each other\n");
		return EXIT_USAGE;
	}
	if (opts->status && (opts->root || opts->config_path || opts->report_min_rss_mb != 1)) {
		fprintf(stderr, "numaplaced: --status asks the running daemon: --root, --config "
				"and --min-rss are the daemon's own\n");
		return EXIT_USAGE;
	}
	return 0;
}

/* Load the configuration: the named file, or the default path when it
 * exists, or the built-in defaults. Prints every error. */
static int load_config(const struct options *opts, struct np_config *cfg)
{
	struct np_config_errors errs = {0};
	const char *path = opts->config_path;
	int err;

	np_config_init(cfg);
	if (!path) {
		if (access(NP_CONFIG_DEFAULT_PATH, F_OK) != 0)
			return 0;
		path = NP_CONFIG_DEFAULT_PATH;
	}
	err = np_config_load(path, cfg, &errs);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msg[i]);
	np_config_errors_free(&errs);
	return err;
}

static int run_report(const struct options *opts, const struct np_config *cfg)
{
	struct np_snapshot *report;
	struct np_ctx *ctx;
	int err;

	ctx = open_ctx(opts, cfg);
	if (!ctx)
		return EXIT_FAILURE;
	np_caps_check(ctx);
	err = np_engine_look_once(ctx, cfg, opts->report_min_rss_mb << 20, &report);
	if (err) {
		fprintf(stderr, "numaplaced: cannot observe %s: %s\n", np_ctx_root(ctx),
			strerror(-err));
		np_ctx_free(ctx);
		return EXIT_FAILURE;
	}
	if (opts->by_cgroup) {
		struct np_cgroup_usage *rows;
		size_t nr;

		err = np_cgroup_usage_read(ctx, report, &rows, &nr);
		if (!err) {
			err = opts->json ? np_report_write_cgroups_json(report, rows, nr, stdout)
					 : np_report_write_cgroups_text(report, rows, nr, stdout);
			np_cgroup_usage_free(rows, nr);
		}
	} else {
		err = opts->json ? np_report_write_json(report, stdout)
				 : np_report_write_text(report, stdout);
	}
	np_snapshot_free(report);
	np_ctx_free(ctx);
	if (err || fflush(stdout) != 0) {
		fprintf(stderr, "numaplaced: writing the report: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

static int run_status(const struct options *opts)
{
	struct np_control_request req = {.json = opts->json};
	const char *dir = opts->runtime_dir ? opts->runtime_dir : NP_RUNTIME_DIR_DEFAULT;
	char msg[512];
	int err;

	err = np_control_query(dir, &req, stdout, msg, sizeof(msg));
	if (!err && fflush(stdout) != 0) {
		err = -EIO;
		snprintf(msg, sizeof(msg), "writing the status: %s", strerror(errno));
	}
	if (err) {
		fprintf(stderr, "numaplaced: %s\n", msg);
		return err == -ENOENT || err == -ECONNREFUSED ? EXIT_NOT_RUNNING : EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/* Each node's busy share as the daemon would see it at its next tick: on
 * the running machine over one tick_ms from now (what numad -w waits for
 * too), under a fixture root the counters since boot, as --report shows. */
static int advise_load(struct np_ctx *ctx, const struct np_config *cfg,
		       const struct np_topology *topo, double *load)
{
	struct np_task_source *src;
	int err = np_task_source_new(ctx, &src);

	if (err)
		return err;
	err = np_task_source_node_load(src, topo, load);
	if (!err && np_ctx_is_live(ctx)) {
		struct timespec ts = {cfg->tick_ms / 1000, (long)(cfg->tick_ms % 1000) * 1000000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		err = np_task_source_node_load(src, topo, load);
	}
	np_task_source_free(src);
	return err;
}

/* --advise: one node list on stdout, as numad -w prints it, for libvirt. */
static int run_advise(const struct options *opts, const struct np_config *cfg)
{
	struct np_advise_request req;
	struct np_advise_node *nodes = NULL;
	struct np_topology *topo = NULL;
	struct np_advice advice;
	struct np_ctx *ctx = NULL;
	double *load = NULL;
	char text[1024];
	int err;

	if (np_advise_parse(opts->advise, &req, text, sizeof(text)) < 0) {
		fprintf(stderr, "numaplaced: --advise '%s': %s\n", opts->advise, text);
		return EXIT_USAGE;
	}
	ctx = open_ctx(opts, cfg);
	if (!ctx)
		return EXIT_FAILURE;
	err = np_topology_read(ctx, &topo);
	if (!err) {
		load = calloc(topo->nr_nodes, sizeof(*load));
		nodes = calloc(topo->nr_nodes, sizeof(*nodes));
		err = load && nodes ? advise_load(ctx, cfg, topo, load) : -ENOMEM;
	}
	if (!err) {
		np_advise_nodes(topo, load, cfg, nodes);
		err = np_advise(topo, nodes, &req, &advice);
	}
	if (!err && opts->verbose)
		for (unsigned i = 0; i < topo->nr_nodes; i++)
			fprintf(stderr, "numaplaced: node %d: %.2f CPUs free, %" PRIu64
					" MiB above headroom\n",
				nodes[i].id, nodes[i].free_cpus, nodes[i].mem_room >> 20);
	if (!err) {
		np_nodeset_format_list(&advice.nodes, text, sizeof(text));
		if (!advice.fits)
			fprintf(stderr,
				"numaplaced: no set of nodes has room for %u busy CPU%s and %" PRIu64
				" MiB above headroom now: every node\n",
				req.vcpus, req.vcpus == 1 ? "" : "s", req.mib);
		printf("%s\n", text);
	} else {
		fprintf(stderr, "numaplaced: cannot observe %s: %s\n", np_ctx_root(ctx),
			strerror(-err));
	}
	free(nodes);
	free(load);
	np_topology_free(topo);
	np_ctx_free(ctx);
	if (!err && fflush(stdout) != 0) {
		fprintf(stderr, "numaplaced: writing the advice: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int run_replay(const struct options *opts, const struct np_config *cfg)
{
	struct np_replay_result result;
	struct np_trace *trace;
	uint64_t span_ms = 0;
	char *err_text = NULL;
	int err;

	err = np_trace_load(opts->replay_path, &trace, &err_text);
	if (err) {
		fprintf(stderr, "%s\n", err_text ? err_text : strerror(-err));
		free(err_text);
		return EXIT_FAILURE;
	}
	if (trace->nr_scans)
		span_ms = trace->scans[trace->nr_scans - 1].uptime_ms - trace->scans[0].uptime_ms;
	/* Tasks that lived under a second are the ones slow start is for. */
	err = np_replay_run(trace, cfg, 1000, &result);
	if (!err)
		err = np_replay_write(&result, stdout);
	np_trace_free(trace);
	if (err == -EOPNOTSUPP) {
		fprintf(stderr,
			"numaplaced: replaying %s: include_cgroup and exclude_cgroup cannot be "
			"replayed: traces hold no cgroups\n",
			opts->replay_path);
		return EXIT_FAILURE;
	}
	if (err == -E2BIG) {
		fprintf(stderr,
			"numaplaced: replaying %s: the trace spans %" PRIu64 " ms, %u ticks or more "
			"of tick_ms %" PRIu64 "\n",
			opts->replay_path, span_ms, NP_REPLAY_MAX_TICKS, cfg->tick_ms);
		return EXIT_FAILURE;
	}
	if (err) {
		fprintf(stderr, "numaplaced: replaying %s: %s\n", opts->replay_path,
			strerror(-err));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct options opts = {0};
	struct np_config cfg;
	int ret;

	ret = parse_options(argc, argv, &opts);
	if (ret)
		return ret;
	/* The daemon's configuration is the daemon's: none is read here. */
	if (opts.status)
		return run_status(&opts);
	if (load_config(&opts, &cfg) != 0) {
		np_config_free(&cfg);
		return EXIT_FAILURE;
	}
	if (opts.check_config) {
		if (opts.verbose)
			np_config_write(&cfg, stdout);
		ret = EXIT_SUCCESS;
	} else if (opts.report) {
		ret = run_report(&opts, &cfg);
	} else if (opts.replay_path) {
		ret = run_replay(&opts, &cfg);
	} else if (opts.advise) {
		ret = run_advise(&opts, &cfg);
	} else {
		struct np_daemon_options dopts = {
			.root = opts.root,
			.config_path = opts.config_path,
			.dry_run = opts.dry_run,
			.foreground = opts.foreground,
			.verbose = opts.verbose,
			.record_path = opts.record_path,
			.runtime_dir = opts.runtime_dir ? opts.runtime_dir : NP_RUNTIME_DIR_DEFAULT,
		};

		if (!dopts.config_path && access(NP_CONFIG_DEFAULT_PATH, F_OK) == 0)
			dopts.config_path = NP_CONFIG_DEFAULT_PATH;
		/* The daemon takes the configuration over. */
		return np_daemon_run(&dopts, &cfg);
	}
	np_config_free(&cfg);
	return ret;
}
