/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "writers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "runsample.h"

/* A sample as PERF_SAMPLE_TID | PERF_SAMPLE_ADDR lays it out. */
struct sample_tid_addr {
	uint32_t pid, tid;
	uint64_t addr;
};

/* Bit 55 of a pagemap entry: the page was written since the last clear. */
#define PAGEMAP_SOFT_DIRTY (1ull << 55)

static int by_block_then_tid(const void *a, const void *b)
{
	const struct np_write_sample *x = a, *y = b;
	uint64_t bx = x->addr >> NP_WRITERS_BLOCK_SHIFT, by = y->addr >> NP_WRITERS_BLOCK_SHIFT;

	if (bx != by)
		return bx < by ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int np_writers_attribute(struct np_write_sample *s, size_t n, struct np_writer_block **out,
			 unsigned *nr)
{
	struct np_writer_block *v;
	unsigned k = 0;

	*out = NULL;
	*nr = 0;
	if (!n)
		return 0;
	qsort(s, n, sizeof(*s), by_block_then_tid);
	/* At most one block per sample. */
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = s[i].addr >> NP_WRITERS_BLOCK_SHIFT << NP_WRITERS_BLOCK_SHIFT;

		if (!k || v[k - 1].start != start)
			v[k++] = (struct np_writer_block){start, s[i].tid, 0};
		else if (v[k - 1].tid != s[i].tid)
			v[k - 1].tid = -1;
		v[k - 1].faults++;
	}
	*out = v;
	*nr = k;
	return 0;
}

static const struct np_writer_block *find_block(const struct np_writer_block *v, unsigned n,
						uint64_t start)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (v[mid].start == start)
			return &v[mid];
		if (v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

unsigned np_writers_confirm(struct np_writer_block *b, unsigned n,
			    const struct np_writer_block *prev, unsigned nr_prev)
{
	unsigned unconfirmed = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct np_writer_block *p;

		if (b[i].tid < 0 || b[i].faults > 1)
			continue;
		p = prev ? find_block(prev, nr_prev, b[i].start) : NULL;
		if (!p) {
			b[i].tid = NP_WRITERS_UNCONFIRMED;
			unconfirmed++;
		} else if (p->tid != b[i].tid) {
			b[i].tid = -1;
		}
	}
	return unconfirmed;
}

/* Open task @pid's clear_refs: the fd stays the task's, whatever becomes
 * of its pid. Returns the fd or -errno (-ESRCH: gone). */
static int open_clear_refs(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", pid);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

/* Clear the soft-dirty bits of the task whose clear_refs is @fd. */
static int clear_through(int fd)
{
	return write(fd, "4", 1) == 1 ? 0 : -errno;
}

static int clear_soft_dirty(int pid)
{
	int fd = open_clear_refs(pid), err;

	if (fd < 0)
		return fd;
	err = clear_through(fd);
	close(fd);
	return err;
}

static int soft_dirty_of(int pagemap, const volatile char *page, long page_size, bool *dirty)
{
	uint64_t entry;
	off_t at = (off_t)((uintptr_t)page / (uintptr_t)page_size * sizeof(entry));

	if (pread(pagemap, &entry, sizeof(entry), at) != (ssize_t)sizeof(entry))
		return -EIO;
	*dirty = entry & PAGEMAP_SOFT_DIRTY;
	return 0;
}

int np_writers_probe(void)
{
	long page_size = sysconf(_SC_PAGESIZE);
	volatile char *page;
	bool before = false, after = false;
	int pagemap, err;

	if (page_size <= 0)
		return -EINVAL;
	page = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (page == MAP_FAILED)
		return -errno;
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap < 0) {
		err = -errno;
		goto out;
	}
	page[0] = 1;
	err = clear_soft_dirty(getpid());
	if (!err)
		err = soft_dirty_of(pagemap, page, page_size, &before);
	page[0] = 2;
	if (!err)
		err = soft_dirty_of(pagemap, page, page_size, &after);
	/* Without CONFIG_MEM_SOFT_DIRTY the bit is never set (the write of
	 * "4" is accepted and does nothing). */
	if (!err && (before || !after))
		err = -EOPNOTSUPP;
	close(pagemap);
out:
	munmap((void *)page, (size_t)page_size);
	return err;
}

struct writer_thread {
	int tid;
	struct np_perf_ring ring;
};

struct np_writers {
	int pid;
	int clear_fd; /* the task's clear_refs, opened at the start */
	struct writer_thread *t;
	unsigned nr;
	size_t page_size, ring_len, map_len;
};

