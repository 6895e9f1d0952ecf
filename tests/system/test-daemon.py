#!/usr/bin/env python3
"""The daemon on this machine: signals, reload, dry run, slow start and the
metrics endpoint, observed from outside as a user would."""
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1])
SPAWN = os.path.abspath(sys.argv[2])  # np-spawn: many short-lived "np-spawn-child"
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                       "engine-2node")
failures = 0
tmp = tempfile.mkdtemp(prefix="np-daemon-test.")


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


def wait_for(pred, timeout=10.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    return pred()


class Daemon:
    def __init__(self, name, conf, *args, preexec_fn=None, env=None):
        self.conf = os.path.join(tmp, name + ".conf")
        self.log = os.path.join(tmp, name + ".log")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.logf = open(self.log, "w")
        # A private runtime directory: the saved masks of one daemon are
        # no business of another.
        self.run_dir = os.path.join(tmp, name + ".run")
        run_dir = ["--runtime-dir", self.run_dir]
        self.proc = subprocess.Popen([BIN, "--foreground", "-c", self.conf, *run_dir, *args],
                                     stdout=subprocess.DEVNULL, stderr=self.logf,
                                     preexec_fn=preexec_fn, env=env)
        self.port = None

    def status(self, *args):
        """numaplaced --status against this daemon's runtime directory."""
        return subprocess.run([BIN, "--status", "--runtime-dir", self.run_dir, *args],
                              capture_output=True, text=True, timeout=30)

    def status_json(self):
        """The daemon's status as JSON, once it has one (None after 10 s)."""
        r = wait_for(lambda: (lambda r: r if r.returncode == 0 else None)(
            self.status("--json")), 10, 0.1)
        return json.loads(r.stdout) if r else None

    def text(self):
        with open(self.log) as f:
            return f.read()

    def wait_log(self, pattern, timeout=10.0):
        return wait_for(lambda: re.search(pattern, self.text()), timeout)

    def metrics(self):
        if self.port is None:
            m = self.wait_log(r"metrics on port (\d+)")
            self.port = int(m.group(1)) if m else 0
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.decode().partition("\r\n\r\n")
        return head, body

    def counter(self, name):
        _, body = self.metrics()
        total = 0.0
        for line in body.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        return self.proc.returncode


BASE = "log_level = info\nmetrics_listen = 127.0.0.1:0\n"
PROM_LINE = re.compile(
    r'^(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+'
    r'|[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? '
    r'(-?[0-9.e+-]+|NaN|[+-]Inf))$')


def test_sigterm_and_metrics():
    d = Daemon("term", BASE + "tick_ms = 50\n")
    check(d.wait_log(r"started") is not None, "daemon starts and says so")
    head, body = d.metrics()
    check(head.startswith("HTTP/1.") and " 200 " in head.split("\r\n")[0],
          "metrics endpoint answers 200")
    check("text/plain" in head, "metrics are text/plain")
    bad = [l for l in body.splitlines() if l and not PROM_LINE.match(l)]
    check(body.strip() != "" and not bad,
          "metrics parse as Prometheus text" + (f" (bad: {bad[:3]})" if bad else ""))
    check("numaplaced_scans_total" in body, "metrics carry the scan counter")
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    try:
        rc = d.proc.wait(5)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    check(rc == 0, f"SIGTERM: exit status {rc}")
    check(took < 1.0, f"SIGTERM: stopped in {took * 1000:.0f} ms (< 1 s)")
    d.stop()


def test_sighup():
    d = Daemon("hup", BASE + "scan_delay_ms = 1000\n")
    check(d.wait_log(r"started") is not None, "reload daemon starts")
    with open(d.conf, "w") as f:
        f.write(BASE + "scan_delay_ms = soon\nmin_rss_mb = -3\n")
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"rejected, the running configuration stays") is not None,
          "SIGHUP with a bad file: rejected, old configuration kept")
    text = d.text()
    n = BASE.count("\n")
    check(re.search(re.escape(d.conf) + f":{n + 1}: .*soon", text) is not None and
          re.search(re.escape(d.conf) + f":{n + 2}: .*-3", text) is not None,
          "SIGHUP with a bad file: every error logged as file:line")
    check(d.proc.poll() is None, "SIGHUP with a bad file: still running")
    scans = d.counter("numaplaced_scans_total")
    check(scans >= 0, "metrics still served after a rejected reload")
    with open(d.conf, "w") as f:
        f.write(BASE + "scan_delay_ms = 2000\n")
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"applied") is not None, "SIGHUP with a good file: applied")
    d.proc.send_signal(signal.SIGUSR1)
    check(d.wait_log(r"tasks tracked") is not None, "SIGUSR1 logs a state summary")
    check(d.stop() == 0, "stops cleanly after reloads")


