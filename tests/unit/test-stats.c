/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "stats.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <syslog.h>

/*
 * A checker of the Prometheus text exposition format (0.0.4), strict enough
 * to catch what a scraper rejects: names, label syntax and escapes, values,
 * one TYPE and HELP per family before its samples, families not split, no
 * duplicate series. Returns the number of problems, each printed.
 */
#define MAX_FAMILIES 64
#define MAX_SERIES 512

struct expo_state {
	char families[MAX_FAMILIES][128];
	bool has_help[MAX_FAMILIES], has_type[MAX_FAMILIES], has_samples[MAX_FAMILIES];
	char types[MAX_FAMILIES][16];
	unsigned nr_families;
	int current; /* family of the previous line, -1 none */
	char series[MAX_SERIES][256];
	unsigned nr_series;
	unsigned samples;
};

static bool name_start(int c)
{
	return isalpha(c) || c == '_' || c == ':';
}

static bool name_char(int c)
{
	return isalnum(c) || c == '_' || c == ':';
}

/* Length of the metric name at @s (0 if none). */
static size_t metric_name_len(const char *s)
{
	size_t n = 0;

	if (!name_start((unsigned char)s[0]))
		return 0;
	while (name_char((unsigned char)s[n]))
		n++;
	return n;
}

static int family_index(struct expo_state *st, const char *name, size_t len, bool create)
{
	for (unsigned i = 0; i < st->nr_families; i++)
		if (strlen(st->families[i]) == len && memcmp(st->families[i], name, len) == 0)
			return (int)i;
	if (!create || st->nr_families == MAX_FAMILIES || len >= sizeof(st->families[0]))
		return -1;
	memcpy(st->families[st->nr_families], name, len);
	st->families[st->nr_families][len] = '\0';
	return (int)st->nr_families++;
}