static int open_thread(int tid, size_t ring_len, size_t map_len, struct writer_thread *out)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_PAGE_FAULTS,
	    .sample_period = 1,
	    .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR,
	    /* Faults in user space only: the task's own accesses. */
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	    /* Nobody waits on the fd. */
	    .watermark = 1,
	    .wakeup_watermark = (uint32_t)(ring_len / 2),
	};

	out->tid = tid;
	return np_perf_ring_open(&attr, tid, -1, map_len, &out->ring);
}

int np_writers_start(struct np_ctx *ctx, int pid, const int *tids, unsigned nr, unsigned ring_kib,
		     struct np_writers **out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct np_writers *w;
	int err = 0;

	*out = NULL;
	if (!np_ctx_is_live(ctx))
		return -EOPNOTSUPP;
	if (pid <= 0 || !nr || page <= 0 || ring_kib > (64u << 10))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->t = calloc(nr, sizeof(*w->t)))) {
		free(w);
		return -ENOMEM;
	}
	w->pid = pid;
	w->clear_fd = -1;
	w->page_size = (size_t)page;
	w->ring_len = w->page_size;
	while (w->ring_len < (size_t)ring_kib << 10)
		w->ring_len *= 2;
	w->map_len = w->page_size + w->ring_len;
	for (unsigned i = 0; i < nr; i++) {
		err = open_thread(tids[i], w->ring_len, w->map_len, &w->t[w->nr]);
		if (err == -ESRCH) {
			err = 0; /* exited since it was listed */
			continue;
		}
		if (err)
			break;
		w->nr++;
	}
	if (!err && !w->nr)
		err = -ESRCH;
	/* The events first: a write between the clear and its thread's
	 * event would be missed. */
	if (!err) {
		w->clear_fd = open_clear_refs(pid);
		err = w->clear_fd < 0 ? w->clear_fd : clear_through(w->clear_fd);
	}
	if (err) {
		np_writers_free(w);
		return err;
	}
	*out = w;
	return 0;
}

struct collecting {
	int pid;
	struct np_write_sample *s;
	size_t n, cap;
	bool failed;
};

static void on_write(void *data, const void *body)
{
	struct collecting *c = data;
	struct sample_tid_addr rec;

	memcpy(&rec, body, sizeof(rec));
	/* A thread id listed that ended and was taken by another process's
	 * thread before its event opened: not this task's address space. */
	if (rec.pid != (uint32_t)c->pid)
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct np_write_sample *s = realloc(c->s, cap * sizeof(*s));

		if (!s) {
			c->failed = true;
			return;
		}
		c->s = s;
		c->cap = cap;
	}
	if (rec.tid > 0 && rec.tid <= INT32_MAX)
		c->s[c->n++] = (struct np_write_sample){(int)rec.tid, rec.addr};
}

/* Drain every thread's ring into *@s and *@n, each event stopped first
 * when @stop. */
static int drain_all(struct np_writers *w, bool stop, struct np_write_sample **s, size_t *n,
		     unsigned *overflowed)
{
	struct collecting c = {.pid = w->pid};

	*s = NULL;
	*n = 0;
	*overflowed = 0;
	for (unsigned i = 0; i < w->nr; i++) {
		/* Stopped first, so that its ring holds still while read. */
		if (stop)
			ioctl(w->t[i].ring.fd, PERF_EVENT_IOC_DISABLE, 0);
		if (np_perf_ring_drain(&w->t[i].ring, w->page_size, w->ring_len,
				       sizeof(struct sample_tid_addr), on_write, &c))
			(*overflowed)++;
	}
	if (c.failed) {
		free(c.s);
		return -ENOMEM;
	}
	*s = c.s;
	*n = c.n;
	return 0;
}

int np_writers_collect(struct np_writers *w, struct np_write_sample **s, size_t *n,
		       unsigned *overflowed)
{
	return drain_all(w, true, s, n, overflowed);
}

int np_writers_drain(struct np_writers *w, struct np_write_sample **s, size_t *n,
		     unsigned *overflowed)
{
	return drain_all(w, false, s, n, overflowed);
}

int np_writers_clear(struct np_writers *w)
{
	return clear_through(w->clear_fd);
}

unsigned np_writers_single(const struct np_writer_block *b, unsigned n)
{
	unsigned single = 0;

	for (unsigned i = 0; i < n; i++)
		single += b[i].faults == 1;
	return single;
}

void np_writers_free(struct np_writers *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->nr; i++)
		np_perf_ring_close(&w->t[i].ring, w->map_len);
	if (w->clear_fd >= 0)
		close(w->clear_fd);
	free(w->t);
	free(w);
}
