/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "config.h"
#include "maskfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define H NP_MASKFILE_HEADER "\n"

static struct np_saved_mask entry(int pid, uint64_t start, const char *before, const char *narrowed)
{
	struct np_saved_mask e;

	memset(&e, 0, sizeof(e));
	e.pid = pid;
	e.start_ticks = start;
	CHECK_INT(np_bitmap_parse_list(&e.before, before, strlen(before)), 0);
	CHECK_INT(np_bitmap_parse_list(&e.narrowed, narrowed, strlen(narrowed)), 0);
	return e;
}

static bool same_entries(const struct np_saved_mask *a, const struct np_saved_mask *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].pid != b[i].pid || a[i].start_ticks != b[i].start_ticks ||
		    !np_bitmap_equal(&a[i].before, &b[i].before) ||
		    !np_bitmap_equal(&a[i].narrowed, &b[i].narrowed))
			return false;
	return true;
}

/* Parse @text (NUL-terminated) and return the error; *@line gets the bad
 * line. On error nothing may come back. */
static int parse_text(const char *text, unsigned *line)
{
	struct np_saved_mask *v = (void *)1;
	size_t n = 1;
	int err = np_maskfile_parse(text, strlen(text), &v, &n, line);

	if (err)
		CHECK(v == NULL && n == 0);
	free(v);
	return err;
}

static void test_round_trip(void)
{
	struct np_saved_mask in[3], *out;
	unsigned line = 99;
	size_t len, n;
	char *text;

	in[0] = entry(1, 0, "0-3,8", "0-3");
	in[1] = entry(NP_CONFIG_PID_MAX, UINT64_MAX, "0-8191", "8191");
	/* The same pid with another start time is another task. */
	in[2] = entry(1, 12345, "5", "5");
	CHECK_INT(np_maskfile_format(in, 3, &text, &len), 0);
	CHECK_STR(text, H "1 0 0-3,8 0-3\n"
			  "4194304 18446744073709551615 0-8191 8191\n"
			  "1 12345 5 5\n");
	CHECK_INT(len, strlen(text));
	CHECK_INT(np_maskfile_parse(text, len, &out, &n, &line), 0);
	CHECK_INT(line, 0);
	CHECK_INT(n, 3);
	CHECK(n == 3 && same_entries(in, out, 3));
	free(out);
	free(text);

	/* No entries: the header alone, which reads back as none. */
	CHECK_INT(np_maskfile_format(in, 0, &text, &len), 0);
	CHECK_STR(text, H);
	out = (void *)1;
	CHECK_INT(np_maskfile_parse(text, len, &out, &n, NULL), 0);
	CHECK(out == NULL && n == 0);
	free(text);

	/* Any list the kernel's format allows, not only the shortest. */
	CHECK_INT(np_maskfile_parse(H "7 1 3,0-2,1 0,0\n", strlen(H "7 1 3,0-2,1 0,0\n"), &out, &n,
				    &line),
		  0);
	CHECK(n == 1 && np_bitmap_weight(&out[0].before) == 4 &&
	      np_bitmap_weight(&out[0].narrowed) == 1);
	free(out);
}

/* Two numbers for every three CPUs is the longest list there is; a line of
 * two of them must fit NP_MASKFILE_LINE_MAX. */
static void test_longest_line(void)
{
	struct np_saved_mask e = entry(NP_CONFIG_PID_MAX, UINT64_MAX, "0", "0"), *out;
	unsigned line;
	size_t len, n;
	char *text;

	for (unsigned cpu = 0; cpu < NP_MAX_CPUS; cpu++)
		if (cpu % 3 != 2) {
			np_bitmap_set(&e.before, cpu);
			np_bitmap_set(&e.narrowed, cpu);
		}
	CHECK_INT(np_maskfile_format(&e, 1, &text, &len), 0);
	CHECK(len - strlen(H) < NP_MASKFILE_LINE_MAX);
	CHECK_INT(np_maskfile_parse(text, len, &out, &n, &line), 0);
	CHECK(n == 1 && same_entries(&e, out, 1));
	free(out);
	free(text);
}

