/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <syslog.h>

static int parse(const char *text, struct np_config *cfg, struct np_config_errors *errs)
{
	return np_config_parse("t.conf", text, strlen(text), cfg, errs);
}

/* The one error a text gives, or "" when it parses. */
static const char *only_error(const char *text)
{
	static char msg[512];
	struct np_config cfg;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	msg[0] = '\0';
	if (parse(text, &cfg, &errs) == -EINVAL && errs.n == 1)
		snprintf(msg, sizeof(msg), "%s", errs.msg[0]);
	else if (errs.n)
		snprintf(msg, sizeof(msg), "%zu errors, first %s", errs.n, errs.msg[0]);
	np_config_errors_free(&errs);
	np_config_free(&cfg);
	return msg;
}

static char *write_to_string(const struct np_config *cfg)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	CHECK_INT(np_config_write(cfg, out), 0);
	fclose(out);
	return text;
}

static void test_defaults(void)
{
	struct np_config cfg, other;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	CHECK_U64(cfg.scan_delay_ms, 1000);
	CHECK_U64(cfg.scan_period_min_ms, 1000);
	CHECK_U64(cfg.scan_period_max_ms, 60000);
	CHECK_U64(cfg.tick_ms, 1000);
	CHECK_U64(cfg.min_rss_mb, 100);
	CHECK_INT(cfg.locality_target_percent, 90);
	CHECK_INT(cfg.affinity, NP_AFFINITY_UNPINNED);
	CHECK_INT(cfg.kernel_balancing, NP_KBAL_DEFER);
	CHECK_INT(cfg.log_level, LOG_NOTICE);
	CHECK_INT(cfg.metrics_listen.family, AF_UNSPEC);
	CHECK_INT(cfg.include_comm.n, 0);

	/* An empty buffer, and no buffer at all, give the defaults. */
	np_config_init(&other);
	other.min_rss_mb = 7;
	CHECK_INT(np_config_parse("t.conf", "", 0, &other, &errs), 0);
	CHECK(np_config_equal(&cfg, &other));
	other.min_rss_mb = 7;
	CHECK_INT(np_config_parse("t.conf", NULL, 0, &other, &errs), 0);
	CHECK(np_config_equal(&cfg, &other));
	CHECK_INT(errs.n, 0);
	np_config_free(&other);
	np_config_free(&cfg);
}

