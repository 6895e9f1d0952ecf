/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "runsample.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

/* Data pages of each CPU's ring (a power of two): at least 16 KiB, 1,024
 * samples of 16 bytes; room for four times what one drain period brings,
 * up to 256 KiB, within perf_event_mlock_kb (516 KiB a CPU by default)
 * even without CAP_PERFMON's exemption. */
#define RING_PAGES_MIN 4
#define RING_BYTES_MAX (256u << 10)
#define SAMPLE_BYTES 16
/* A record of loss: header, id, count. A ring with less room than this
 * may have dropped samples without one. */
#define LOST_BYTES 24

struct np_run_sampler {
	struct np_perf_ring *cpus;
	unsigned nr;
	size_t page_size, ring_len, map_len;
	struct np_bitmap covered;
};

/* A sample as PERF_SAMPLE_TID lays it out after its header. */
struct sample_tid {
	uint32_t pid, tid;
};

/* Copy @len bytes at @pos of the ring out, across its end if need be. */
static void ring_copy(const unsigned char *ring, uint64_t size, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (size - 1)), first = size - off < len ? size - off : len;

	memcpy(dst, ring + off, first);
	memcpy((unsigned char *)dst + first, ring, len - first);
}

int np_perf_records_parse(const unsigned char *ring, uint64_t size, uint64_t tail, uint64_t head,
			  size_t body_len, np_perf_sample_fn fn, void *data)
{
	unsigned char body[NP_PERF_BODY_MAX];
	bool lost = false;

	if (!size || (size & (size - 1)) || head - tail > size || body_len > sizeof(body))
		return -EINVAL;
	/* Full, or nearly: the kernel drops what does not fit, and records
	 * the loss only once a record of it fits. */
	if (size - (head - tail) < LOST_BYTES)
		lost = true;
	while (tail != head) {
		struct perf_event_header h;

		if (head - tail < sizeof(h))
			return -EINVAL;
		ring_copy(ring, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			return -EINVAL;
		if (h.type == PERF_RECORD_SAMPLE) {
			if (h.size < sizeof(h) + body_len)
				return -EINVAL;
			ring_copy(ring, size, tail + sizeof(h), body, body_len);
			fn(data, body);
		} else if (h.type == PERF_RECORD_LOST) {
			lost = true;
		}
		tail += h.size;
	}
	return lost ? -ENOBUFS : 0;
}

struct run_parse {
	np_run_fn fn;
	void *data;
};

static void on_run_sample(void *data, const void *body)
{
	const struct run_parse *rp = data;
	struct sample_tid s;

	memcpy(&s, body, sizeof(s));
	if (s.pid > 0 && s.pid <= INT32_MAX)
		rp->fn(rp->data, (int)s.pid);
}

int np_run_records_parse(const unsigned char *ring, uint64_t size, uint64_t tail, uint64_t head,
			 np_run_fn fn, void *data)
{
	struct run_parse rp = {fn, data};

	return np_perf_records_parse(ring, size, tail, head, sizeof(struct sample_tid),
				     on_run_sample, &rp);
}

int np_perf_ring_open(struct perf_event_attr *attr, int pid, int cpu, size_t map_len,
		      struct np_perf_ring *out)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	void *map;

	if (fd < 0)
		return errno == ENOENT || errno == ENOSYS ? -EOPNOTSUPP : -errno;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (map == MAP_FAILED) {
		int err = -errno;

		close((int)fd);
		return err;
	}
	out->fd = (int)fd;
	out->map = map;
	return 0;
}

void np_perf_ring_close(struct np_perf_ring *r, size_t map_len)
{
	munmap(r->map, map_len);
	close(r->fd);
}

int np_perf_ring_drain(struct np_perf_ring *r, size_t page_size, size_t ring_len,
		       size_t body_len, np_perf_sample_fn fn, void *data)
{
	struct perf_event_mmap_page *meta = (void *)r->map;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	int err = np_perf_records_parse(r->map + page_size, ring_len, meta->data_tail, head,
					body_len, fn, data);

	/* A ring that does not parse is skipped whole: the caller learns
	 * some samples went unreported. */
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return err;
}

static int open_cpu(unsigned cpu, unsigned hz, size_t ring_len, size_t map_len,
		    struct np_perf_ring *out)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_period = 1000000000ull / hz, /* cpu-clock counts nanoseconds */
	    .sample_type = PERF_SAMPLE_TID,
	    /* No sample of an idle CPU: the ring holds only runs. */
	    .exclude_idle = 1,
	    /* Nobody waits on the fd: wake no one until the ring is half full. */
	    .watermark = 1,
	    .wakeup_watermark = (uint32_t)(ring_len / 2),
	};

	return np_perf_ring_open(&attr, -1, (int)cpu, map_len, out);
}

int np_run_sampler_open(struct np_ctx *ctx, const struct np_bitmap *cpus, unsigned hz,
			uint64_t drain_ms, struct np_run_sampler **out)
{
	struct np_run_sampler *s;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want;
	int err = 0;

	if (!np_ctx_is_live(ctx))
		return -EOPNOTSUPP;
	if (hz < 1 || hz > 1000 || page <= 0 || drain_ms > 3600000)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->cpus = calloc(np_bitmap_weight(cpus) + 1, sizeof(*s->cpus)))) {
		free(s);
		return -ENOMEM;
	}
	s->page_size = (size_t)page;
	s->ring_len = RING_PAGES_MIN * s->page_size;
	want = 4 * (uint64_t)hz * (drain_ms > 1000 ? drain_ms : 1000) / 1000 * SAMPLE_BYTES;
	while (s->ring_len < want && s->ring_len < RING_BYTES_MAX)
		s->ring_len *= 2;
	s->map_len = s->page_size + s->ring_len;
	np_bitmap_for_each(cpu, cpus)
	{
		err = open_cpu((unsigned)cpu, hz, s->ring_len, s->map_len, &s->cpus[s->nr]);
		/* A CPU that went offline since it was listed: not covered,
		 * which the caller sees (np_run_sampler_cpus). */
		if (err == -ENODEV)
			continue;
		if (err)
			break;
		s->nr++;
		np_bitmap_set(&s->covered, (unsigned)cpu);
	}
	if (!err && !s->nr)
		err = -ENODEV; /* none: it would vouch for every task */
	if (err) {
		np_run_sampler_close(s);
		return err;
	}
	*out = s;
	return 0;
}

void np_run_sampler_close(struct np_run_sampler *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nr; i++)
		np_perf_ring_close(&s->cpus[i], s->map_len);
	free(s->cpus);
	free(s);
}

const struct np_bitmap *np_run_sampler_cpus(const struct np_run_sampler *s)
{
	return &s->covered;
}

int np_run_sampler_drain(struct np_run_sampler *s, np_run_fn fn, void *data)
{
	int ret = 0;

	struct run_parse rp = {fn, data};

	for (unsigned i = 0; i < s->nr; i++) {
		int err = np_perf_ring_drain(&s->cpus[i], s->page_size, s->ring_len,
					     sizeof(struct sample_tid), on_run_sample, &rp);

		if (err && ret != -EINVAL)
			ret = err;
	}
	return ret;
}
