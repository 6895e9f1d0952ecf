/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* A config file is small; anything bigger is a mistake, not a config. */
#define CONFIG_MAX_BYTES (1024 * 1024)
/* Longest line, without its line ending: room for a list of a few hundred
 * pids or patterns on one key, and still a bound on what one line costs. */
#define LINE_MAX_BYTES 4096
/* Past this many errors the rest of a file is noise (a binary, say). */
#define MAX_ERRORS 100
/* A comm (TASK_COMM_LEN - 1): a literal name longer than this never matches. */
#define COMM_MAX 15

enum kind {
	KIND_U64,      /* uint64_t, decimal, in [min, max] */
	KIND_UNSIGNED, /* unsigned, decimal, in [min, max] */
	KIND_CHOICE,   /* an enum or int field, one of the named values */
	KIND_GLOBS,    /* struct np_strv of fnmatch(3) patterns on comm */
	KIND_CGROUPS,  /* struct np_strv of absolute cgroup paths */
	KIND_PIDS,     /* exclude_pid / nr_exclude_pid */
	KIND_LISTEN,   /* struct np_listen_addr, or none */
};

struct choice {
	const char *name;
	int value;
	bool alias; /* accepted, not listed: an older or second spelling */
};

struct key {
	const char *name;
	enum kind kind;
	size_t offset;
	uint64_t def;		      /* numbers, choices; lists and the address: none */
	uint64_t min, max;	      /* numbers */
	const struct choice *choices; /* KIND_CHOICE, ended by a NULL name */
};

/* "none" and "node" are the spellings before homes existed. */
static const struct choice affinity_choices[] = {
    {"unpinned", NP_AFFINITY_UNPINNED, false}, {"never", NP_AFFINITY_NEVER, false},
    {"memory-only", NP_AFFINITY_NEVER, true},  {"none", NP_AFFINITY_NEVER, true},
    {"node", NP_AFFINITY_UNPINNED, true},      {NULL, 0, false},
};

static const struct choice thread_homes_choices[] = {
    {"yes", NP_THREAD_HOMES_YES, false},
    {"no", NP_THREAD_HOMES_NO, false},
    {NULL, 0, false},
};

static const struct choice kernel_balancing_choices[] = {
    {"defer", NP_KBAL_DEFER, false},
    {"ignore", NP_KBAL_IGNORE, false},
    {NULL, 0, false},
};

static const struct choice log_level_choices[] = {
    {"err", LOG_ERR, false},   {"warning", LOG_WARNING, false}, {"notice", LOG_NOTICE, false},
    {"info", LOG_INFO, false}, {"debug", LOG_DEBUG, false},	{NULL, 0, false},
};

/* Choice fields are stored through an int; the enums must be int-sized. */
_Static_assert(sizeof(enum np_affinity_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum np_kernel_balancing_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum np_thread_homes_mode) == sizeof(int), "enum size");

#define FIELD(f) offsetof(struct np_config, f)

/* A key is named as its field. */
/* clang-format off */
#define U64(f, def, min, max) {#f, KIND_U64, FIELD(f), def, min, max, NULL}
#define UNSIGNED(f, def, min, max) {#f, KIND_UNSIGNED, FIELD(f), def, min, max, NULL}
#define CHOICE(f, def, choices) {#f, KIND_CHOICE, FIELD(f), def, 0, 0, choices}
#define LIST(f, kind) {#f, kind, FIELD(f), 0, 0, 0, NULL}
/* clang-format on */

/* Every key with its default and range: the one place the code has them.
 * In the documented order (np_config_write, the shipped config and
 * numaplaced.conf(5) follow it; tests check that those two show these
 * defaults and ranges). */