static void test_every_key(void)
{
	const char *text = "scan_delay_ms = 0\n"
			   "scan_period_min_ms = 2000\n"
			   "scan_period_max_ms = 3600000\n"
			   "tick_ms = 100\n"
			   "scan_budget_mb = 1\n"
			   "min_rss_mb = 1048576\n"
			   "min_cpu_percent = 0\n"
			   "locality_target_percent = 100\n"
			   "node_mem_headroom_percent = 50\n"
			   "hysteresis_periods = 0\n"
			   "migrate_rate_mb_s = 65536\n"
			   "max_migrate_mb_per_scan = 1\n"
			   "migrate_threads = 8\n"
			   "migrate_tasks = 3\n"
			   "affinity = node\n"
			   "kernel_balancing = ignore\n"
			   "include_comm = postgres java*\n"
			   "exclude_comm = \tkworker* \n"
			   "include_cgroup = /system.slice/ /\n"
			   "exclude_cgroup =\n"
			   "exclude_pid = 1 4194304\n"
			   "log_level = debug\n"
			   "metrics_listen = [::1]:09464\n";
	struct np_config cfg, again;
	struct np_config_errors errs = {0};
	char addr[NP_LISTEN_ADDR_STRLEN], *out;

	np_config_init(&cfg);
	CHECK_INT(parse(text, &cfg, &errs), 0);
	CHECK_INT(errs.n, 0);
	CHECK_U64(cfg.scan_delay_ms, 0);
	CHECK_U64(cfg.scan_period_min_ms, 2000);
	CHECK_U64(cfg.scan_period_max_ms, 3600000);
	CHECK_U64(cfg.tick_ms, 100);
	CHECK_U64(cfg.scan_budget_mb, 1);
	CHECK_U64(cfg.min_rss_mb, 1048576);
	CHECK_INT(cfg.min_cpu_percent, 0);
	CHECK_INT(cfg.locality_target_percent, 100);
	CHECK_INT(cfg.node_mem_headroom_percent, 50);
	CHECK_INT(cfg.hysteresis_periods, 0);
	CHECK_U64(cfg.migrate_rate_mb_s, 65536);
	CHECK_U64(cfg.max_migrate_mb_per_scan, 1);
	CHECK_INT(cfg.migrate_threads, 8);
	CHECK_INT(cfg.migrate_tasks, 3);
	CHECK_INT(cfg.affinity, NP_AFFINITY_UNPINNED);
	CHECK_INT(cfg.kernel_balancing, NP_KBAL_IGNORE);
	CHECK_INT(cfg.include_comm.n, 2);
	CHECK_STR(cfg.include_comm.v[1], "java*");
	CHECK_INT(cfg.exclude_comm.n, 1);
	CHECK_STR(cfg.exclude_comm.v[0], "kworker*");
	CHECK_INT(cfg.include_cgroup.n, 2);
	CHECK_STR(cfg.include_cgroup.v[0], "/system.slice");
	CHECK_STR(cfg.include_cgroup.v[1], "/");
	CHECK_INT(cfg.exclude_cgroup.n, 0);
	CHECK_INT(cfg.nr_exclude_pid, 2);
	CHECK_INT(cfg.exclude_pid[1], 4194304);
	CHECK_INT(cfg.log_level, LOG_DEBUG);
	CHECK_STR(np_listen_addr_format(&cfg.metrics_listen, addr), "[::1]:9464");

	/* Written out and read back, it is the same config. */
	out = write_to_string(&cfg);
	CHECK(strstr(out, "include_cgroup = /system.slice /\n") != NULL);
	CHECK(strstr(out, "exclude_cgroup =\n") != NULL);
	np_config_init(&again);
	CHECK_INT(parse(out, &again, &errs), 0);
	CHECK(np_config_equal(&cfg, &again));
	again.exclude_pid[0] = 2;
	CHECK(!np_config_equal(&cfg, &again));
	free(out);

	/* A later parse replaces everything: keys not in it go back to the
	 * defaults. */
	CHECK_INT(parse("min_rss_mb = 5\n", &cfg, &errs), 0);
	CHECK_U64(cfg.min_rss_mb, 5);
	CHECK_INT(cfg.include_comm.n, 0);
	CHECK_INT(cfg.metrics_listen.family, AF_UNSPEC);
	CHECK_INT(cfg.affinity, NP_AFFINITY_UNPINNED);
	np_config_free(&again);
	np_config_free(&cfg);
}

/* A copy owns all it points to: the original can go, or be parsed over. */
/* Every spelling of affinity, and what -nv prints for it. */
static void test_affinity_spellings(void)
{
	static const struct {
		const char *value;
		enum np_affinity_mode mode;
	} cases[] = {
	    {"unpinned", NP_AFFINITY_UNPINNED}, {"node", NP_AFFINITY_UNPINNED},
	    {"never", NP_AFFINITY_NEVER},	{"memory-only", NP_AFFINITY_NEVER},
	    {"none", NP_AFFINITY_NEVER},
	};
	struct np_config cfg;
	struct np_config_errors errs = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[64], *out = NULL;
		size_t len = 0;
		FILE *f;

		np_config_init(&cfg);
		snprintf(text, sizeof(text), "affinity = %s\n", cases[i].value);
		CHECK_INT(parse(text, &cfg, &errs), 0);
		CHECK_INT(cfg.affinity, cases[i].mode);
		f = open_memstream(&out, &len);
		np_config_write(&cfg, f);
		fclose(f);
		CHECK(strstr(out, cases[i].mode == NP_AFFINITY_NEVER ? "affinity = never\n"
								     : "affinity = unpinned\n"));
		free(out);
		np_config_free(&cfg);
	}
	/* Aliases are accepted, not offered. */
	CHECK_STR(only_error("affinity = both\n"),
		  "t.conf:1: affinity: 'both' is not one of: unpinned, never");
}