/* The formatter refuses what the parser would, so what is saved loads. */
static void test_format_refuses(void)
{
	struct np_saved_mask good = entry(5, 1, "0-3", "1"), bad[2], *many;
	char *text = NULL;
	size_t len, n = 1000;

	bad[0] = good;
	bad[0].pid = 0;
	CHECK_INT(np_maskfile_format(bad, 1, &text, &len), -EINVAL);
	bad[0].pid = NP_CONFIG_PID_MAX + 1;
	CHECK_INT(np_maskfile_format(bad, 1, &text, &len), -EINVAL);
	bad[0] = entry(5, 1, "0-3", "");
	CHECK_INT(np_maskfile_format(bad, 1, &text, &len), -EINVAL);
	bad[0] = entry(5, 1, "0-3", "2-4");
	CHECK_INT(np_maskfile_format(bad, 1, &text, &len), -EINVAL);
	bad[0] = good;
	bad[1] = good;
	CHECK_INT(np_maskfile_format(bad, 2, &text, &len), -EINVAL);
	CHECK(text == NULL);

	/* Too many entries, and too many bytes in all. */
	many = calloc(NP_MASKFILE_ENTRIES_MAX + 1, sizeof(*many));
	CHECK(many != NULL);
	if (!many)
		return;
	for (size_t i = 0; i <= NP_MASKFILE_ENTRIES_MAX; i++) {
		many[i].pid = (int)i + 1;
		np_bitmap_set(&many[i].before, 0);
		np_bitmap_set(&many[i].narrowed, 0);
	}
	CHECK_INT(np_maskfile_format(many, NP_MASKFILE_ENTRIES_MAX + 1, &text, &len), -EINVAL);
	for (size_t i = 0; i < n; i++)
		for (unsigned cpu = 0; cpu < NP_MAX_CPUS; cpu += 2)
			np_bitmap_set(&many[i].before, cpu);
	CHECK_INT(np_maskfile_format(many, n, &text, &len), -EFBIG);
	CHECK(text == NULL);
	free(many);
}

static void test_parse_rejects(void)
{
	static const struct {
		const char *text;
		unsigned line;
	} cases[] = {
	    /* The header. */
	    {"", 1},
	    {"garbage\n", 1},
	    {"# numaplaced saved masks v2\n", 1},
	    {NP_MASKFILE_HEADER, 1},
	    {NP_MASKFILE_HEADER " \n", 1},
	    {"1 5 0-3 0\n", 1},
	    /* The pid. */
	    {H "0 5 0-3 0\n", 2},
	    {H "-1 5 0-3 0\n", 2},
	    {H "+1 5 0-3 0\n", 2},
	    {H "4194305 5 0-3 0\n", 2},
	    {H "18446744073709551617 5 0-3 0\n", 2},
	    {H "x 5 0-3 0\n", 2},
	    /* The start time. */
	    {H "1 18446744073709551616 0-3 0\n", 2},
	    {H "1 -5 0-3 0\n", 2},
	    {H "1 5x 0-3 0\n", 2},
	    /* Fields: exactly four, one space apart. */
	    {H "1 5 0-3 0\n2 5 0-3\n", 3},
	    {H "1 5 0-3 0\n2 5\n", 3},
	    {H "1 5 0-3 0\n2\n", 3},
	    {H "1 5 0-3 0\n2 5 0-3 0 7\n", 3},
	    {H "1 5 0-3 0\n2  5 0-3 0\n", 3},
	    {H "1 5 0-3 0\n 2 5 0-3 0\n", 3},
	    {H "1 5 0-3 0\n2 5 0-3 0 \n", 3},
	    {H "1 5 0-3 0\n2 5 0-3 0\r\n", 3},
	    {H "1 5 0-3 0\n2\t5 0-3 0\n", 3},
	    {H "1 5 0-3 0\n\n", 3},
	    {H "1 5 0-3 0\n# a comment\n", 3},
	    /* The masks. */
	    {H "1 5 0-3 \n", 2},
	    {H "1 5  0\n", 2},
	    {H "1 5 0-3 2-4\n", 2},
	    {H "1 5 4 0\n", 2},
	    {H "1 5 0-8192 0\n", 2},
	    {H "1 5 8192 8192\n", 2},
	    {H "1 5 3-1 1\n", 2},
	    {H "1 5 0-3,,5 0\n", 2},
	    {H "1 5 0-3, 0\n", 2},
	    {H "1 5 0x3 0\n", 2},
	    /* Trailing garbage: a last line without its newline. */
	    {H "1 5 0-3 0\n2 5 0-3 0", 3},
	    {H "1 5 0-3 0\nx", 3},
	    /* A repeated (pid, start) pair is reported where it repeats, and
	     * before a later error; an earlier error comes first. */
	    {H "1 5 0 0\n2 5 0 0\n1 5 1 1\n", 4},
	    {H "1 5 0 0\n2 5 0 0\n2 5 1 1\n1 5 1 1\n", 4},
	    {H "1 5 0 0\n2 5 0 0\n1 5 1 1\nbad\n", 4},
	    {H "1 5 0 0\nbad\n1 5 0 0\n", 3},
	};
	struct np_saved_mask *v;
	unsigned line;
	size_t n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		line = 0;
		CHECK_INT(parse_text(cases[i].text, &line), -EINVAL);
		if (line != cases[i].line)
			fprintf(stderr, "case \"%s\":\n", cases[i].text);
		CHECK_INT(line, cases[i].line);
	}
	/* A NUL byte is not a digit, and nothing past @len is read. */
	CHECK_INT(np_maskfile_parse(H "1 5 0\0 0\n", strlen(H) + 9, &v, &n, &line), -EINVAL);
	CHECK_INT(line, 2);
	CHECK_INT(np_maskfile_parse(H "1 5 0 0\nGARBAGE", strlen(H) + 8, &v, &n, &line), 0);
	CHECK_INT(n, 1);
	free(v);
}