def scrape(port):
    """The status line of GET /metrics on 127.0.0.1:port, or None when nothing
    listens there."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except ConnectionRefusedError:
        return None
    return data.decode(errors="replace").split("\r\n", 1)[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sighup_metrics_listen():
    d = Daemon("rebind", "log_level = info\nmetrics_listen = 127.0.0.1:0\n")
    m = d.wait_log(r"metrics on port (\d+)")
    check(m is not None, "rebind daemon starts with metrics")
    if m is None:
        d.stop()
        return
    old = int(m.group(1))

    def reload(conf, n):
        with open(d.conf, "w") as f:
            f.write(conf)
        d.proc.send_signal(signal.SIGHUP)
        return wait_for(lambda: len(re.findall(r"reload: .* applied", d.text())) >= n)

    new = free_port()
    reload(f"log_level = info\nmetrics_listen = 127.0.0.1:{new}\n", 1)
    check(re.search(r"reload: .* applied$", d.text(), re.M) is not None,
          "SIGHUP to another metrics port: applied")
    status = scrape(new)
    check(status is not None and " 200 " in status,
          f"SIGHUP to another metrics port: the new one answers ({status})")
    check(scrape(old) is None, "SIGHUP to another metrics port: the old one is closed")

    # A port that is taken: the endpoint stays where it was, and the log
    # says that this key, and only it, was not applied.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        reload(f"log_level = info\nmetrics_listen = 127.0.0.1:{busy}\ntick_ms = 500\n", 2)
        text = d.text()
        check(re.search(rf"metrics_listen 127\.0\.0\.1:{busy}: Address already in use", text)
              is not None, "SIGHUP to a taken port: the error is logged")
        check(re.search(rf"reload: .* applied, except metrics_listen: metrics stay on port {new}$",
                        text, re.M) is not None,
              "SIGHUP to a taken port: logged as applied except metrics_listen")
        status = scrape(new)
        check(status is not None and " 200 " in status,
              "SIGHUP to a taken port: the old endpoint still answers")

    # Off: the endpoint closes.
    reload("log_level = info\n", 3)
    check(wait_for(lambda: "metrics endpoint closed" in d.text()),
          "SIGHUP without metrics_listen: the endpoint is closed")
    check(scrape(new) is None, "SIGHUP without metrics_listen: nothing answers")
    check(d.stop() == 0, "stops cleanly after moving its endpoint")


def test_sighup_tick():
    # The first tick is 10 s away; a reload to 50 ms does not wait for it.
    d = Daemon("tick", "log_level = info\ntick_ms = 10000\nscan_period_min_ms = 10000\n")
    check(d.wait_log(r"started") is not None, "tick daemon starts")
    with open(d.conf, "w") as f:
        f.write("log_level = info\ntick_ms = 50\n")
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"reload: .* applied") is not None, "SIGHUP to a shorter tick: applied")
    time.sleep(1.0)
    d.proc.send_signal(signal.SIGUSR1)
    m = d.wait_log(r"state: \d+ tasks tracked, (\d+) cycles")
    cycles = int(m.group(1)) if m else -1
    check(cycles >= 5, f"SIGHUP to a shorter tick: {cycles} cycles in the next second")
    check(d.stop() == 0, "stops cleanly after a new tick")


def numa_maps_nodes(pid):
    counts = {}
    with open(f"/proc/{pid}/numa_maps") as f:
        for line in f:
            for tok in line.split():
                m = re.match(r"N(\d+)=(\d+)$", tok)
                if m:
                    counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
    return counts


def test_dry_run_changes_nothing():
    # A task that is old enough, big enough and busy: the daemon looks at it.
    hog = subprocess.Popen([sys.executable, "-c",
                            "import time\nb = bytearray(64 << 20)\n"
                            "while True:\n"
                            "    for i in range(0, len(b), 4096): b[i] = 1\n"
                            "    time.sleep(0.05)\n"])
    time.sleep(0.5)
    before_aff = os.sched_getaffinity(hog.pid)
    before_nodes = numa_maps_nodes(hog.pid)
    d = Daemon("dry", BASE + "scan_delay_ms = 0\nscan_period_min_ms = 100\ntick_ms = 50\n"
               "min_rss_mb = 16\nmin_cpu_percent = 0\naffinity = node\n"
               f"include_comm = python3*\n", "--dry-run")
    check(d.wait_log(r"started \(dry run") is not None, "dry-run daemon starts")
    scans = wait_for(lambda: d.counter("numaplaced_scans_total") >= 3, 10)
    check(bool(scans), "dry run: the daemon reads tasks")
    after_nodes = numa_maps_nodes(hog.pid)
    check(os.sched_getaffinity(hog.pid) == before_aff, "dry run: affinity unchanged")
    # Pages only grow while touching; none may leave their node.
    check(set(after_nodes) == set(before_nodes), "dry run: pages stay on their nodes")
    check(d.counter("numaplaced_affinity_threads_total") == 0 and
          d.counter("numaplaced_migrate_calls_total") == 0, "dry run: no call that acts")
    # One read of numa_maps per look, counted once: with the ticks held
    # off by a long tick_ms, the summary and the metrics say the same.
    with open(d.conf, "w") as f:
        f.write(BASE + "scan_delay_ms = 0\nscan_period_min_ms = 10000\ntick_ms = 10000\n"
                "min_rss_mb = 16\nmin_cpu_percent = 0\naffinity = node\ninclude_comm = python3*\n")
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"reload: .* applied") is not None, "dry run: reload to a long tick")
    d.proc.send_signal(signal.SIGUSR1)
    m = d.wait_log(r"info: scans (\d+) \(")
    summary_scans = int(m.group(1)) if m else -1
    metric_scans = d.counter("numaplaced_scans_total")
    check(summary_scans >= 3 and summary_scans == metric_scans,
          f"dry run: scans in the summary ({summary_scans}) and the metrics ({metric_scans:.0f}) agree")
    d.stop()
    hog.kill()
    hog.wait()


def read_ages(d, comm):
    """Ages (ms) of the tasks named comm whose numa_maps the daemon read."""
    return [int(a) for a in
            re.findall(r"read numa_maps of pid \d+ \(" + re.escape(comm) + r"\), age (\d+) ms",
                       d.text())]


def test_slow_start():
    # Only the short-lived children are eligible, so every read counted is
    # one of theirs.
    conf = (BASE + "include_comm = np-spawn-child\nmin_rss_mb = 0\nmin_cpu_percent = 0\n"
            "tick_ms = 10\nscan_period_min_ms = 100\n")
    spawn = [SPAWN, "--count=2000", "--parallel=4", "--mib=1", "--life-ms=20"]
    d = Daemon("slow", conf + "scan_delay_ms = 1000\n", "--verbose")
    check(d.wait_log(r"started") is not None, "slow-start daemon starts")
    t0 = time.monotonic()
    r = subprocess.run(spawn, capture_output=True, text=True, timeout=240)
    took = time.monotonic() - t0
    reads = d.counter("numaplaced_scans_total")
    ages = read_ages(d, "np-spawn-child")
    check(r.returncode == 0, f"np-spawn ran 2,000 tasks in {took:.1f} s: {r.stdout.strip()}")
    # The spec: nothing younger than scan_delay_ms is read. A child that a
    # loaded machine kept alive past a second may be; on an idle one none is.
    check(all(a >= 1000 for a in ages),
          f"scan_delay_ms=1000: {reads:.0f} numa_maps reads of 2,000 short-lived tasks, "
          f"none younger than 1 s (ages read: {ages[:8]})")
    # Nor, where the connector names them, is their stat: the daemon's
    # own processes are all it reads (each child read once would be 2,000).
    stat_reads, _, _ = stat_counts(d)
    if "/proc is listed at every cycle" not in d.text():
        check(stat_reads < 1000,
              f"scan_delay_ms=1000: {stat_reads:.0f} stat reads beside 2,000 short-lived tasks")
    d.stop()
    # The same load without the delay: young tasks are read, so the check
    # above is the delay's doing.
    d = Daemon("fast", conf + "scan_delay_ms = 0\n", "--verbose")
    check(d.wait_log(r"started") is not None, "no-delay daemon starts")
    subprocess.run(spawn[:1] + ["--count=300"] + spawn[2:], capture_output=True, timeout=120)
    reads = d.counter("numaplaced_scans_total")
    young = [a for a in read_ages(d, "np-spawn-child") if a < 1000]
    check(reads > 0 and young,
          f"scan_delay_ms=0: {reads:.0f} reads of 300 short-lived tasks, "
          f"{len(young)} of them younger than 1 s")
    d.stop()


def test_record_replay():
    trace = os.path.join(tmp, "run.trace")
    d = Daemon("record", BASE + "tick_ms = 50\n", "--dry-run", "--record", trace)
    check(d.wait_log(r"started") is not None, "recording daemon starts")
    subprocess.run([SPAWN, "--count=50", "--mib=1"], capture_output=True, timeout=60)
    time.sleep(0.5)
    check(d.stop() == 0, "recording daemon stops cleanly")
    r = subprocess.run([BIN, "--replay", trace, "-c", "/dev/null"], capture_output=True,
                       text=True, timeout=60)
    scans = re.search(r"^trace_scans (\d+)$", r.stdout, re.M)
    tasks = re.search(r"^tasks (\d+)$", r.stdout, re.M)
    check(r.returncode == 0 and scans and int(scans.group(1)) >= 5 and tasks and
          int(tasks.group(1)) >= 50,
          f"--record writes a trace that --replay reads back ({r.stdout[:80]!r} {r.stderr[:200]!r})")


def test_bad_start():
    r = subprocess.run([BIN, "--foreground", "-c", os.path.join(tmp, "missing.conf")],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode != 0 and "missing.conf" in r.stderr,
          "a missing config: non-zero exit naming the file")
    r = subprocess.run([BIN, "--foreground", "--dry-run", "-c", "/dev/null", "--root",
                        "/nonexistent"], capture_output=True, text=True, timeout=10)
    check(r.returncode != 0 and "/nonexistent" in r.stderr,
          "a bad root: non-zero exit naming it")
    conf = os.path.join(tmp, "detach.conf")
    with open(conf, "w") as f:
        f.write("metrics_listen = 8.8.8.8:80\n")
    r = subprocess.run([BIN, "-c", conf], capture_output=True, text=True, timeout=10)
    check(r.returncode != 0, "a config the daemon cannot start with: non-zero exit "
          "even when detaching")


# The report's fields of a task (README.md), and what a status adds.
REPORT_TASK_KEYS = {"pid", "comm", "age_ms", "rss_bytes", "threads", "run_node", "home_node",
                    "node_bytes", "anon_node_bytes", "movable_node_bytes", "locality",
                    "decision", "reason", "reason_text", "target_node", "move_bytes", "plan"}
LIVE_KEYS = {"cpu_percent", "looks", "sampled_looks", "last_look", "last_look_ago_ms", "moved_bytes",
             "last_action", "thread_homes"}
LAST_ACTION_KEYS = {"decision", "reason", "reason_text", "target_node", "set_affinity", "widen",
                    "move_pages", "outcome", "moved_bytes", "ago_ms"}


def control_exchange(path, request=None, uid=None):
    """Connect to the control socket at path (as uid, in a child, when
    given), send request, and return what comes back before the daemon
    closes."""
    def talk():
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(path)
            if request is not None:
                s.sendall(request)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data
    if uid is None:
        return talk()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.write(wfd, talk())
        except Exception as e:
            os.write(wfd, f"client failed: {e}".encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while chunk := os.read(rfd, 65536):
        data += chunk
    os.close(rfd)
    os.waitpid(pid, 0)
    return data


def test_status_fixture():
    # A fixture machine: what the daemon decided is known in advance.
    d = Daemon("status", "log_level = info\ntick_ms = 100\nmin_cpu_percent = 0\n",
               "--dry-run", "--root", FIXTURE)
    check(d.wait_log(r"started") is not None, "status daemon starts")
    st = d.status_json()
    check(st is not None, "--status --json answers")
    if st is None:
        d.stop()
        return
    check(st.get("live", {}).get("dry_run") is True and
          isinstance(st["live"].get("decided_ago_ms"), int), "status: live.{dry_run, decided_ago_ms}")
    check([n["id"] for n in st["topology"]["nodes"]] == [0, 1], "status: the fixture's two nodes")
    tasks = {t["pid"]: t for t in st["tasks"]}
    check(sorted(tasks) == [100, 200], f"status: the two tasks looked at ({sorted(tasks)})")
    bad = [t["pid"] for t in st["tasks"] if set(t) != REPORT_TASK_KEYS | {"live"} or
           set(t["live"]) != LIVE_KEYS]
    check(not bad, f"status: every task has the report's fields and live's ({bad})")
    hog = tasks.get(100)
    if hog:
        live, last = hog["live"], hog["live"]["last_action"]
        check(live["looks"] >= 1 and live["last_look_ago_ms"] >= 0 and live["moved_bytes"] == 0,
              f"status: the hog's looks, last look, nothing moved in a dry run ({live})")
        check(last is not None and set(last) == LAST_ACTION_KEYS and last["reason"] == "home" and
              last["target_node"] == 1 and last["set_affinity"] and last["outcome"] == "done",
              f"status: the hog's last action, homed on node 1 ({last})")
        check(hog["plan"]["narrowed_from"] == [0, 1, 2, 3] and
              hog["plan"]["narrowed_to"] == [2, 3],
              f"status: the hog's mask narrowed from 0-3 to 2-3 ({hog['plan']})")
    r = d.status()
    check(r.returncode == 0 and re.search(r"^ +PID .* CPU LOOKS +LOOKED +MOVED DECISION", r.stdout,
                                          re.M) and
          re.search(r"^ +100 hog .*narrow->N1", r.stdout, re.M) and
          "narrowed: CPUs 0-3 -> 2-3" in r.stdout,
          "--status: the report's columns with the status's, and the hog's lines")

    # A second daemon on the same runtime directory is refused, and the
    # first keeps its socket.
    r = subprocess.run([BIN, "--foreground", "--dry-run", "--root", FIXTURE, "-c", d.conf,
                        "--runtime-dir", d.run_dir], capture_output=True, text=True, timeout=10)
    check(r.returncode != 0 and "a numaplaced daemon is running with runtime directory " +
          d.run_dir in r.stderr, f"a second daemon on the same runtime directory is refused "
          f"({r.stderr.strip()[-160:]!r})")
    check(d.status().returncode == 0, "the first daemon still answers after that")

    sock = os.path.join(d.run_dir, "control")
    mode = os.stat(sock).st_mode & 0o777
    check(mode == 0o600, f"the control socket is mode {mode:o} (600)")
    answer = control_exchange(sock, b"metrics please\n")
    check(answer.startswith(b"error: bad request"), f"a bad request: {answer[:60]!r}")
    answer = control_exchange(sock, b"s" * 64)
    check(answer.startswith(b"error: bad request"), f"a request at the cap: {answer[:60]!r}")
    # Longer: the daemon stops reading at the cap, answers and closes; what
    # it left unread may reset the connection before the answer is read.
    try:
        answer = control_exchange(sock, b"status json" + b" " * 4096 + b"\n")
    except ConnectionResetError:
        answer = b"(reset)"
    check(answer.startswith((b"error: bad request", b"(reset)")),
          f"a request over the cap: {answer[:60]!r}")
    # A client that will not read the answer: the daemon's write fails
    # (EPIPE), and the daemon carries on.
    with socket.socket(socket.AF_UNIX) as c:
        c.connect(sock)
        c.shutdown(socket.SHUT_RD)
        c.sendall(b"status json\n")
        time.sleep(0.5)
    check(d.proc.poll() is None and d.status().returncode == 0,
          f"a client that reads nothing leaves the daemon running ({d.proc.poll()})")
    # Another user, with the modes loosened: the peer check still refuses.
    os.chmod(tmp, 0o711)
    os.chmod(d.run_dir, 0o711)
    os.chmod(sock, 0o666)
    answer = control_exchange(sock, uid=65534)
    os.chmod(sock, 0o600)
    os.chmod(d.run_dir, 0o700)
    os.chmod(tmp, 0o700)
    check(answer.startswith(b"error: permission denied"), f"uid 65534 is refused: {answer[:80]!r}")
    check(d.wait_log(r"refused pid \d+ of uid 65534") is not None, "the refusal is logged")

    # Idle connections: a few over the cap are refused at once, and the
    # deadline closes the ones held open.
    idle = []
    for _ in range(8):
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        idle.append(c)
    time.sleep(0.3)
    answer = control_exchange(sock)
    check(answer.startswith(b"error: busy"), f"a ninth connection is refused: {answer[:40]!r}")
    t0 = time.monotonic()
    idle[0].settimeout(10)
    try:
        closed = idle[0].recv(100) == b""
    except socket.timeout:
        closed = False
    took = time.monotonic() - t0
    check(closed and took < 6, f"an idle connection is closed by the deadline ({took:.1f} s)")
    for c in idle:
        c.close()
    check(wait_for(lambda: d.status().returncode == 0, 3), "answers again once they are gone")

    check(d.stop() == 0, "status daemon stops cleanly")
    check(not os.path.exists(sock), "the control socket is removed at exit")
    r = d.status()
    check(r.returncode == 3 and "no daemon is running" in r.stderr and sock in r.stderr,
          f"--status with no daemon: exit 3 naming the socket ({r.returncode}, {r.stderr.strip()!r})")

    # A daemon killed leaves its socket; nothing answers there, and the
    # next start replaces it.
    d = Daemon("status", "log_level = info\ntick_ms = 100\n", "--dry-run", "--root", FIXTURE)
    check(d.wait_log(r"started") is not None, "status daemon starts again")
    d.proc.kill()
    d.proc.wait()
    r = d.status()
    check(os.path.exists(sock) and r.returncode == 3,
          f"after SIGKILL: the socket stays, and --status says no daemon ({r.stderr.strip()!r})")
    d.stop()
    d = Daemon("status", "log_level = info\ntick_ms = 100\n", "--dry-run", "--root", FIXTURE)
    check(d.wait_log(r"left by a daemon that is gone: replaced") is not None and
          d.status_json() is not None, "the next start replaces the stale socket and answers")
    check(d.stop() == 0, "stops cleanly")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_status_accept_fails():
    # Out of file descriptors: the connections waiting cannot be accepted,
    # and the daemon pauses instead of trying again at once, for ever.
    d = Daemon("status-nofile", "log_level = info\ntick_ms = 100\n", "--dry-run", "--root",
               FIXTURE)
    check(d.status_json() is not None, "no-file daemon answers")
    pid = d.proc.pid
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (len(os.listdir(f"/proc/{pid}/fd")) + 1, hard))
    sock = os.path.join(d.run_dir, "control")
    held = []
    for _ in range(3):
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        held.append(c)
    time.sleep(0.3)
    lines0 = len(re.findall(r"accept", d.text()))
    ticks0 = cpu_ticks(pid)
    time.sleep(2)
    ticks = cpu_ticks(pid) - ticks0
    lines = len(re.findall(r"accept", d.text())) - lines0
    # One line a pause, about one a second, where trying again at once
    # would log (and spin) thousands of times.
    check(lines <= 5 and ticks < 50,
          f"accept(2) failing: {lines} log lines about it and {ticks} CPU ticks in 2 s")
    check(re.search(r"accepting a connection: Too many open files; not accepting for 1000 ms",
                    d.text()) is not None, "accept(2) failing: logged with the pause")
    for c in held:
        c.close()
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    check(wait_for(lambda: d.status().returncode == 0, 5), "answers again after the pause")
    check(d.stop() == 0, "no-file daemon stops cleanly")


def test_status_before_first_cycle():
    d = Daemon("status-early", "log_level = info\ntick_ms = 10000\nscan_period_min_ms = 10000\n",
               "--dry-run", "--root", FIXTURE)
    check(d.wait_log(r"started") is not None, "early status daemon starts")
    r = d.status()
    check(r.returncode == 1 and "no placement cycle has run yet" in r.stderr,
          f"--status before the first cycle: exit 1 saying so ({r.returncode}, "
          f"{r.stderr.strip()!r})")
    check(d.stop() == 0, "early status daemon stops cleanly")


def test_status_live():
    # This machine's /proc: a busy task shows the CPU it used since the look before.
    hog = subprocess.Popen([sys.executable, "-c",
                            "b = bytearray(32 << 20)\n"
                            "while True:\n"
                            "    for i in range(0, len(b), 4096): b[i] = 1\n"])
    time.sleep(0.5)
    d = Daemon("status-live", BASE + "scan_delay_ms = 0\nscan_period_min_ms = 100\ntick_ms = 50\n"
               "min_rss_mb = 16\nmin_cpu_percent = 0\ninclude_comm = python3*\n", "--dry-run")
    check(d.wait_log(r"started") is not None, "live status daemon starts")

    # A shared machine may give it little CPU: some is enough.
    def looked_busy():
        st = d.status_json()
        t = [t for t in (st or {}).get("tasks", []) if t["pid"] == hog.pid]
        return t[0] if t and t[0]["live"]["looks"] >= 2 and t[0]["live"]["cpu_percent"] > 0 \
            else None
    t = wait_for(looked_busy, 10, 0.2)
    check(t is not None and t["comm"].startswith("python3"),
          "status on this machine: the busy task with its CPU since the look before "
          f"({t['live'] if t else None})")
    d.stop()
    hog.kill()
    hog.wait()


def cpu_seconds(pid):
    """utime + stime of @pid, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_scrape(port, timeout=5.0):
    """(seconds, status line) of one GET /metrics; the status is None when
    nothing came back in @timeout."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data and (chunk := s.recv(65536)):
                data += chunk
    except OSError:
        data = b""
    status = data.decode(errors="replace").split("\r\n", 1)[0] if data else None
    return time.monotonic() - t0, status


def test_metrics_hostile_clients():
    # 200 clients that never finish a request, against a daemon allowed 64
    # open files: 100 send one byte of a header a second, 100 connect and
    # hold. A client whose connection is closed connects again at its next
    # second, as a hostile one would.
    import resource
    import selectors

    def low_nofile():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1024), hard))
    d = Daemon("hostile", BASE + "tick_ms = 100\n", preexec_fn=low_nofile)
    m = d.wait_log(r"metrics on port (\d+)")
    check(m is not None, "hostile clients: the daemon starts with metrics")
    if m is None:
        d.stop()
        return
    port = int(m.group(1))
    lines_before = len(d.text().splitlines())
    cpu_before = cpu_seconds(d.proc.pid)
    sel = selectors.DefaultSelector()
    clients = [None] * 200  # socket, or None while it waits to reconnect
    connects = 0

    def connect(i):
        nonlocal connects
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return
        connects += 1
        clients[i] = s
        sel.register(s, selectors.EVENT_READ, i)

    def drop(i):
        sel.unregister(clients[i])
        clients[i].close()
        clients[i] = None

    latencies, statuses = [], []
    t0 = time.monotonic()
    next_second = t0
    next_scrape = t0 + 0.5
    duration = 15.0
    while time.monotonic() < t0 + duration:
        now = time.monotonic()
        if now >= next_second:
            next_second += 1.0
            for i in range(len(clients)):
                if clients[i] is None:
                    connect(i)
                elif i % 2 == 0:
                    try:
                        clients[i].send(b"X")
                    except OSError:
                        drop(i)
        if now >= next_scrape:
            next_scrape += 0.5
            took, status = timed_scrape(port)
            latencies.append(took)
            statuses.append(status)
            continue
        for key, _ in sel.select(min(next_second, next_scrape) - now):
            i = key.data
            try:
                if clients[i] is not None and not clients[i].recv(4096):
                    drop(i)
            except OSError:
                drop(i)
    cpu = cpu_seconds(d.proc.pid) - cpu_before
    wall = time.monotonic() - t0
    for i in range(len(clients)):
        if clients[i] is not None:
            drop(i)
    sel.close()
    text = d.text()
    lines = text.splitlines()[lines_before:]
    ok = [t for t, s in zip(latencies, statuses) if s and " 200 " in s]
    worst = max(latencies) if latencies else 0.0
    print(f"     {len(latencies)} scrapes, {len(ok)} answered 200, worst {worst * 1000:.0f} ms; "
          f"daemon CPU {cpu:.2f} s in {wall:.1f} s ({100 * cpu / wall:.1f}% of a core); "
          f"{len(lines)} log lines; {connects} hostile connects", flush=True)
    check(latencies and len(ok) == len(latencies) and worst < 1.0,
          f"hostile clients: every GET /metrics answers 200 within 1 s "
          f"({len(ok)}/{len(latencies)}, worst {worst * 1000:.0f} ms)")
    check(cpu / wall < 0.20, f"hostile clients: daemon CPU {100 * cpu / wall:.1f}% of a core (< 20%)")
    check(len(lines) <= 20, f"hostile clients: {len(lines)} log lines (<= 20): {lines[:3]}")
    check("placement cycle failed" not in text, "hostile clients: no placement cycle failed")
    check(d.proc.poll() is None, "hostile clients: the daemon still runs")
    took, status = timed_scrape(port)
    check(status is not None and " 200 " in status and took < 1.0,
          f"hostile clients gone: GET /metrics answers ({status}, {took * 1000:.0f} ms)")
    check(d.stop() == 0, "hostile clients: the daemon stops cleanly")


def stat_counts(d):
    """Tasks listed so far: their stat read, kept, kept as unchanged."""
    _, body = d.metrics()
    out = {}
    for how in ("read", "kept", "unchanged"):
        m = re.search(r'^numaplaced_listed_tasks_total\{stat="%s"\} (\S+)$' % how, body, re.M)
        out[how] = float(m.group(1)) if m else -1.0
    return out["read"], out["kept"], out["unchanged"]


def test_stats_kept():
    """Tasks the daemon need not look at are not read at every cycle: on
    this host (small tasks, kernel threads) most cycles keep most records;
    a reload reads every task again."""
    d = Daemon("kept", BASE + "tick_ms = 100\n")
    check(d.wait_log(r"started") is not None, "kept: daemon starts")
    time.sleep(4)
    read, kept, _ = stat_counts(d)
    quiet = d.counter("numaplaced_quiet_ticks_total")
    # With the process connector /proc is listed at the first cycle only;
    # without it (no CAP_NET_ADMIN, a network namespace of its own) at
    # every cycle, and the log says why. With the connector and CPU
    # samples, a cycle that finds nothing changed lists nothing (quiet).
    _, body = d.metrics()
    listings = {k: float(v) for k, v in re.findall(
        r'^numaplaced_task_listings_total\{from="(\w+)"\} (\S+)$', body, re.M)}
    fallback = re.search(r"process events: (.*); /proc is listed at every cycle", d.text())
    no_samples = re.search(r"CPU samples: (.*); small and idle", d.text())
    print(f"     4 s at 100 ms cycles: {read:.0f} stat reads, {kept:.0f} records kept, "
          f"{quiet:.0f} quiet cycles; listings: {listings}; "
          f"{'fallback: ' + fallback.group(1) if fallback else 'process connector'}"
          f"{', no samples' if no_samples else ''}", flush=True)
    if fallback:
        check(read > 0 and kept > 3 * read,
              f"kept: most listings keep the last record ({read:.0f} read, {kept:.0f} kept)")
        check(listings.get("events", -1) == 0 and listings.get("proc", 0) >= 30 and quiet == 0,
              f"kept: without the connector every cycle lists /proc ({listings}, "
              f"{quiet:.0f} quiet)")
    else:
        check(read > 0 and (kept > 3 * read or quiet >= 30),
              f"kept: most cycles keep the last records or list nothing ({read:.0f} read, "
              f"{kept:.0f} kept, {quiet:.0f} quiet cycles)")
        check(listings.get("proc", -1) == 1 and listings.get("events", 0) + quiet >= 30,
              f"kept: with the connector only the first cycle lists /proc ({listings}, "
              f"{quiet:.0f} quiet)")
        if no_samples:
            check(quiet == 0, f"kept: without CPU samples no cycle is quiet ({quiet:.0f})")
        else:
            # A host busy with other tests may leave few such cycles.
            check(quiet >= 1, f"kept: with CPU samples, cycles that find nothing changed are "
                  f"quiet ({quiet:.0f})")
    # Processes that live less than scan_delay_ms: without the connector
    # each cycle's listing reads them; with it they are not read at all:
    # 600 of them add fewer than 300 reads to what the same time reads
    # without them (other tests run beside this one and start processes
    # that live longer; before the wait each was read at least once).
    def wakeups():
        """The loop thread's voluntary context switches: its wakeups."""
        with open(f"/proc/{d.proc.pid}/status") as f:
            return int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", f.read(), re.M).group(1))

    def reads_over(seconds, start=0):
        before, _, _ = stat_counts(d)
        woken = wakeups()
        # np-spawn reaps each child as it ends: a child left a zombie past
        # scan_delay_ms is a process that old, and is read.
        if start:
            subprocess.run([SPAWN, f"--count={start}", "--parallel=60", "--mib=1",
                            "--life-ms=300"], check=True, capture_output=True, timeout=60)
        time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
        woken = wakeups() - woken
        after, _, _ = stat_counts(d)
        return after - before, woken
    t0 = time.monotonic()
    busy, busy_woken = reads_over(5, 600)
    t0 = time.monotonic()
    quiet, quiet_woken = reads_over(5)
    print(f"     5 s: {quiet:.0f} stat reads, {quiet_woken} wakeups of the loop; "
          f"with 600 processes of 0.3 s: {busy:.0f}, {busy_woken}", flush=True)
    if fallback:
        check(busy - quiet >= 600, f"kept: listings read the short-lived processes ({busy:.0f})")
    else:
        check(busy - quiet < 300,
              f"kept: 600 processes younger than scan_delay_ms are not read "
              f"({busy:.0f} reads against {quiet:.0f} without them)")
        # Their 1,800 events are taken at most every 250 ms, not as they
        # come: at most 20 drains more in 5 s (each a wakeup or two).
        check(busy_woken - quiet_woken < 60,
              f"kept: the loop drains the events of 600 processes in batches "
              f"({busy_woken} wakeups against {quiet_woken} without them)")
    ticks = d.counter("numaplaced_ticks_total")
    read, _, unchanged = stat_counts(d)
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"applied") is not None, "kept: reload applied")
    wait_for(lambda: d.counter("numaplaced_ticks_total") >= ticks + 3, 10)
    read2, _, unchanged2 = stat_counts(d)
    tasks = len([n for n in os.listdir("/proc") if n.isdigit()])
    # Every task afresh: read, or, when CPU samples say it has not run
    # since its last read, that record as unchanged.
    fresh = read2 - read + unchanged2 - unchanged
    check(fresh >= 0.8 * tasks,
          f"kept: a reload reads every task again ({read2 - read:.0f} reads, "
          f"{unchanged2 - unchanged:.0f} unchanged, {tasks} tasks)")
    check(d.stop() == 0, "kept: daemon stops cleanly")