static void test_copy(void)
{
	const char *text = "include_comm = a b*\n"
			   "exclude_comm = c\n"
			   "include_cgroup = /x /y\n"
			   "exclude_cgroup = /z\n"
			   "exclude_pid = 7 8 9\n"
			   "metrics_listen = [::1]:0\n"
			   "min_rss_mb = 5\n";
	struct np_config cfg, same, copy, empty;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	np_config_init(&same);
	CHECK_INT(parse(text, &cfg, &errs), 0);
	CHECK_INT(parse(text, &same, &errs), 0);
	CHECK_INT(np_config_copy(&copy, &cfg), 0);
	CHECK(np_config_equal(&copy, &cfg));
	CHECK(copy.include_comm.v != cfg.include_comm.v);
	CHECK(copy.include_comm.v[1] != cfg.include_comm.v[1]);
	CHECK(copy.exclude_pid != cfg.exclude_pid);
	np_config_free(&cfg);
	CHECK(np_config_equal(&copy, &same));
	CHECK_INT(parse("include_comm = d\n", &copy, &errs), 0);
	CHECK_STR(copy.include_comm.v[0], "d");

	/* The defaults own nothing: a copy of them neither. */
	np_config_init(&empty);
	CHECK_INT(np_config_copy(&cfg, &empty), 0);
	CHECK(np_config_equal(&cfg, &empty));
	CHECK(cfg.include_comm.v == NULL && cfg.exclude_pid == NULL);
	np_config_free(&cfg);
	np_config_free(&copy);
	np_config_free(&same);
}

static void test_refused_file_keeps_config(void)
{
	struct np_config cfg, before;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	np_config_init(&before);
	CHECK_INT(parse("include_comm = a b\nmin_rss_mb = 3\n", &cfg, &errs), 0);
	CHECK_INT(parse("include_comm = a b\nmin_rss_mb = 3\n", &before, &errs), 0);
	CHECK_INT(parse("min_rss_mb = 4\ninclude_comm = c\nbogus = 1\n", &cfg, &errs), -EINVAL);
	CHECK(np_config_equal(&cfg, &before));
	CHECK_U64(cfg.min_rss_mb, 3);
	CHECK_INT(errs.n, 1);
	CHECK_STR(errs.msg[0], "t.conf:3: unknown key 'bogus'");
	np_config_errors_free(&errs);
	CHECK_INT(errs.n, 0);
	np_config_free(&cfg);
	np_config_free(&before);
}