/* An entry line of exactly @len bytes, newline included, at @p: a before
 * list that names CPU 0 again and again ("0,0,...,0", or "10,0,...,0" for
 * the other parity). */
static size_t long_line(char *p, size_t len)
{
	size_t list_len = len - strlen("1 5  0\n");
	char *q = p + sprintf(p, "1 5 %s", list_len % 2 ? "0" : "10");

	while ((size_t)(q - p) < len - strlen(" 0\n")) {
		memcpy(q, ",0", 2);
		q += 2;
	}
	q += sprintf(q, " 0\n");
	return (size_t)(q - p);
}

/* The bounds, at the bound and one past it. */
static void test_parse_bounds(void)
{
	char *buf = malloc(2u << 20), *p;
	struct np_saved_mask *v;
	unsigned line;
	size_t len, n;

	CHECK(buf != NULL);
	if (!buf)
		return;
	for (size_t line_len = NP_MASKFILE_LINE_MAX - 1; line_len <= NP_MASKFILE_LINE_MAX + 1;
	     line_len++) {
		bool fits = line_len <= NP_MASKFILE_LINE_MAX;

		p = buf + sprintf(buf, H);
		CHECK_INT(long_line(p, line_len), line_len);
		len = strlen(H) + line_len;
		CHECK_INT(np_maskfile_parse(buf, len, &v, &n, &line), fits ? 0 : -EINVAL);
		CHECK_INT(line, fits ? 0 : 2);
		free(v);
	}

	p = buf + sprintf(buf, H);
	for (unsigned pid = 1; pid <= NP_MASKFILE_ENTRIES_MAX + 1; pid++)
		p += sprintf(p, "%u 1 0 0\n", pid);
	len = (size_t)(p - buf);
	CHECK_INT(np_maskfile_parse(buf, len, &v, &n, &line), -EINVAL);
	CHECK_INT(line, NP_MASKFILE_ENTRIES_MAX + 2);
	len -= strlen("65537 1 0 0\n");
	CHECK_INT(np_maskfile_parse(buf, len, &v, &n, &line), 0);
	CHECK_INT(n, NP_MASKFILE_ENTRIES_MAX);
	CHECK(n && v[n - 1].pid == NP_MASKFILE_ENTRIES_MAX);
	free(v);
	free(buf);
}

/* The names in @dir, sorted and space-separated, for a CHECK_STR. */
static const char *listing(const char *dir)
{
	static char out[512];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s",
						 used ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return out;
}