static const struct key keys[] = {
    U64(scan_delay_ms, 1000, 0, 3600000),
    U64(scan_period_min_ms, 1000, 100, 3600000),
    U64(scan_period_max_ms, 60000, 100, 3600000),
    U64(tick_ms, 1000, 10, 10000),
    U64(scan_budget_mb, 4096, 1, 1048576),
    U64(min_rss_mb, 100, 0, 1048576),
    UNSIGNED(min_cpu_percent, 5, 0, 100),
    UNSIGNED(run_sample_hz, 10, 0, 1000),
    UNSIGNED(locality_target_percent, 90, 1, 100),
    UNSIGNED(node_mem_headroom_percent, 10, 0, 50),
    UNSIGNED(hysteresis_periods, 3, 0, 100),
    U64(migrate_rate_mb_s, 256, 1, 65536),
    U64(max_migrate_mb_per_scan, 1024, 1, 1048576),
    UNSIGNED(migrate_threads, 2, 1, 8), /* the actuator's NP_MOVERS_MAX */
    UNSIGNED(migrate_tasks, 2, 1, 8),	/* the actuator's NP_MOVES_MAX */
    CHOICE(affinity, NP_AFFINITY_UNPINNED, affinity_choices),
    CHOICE(thread_homes, NP_THREAD_HOMES_YES, thread_homes_choices),
    CHOICE(kernel_balancing, NP_KBAL_DEFER, kernel_balancing_choices),
    LIST(include_comm, KIND_GLOBS),
    LIST(exclude_comm, KIND_GLOBS),
    LIST(include_cgroup, KIND_CGROUPS),
    LIST(exclude_cgroup, KIND_CGROUPS),
    LIST(exclude_pid, KIND_PIDS),
    CHOICE(log_level, LOG_NOTICE, log_level_choices),
    LIST(metrics_listen, KIND_LISTEN),
};

#define NR_KEYS (sizeof(keys) / sizeof(keys[0]))

/* Settings that must be ordered: first <= second. */
static const struct {
	const char *lower, *upper;
} ordered_keys[] = {
    {"scan_period_min_ms", "scan_period_max_ms"},
    {"tick_ms", "scan_period_min_ms"},
};

static void *field(struct np_config *cfg, const struct key *k)
{
	return (char *)cfg + k->offset;
}

static const void *cfield(const struct np_config *cfg, const struct key *k)
{
	return (const char *)cfg + k->offset;
}

static uint64_t int_value(const struct np_config *cfg, const struct key *k)
{
	if (k->kind == KIND_U64)
		return *(const uint64_t *)cfield(cfg, k);
	return *(const unsigned *)cfield(cfg, k);
}

/* A number or a choice's value into its field. */
static void store_int(struct np_config *cfg, const struct key *k, uint64_t v)
{
	int choice = (int)v;

	if (k->kind == KIND_U64)
		*(uint64_t *)field(cfg, k) = v;
	else if (k->kind == KIND_UNSIGNED)
		*(unsigned *)field(cfg, k) = (unsigned)v;
	else
		memcpy(field(cfg, k), &choice, sizeof(choice));
}

static int choice_value(const struct np_config *cfg, const struct key *k)
{
	int v;

	memcpy(&v, cfield(cfg, k), sizeof(v));
	return v;
}

