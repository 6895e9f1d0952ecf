/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "notify.h"

#include <event2/event.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A stand-in for the service manager: a datagram socket at a temporary
 * path that NOTIFY_SOCKET names. */
static char sock_dir[] = "/tmp/np-notify-XXXXXX";
static char sock_path[sizeof(sock_dir) + 16];

static int manager_socket(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	CHECK(mkdtemp(sock_dir) != NULL);
	snprintf(sock_path, sizeof(sock_path), "%s/notify", sock_dir);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	CHECK(fd >= 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* The next datagram, or "" when none is waiting. */
static const char *receive(int fd)
{
	static char buf[4096];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_without_manager(void)
{
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CHECK_INT(np_notify_ready(), 0);
	CHECK_INT(np_notify_status("scanning %d tasks", 3), 0);
	CHECK_INT(np_notify_watchdog(), 0);
	CHECK_U64(np_notify_watchdog_usec(), 0);
}

static void test_messages(int fd)
{
	const char *msg;

	setenv("NOTIFY_SOCKET", sock_path, 1);
	CHECK(np_notify_ready() > 0);
	CHECK_STR(receive(fd), "READY=1");
	CHECK(np_notify_status("%u tasks watched, %u moved", 12u, 3u) > 0);
	CHECK_STR(receive(fd), "STATUS=12 tasks watched, 3 moved");
	CHECK(np_notify_watchdog() > 0);
	CHECK_STR(receive(fd), "WATCHDOG=1");
	CHECK(np_notify_stopping() > 0);
	CHECK_STR(receive(fd), "STOPPING=1");
	CHECK(np_notify_reloading() > 0);
	msg = receive(fd);
	CHECK(strncmp(msg, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0);
	CHECK(strtoull(msg + 27, NULL, 10) > 0);
	CHECK_STR(receive(fd), "");
}

static void test_watchdog_interval(void)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_USEC", "3000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	CHECK_U64(np_notify_watchdog_usec(), 3000000);
	/* Inherited from a parent: not this process's watchdog. */
	setenv("WATCHDOG_PID", "1", 1);
	CHECK_U64(np_notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	CHECK_U64(np_notify_watchdog_usec(), 3000000);
	setenv("WATCHDOG_USEC", "garbage", 1);
	CHECK_U64(np_notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
	CHECK_U64(np_notify_watchdog_usec(), 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The timer pings at half the interval while the loop runs: three pings
 * take 60 ms with a 40 ms watchdog (libevent's coarse clock may fire a
 * few ms early, hence the margin). */
static void test_watchdog_timer(int fd)
{
	struct event_base *base = event_base_new();
	struct np_watchdog *wd = (void *)1;
	uint64_t start, elapsed;
	int pings = 0;
	const char *msg;

	CHECK_INT(np_notify_watchdog_start(base, &wd), 0);
	CHECK(wd == NULL); /* watchdog off */
	setenv("WATCHDOG_USEC", "40000", 1);
	CHECK_INT(np_notify_watchdog_start(base, &wd), 0);
	CHECK(wd != NULL);
	start = now_ms();
	while (pings < 3 && now_ms() - start < 5000) {
		event_base_loop(base, EVLOOP_ONCE);
		while (*(msg = receive(fd))) {
			CHECK_STR(msg, "WATCHDOG=1");
			pings++;
		}
	}
	elapsed = now_ms() - start;
	CHECK_INT(pings, 3);
	CHECK(elapsed >= 50);
	np_notify_watchdog_stop(wd);
	event_base_free(base);
	unsetenv("WATCHDOG_USEC");
}

int main(void)
{
	int fd;

	test_without_manager();
	fd = manager_socket();
	test_messages(fd);
	test_watchdog_interval();
	test_watchdog_timer(fd);
	close(fd);
	unlink(sock_path);
	rmdir(sock_dir);
	return check_done();
}
