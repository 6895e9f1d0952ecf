#!/usr/bin/env python3
"""Tests of console.py without a guest: a shell script stands in for QEMU
and prints what a guest would. Checks that scenario results, files sent
over the console, a corrupted file, a guest that stops early and one that
hangs each give the right exit status, that a hung "guest" is killed, and
that a QEMU silent from its start is started once more, and only once."""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
count = failures = 0


def check(ok, message):
    global count, failures
    count += 1
    if not ok:
        failures += 1
        print(f"FAIL: {message}")


def file_block(name, data, tamper=False):
    digest = hashlib.sha256(data).hexdigest()
    encoded = base64.encodebytes(data).decode()
    if tamper:  # what a console message slipping into the data would do
        encoded = encoded[:10] + ("B" if encoded[10] != "B" else "C") + encoded[11:]
    return f"@@NP-FILE {name} {len(data)} {digest}@@\n{encoded}@@NP-FILE-END@@\n"


def run(console, timeout=20, checker=None, silent_starts=0):
    """Run console.py with a fake guest printing @console (then exiting, or
    sleeping when @console ends with "HANG"), after @silent_starts starts
    that print nothing and sleep (console.py waits 1 s for a first byte);
    returns (status, output, outdir, seconds)."""
    work = tempfile.mkdtemp(prefix="np-console-")
    scenarios = os.path.join(work, "scenarios")
    os.mkdir(scenarios)
    if checker:
        with open(os.path.join(scenarios, "one.check.py"), "w") as f:
            f.write(checker)
    guest = os.path.join(work, "guest.txt")
    with open(guest, "w") as f:
        f.write(console.replace("\n", "\r\n").replace("HANG", ""))
    script = f"cat {guest}" + ("; exec sleep 60" if "HANG" in console else "")
    starts = os.path.join(work, "starts")
    # Each start appends a line to @starts; the first @silent_starts stay
    # silent.
    command = ["sh", "-c", f"echo >>{starts}; "
               f"if [ $(wc -l <{starts}) -le {silent_starts} ]; then exec sleep 60; fi; {script}"]
    outdir = os.path.join(work, "out")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(here, "console.py"), outdir, scenarios,
                           "/dev/null", str(timeout), "--"] + command,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, NP_VM_SILENT_S="1"))
    return proc.returncode, proc.stdout, outdir, time.monotonic() - start


payload = bytes(range(256)) * 40 + b"\r\n\x00end"
ok_console = ("[    1.0] kernel noise\n@@NP-BOOTED@@\n@@NP-BEGIN one@@\nhello from the guest\n"
              + file_block("data.bin", payload) + "@@NP-END one 0@@\n@@NP-DONE@@\n")

status, out, outdir, _ = run(ok_console)
check(status == 0, f"a passing scenario gives status 0, got {status}:\n{out}")
check("hello from the guest" in out, "scenario output is streamed")
check("kernel noise" not in out, "console lines outside a scenario are not streamed")
with open(os.path.join(outdir, "one", "data.bin"), "rb") as f:
    check(f.read() == payload, "a file sent over the console arrives byte for byte")
with open(os.path.join(outdir, "one", "guest.log")) as f:
    check(f.read() == "hello from the guest\n", "guest.log holds the scenario's output")

status, out, _, _ = run(ok_console.replace("@@NP-END one 0@@", "@@NP-END one 3@@"))
check(status == 1 and "scenario one: FAILED (3)" in out, f"a failing scenario fails:\n{out}")

status, out, _, _ = run(ok_console.replace(file_block("data.bin", payload),
                                           file_block("data.bin", payload, tamper=True)))
check(status == 1 and "checksum differs" in out, f"a corrupted file fails the run:\n{out}")

status, out, _, _ = run(ok_console, checker="import sys\nprint('host says no')\nsys.exit(1)\n")
check(status == 1 and "host says no" in out, f"a failing host check fails the run:\n{out}")

status, out, _, _ = run("@@NP-BOOTED@@\n@@NP-BEGIN one@@\nKernel panic - not syncing\n")
check(status == 1 and "stopped before the end" in out and "Kernel panic" in out,
      f"a guest that dies fails, with its console shown:\n{out}")

status, out, _, seconds = run("@@NP-BOOTED@@\n@@NP-BEGIN one@@\nstuck\nHANG", timeout=2)
check(status == 1 and "no end after 2 s" in out, f"a hung guest fails:\n{out}")
check(seconds < 30, f"a hung guest is killed at the timeout (took {seconds:.1f} s)")

status, out, _, seconds = run(ok_console, silent_starts=1)
check(status == 0 and "starting it once more" in out and "hello from the guest" in out,
      f"a qemu silent from its start is started once more:\n{out}")
check(seconds < 30, f"the silent one is killed at once (took {seconds:.1f} s)")

status, out, _, seconds = run(ok_console, timeout=4, silent_starts=2)
check(status == 1 and out.count("starting it once more") == 1 and "no end after 4 s" in out,
      f"a qemu silent twice is not started a third time, and fails at the timeout:\n{out}")
check(seconds < 30, f"both silent ones are killed (took {seconds:.1f} s)")

print(f"{count - failures} of {count} checks passed")
sys.exit(1 if failures else 0)