static void test_errors(void)
{
	CHECK_STR(only_error("min_rss_mb = 12x\n"),
		  "t.conf:1: min_rss_mb: '12x' is not a non-negative integer");
	CHECK_STR(only_error("min_rss_mb = -1\n"),
		  "t.conf:1: min_rss_mb: '-1' is not a non-negative integer");
	CHECK_STR(only_error("min_rss_mb = +1\n"),
		  "t.conf:1: min_rss_mb: '+1' is not a non-negative integer");
	CHECK_STR(only_error("min_rss_mb =\n"), "t.conf:1: min_rss_mb: missing value");
	CHECK_STR(only_error("affinity = ; none\n"), "t.conf:1: affinity: missing value");
	CHECK_STR(only_error("min_rss_mb = 18446744073709551616\n"),
		  "t.conf:1: min_rss_mb: 18446744073709551616 is out of range 0..1048576");
	CHECK_STR(only_error("min_cpu_percent = 101\n"),
		  "t.conf:1: min_cpu_percent: 101 is out of range 0..100");
	CHECK_STR(only_error("\n\nlocality_target_percent = 0\n"),
		  "t.conf:3: locality_target_percent: 0 is out of range 1..100");
	CHECK_STR(only_error("affinity = cpu\n"),
		  "t.conf:1: affinity: 'cpu' is not one of: unpinned, never");
	CHECK_STR(only_error("log_level = error\n"),
		  "t.conf:1: log_level: 'error' is not one of: err, warning, notice, info, debug");
	CHECK_STR(only_error("tick_ms = 5\ntick_ms = 6\n"),
		  "2 errors, first t.conf:1: tick_ms: 5 is out of range 10..10000");
	CHECK_STR(only_error("tick_ms = 50\ntick_ms = 60\n"),
		  "t.conf:2: duplicate key 'tick_ms' (first set on line 1)");
	CHECK_STR(only_error("[numaplaced]\n"),
		  "t.conf:1: section header '[numaplaced]' not allowed: the file has no sections");
	CHECK_STR(only_error("min_rss_mb 5\n"),
		  "t.conf:1: expected 'key = value', found 'min_rss_mb 5'");
	CHECK_STR(only_error("min_rss_mb: 5\n"),
		  "t.conf:1: expected 'key = value', found 'min_rss_mb: 5'");
	CHECK_STR(only_error("a:b = 5\n"), "t.conf:1: unknown key 'a:b'");
	CHECK_STR(only_error(" = 5\n"), "t.conf:1: missing key before '='");
	CHECK_STR(only_error("min_rss_mb = 5\a\n"),
		  "t.conf:1: control character 0x07 at column 15");
	CHECK_STR(only_error("min_rss_mb = 5\r\r\n"),
		  "t.conf:1: control character 0x0d at column 15");
	CHECK_STR(only_error("include_comm = postgres-checkpointer\n"),
		  "t.conf:1: include_comm: 'postgres-checkpointer' never matches: "
		  "a comm is at most 15 characters");
	CHECK_STR(only_error("include_comm = postgres-check*\n"), "");
	CHECK_STR(
	    only_error("exclude_cgroup = system.slice\n"),
	    "t.conf:1: exclude_cgroup: 'system.slice' is not a cgroup path (starting with '/')");
	CHECK_STR(only_error("exclude_pid = 0\n"),
		  "t.conf:1: exclude_pid: '0' is not a pid (1..4194304)");
	CHECK_STR(only_error("exclude_pid = 4194305\n"),
		  "t.conf:1: exclude_pid: '4194305' is not a pid (1..4194304)");
	CHECK_STR(only_error("exclude_pid = 12 -3\n"),
		  "t.conf:1: exclude_pid: '-3' is not a pid (1..4194304)");
}

/* The one parser of listen addresses: what the config takes is what the
 * endpoint binds. */