static const char *choice_name(const struct key *k, int value)
{
	for (const struct choice *c = k->choices; c->name; c++)
		if (c->value == value)
			return c->name;
	return "?";
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NR_KEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

void np_config_init(struct np_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->metrics_listen.family = AF_UNSPEC;
	for (const struct key *k = keys; k < keys + NR_KEYS; k++)
		if (k->kind == KIND_U64 || k->kind == KIND_UNSIGNED || k->kind == KIND_CHOICE)
			store_int(cfg, k, k->def);
}

void np_strv_free(struct np_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

void np_config_free(struct np_config *cfg)
{
	np_strv_free(&cfg->include_comm);
	np_strv_free(&cfg->exclude_comm);
	np_strv_free(&cfg->include_cgroup);
	np_strv_free(&cfg->exclude_cgroup);
	free(cfg->exclude_pid);
	np_config_init(cfg);
}

static int store_words(struct np_strv *dst, char *const *words, size_t n)
{
	struct np_strv sv = {NULL, 0};

	if (n && !(sv.v = calloc(n, sizeof(*sv.v))))
		return -ENOMEM;
	for (; sv.n < n; sv.n++) {
		if (!(sv.v[sv.n] = strdup(words[sv.n]))) {
			np_strv_free(&sv);
			return -ENOMEM;
		}
	}
	np_strv_free(dst);
	*dst = sv;
	return 0;
}

int np_strv_copy(struct np_strv *dst, const struct np_strv *src)
{
	return store_words(dst, src->v, src->n);
}

int np_config_copy(struct np_config *dst, const struct np_config *src)
{
	struct np_config copy = *src;
	int err = 0;

	/* Nothing src owns is shared: each of these gets a copy of its own. */
	copy.include_comm = copy.exclude_comm = (struct np_strv){NULL, 0};
	copy.include_cgroup = copy.exclude_cgroup = (struct np_strv){NULL, 0};
	copy.exclude_pid = NULL;
	copy.nr_exclude_pid = 0;
	for (const struct key *k = keys; k < keys + NR_KEYS && !err; k++) {
		if (k->kind == KIND_GLOBS || k->kind == KIND_CGROUPS) {
			const struct np_strv *sv = cfield(src, k);

			err = store_words(field(&copy, k), sv->v, sv->n);
		}
	}
	if (!err && src->nr_exclude_pid) {
		size_t size = src->nr_exclude_pid * sizeof(*copy.exclude_pid);

		if ((copy.exclude_pid = malloc(size))) {
			memcpy(copy.exclude_pid, src->exclude_pid, size);
			copy.nr_exclude_pid = src->nr_exclude_pid;
		} else {
			err = -ENOMEM;
		}
	}
	if (err)
		np_config_free(&copy);
	*dst = copy;
	return err;
}

static bool strv_equal(const struct np_strv *a, const struct np_strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

bool np_config_equal(const struct np_config *a, const struct np_config *b)
{
	for (const struct key *k = keys; k < keys + NR_KEYS; k++) {
		switch (k->kind) {
		case KIND_U64:
		case KIND_UNSIGNED:
			if (int_value(a, k) != int_value(b, k))
				return false;
			break;
		case KIND_CHOICE:
			if (choice_value(a, k) != choice_value(b, k))
				return false;
			break;
		case KIND_GLOBS:
		case KIND_CGROUPS:
			if (!strv_equal(cfield(a, k), cfield(b, k)))
				return false;
			break;
		case KIND_PIDS:
			if (a->nr_exclude_pid != b->nr_exclude_pid ||
			    (a->nr_exclude_pid &&
			     memcmp(a->exclude_pid, b->exclude_pid,
				    a->nr_exclude_pid * sizeof(*a->exclude_pid)) != 0))
				return false;
			break;
		case KIND_LISTEN:
			if (!np_listen_addr_equal(&a->metrics_listen, &b->metrics_listen))
				return false;
			break;
		}
	}
	return true;
}

void np_config_errors_free(struct np_config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		free(errs->msg[i]);
	free(errs->msg);
	errs->msg = NULL;
	errs->n = 0;
}

/* One error before it is handed out; kept sorted by line, since the
 * cross-key checks run after the last line. */
struct pending_error {
	unsigned line;
	char *msg;
};

struct parser {
	const char *name;
	const char *buf;
	size_t len, pos;
	unsigned line; /* the line being handled */
	struct np_config cfg;
	unsigned set_on[NR_KEYS]; /* line a key was set on, 0 if not set */
	bool bad[NR_KEYS];	  /* a key whose value was refused */
	struct pending_error *errv;
	size_t nr_errors;
	bool out_of_memory;
};

static void __attribute__((format(printf, 3, 4)))
add_error(struct parser *p, unsigned line, const char *fmt, ...)
{
	struct pending_error *bigger;
	char *text, *msg;
	va_list ap;
	size_t at;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		p->out_of_memory = true;
		return;
	}
	n = asprintf(&msg, "%s:%u: %s", p->name, line, text);
	free(text);
	if (n < 0) {
		p->out_of_memory = true;
		return;
	}
	bigger = realloc(p->errv, (p->nr_errors + 1) * sizeof(*p->errv));
	if (!bigger) {
		free(msg);
		p->out_of_memory = true;
		return;
	}
	p->errv = bigger;
	at = p->nr_errors;
	while (at > 0 && p->errv[at - 1].line > line) {
		p->errv[at] = p->errv[at - 1];
		at--;
	}
	p->errv[at] = (struct pending_error){line, msg};
	p->nr_errors++;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/*
 * Check one raw line (without its line ending): every bad line gets its own
 * message. The format is "key = value", comments on their own line; no
 * sections, no "key: value", no continuation lines. Returns false for a line
 * that is not to be handled.
 */
static bool check_line(struct parser *p, const char *s, size_t n)
{
	size_t i = 0, eq, key_end;

	if (n > LINE_MAX_BYTES) {
		add_error(p, p->line, "line is %zu bytes long, longer than the limit of %d", n,
			  LINE_MAX_BYTES);
		return false;
	}
	for (size_t c = 0; c < n; c++) {
		unsigned char ch = (unsigned char)s[c];

		if (ch == '\0') {
			add_error(p, p->line, "NUL byte at column %zu", c + 1);
			return false;
		}
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			add_error(p, p->line, "control character 0x%02x at column %zu", ch, c + 1);
			return false;
		}
	}
	while (i < n && is_blank(s[i]))
		i++;
	if (i == n || s[i] == '#' || s[i] == ';')
		return true;
	if (s[i] == '[') {
		add_error(p, p->line, "section header '%.*s' not allowed: the file has no sections",
			  (int)(n - i), s + i);
		return false;
	}
	for (eq = i; eq < n && s[eq] != '='; eq++)
		;
	if (eq == n) {
		add_error(p, p->line, "expected 'key = value', found '%.*s'", (int)(n - i), s + i);
		return false;
	}
	for (key_end = eq; key_end > i && is_blank(s[key_end - 1]); key_end--)
		;
	if (key_end == i) {
		add_error(p, p->line, "missing key before '='");
		return false;
	}
	for (size_t c = i; c < key_end; c++) {
		if (!is_key_char(s[c])) {
			add_error(p, p->line, "unknown key '%.*s'", (int)(key_end - i), s + i);
			return false;
		}
	}
	return true;
}

static void handle_key(struct parser *p, const char *name, const char *value);

/* Split a checked, non-blank line into its key and value, both without
 * the blanks around them, and hand them over. A ';' after a blank or right
 * after the '=' starts a comment that runs to the end of the line ("a;b"
 * is a pattern). */
static void handle_line(struct parser *p, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n), *key = s, *value = eq + 1, *end = s + n;
	const char *key_end = eq;
	char *name, *val;

	while (key < key_end && is_blank(*key))
		key++;
	if (key == key_end || *key == '#' || *key == ';')
		return;
	while (key_end > key && is_blank(key_end[-1]))
		key_end--;
	for (const char *c = value; c < end; c++) {
		/* Also right after the '=': np_config_write puts a blank
		 * there, and what it writes must read back the same. */
		if (*c == ';' && (c == value || is_blank(c[-1]))) {
			end = c;
			break;
		}
	}
	while (value < end && is_blank(*value))
		value++;
	while (end > value && is_blank(end[-1]))
		end--;
	name = strndup(key, (size_t)(key_end - key));
	val = strndup(value, (size_t)(end - value));
	if (name && val)
		handle_key(p, name, val);
	else
		p->out_of_memory = true;
	free(name);
	free(val);
}

/* Every line of the buffer, p->line counting them. */
static void parse_lines(struct parser *p)
{
	while (p->pos < p->len && !p->out_of_memory) {
		const char *s = p->buf + p->pos, *eol;
		size_t n;

		if (p->nr_errors >= MAX_ERRORS) {
			add_error(p, p->line, "too many errors, stopped reading");
			return;
		}
		eol = memchr(s, '\n', p->len - p->pos);
		n = eol ? (size_t)(eol - s) : p->len - p->pos;
		p->pos += n + (eol ? 1 : 0);
		p->line++;
		/* CRLF files are accepted: the CR of a line ending is dropped. */
		if (n > 0 && s[n - 1] == '\r')
			n--;
		/* So is a UTF-8 byte order mark. */
		if (p->line == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
			s += 3;
			n -= 3;
		}
		if (check_line(p, s, n) && memchr(s, '=', n))
			handle_line(p, s, n);
	}
}

/* A decimal number with nothing else: no sign, no blanks, no suffix. */
static int parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static bool set_int(struct parser *p, const struct key *k, const char *value)
{
	uint64_t v;
	int err = parse_decimal(value, &v);

	if (err == -EINVAL) {
		add_error(p, p->line, "%s: '%s' is not a non-negative integer", k->name, value);
		return false;
	}
	if (err == -ERANGE || v < k->min || v > k->max) {
		add_error(p, p->line, "%s: %s is out of range %" PRIu64 "..%" PRIu64, k->name,
			  value, k->min, k->max);
		return false;
	}
	store_int(&p->cfg, k, v);
	return true;
}

static bool set_choice(struct parser *p, const struct key *k, const char *value)
{
	char names[128] = "";

	for (const struct choice *c = k->choices; c->name; c++) {
		if (strcmp(c->name, value) == 0) {
			store_int(&p->cfg, k, (uint64_t)c->value);
			return true;
		}
		if (c->alias)
			continue;
		if (names[0])
			strcat(names, ", ");
		strcat(names, c->name);
	}
	add_error(p, p->line, "%s: '%s' is not one of: %s", k->name, value, names);
	return false;
}

/* Split a blank-separated list in place; *tokens gets pointers into @s. */
static int split_words(char *s, char ***tokens, size_t *count)
{
	char **v = NULL;
	size_t n = 0;

	for (char *save = NULL, *w = strtok_r(s, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		char **bigger = realloc(v, (n + 1) * sizeof(*v));

		if (!bigger) {
			free(v);
			return -ENOMEM;
		}
		v = bigger;
		v[n++] = w;
	}
	*tokens = v;
	*count = n;
	return 0;
}

static bool has_glob_chars(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

/* Check one list word; returns false (after an error) to refuse it. */
static bool check_word(struct parser *p, const struct key *k, char *w)
{
	uint64_t pid;
	size_t n;

	switch (k->kind) {
	case KIND_GLOBS:
		if (!has_glob_chars(w) && strlen(w) > COMM_MAX) {
			add_error(p, p->line,
				  "%s: '%s' never matches: a comm is at most %d characters",
				  k->name, w, COMM_MAX);
			return false;
		}
		return true;
	case KIND_CGROUPS:
		if (w[0] != '/') {
			add_error(p, p->line, "%s: '%s' is not a cgroup path (starting with '/')",
				  k->name, w);
			return false;
		}
		/* "/a/b/" and "/a/b" name the same cgroup. */
		for (n = strlen(w); n > 1 && w[n - 1] == '/'; n--)
			w[n - 1] = '\0';
		return true;
	case KIND_PIDS:
		if (parse_decimal(w, &pid) < 0 || pid < 1 || pid > NP_CONFIG_PID_MAX) {
			add_error(p, p->line, "%s: '%s' is not a pid (1..%d)", k->name, w,
				  NP_CONFIG_PID_MAX);
			return false;
		}
		return true;
	default:
		return false;
	}
}

static int store_pids(struct np_config *cfg, char **words, size_t n)
{
	int *pids = NULL;

	if (n && !(pids = calloc(n, sizeof(*pids))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pids[i] = atoi(words[i]); /* checked: 1..NP_CONFIG_PID_MAX */
	free(cfg->exclude_pid);
	cfg->exclude_pid = pids;
	cfg->nr_exclude_pid = n;
	return 0;
}

static bool set_list(struct parser *p, const struct key *k, const char *value)
{
	char *copy = strdup(value), **words = NULL;
	size_t n = 0;
	bool ok = true;
	int err;

	if (!copy || split_words(copy, &words, &n) < 0) {
		free(copy);
		p->out_of_memory = true;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		ok = check_word(p, k, words[i]) && ok;
	if (ok) {
		err = k->kind == KIND_PIDS ? store_pids(&p->cfg, words, n)
					   : store_words(field(&p->cfg, k), words, n);
		if (err < 0) {
			p->out_of_memory = true;
			ok = false;
		}
	}
	free(words);
	free(copy);
	return ok;
}

/* The endpoint has no authentication, so it never listens beyond the
 * machine (np_listen_addr_parse); a proxy can publish it. */
static bool set_listen(struct parser *p, const struct key *k, const char *value)
{
	struct np_listen_addr addr = {.family = AF_UNSPEC};

	if (*value && np_listen_addr_parse(value, &addr) < 0) {
		add_error(p, p->line,
			  "%s: '%s' is not a loopback address:port (127.0.0.1:9464, [::1]:9464, "
			  "localhost:9464) or empty",
			  k->name, value);
		return false;
	}
	p->cfg.metrics_listen = addr;
	return true;
}

static void handle_key(struct parser *p, const char *name, const char *value)
{
	const struct key *k = find_key(name);
	size_t i;
	bool ok;

	if (!k) {
		add_error(p, p->line, "unknown key '%s'", name);
		return;
	}
	i = (size_t)(k - keys);
	if (p->set_on[i]) {
		add_error(p, p->line, "duplicate key '%s' (first set on line %u)", name,
			  p->set_on[i]);
		return;
	}
	p->set_on[i] = p->line;
	if (!*value &&
	    (k->kind == KIND_U64 || k->kind == KIND_UNSIGNED || k->kind == KIND_CHOICE)) {
		add_error(p, p->line, "%s: missing value", name);
		p->bad[i] = true;
		return;
	}
	switch (k->kind) {
	case KIND_U64:
	case KIND_UNSIGNED:
		ok = set_int(p, k, value);
		break;
	case KIND_CHOICE:
		ok = set_choice(p, k, value);
		break;
	case KIND_LISTEN:
		ok = set_listen(p, k, value);
		break;
	default:
		ok = set_list(p, k, value);
		break;
	}
	p->bad[i] = !ok;
}

/* Where a value came from, for messages about two keys. */
static void describe_origin(const struct parser *p, size_t i, char *buf, size_t size)
{
	if (p->set_on[i])
		snprintf(buf, size, "line %u", p->set_on[i]);
	else
		snprintf(buf, size, "the default");
}

/* Each ordered pair of keys; the error goes on the line set later, the one
 * that broke the order. */
static void check_ordered_keys(struct parser *p)
{
	for (size_t o = 0; o < sizeof(ordered_keys) / sizeof(ordered_keys[0]); o++) {
		const struct key *lo = find_key(ordered_keys[o].lower);
		const struct key *hi = find_key(ordered_keys[o].upper);
		size_t ilo = (size_t)(lo - keys), ihi = (size_t)(hi - keys);
		uint64_t vlo = int_value(&p->cfg, lo), vhi = int_value(&p->cfg, hi);
		char origin[32];

		if (p->bad[ilo] || p->bad[ihi] || vlo <= vhi)
			continue;
		if (p->set_on[ihi] > p->set_on[ilo]) {
			describe_origin(p, ilo, origin, sizeof(origin));
			add_error(p, p->set_on[ihi],
				  "%s: %" PRIu64 " is less than %s (%" PRIu64 ", %s)", hi->name,
				  vhi, lo->name, vlo, origin);
		} else {
			describe_origin(p, ihi, origin, sizeof(origin));
			add_error(p, p->set_on[ilo],
				  "%s: %" PRIu64 " is greater than %s (%" PRIu64 ", %s)", lo->name,
				  vlo, hi->name, vhi, origin);
		}
	}
}

static int hand_over_errors(struct parser *p, struct np_config_errors *errs)
{
	char **bigger = realloc(errs->msg, (errs->n + p->nr_errors) * sizeof(*errs->msg));

	if (!bigger)
		return -ENOMEM;
	errs->msg = bigger;
	for (size_t i = 0; i < p->nr_errors; i++) {
		errs->msg[errs->n++] = p->errv[i].msg;
		p->errv[i].msg = NULL;
	}
	return 0;
}

int np_config_parse(const char *name, const char *buf, size_t len, struct np_config *cfg,
		    struct np_config_errors *errs)
{
	struct parser p = {.name = name ? name : "(config)", .buf = buf, .len = len};
	int err = 0;

	np_config_init(&p.cfg);
	parse_lines(&p);
	check_ordered_keys(&p);

	if (p.out_of_memory)
		err = -ENOMEM;
	else if (p.nr_errors > 0)
		err = hand_over_errors(&p, errs) < 0 ? -ENOMEM : -EINVAL;
	for (size_t i = 0; i < p.nr_errors; i++)
		free(p.errv[i].msg);
	free(p.errv);
	if (err) {
		np_config_free(&p.cfg);
		return err;
	}
	np_config_free(cfg);
	*cfg = p.cfg;
	return 0;
}

static int add_file_error(struct np_config_errors *errs, const char *path, int err)
{
	char **bigger = realloc(errs->msg, (errs->n + 1) * sizeof(*errs->msg));
	const char *why = err == -EFBIG ? "file is larger than 1 MiB" : np_file_strerror(err);

	if (!bigger)
		return -ENOMEM;
	errs->msg = bigger;
	if (asprintf(&errs->msg[errs->n], "%s: %s", path, why) < 0)
		return -ENOMEM;
	errs->n++;
	return err;
}

int np_config_load(const char *path, struct np_config *cfg, struct np_config_errors *errs)
{
	char *buf;
	size_t len;
	int fd, err;

	/* A FIFO as the file would block here forever (and -n never answer):
	 * refused instead. */
	fd = np_open_regular(path);
	if (fd < 0)
		return add_file_error(errs, path, fd);
	err = np_read_fd(fd, CONFIG_MAX_BYTES, &buf, &len);
	close(fd);
	if (err < 0)
		return add_file_error(errs, path, err);
	err = np_config_parse(path, buf, len, cfg, errs);
	free(buf);
	return err;
}

static void write_words(FILE *out, char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %s", words[i]);
}

int np_config_write(const struct np_config *cfg, FILE *out)
{
	for (const struct key *k = keys; k < keys + NR_KEYS; k++) {
		char addr[NP_LISTEN_ADDR_STRLEN];
		const struct np_strv *sv;

		fprintf(out, "%s =", k->name);
		switch (k->kind) {
		case KIND_U64:
		case KIND_UNSIGNED:
			fprintf(out, " %" PRIu64, int_value(cfg, k));
			break;
		case KIND_CHOICE:
			fprintf(out, " %s", choice_name(k, choice_value(cfg, k)));
			break;
		case KIND_GLOBS:
		case KIND_CGROUPS:
			sv = cfield(cfg, k);
			write_words(out, sv->v, sv->n);
			break;
		case KIND_PIDS:
			for (size_t i = 0; i < cfg->nr_exclude_pid; i++)
				fprintf(out, " %d", cfg->exclude_pid[i]);
			break;
		case KIND_LISTEN:
			if (cfg->metrics_listen.family != AF_UNSPEC)
				fprintf(out, " %s",
					np_listen_addr_format(&cfg->metrics_listen, addr));
			break;
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}