/* The first line of @path. */
static const char *first_line(const char *path)
{
	static char line[256];
	FILE *f = fopen(path, "r");

	line[0] = '\0';
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return line;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_save_load(void)
{
	char dir[] = "/tmp/np-maskfile-XXXXXX", path[256], other[256];
	struct np_saved_mask in[2], *out;
	struct stat st;
	unsigned line;
	mode_t umask_was;
	size_t n;
	int dirfd;

	CHECK(mkdtemp(dir) != NULL);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/masks", dir);
	in[0] = entry(10, 100, "0-7", "0-3");
	in[1] = entry(11, 200, "0-7", "4-7");

	/* Nothing saved yet: no entries. */
	out = (void *)1;
	n = 1;
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), 0);
	CHECK(out == NULL && n == 0);

	/* The mode is 0600 whatever the umask. */
	umask_was = umask(0277);
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 2), 0);
	umask(umask_was);
	CHECK_STR(listing(dir), "masks");
	CHECK_INT(lstat(path, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), 0);
	CHECK(n == 2 && same_entries(in, out, 2));
	free(out);

	/* A save replaces the file. */
	CHECK_INT(np_maskfile_save(dirfd, "masks", in + 1, 1), 0);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), 0);
	CHECK(n == 1 && same_entries(in + 1, out, 1));
	free(out);

	/* What a crash left as masks.tmp is replaced, not written through:
	 * a link to another file, a FIFO (which would block). */
	snprintf(other, sizeof(other), "%s/other", dir);
	write_file(other, "keep\n");
	snprintf(path, sizeof(path), "%s/masks.tmp", dir);
	CHECK_INT(symlink(other, path), 0);
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 2), 0);
	CHECK_STR(listing(dir), "masks other");
	CHECK_INT(mkfifo(path, 0600), 0);
	alarm(10);
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 1), 0);
	alarm(0);
	CHECK_STR(listing(dir), "masks other");
	CHECK_STR(first_line(other), "keep\n");

	/* A failed save leaves the file as it was and no masks.tmp: an
	 * entry the parser would refuse, a masks.tmp that cannot be removed,
	 * a directory in place of the file. */
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 2), 0);
	in[1].pid = in[0].pid;
	in[1].start_ticks = in[0].start_ticks;
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 2), -EINVAL);
	in[1] = entry(11, 200, "0-7", "4-7");
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 1), -EISDIR);
	CHECK_INT(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/sub", dir);
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(np_maskfile_save(dirfd, "sub", in, 1), -EISDIR);
	CHECK_INT(rmdir(path), 0);
	CHECK_STR(listing(dir), "masks other");
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), 0);
	CHECK(n == 2 && same_entries(in, out, 2));
	free(out);

	/* Only plain names. */
	CHECK_INT(np_maskfile_save(dirfd, "", in, 1), -EINVAL);
	CHECK_INT(np_maskfile_save(dirfd, "a/b", in, 1), -EINVAL);
	CHECK_INT(np_maskfile_save(dirfd, "..", in, 1), -EINVAL);
	CHECK_INT(np_maskfile_load(dirfd, ".", &out, &n, &line), -EINVAL);
	CHECK_INT(line, 0);

	/* n == 0 removes the file, and a missing one is fine. */
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 0), 0);
	CHECK_STR(listing(dir), "other");
	CHECK_INT(np_maskfile_save(dirfd, "masks", in, 0), 0);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), 0);
	CHECK(out == NULL && n == 0);

	CHECK_INT(unlink(other), 0);
	close(dirfd);
	CHECK_INT(rmdir(dir), 0);
}

/* In place of the file: a link, a FIFO, a directory, something too big,
 * bad content. None is read, and none blocks. */
static void test_load_refuses(void)
{
	char dir[] = "/tmp/np-maskfile-XXXXXX", path[256], target[256];
	struct np_saved_mask *out;
	unsigned line;
	size_t n;
	int dirfd, fd;

	CHECK(mkdtemp(dir) != NULL);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/masks", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	write_file(target, H "1 5 0-3 0\n");
	CHECK_INT(np_maskfile_load(dirfd, "target", &out, &n, &line), 0);
	CHECK_INT(n, 1);
	free(out);

	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -ELOOP);
	CHECK(out == NULL && n == 0);
	CHECK_INT(unlink(path), 0);

	CHECK_INT(mkfifo(path, 0600), 0);
	alarm(10);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -EBADFD);
	alarm(0);
	CHECK_INT(unlink(path), 0);

	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -EISDIR);
	CHECK_INT(rmdir(path), 0);

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_INT(ftruncate(fd, NP_MASKFILE_SIZE_MAX + 1), 0);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -EFBIG);
	CHECK_INT(ftruncate(fd, 0), 0);
	close(fd);
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -EINVAL);
	CHECK_INT(line, 1);

	write_file(path, H "1 5 0-3 0\n2 5 0-3 4\n");
	CHECK_INT(np_maskfile_load(dirfd, "masks", &out, &n, &line), -EINVAL);
	CHECK_INT(line, 3);
	CHECK(out == NULL && n == 0);

	CHECK_INT(unlink(path), 0);
	CHECK_INT(unlink(target), 0);
	close(dirfd);
	CHECK_INT(rmdir(dir), 0);
}

int main(void)
{
	test_round_trip();
	test_longest_line();
	test_format_refuses();
	test_parse_rejects();
	test_parse_bounds();
	test_save_load();
	test_load_refuses();
	return check_done();
}