static void test_listen_addr(void)
{
	static const struct {
		const char *spec;
		int err;
		const char *normalised;
	} cases[] = {
	    {"127.0.0.1:9464", 0, "127.0.0.1:9464"},
	    {"127.1.2.3:0", 0, "127.1.2.3:0"},
	    {"localhost:80", 0, "127.0.0.1:80"},
	    {"[::1]:09464", 0, "[::1]:9464"},
	    {"[0:0::1]:65535", 0, "[::1]:65535"},
	    /* IPv4-mapped: bound as the IPv4 address it maps. */
	    {"[::ffff:127.0.0.1]:1", 0, "127.0.0.1:1"},
	    /* Anything reachable from another machine is refused. */
	    {"0.0.0.0:9464", -EADDRNOTAVAIL, NULL},
	    {"192.168.1.10:9464", -EADDRNOTAVAIL, NULL},
	    {"[::]:9464", -EADDRNOTAVAIL, NULL},
	    {"[fe80::1]:9464", -EADDRNOTAVAIL, NULL},
	    {"[::ffff:10.0.0.1]:1", -EADDRNOTAVAIL, NULL},
	    /* Malformed. */
	    {"127.0.0.1", -EINVAL, NULL},
	    {"127.0.0.1:", -EINVAL, NULL},
	    {"127.0.0.1:65536", -EINVAL, NULL},
	    {"127.0.0.1:99999999999999999999", -EINVAL, NULL},
	    {"127.0.0.1:-1", -EINVAL, NULL},
	    {"127.0.0.1:+1", -EINVAL, NULL},
	    {"127.0.0.1: 1", -EINVAL, NULL},
	    {"127.0.0.1:94x", -EINVAL, NULL},
	    {":9464", -EINVAL, NULL},
	    {"::1:9464", -EINVAL, NULL},
	    {"[::1:9464", -EINVAL, NULL},
	    {"[::1]9464", -EINVAL, NULL},
	    {"[::1]:]:9464", -EINVAL, NULL},
	    {"[127.0.0.1]:9464", -EINVAL, NULL},
	    {"[localhost]:9464", -EINVAL, NULL},
	    {"localhost.:9464", -EINVAL, NULL},
	    {"example.org:9464", -EINVAL, NULL},
	    {"", -EINVAL, NULL},
	};
	struct np_listen_addr a, b;
	struct sockaddr_storage ss;
	char text[NP_LISTEN_ADDR_STRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err;

		memset(&a, 0xaa, sizeof(a));
		err = np_listen_addr_parse(cases[i].spec, &a);
		if (err != cases[i].err)
			fprintf(stderr, "'%s': %d, expected %d\n", cases[i].spec, err,
				cases[i].err);
		CHECK_INT(err, cases[i].err);
		if (err || !cases[i].normalised)
			continue;
		CHECK_STR(np_listen_addr_format(&a, text), cases[i].normalised);
		/* The normalised text reads back to the same address. */
		CHECK_INT(np_listen_addr_parse(text, &b), 0);
		CHECK(np_listen_addr_equal(&a, &b));
	}

	CHECK_INT(np_listen_addr_parse("127.0.0.1:9464", &a), 0);
	CHECK_INT(np_listen_addr_sockaddr(&a, &ss), sizeof(struct sockaddr_in));
	CHECK_INT(ss.ss_family, AF_INET);
	CHECK_INT(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	CHECK_INT(np_listen_addr_parse("localhost:9464", &b), 0);
	CHECK(np_listen_addr_equal(&a, &b));
	CHECK_INT(np_listen_addr_parse("127.0.0.1:9465", &b), 0);
	CHECK(!np_listen_addr_equal(&a, &b));
	CHECK_INT(np_listen_addr_parse("[::1]:9464", &b), 0);
	CHECK(!np_listen_addr_equal(&a, &b));
	CHECK_INT(np_listen_addr_sockaddr(&b, &ss), sizeof(struct sockaddr_in6));
	CHECK_INT(ss.ss_family, AF_INET6);
	CHECK_INT(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9464);
	memset(&b, 0, sizeof(b));
	CHECK_STR(np_listen_addr_format(&b, text), "");
}

static void test_metrics_listen(void)
{
	static const char *const good[] = {"127.0.0.1:9464", "127.1.2.3:1",
					   "[::1]:65535",    "localhost:9464",
					   "127.0.0.1:0",    "[::ffff:127.0.0.2]:80"};
	static const char *const bad[] = {
	    "0.0.0.0:9464", "10.0.0.1:9464", "127.0.0.1", "127.0.0.1:65536",
	    "[::]:9464",    "::1:9464",	     "[::1]9464", "localhost.:9464",
	    "127.0.0.1:x",  "[::1:9464",     ":9464",	  "[::ffff:10.0.0.1]:80",
	};
	char text[128], expected[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "metrics_listen = %s\n", good[i]);
		CHECK_STR(only_error(text), "");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "metrics_listen = %s\n", bad[i]);
		snprintf(expected, sizeof(expected),
			 "t.conf:1: metrics_listen: '%s' is not a loopback address:port "
			 "(127.0.0.1:9464, [::1]:9464, localhost:9464) or empty",
			 bad[i]);
		CHECK_STR(only_error(text), expected);
	}
}

static void test_ordered_keys(void)
{
	CHECK_STR(only_error("scan_period_min_ms = 5000\nscan_period_max_ms = 4000\n"),
		  "t.conf:2: scan_period_max_ms: 4000 is less than scan_period_min_ms "
		  "(5000, line 1)");
	CHECK_STR(only_error("scan_period_max_ms = 4000\nscan_period_min_ms = 5000\n"),
		  "t.conf:2: scan_period_min_ms: 5000 is greater than scan_period_max_ms "
		  "(4000, line 1)");
	CHECK_STR(only_error("\nscan_period_max_ms = 500\n"),
		  "t.conf:2: scan_period_max_ms: 500 is less than scan_period_min_ms "
		  "(1000, the default)");
	CHECK_STR(only_error("scan_period_min_ms = 200\n"),
		  "t.conf:1: scan_period_min_ms: 200 is less than tick_ms (1000, the default)");
	CHECK_STR(only_error("scan_period_min_ms = 5000\nscan_period_max_ms = 5000\n"), "");
	/* A refused value is not compared again. */
	CHECK_STR(only_error("scan_period_max_ms = 50\n"),
		  "t.conf:1: scan_period_max_ms: 50 is out of range 100..3600000");
}