def test_run_samples():
    """With CPU samples, a small task due to be read that was not seen
    running keeps its record as unchanged; once it wakes up and grows it is
    read and looked at all the same. With run_sample_hz = 0 nothing is
    kept as unchanged."""
    sleeper = subprocess.Popen([sys.executable, "-c",
                                "import time\n"
                                "time.sleep(4)\n"
                                "b = bytearray(96 << 20)\n"
                                "while True:\n"
                                "    for i in range(0, len(b), 4096): b[i] = 1\n"])
    d = Daemon("runs", BASE + "tick_ms = 100\nscan_delay_ms = 0\nscan_period_min_ms = 200\n"
               "scan_period_max_ms = 1000\nmin_rss_mb = 64\nmin_cpu_percent = 0\n"
               "include_comm = python3*\n", "--dry-run")
    check(d.wait_log(r"started") is not None, "runs: daemon starts")
    time.sleep(3)
    read, _, unchanged = stat_counts(d)
    fallback = re.search(r"CPU samples: (.*); small and idle", d.text())
    print(f"     3 s: {read:.0f} stat reads, {unchanged:.0f} records unchanged; "
          f"{'fallback: ' + fallback.group(1) if fallback else 'CPU samples'}", flush=True)
    if fallback:
        check(unchanged == 0, f"runs: without samples no record is kept as unchanged "
              f"({unchanged:.0f})")
    else:
        check(unchanged > read,
              f"runs: small idle tasks keep their record as unchanged "
              f"({read:.0f} read, {unchanged:.0f} unchanged)")

    def looked():
        st = d.status_json()
        t = [t for t in (st or {}).get("tasks", []) if t["pid"] == sleeper.pid]
        return t[0] if t and t[0]["live"]["looks"] >= 1 else None
    t = wait_for(looked, 15, 0.2)
    check(t is not None, "runs: the task that woke up and grew is looked at")
    with open(d.conf, "a") as f:
        f.write("run_sample_hz = 0\n")
    ticks = d.counter("numaplaced_ticks_total")
    d.proc.send_signal(signal.SIGHUP)
    check(d.wait_log(r"applied") is not None, "runs: reload applied")
    wait_for(lambda: d.counter("numaplaced_ticks_total") >= ticks + 3, 10)
    _, _, before = stat_counts(d)
    time.sleep(2)
    _, _, after = stat_counts(d)
    check(after == before, f"runs: with run_sample_hz = 0 none unchanged ({after - before:.0f})")
    check(d.stop() == 0, "runs: daemon stops cleanly")
    sleeper.kill()
    sleeper.wait()