static bool valid_value(const char *s, const char **end)
{
	char *e;

	if (strncmp(s, "NaN", 3) == 0 || strncmp(s, "+Inf", 4) == 0 || strncmp(s, "-Inf", 4) == 0) {
		*end = s + (s[0] == 'N' ? 3 : 4);
		return true;
	}
	if (!(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
		return false;
	strtod(s, &e);
	*end = e;
	return e != s;
}

static int expo_problem(unsigned lineno, const char *line, const char *what)
{
	fprintf(stderr, "exposition line %u: %s: \"%s\"\n", lineno, what, line);
	return 1;
}

/* Enter the family @idx; a family seen before but left is an error. */
static int enter_family(struct expo_state *st, int idx, unsigned lineno, const char *line)
{
	if (st->current == idx)
		return 0;
	if (st->has_samples[idx] || st->has_help[idx] || st->has_type[idx])
		return expo_problem(lineno, line, "family split in two");
	st->current = idx;
	return 0;
}

static int check_comment(struct expo_state *st, const char *line, unsigned lineno)
{
	bool help = strncmp(line, "# HELP ", 7) == 0, type = strncmp(line, "# TYPE ", 7) == 0;
	const char *name = line + 7, *rest;
	size_t len;
	int idx;

	if (!help && !type)
		return 0; /* a plain comment */
	len = metric_name_len(name);
	if (!len || name[len] != ' ')
		return expo_problem(lineno, line, "bad metric name in comment");
	idx = family_index(st, name, len, true);
	if (idx < 0)
		return expo_problem(lineno, line, "too many families");
	if (enter_family(st, idx, lineno, line))
		return 1;
	rest = name + len + 1;
	if (help) {
		if (st->has_help[idx])
			return expo_problem(lineno, line, "second HELP");
		for (const char *p = rest; *p; p++) {
			if (*p != '\\')
				continue;
			if (p[1] != '\\' && p[1] != 'n')
				return expo_problem(lineno, line, "bad escape in HELP");
			p++;
		}
		st->has_help[idx] = true;
		return 0;
	}
	if (st->has_type[idx])
		return expo_problem(lineno, line, "second TYPE");
	if (st->has_samples[idx])
		return expo_problem(lineno, line, "TYPE after samples");
	if (strcmp(rest, "counter") && strcmp(rest, "gauge") && strcmp(rest, "histogram") &&
	    strcmp(rest, "summary") && strcmp(rest, "untyped"))
		return expo_problem(lineno, line, "unknown type");
	snprintf(st->types[idx], sizeof(st->types[idx]), "%s", rest);
	st->has_type[idx] = true;
	return 0;
}

static int check_sample(struct expo_state *st, const char *line, unsigned lineno)
{
	size_t len = metric_name_len(line);
	const char *p = line + len, *end;
	char labels[MAX_SERIES][64];
	unsigned nr_labels = 0;
	int idx;

	if (!len)
		return expo_problem(lineno, line, "bad metric name");
	idx = family_index(st, line, len, false);
	if (idx < 0)
		return expo_problem(lineno, line, "sample without TYPE");
	if (enter_family(st, idx, lineno, line))
		return 1;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			const char *lname = p;
			size_t llen = 0;

			if (!isalpha((unsigned char)*p) && *p != '_')
				return expo_problem(lineno, line, "bad label name");
			while (isalnum((unsigned char)p[llen]) || p[llen] == '_')
				llen++;
			if (llen >= sizeof(labels[0]) || nr_labels == 16)
				return expo_problem(lineno, line, "label too long or too many");
			for (unsigned i = 0; i < nr_labels; i++)
				if (strlen(labels[i]) == llen && !memcmp(labels[i], lname, llen))
					return expo_problem(lineno, line, "repeated label");
			memcpy(labels[nr_labels], lname, llen);
			labels[nr_labels++][llen] = '\0';
			p += llen;
			if (p[0] != '=' || p[1] != '"')
				return expo_problem(lineno, line, "expected =\"");
			for (p += 2; *p != '"'; p++) {
				if (!*p || *p == '\n')
					return expo_problem(lineno, line,
							    "unterminated label value");
				if (*p == '\\') {
					if (p[1] != '\\' && p[1] != '"' && p[1] != 'n')
						return expo_problem(lineno, line, "bad escape");
					p++;
				}
			}
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return expo_problem(lineno, line, "expected , or }");
		}
		p++;
	}
	if (*p != ' ')
		return expo_problem(lineno, line, "expected a space before the value");
	p++;
	if (!valid_value(p, &end))
		return expo_problem(lineno, line, "bad value");
	if (*end == ' ') { /* optional timestamp, an integer */
		char *e;

		strtoll(end + 1, &e, 10);
		if (e == end + 1 || *e)
			return expo_problem(lineno, line, "bad timestamp");
	} else if (*end) {
		return expo_problem(lineno, line, "junk after the value");
	}
	if (!strcmp(st->types[idx], "counter") && (p[0] == '-' || strtod(p, NULL) < 0))
		return expo_problem(lineno, line, "negative counter");
	for (unsigned i = 0; i < st->nr_series; i++)
		if (strncmp(st->series[i], line, (size_t)(p - 1 - line)) == 0 &&
		    strlen(st->series[i]) == (size_t)(p - 1 - line))
			return expo_problem(lineno, line, "duplicate series");
	if (st->nr_series < MAX_SERIES && (size_t)(p - 1 - line) < sizeof(st->series[0])) {
		memcpy(st->series[st->nr_series], line, (size_t)(p - 1 - line));
		st->series[st->nr_series++][p - 1 - line] = '\0';
	}
	st->has_samples[idx] = true;
	st->samples++;
	return 0;
}