static void test_error_order_and_lines(void)
{
	const char *text = "# comment\n"
			   "scan_period_max_ms = 900\n"
			   "min_rss_mb = x\n"
			   "\n"
			   "   ; indented comment\n"
			   "affinity = both\n";
	struct np_config cfg;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	CHECK_INT(parse(text, &cfg, &errs), -EINVAL);
	CHECK_INT(errs.n, 3);
	if (errs.n == 3) {
		CHECK_STR(errs.msg[0], "t.conf:2: scan_period_max_ms: 900 is less than "
				       "scan_period_min_ms (1000, the default)");
		CHECK_STR(errs.msg[1], "t.conf:3: min_rss_mb: 'x' is not a non-negative integer");
		CHECK_STR(errs.msg[2], "t.conf:6: affinity: 'both' is not one of: unpinned, never");
	}
	/* A second refused parse appends. */
	CHECK_INT(parse("x = 1\n", &cfg, &errs), -EINVAL);
	CHECK_INT(errs.n, 4);
	np_config_errors_free(&errs);
	np_config_free(&cfg);
}

static void test_lexical(void)
{
	static const char nul[] = "min_rss_mb = 5\nmin_cpu_percent = 1\0 0\ntick_ms = 100\n";
	struct np_config cfg;
	struct np_config_errors errs = {0};
	char long_line[4100];

	np_config_init(&cfg);
	/* A NUL byte is an error on its line, not the end of the file. */
	CHECK_INT(np_config_parse("t.conf", nul, sizeof(nul) - 1, &cfg, &errs), -EINVAL);
	CHECK_INT(errs.n, 1);
	if (errs.n == 1)
		CHECK_STR(errs.msg[0], "t.conf:2: NUL byte at column 20");
	np_config_errors_free(&errs);

	/* CRLF line endings, a byte order mark, blanks, ';' comments after a
	 * value, no newline at the end. */
	CHECK_INT(parse("\xef\xbb\xbfmin_rss_mb = 5\r\n\ttick_ms=100 ; faster\r\n"
			"  include_comm   =   a   b  \r\n"
			"exclude_comm = c;d",
			&cfg, &errs),
		  0);
	CHECK_U64(cfg.min_rss_mb, 5);
	CHECK_U64(cfg.tick_ms, 100);
	CHECK_INT(cfg.include_comm.n, 2);
	CHECK_STR(cfg.exclude_comm.v[0], "c;d");
	CHECK_INT(errs.n, 0);

	/* Indented lines are keys of their own, never continuations. */
	CHECK_INT(parse("min_rss_mb = 5\n  tick_ms = 100\n", &cfg, &errs), 0);
	CHECK_U64(cfg.tick_ms, 100);

	/* '#' after a value is part of the value. */
	CHECK_STR(only_error("tick_ms = 100 # faster\n"),
		  "t.conf:1: tick_ms: '100 # faster' is not a non-negative integer");

	/* The longest line taken, and one byte more. */
	memset(long_line, ' ', sizeof(long_line));
	memcpy(long_line, "include_comm = a", 16);
	long_line[4095] = 'b';
	long_line[4096] = '\0';
	np_config_init(&cfg);
	CHECK_INT(parse(long_line, &cfg, &errs), 0);
	CHECK_INT(cfg.include_comm.n, 2);
	long_line[4096] = 'c';
	long_line[4097] = '\0';
	CHECK_STR(only_error(long_line),
		  "t.conf:1: line is 4097 bytes long, longer than the limit of 4096");
	np_config_free(&cfg);
}