def test_service_manager():
    """What a service manager hears: READY=1 once started, and a status line
    when the status changes, not at every cycle."""
    path = os.path.join(tmp, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    d = Daemon("notify", BASE + "tick_ms = 100\n",
               env={**os.environ, "NOTIFY_SOCKET": path})
    msgs = []

    def heard(pred):
        try:
            while True:
                msgs.append(sock.recv(4096, socket.MSG_DONTWAIT).decode())
        except BlockingIOError:
            pass
        return pred()
    check(wait_for(lambda: heard(lambda: "READY=1" in msgs), 10, 0.1),
          f"notify: READY=1 told ({msgs[:3]})")
    ticks0 = d.counter("numaplaced_ticks_total")
    wait_for(lambda: heard(lambda: d.counter("numaplaced_ticks_total") >= ticks0 + 30), 20, 0.2)
    heard(lambda: True)
    statuses = [m for m in msgs if m.startswith("STATUS=")]
    check(statuses and re.match(r"STATUS=\d+ tasks tracked, \d+ numa_maps reads$",
                                statuses[0]),
          f"notify: a status line ({statuses[:1]})")
    # Told when it changes: on a busy host that may be most cycles, but
    # never the same line twice running.
    repeats = sum(1 for a, b in zip(statuses, statuses[1:]) if a == b)
    check(repeats == 0, f"notify: no status repeated ({repeats} of {len(statuses)})")
    check(d.stop() == 0, "notify: daemon stops cleanly")
    heard(lambda: True)
    check("STOPPING=1" in msgs, "notify: STOPPING=1 told")
    sock.close()


def test_cpu_lines():
    """At debug the log says what the start cost, and for each cycle that
    scanned, where its CPU went: parts that add up to no more than the
    whole."""
    d = Daemon("cpu", "log_level = debug\ntick_ms = 100\n")
    check(d.wait_log(r"start: [0-9.]+ ms of CPU") is not None, "cpu: the start's CPU logged")
    cycle = re.compile(r"cycle: ([0-9.]+) ms of CPU: ([0-9.]+) observing, ([0-9.]+) reading "
                       r"tasks, ([0-9.]+) deciding and acting, ([0-9.]+) logging and saving$", re.M)
    check(wait_for(lambda: cycle.search(d.text()), 10) is not None,
          "cpu: a cycle's CPU logged by part")
    check(d.stop() == 0, "cpu: daemon stops cleanly")
    lines = [[float(x) for x in m.groups()] for m in cycle.finditer(d.text())]
    # Each part is rounded to 0.1 ms on its own; the first cycle lists and
    # reads /proc, which takes some CPU (a later one may take under 0.05 ms).
    wrong = [v for v in lines if abs(sum(v[1:]) - v[0]) > 0.3]
    check(lines and not wrong and lines[0][1] > 0,
          f"cpu: the parts add up to the cycle, the first cycle's observing took CPU "
          f"({len(lines)} lines, wrong: {wrong[:2]}, first: {lines[:1]})")


for test in (test_sigterm_and_metrics, test_service_manager, test_cpu_lines, test_sighup, test_stats_kept, test_run_samples,
             test_sighup_metrics_listen,
             test_sighup_tick, test_dry_run_changes_nothing,
             test_slow_start, test_record_replay, test_bad_start, test_status_fixture,
             test_status_before_first_cycle, test_status_accept_fails, test_status_live,
             test_metrics_hostile_clients):
    try:
        test()
    except Exception as e:  # a broken test is a failed test
        check(False, f"{test.__name__}: {type(e).__name__}: {e}")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