static int check_exposition(const char *text, unsigned *samples)
{
	static struct expo_state st;
	const char *p = text;
	unsigned lineno = 0;
	int problems = 0;

	memset(&st, 0, sizeof(st));
	st.current = -1;
	if (*text && text[strlen(text) - 1] != '\n')
		problems += expo_problem(0, "", "no final newline");
	while (*p) {
		const char *eol = strchr(p, '\n');
		char line[512];
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		lineno++;
		if (len >= sizeof(line)) {
			problems += expo_problem(lineno, "", "line too long for the checker");
			break;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		if (len == 0)
			;
		else if (line[0] == '#')
			problems += check_comment(&st, line, lineno);
		else if (strncmp(line, "numaplaced_", 11) != 0)
			problems += expo_problem(lineno, line, "metric without numaplaced_ prefix");
		else
			problems += check_sample(&st, line, lineno);
		p += len + (eol ? 1 : 0);
	}
	for (unsigned i = 0; i < st.nr_families; i++)
		if (!st.has_help[i] || !st.has_type[i])
			problems += expo_problem(0, st.families[i], "family lacks HELP or TYPE");
	if (samples)
		*samples = st.samples;
	return problems;
}

/* The checker itself must reject what a scraper rejects. */
static void test_checker(void)
{
	static const char *const bad[] = {
	    "numaplaced_x 1\n", /* no TYPE */
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x{a=\"1} 1\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x{a=1} 1\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x one\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x 1\nnumaplaced_x 2\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x -1\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x 1", /* no \n */
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x gauge\n# TYPE numaplaced_x gauge\n",
	    ("# HELP numaplaced_x h\n# TYPE numaplaced_x counter\n# HELP numaplaced_y h\n"
	     "# TYPE numaplaced_y counter\nnumaplaced_x 1\n"), /* split family */
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x{a=\"\\q\"} 1\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x{a=\"1\",a=\"2\"} 1\n",
	    "# HELP numaplaced_x h\n# TYPE numaplaced_x counter\nnumaplaced_x{9=\"1\"} 1\n",
	    "# TYPE numaplaced_x counter\nnumaplaced_x 1\n", /* no HELP */
	    "# HELP other_x h\n# TYPE other_x counter\nother_x 1\n",
	};
	const char *good =
	    "# HELP numaplaced_x a \\\\ help\n# TYPE numaplaced_x counter\n"
	    "numaplaced_x{a=\"q\\\"\\n\",b=\"\"} 1.5e3\nnumaplaced_x{a=\"r\",} 2 17\n"
	    "# HELP numaplaced_g g\n# TYPE numaplaced_g gauge\nnumaplaced_g -Inf\n";
	unsigned samples;

	fprintf(stderr, "(expected checker complaints follow)\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(check_exposition(bad[i], NULL) > 0);
	fprintf(stderr, "(end of expected complaints)\n");
	CHECK_INT(check_exposition(good, &samples), 0);
	CHECK_INT(samples, 3);
}

static void test_numastat_parse(void)
{
	struct np_numastat st;
	unsigned line = 0;
	const char ok[] = "numa_hit 10\nnuma_miss 2\nnuma_foreign 3\ninterleave_hit 4\n"
			  "local_node 5\nother_node 6\nfuture_counter 7\n";
	const char bad_value[] = "numa_hit 10\nnuma_miss 2x\n";
	const char no_value[] = "numa_hit 10\nnuma_miss 2\nnuma_foreign\n";
	const char overflow[] = "numa_hit 99999999999999999999\n";

	CHECK_INT(np_numastat_parse(ok, sizeof(ok) - 1, &st, &line), 0);
	CHECK_U64(st.numa_hit, 10);
	CHECK_U64(st.numa_miss, 2);
	CHECK_U64(st.numa_foreign, 3);
	CHECK_U64(st.interleave_hit, 4);
	CHECK_U64(st.local_node, 5);
	CHECK_U64(st.other_node, 6);
	/* Without the final newline too (the length bounds it). */
	CHECK_INT(np_numastat_parse(ok, 11, &st, &line), 0);
	CHECK_U64(st.numa_hit, 10);
	CHECK_U64(st.numa_miss, 0);
	CHECK_INT(np_numastat_parse(bad_value, sizeof(bad_value) - 1, &st, &line), -EINVAL);
	CHECK_INT(line, 2);
	CHECK_INT(np_numastat_parse(no_value, sizeof(no_value) - 1, &st, &line), -EINVAL);
	CHECK_INT(line, 3);
	CHECK_INT(np_numastat_parse(overflow, sizeof(overflow) - 1, &st, &line), -EINVAL);
	CHECK_INT(line, 1);
	CHECK_INT(np_numastat_parse("", 0, &st, NULL), 0);
}

static char logged[512];

__attribute__((format(printf, 3, 0)))
static void capture_log(void *data, int priority, const char *fmt, va_list args)
{
	vsnprintf(logged, sizeof(logged), fmt, args);
}

static void test_numastat_fixtures(void)
{
	char path[4200], dir_path[4096];
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_numastat st;
	struct dirent *de;
	unsigned cases = 0;
	DIR *dir;

	/* Every fixture tree with numastat files, whatever captured it. */
	snprintf(dir_path, sizeof(dir_path), "%s", fixture(""));
	dir = opendir(dir_path);
	CHECK(dir != NULL);
	while (dir && (de = readdir(dir))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/sys/devices/system/node/node0/numastat",
			 fixture(de->d_name));
		f = fopen(path, "r");
		if (!f)
			continue;
		fclose(f);
		cases++;
		CHECK_INT(np_ctx_new(fixture(de->d_name), &ctx), 0);
		CHECK_INT(np_topology_read(ctx, &topo), 0);
		for (unsigned n = 0; n < topo->nr_nodes; n++) {
			uint64_t placed, where;

			CHECK_INT(np_numastat_read(ctx, topo->nodes[n].id, &st), 0);
			/* Each allocation counts once as hit or miss and once
			 * as local or other; the file is summed from per-CPU
			 * counters while they run, so allow a little slack. */
			placed = st.numa_hit + st.numa_miss;
			where = st.local_node + st.other_node;
			CHECK((placed > where ? placed - where : where - placed) <=
			      placed / 1000 + 64);
		}
		np_topology_free(topo);
		np_ctx_free(ctx);
	}
	if (dir)
		closedir(dir);
	CHECK(cases >= 1); /* host at least */

	CHECK_INT(np_ctx_new(fixture("host"), &ctx), 0);
	CHECK_INT(np_numastat_read(ctx, 0, &st), 0);
	CHECK_U64(st.numa_hit, 909472);
	CHECK_U64(st.interleave_hit, 1106);
	CHECK_U64(st.other_node, 0);
	CHECK_INT(np_numastat_read(ctx, 5, &st), -ENOENT);
	np_ctx_free(ctx);
}

static void test_numastat_error_message(void)
{
	char dir[] = "/tmp/np-stats-XXXXXX", path[256];
	struct np_ctx *ctx;
	struct np_numastat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "mkdir -p %s/sys/devices/system/node/node0", dir);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/sys/devices/system/node/node0/numastat", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("numa_hit 1\nnuma_miss lots\n", f);
	fclose(f);
	CHECK_INT(np_ctx_new(dir, &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_numastat_read(ctx, 0, &st), -EINVAL);
	CHECK(strstr(logged, "node0/numastat:2:") != NULL);
	CHECK(strstr(logged, "numa_miss lots") != NULL);
	np_ctx_free(ctx);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK_INT(system(path), 0);
}

/* Find the line starting with @prefix in @text; NULL if none. */
static const char *find_line(const char *text, const char *prefix)
{
	size_t len = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, len) == 0)
			return p;
	return NULL;
}

static void test_counters_and_output(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	char *text;
	size_t len;
	unsigned samples;
	FILE *summary;
	char *sum_text;
	size_t sum_len;

	CHECK_INT(np_ctx_new(fixture("handmade-4node"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(np_stats_new(topo, &stats), 0);

	np_stats_add_migrated(stats, 0, 1, 256, 1 << 20);
	np_stats_add_migrated(stats, 0, 1, 256, 1 << 20);
	np_stats_add_migrated(stats, 3, 2, 1, 4096);
	np_stats_add_migrated(stats, 42, 0, 1, 4096); /* a node not in the topology */
	np_stats_add_page_failures(stats, -EBUSY, 7);
	np_stats_add_page_failures(stats, ENOMEM, 2);
	np_stats_add_page_failures(stats, -100000, 1); /* no such errno: "other" */
	np_stats_add_failure(stats, NP_CALL_AFFINITY, -ESRCH);
	np_stats_add_failure(stats, NP_CALL_MOVE_PAGES, -EPERM);
	np_stats_add_failure(stats, NP_CALL_READ, -EACCES);
	np_stats_add_failure(stats, NP_CALL_READ, EACCES);
	np_stats_add_migrate_call(stats, NP_CALL_MOVE_PAGES, 20000000);
	np_stats_add_pages_queried(stats, 1000);
	np_stats_add_scan(stats, 12345);
	np_stats_add_scan(stats, 5);
	np_stats_add_skip(stats, NP_REASON_TOO_YOUNG);
	np_stats_add_skip(stats, NP_REASON_TOO_YOUNG);
	np_stats_add_skip(stats, NP_REASON_COUNT);     /* out of range: ignored */
	np_stats_add_skip(stats, NP_REASON_MISPLACED); /* a move is no skip */
	{
		uint64_t many[NP_REASON_COUNT] = {0};

		many[NP_REASON_TOO_YOUNG] = 3;
		many[NP_REASON_SCAN_DUE] = 4; /* a read is no skip */
		np_stats_add_skips(stats, many);
		CHECK_U64(np_stats_skips(stats, NP_REASON_SCAN_DUE), 0);
	}

	CHECK_U64(np_stats_migrated_bytes(stats, 0, 1), 2 << 20);
	CHECK_U64(np_stats_migrated_bytes(stats, 1, 0), 0);
	CHECK_U64(np_stats_page_failures(stats, EBUSY), 7);
	CHECK_U64(np_stats_failures(stats, NP_CALL_AFFINITY, ESRCH), 1);
	/* Refusals for want of privilege are counted apart; a task that
	 * vanished (ESRCH) is none. */
	CHECK_U64(np_stats_permission_denied(stats, NP_CALL_READ), 2);
	CHECK_U64(np_stats_permission_denied(stats, NP_CALL_MOVE_PAGES), 1);
	CHECK_U64(np_stats_permission_denied(stats, NP_CALL_AFFINITY), 0);
	CHECK_U64(np_stats_permission_denied(stats, NP_CALL_NR), 0);
	CHECK_U64(np_stats_skips(stats, NP_REASON_TOO_YOUNG), 5);
	CHECK_U64(np_stats_skips(stats, NP_REASON_MISPLACED), 0);
	CHECK_U64(np_stats_scans(stats), 2);
	CHECK_STR(np_reason_metric(NP_REASON_RATE_LIMIT), "rate_limit");
	CHECK_STR(np_reason_metric(NP_REASON_COUNT), "unknown");

	/* Three cycles: the longest is the one kept; the second was quiet. */
	np_stats_add_tick(stats, 12000000, 1000000);
	np_stats_add_quiet_tick(stats);
	np_stats_add_tick(stats, 30000000, 2000000);
	np_stats_add_tick(stats, 5000000, 1000000);

	/* The handmade tree has no numastat files. */
	CHECK_INT(np_stats_update_numastat(stats, ctx), -ENOENT);

	CHECK_INT(np_stats_format_prometheus(stats, &text, &len), 0);
	CHECK_INT(strlen(text), len);
	CHECK_INT(check_exposition(text, &samples), 0);
	/* 4 nodes: 12 pairs in each matrix, plus the unknown-node pair. */
	CHECK(samples > 2 * 13);
	CHECK(find_line(text, "numaplaced_migrated_bytes_total{src=\"0\",dst=\"1\"} 2097152\n"));
	CHECK(find_line(text, "numaplaced_migrated_bytes_total{src=\"1\",dst=\"0\"} 0\n"));
	CHECK(find_line(text, "numaplaced_migrated_bytes_total{src=\"3\",dst=\"2\"} 4096\n"));
	CHECK(find_line(text, "numaplaced_migrated_bytes_total{src=\"other\",dst=\"0\"} 4096\n"));
	CHECK(!find_line(text, "numaplaced_migrated_bytes_total{src=\"0\",dst=\"0\"}"));
	CHECK(find_line(text, "numaplaced_migrated_pages_total{src=\"0\",dst=\"1\"} 512\n"));
	CHECK(find_line(text, "numaplaced_page_failures_total{errno=\"EBUSY\"} 7\n"));
	CHECK(find_line(text, "numaplaced_page_failures_total{errno=\"ENOMEM\"} 2\n"));
	CHECK(find_line(text, "numaplaced_page_failures_total{errno=\"other\"} 1\n"));
	CHECK(
	    find_line(text, "numaplaced_failures_total{action=\"affinity\",errno=\"ESRCH\"} 1\n"));
	CHECK(find_line(text,
			"numaplaced_failures_total{action=\"move_pages\",errno=\"EPERM\"} 1\n"));
	CHECK(find_line(text, "numaplaced_permission_denied_total{action=\"read\"} 2\n"));
	CHECK(find_line(text, "numaplaced_permission_denied_total{action=\"move_pages\"} 1\n"));
	CHECK(find_line(text, "numaplaced_permission_denied_total{action=\"affinity\"} 0\n"));
	CHECK(find_line(text, "numaplaced_migrate_calls_total{call=\"move_pages\"} 1\n"));
	CHECK(find_line(text,
			"numaplaced_migrate_call_seconds_total{call=\"move_pages\"} 0.020000\n"));
	CHECK(
	    find_line(text, "numaplaced_migrate_call_seconds_max{call=\"move_pages\"} 0.020000\n"));
	CHECK(find_line(text,
			"numaplaced_migrate_call_seconds_max{call=\"migrate_pages\"} 0.000000\n"));
	CHECK(find_line(text, "numaplaced_ticks_total 3\n"));
	CHECK(find_line(text, "numaplaced_tick_seconds_total 0.047000\n"));
	CHECK(find_line(text, "numaplaced_tick_seconds_max 0.030000\n"));
	CHECK(find_line(text, "numaplaced_tick_cpu_seconds_total 0.004000\n"));
	CHECK(find_line(text, "numaplaced_scans_total 2\n"));
	CHECK(find_line(text, "numaplaced_numa_maps_read_bytes_total 12350\n"));
	CHECK(find_line(text, "numaplaced_skips_total{reason=\"too_young\"} 5\n"));
	CHECK(find_line(text, "numaplaced_skips_total{reason=\"backoff\"} 0\n"));
	CHECK(find_line(text, "numaplaced_cpu_seconds_total{mode=\"user\"} "));
	CHECK(find_line(text, "# TYPE numaplaced_node_numa_hit_pages_total counter\n"));
	CHECK(!find_line(text, "numaplaced_node_numa_hit_pages_total{"));
	free(text);

	summary = open_memstream(&sum_text, &sum_len);
	CHECK_INT(np_stats_write_summary(stats, summary), 0);
	fclose(summary);
	CHECK(strstr(sum_text, "0->1 2.0 MiB") != NULL);
	CHECK(strstr(sum_text, "EBUSY 7") != NULL);
	CHECK(strstr(sum_text, "too_young 5") != NULL);
	CHECK(strstr(sum_text, "\npermission denied: 3, move_pages 1, read 2\n") != NULL);
	CHECK(strstr(sum_text, "\ncycles 3: 0.004 s of CPU (0.002 s in the quiet ones), 0.047 s "
			       "of wall time, the longest 30.0 ms\n") != NULL);
	free(sum_text);

	np_stats_free(stats);
	np_topology_free(topo);
	np_ctx_free(ctx);

	/* The host capture has numastat: per-node series appear. */
	CHECK_INT(np_ctx_new(fixture("host"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(np_stats_new(topo, &stats), 0);
	CHECK_INT(np_stats_update_numastat(stats, ctx), 0);
	CHECK_INT(np_stats_format_prometheus(stats, &text, &len), 0);
	CHECK_INT(check_exposition(text, NULL), 0);
	CHECK(find_line(text, "numaplaced_node_numa_hit_pages_total{node=\"0\"} 909472\n"));
	CHECK(find_line(text, "numaplaced_node_interleave_hit_pages_total{node=\"0\"} 1106\n"));
	/* One node: no pairs to list. */
	CHECK(!find_line(text, "numaplaced_migrated_bytes_total{"));
	free(text);
	np_stats_free(stats);
	np_topology_free(topo);
	np_ctx_free(ctx);
}

int main(void)
{
	test_checker();
	test_numastat_parse();
	test_numastat_fixtures();
	test_numastat_error_message();
	test_counters_and_output();
	return check_done();
}