static void test_many_errors(void)
{
	struct np_config cfg;
	struct np_config_errors errs = {0};
	char text[4000] = "";

	for (int i = 0; i < 300; i++)
		strcat(text, "x=1\n");
	np_config_init(&cfg);
	CHECK_INT(parse(text, &cfg, &errs), -EINVAL);
	CHECK_INT(errs.n, 101);
	if (errs.n == 101)
		CHECK_STR(errs.msg[100], "t.conf:100: too many errors, stopped reading");
	np_config_errors_free(&errs);
	np_config_free(&cfg);
}

static void test_load(void)
{
	struct np_config cfg;
	struct np_config_errors errs = {0};

	np_config_init(&cfg);
	CHECK_INT(np_config_load("/nonexistent/numaplaced.conf", &cfg, &errs), -ENOENT);
	CHECK_INT(errs.n, 1);
	if (errs.n == 1)
		CHECK_STR(errs.msg[0], "/nonexistent/numaplaced.conf: No such file or directory");
	np_config_errors_free(&errs);
	np_config_free(&cfg);
}

/* A number key's documented "range LO..HI" is the one the parser enforces:
 * its out-of-range message quotes the range. */
static void check_documented_range(const char *where, const char *key, const char *doc)
{
	const char *range = strcasestr(doc, "range "), *refusal;
	char text[128], documented[64];
	size_t n;

	if (!range || strstr(doc, " each"))
		return;
	range += strlen("range ");
	for (n = strspn(range, "0123456789."); n > 0 && range[n - 1] == '.'; n--)
		;
	snprintf(documented, sizeof(documented), "%.*s", (int)n, range);
	snprintf(text, sizeof(text), "%s = 99999999999999999999\n", key);
	refusal = strstr(only_error(text), "out of range ");
	CHECK(refusal != NULL);
	if (refusal && strcmp(refusal + strlen("out of range "), documented) != 0) {
		fprintf(stderr, "%s: %s has range %s, the parser says %s\n", where, key, documented,
			refusal);
		CHECK(false);
	}
}

/* Every default the shipped config shows, uncommented, is the default the
 * code has, and every key is shown. */
static void test_shipped_defaults(void)
{
	const char *root = getenv("NP_SOURCE_ROOT");
	struct np_config defaults, shown;
	struct np_config_errors errs = {0};
	char path[4096], line[512], block[2048] = "", *text, *written;
	size_t size, nr_shown = 0, nr_keys = 0;
	FILE *in, *out;

	snprintf(path, sizeof(path), "%s/conf/numaplaced.conf", root ? root : ".");
	in = fopen(path, "r");
	CHECK(in != NULL);
	if (!in)
		return;
	out = open_memstream(&text, &size);
	while (fgets(line, sizeof(line), in)) {
		size_t key_len = strspn(line + 1, "abcdefghijklmnopqrstuvwxyz_");

		if (line[0] == '#' && key_len > 0 && strncmp(line + 1 + key_len, " =", 2) == 0) {
			char key[64];

			snprintf(key, sizeof(key), "%.*s", (int)key_len, line + 1);
			check_documented_range("numaplaced.conf", key, block);
			block[0] = '\0';
			fputs(line + 1, out);
			nr_shown++;
		} else if (line[0] == '#' && strlen(block) + strlen(line) < sizeof(block)) {
			strcat(block, line);
		} else {
			block[0] = '\0';
		}
	}
	fclose(in);
	fclose(out);

	np_config_init(&defaults);
	np_config_init(&shown);
	CHECK_INT(np_config_parse(path, text, size, &shown, &errs), 0);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.msg[i]);
	CHECK(np_config_equal(&shown, &defaults));
	written = write_to_string(&defaults);
	for (const char *c = written; *c; c++)
		nr_keys += *c == '\n';
	CHECK_INT(nr_shown, nr_keys);
	CHECK_INT(nr_keys, 25);
	free(written);
	free(text);
	np_config_errors_free(&errs);
	np_config_free(&shown);
}

/* Random text from config-like pieces never crashes the parser, a refused
 * text always says why, and an accepted one round-trips. */
