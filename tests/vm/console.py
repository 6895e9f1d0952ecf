#!/usr/bin/env python3
"""Run the test guest and follow its serial console.

usage: console.py OUTDIR SCENARIO_DIR TOPOLOGY_FILE TIMEOUT -- QEMU_COMMAND...

Streams each scenario's output as it arrives, saves files the guest sends
(base64 between @@NP-FILE markers, checked against size and SHA-256) under
OUTDIR/<scenario>/, runs the host-side check SCENARIO_DIR/<scenario>.check.py
of each scenario that passed in the guest, and exits 0 only when every
scenario passed. A guest that panics, hangs or dies before the end is a
failure, shown with the tail of its console. The whole console is kept in
OUTDIR/console.log.

A QEMU that prints nothing at all for NP_VM_SILENT_S seconds (90) never
started the guest: once in a test run the emulator stayed silent for the
whole timeout, before any kernel message, and the same guest booted in
3 s when run again. It is killed and started once more, within the same
TIMEOUT; no scenario has run by then, so nothing is retried that could
have failed.
"""
import base64
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import time

BOOTED = "@@NP-BOOTED@@"
DONE = "@@NP-DONE@@"
BEGIN = re.compile(r"@@NP-BEGIN (\S+)@@$")
END = re.compile(r"@@NP-END (\S+) (\d+)@@$")
FILE = re.compile(r"@@NP-FILE (\S+) (\d+) ([0-9a-f]{64})@@$")
FILE_END = "@@NP-FILE-END@@"


class Run:
    def __init__(self, outdir, scenario_dir, topology):
        self.outdir = outdir
        self.scenario_dir = scenario_dir
        self.topology = topology
        self.started = time.monotonic()
        self.booted = None
        self.done = False
        self.scenario = None
        self.scenario_started = 0.0
        self.scenario_log = None
        self.results = []  # (name, guest status, seconds)
        self.file = None  # (name, size, sha256, [base64 lines])
        self.errors = []

    def elapsed(self):
        return time.monotonic() - self.started

    def line(self, text):
        if self.file is not None:
            self.file_line(text)
            return
        if text.endswith(BOOTED):
            self.booted = self.elapsed()
            print(f"vm: booted in {self.booted:.1f} s", flush=True)
            return
        if text.endswith(DONE):
            self.done = True
            return
        m = BEGIN.search(text)
        if m:
            self.begin(m.group(1))
            return
        m = END.search(text)
        if m:
            self.end(m.group(1), int(m.group(2)))
            return
        m = FILE.search(text)
        if m and self.scenario:
            self.file = (m.group(1), int(m.group(2)), m.group(3), [])
            return
        if self.scenario:
            print(text, flush=True)
            self.scenario_log.write(text + "\n")

    def begin(self, name):
        self.scenario = name
        self.scenario_started = time.monotonic()
        os.makedirs(os.path.join(self.outdir, name), exist_ok=True)
        self.scenario_log = open(os.path.join(self.outdir, name, "guest.log"), "w")
        print(f"vm: ---- scenario {name} ----", flush=True)

    def end(self, name, status):
        seconds = time.monotonic() - self.scenario_started
        self.scenario_log.close()
        self.scenario = None
        self.results.append((name, status, seconds))
        print(f"vm: ---- scenario {name}: exit status {status} after {seconds:.1f} s ----",
              flush=True)

    def file_line(self, text):
        name, size, digest, lines = self.file
        if not text.endswith(FILE_END):
            # Only base64 belongs here; a console message that slipped in
            # shows up as a checksum mismatch below.
            lines.append(text.strip())
            return
        self.file = None
        try:
            data = base64.b64decode("".join(lines), validate=True)
        except ValueError as e:
            self.errors.append(f"{self.scenario}: file {name}: bad base64: {e}")
            return
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            self.errors.append(f"{self.scenario}: file {name}: got {len(data)} bytes, "
                               f"expected {size}, or the checksum differs")
            return
        path = os.path.join(self.outdir, self.scenario, name)
        with open(path, "wb") as f:
            f.write(data)
        print(f"vm: received {name} ({size} bytes)", flush=True)

    def check_on_host(self, name):
        checker = os.path.join(self.scenario_dir, name + ".check.py")
        if not os.path.exists(checker):
            return 0
        print(f"vm: ---- host check {name} ----", flush=True)
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
        return subprocess.call([sys.executable, checker, os.path.join(self.outdir, name),
                                self.topology], env=env)


def follow(run, qemu, console_log, deadline, silent_s):
    """Read the console until qemu exits or the deadline passes; returns
    "end", "timeout", or "silent" when qemu printed nothing at all in its
    first @silent_s seconds."""
    silent_until = time.monotonic() + silent_s
    heard = False
    pending = b""
    fd = qemu.stdout.fileno()
    while True:
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if not heard and now >= silent_until:
            return "silent"
        ready, _, _ = select.select([fd], [], [], min(deadline - now, 1.0))
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        heard = True
        if not chunk:
            if pending:
                run.line(pending.decode("utf-8", "replace").rstrip("\r"))
            return "end"
        console_log.write(chunk)
        console_log.flush()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            run.line(raw.decode("utf-8", "replace").rstrip("\r"))


def show_tail(path, count=60):
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").replace("\r", "").splitlines()
    print(f"vm: ---- last {min(count, len(lines))} console lines ({path}) ----")
    for text in lines[-count:]:
        print(text)


def main():
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit(__doc__)
    outdir, scenario_dir, topology, timeout = sys.argv[1:5]
    command = sys.argv[6:]
    os.makedirs(outdir, exist_ok=True)
    log_path = os.path.join(outdir, "console.log")
    run = Run(outdir, scenario_dir, topology)

    deadline = time.monotonic() + float(timeout)
    silent_s = float(os.environ.get("NP_VM_SILENT_S", "90"))
    current = {}

    def kill_qemu(*_):
        try:
            os.killpg(current["qemu"].pid, signal.SIGKILL)
        except (KeyError, ProcessLookupError):
            pass

    def on_signal(signum, _):
        kill_qemu()
        print(f"vm: stopped by signal {signum}", flush=True)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for attempt in (1, 2):
        # qemu runs in its own process group so that it can be killed with
        # everything it started, whatever way this program ends.
        qemu = current["qemu"] = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            with open(log_path, "wb") as console_log:
                ended = follow(run, qemu, console_log, deadline,
                               silent_s if attempt == 1 else float("inf"))
        finally:
            kill_qemu()
            qemu.wait()
        if ended != "silent":
            break
        print(f"vm: qemu printed nothing in {silent_s:g} s: the guest never started; "
              "starting it once more", flush=True)
    timed_out = ended == "timeout"

    failed = False
    if timed_out:
        print(f"vm: FAIL: no end after {timeout} s (guest hung?)")
        failed = True
    elif not run.done:
        print(f"vm: FAIL: guest stopped before the end (qemu status {qemu.returncode}; "
              "kernel panic?)")
        failed = True
    for error in run.errors:
        print(f"vm: FAIL: {error}")
        failed = True
    if failed:
        show_tail(log_path)

    for name, status, seconds in run.results:
        if status == 0 and not run.errors:
            status = run.check_on_host(name)
        verdict = "ok" if status == 0 else f"FAILED ({status})"
        print(f"vm: scenario {name}: {verdict}, {seconds:.1f} s in the guest")
        failed = failed or status != 0
    boot = f"{run.booted:.1f} s" if run.booted is not None else "never"
    print(f"vm: boot {boot}, total {run.elapsed():.1f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