static void test_random_text(void)
{
	static const char *const pieces[] = {
	    "min_rss_mb",
	    "tick_ms",
	    "include_comm",
	    "exclude_pid",
	    "metrics_listen",
	    "affinity",
	    "log_level",
	    " = ",
	    "=",
	    "\n",
	    "\r\n",
	    " ",
	    "\t",
	    "#",
	    ";",
	    "[",
	    "]",
	    ":",
	    "0",
	    "12",
	    "99999999999999999999",
	    "-",
	    "*",
	    "/a/",
	    "127.0.0.1:80",
	    "node",
	    "debug",
	    "x",
	    "\0",
	    "\xef\xbb\xbf",
	};
	unsigned seed = 12345;
	size_t accepted = 0, refused = 0;

	for (int round = 0; round < 3000; round++) {
		struct np_config cfg, again;
		struct np_config_errors errs = {0};
		char text[1024];
		size_t len = 0;
		int err;

		for (int n = (int)((seed = seed * 1103515245 + 12345) >> 16) % 40; n > 0; n--) {
			unsigned pick = ((seed = seed * 1103515245 + 12345) >> 16) % 30;
			size_t plen = pick == 28 ? 1 : strlen(pieces[pick]);

			memcpy(text + len, pieces[pick], plen);
			len += plen;
		}
		np_config_init(&cfg);
		err = np_config_parse("r.conf", text, len, &cfg, &errs);
		CHECK(err == 0 || err == -EINVAL);
		CHECK((err == 0) == (errs.n == 0));
		if (err == 0) {
			char *out = write_to_string(&cfg);

			np_config_init(&again);
			CHECK_INT(parse(out, &again, &errs), 0);
			CHECK(np_config_equal(&cfg, &again));
			np_config_free(&again);
			free(out);
			accepted++;
		} else {
			refused++;
		}
		np_config_errors_free(&errs);
		np_config_free(&cfg);
	}
	printf("random texts: %zu accepted, %zu refused\n", accepted, refused);
	/* Both outcomes are exercised. */
	CHECK(accepted > 100);
	CHECK(refused > 100);
}

/* True when @line names @key as a word. */
static bool names_key(const char *line, const char *key)
{
	size_t n = strlen(key);

	for (const char *at = strstr(line, key); at; at = strstr(at + 1, key))
		if ((at == line || at[-1] == ' ') && (at[n] == ' ' || at[n] == '"'))
			return true;
	return false;
}

/* numaplaced.conf(5) has an entry for every key, showing its default and,
 * for numbers, its range. */
static void test_man_page(void)
{
	const char *root = getenv("NP_SOURCE_ROOT");
	struct np_config defaults;
	char path[4096], line[512], *written, *save = NULL;
	char entries[64][512];
	size_t nr_entries = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/conf/numaplaced.conf.5", root ? root : ".");
	in = fopen(path, "r");
	CHECK(in != NULL);
	if (!in)
		return;
	while (fgets(line, sizeof(line), in) && nr_entries < 64)
		if (strncmp(line, ".BR ", 4) == 0 && strstr(line, "(default "))
			strcpy(entries[nr_entries++], line);
	fclose(in);

	np_config_init(&defaults);
	written = write_to_string(&defaults);
	for (char *kv = strtok_r(written, "\n", &save); kv; kv = strtok_r(NULL, "\n", &save)) {
		char *eq = strstr(kv, " =");
		char shown[128];
		bool found = false;

		*eq = '\0';
		snprintf(shown, sizeof(shown), "(default %s", eq[2] ? eq + 3 : "empty");
		for (size_t i = 0; i < nr_entries; i++) {
			if (names_key(entries[i], kv) && strstr(entries[i], shown)) {
				found = true;
				check_documented_range("numaplaced.conf(5)", kv, entries[i]);
			}
		}
		if (!found)
			fprintf(stderr, "numaplaced.conf(5): no entry for %s %s\n", kv, shown);
		CHECK(found);
	}
	free(written);
}

int main(void)
{
	test_defaults();
	test_every_key();
	test_affinity_spellings();
	test_copy();
	test_refused_file_keeps_config();
	test_errors();
	test_listen_addr();
	test_metrics_listen();
	test_ordered_keys();
	test_error_order_and_lines();
	test_lexical();
	test_many_errors();
	test_random_text();
	test_load();
	test_shipped_defaults();
	test_man_page();
	return check_done();
}
