#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check conf/numaplaced.service with systemd's own tools.

usage: check-unit.py UNIT BINARY [MAX_EXPOSURE]

`systemd-analyze verify` insists that ExecStart= names an existing
executable, so a copy of the unit with ExecStart pointing at the built
BINARY is verified. Then: the offline security exposure score (printed, and
it must stay below MAX_EXPOSURE, 3.0 by default), the settings the daemon
depends on, and that the system call filter the unit builds still allows
every call the daemon makes. Finally the same checks run on broken copies of
the unit, which must fail, so that a check that cannot fail is caught here.
Exits 77 (skipped) without systemd-analyze.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# Calls the daemon makes: placement itself, then the event loop, sockets and
# files it cannot run without. ExecReload's /bin/kill runs under the same
# filter.
REQUIRED_SYSCALLS = """
move_pages migrate_pages mbind get_mempolicy set_mempolicy getcpu
sched_setaffinity sched_getaffinity pidfd_open
epoll_create1 epoll_ctl epoll_wait timerfd_create timerfd_settime rt_sigaction
rt_sigprocmask socket socketpair bind listen accept4 connect sendmsg sendto
recvfrom getsockname setsockopt poll openat read pread64 write close fstat
newfstatat getdents64 lseek mmap munmap brk getrusage clock_gettime kill
mkdir unlinkat renameat fsync fchmod perf_event_open
""".split()

CAPABILITIES = {"CAP_SYS_NICE", "CAP_SYS_PTRACE", "CAP_NET_ADMIN", "CAP_PERFMON"}


class Failures:
    def __init__(self):
        self.messages = []

    def check(self, cond, message):
        if not cond:
            self.messages.append(message)


def run(*args):
    return subprocess.run(args, capture_output=True, text=True)


def service_settings(text):
    """Every assignment in [Service], in order: {key: [value, ...]}."""
    settings = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def syscall_groups():
    """{'@group': [member, ...]} from `systemd-analyze syscall-filter`."""
    groups = {}
    current = None
    for line in run("systemd-analyze", "syscall-filter").stdout.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif current is not None and line.startswith(" "):
            entry = line.strip()
            if entry and not entry.startswith("#"):
                current.append(entry)
        elif not line.strip():
            current = None
    return groups


def expand(name, groups, seen=None):
    if not name.startswith("@"):
        return {name}
    seen = seen if seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    out = set()
    for member in groups.get(name, []):
        out |= expand(member, groups, seen)
    return out


def allowed_syscalls(filters, groups):
    """The allow list systemd builds from SystemCallFilter= lines: the first
    line decides allow or deny mode, later ones add (or with ~ remove).
    Returns (set, True) for an allow list or (denied set, False)."""
    allow = None
    names = set()
    for value in filters:
        if not value:
            allow, names = None, set()
            continue
        negate = value.startswith("~")
        items = value.lstrip("~").split()
        members = set().union(*(expand(i, groups) for i in items)) if items else set()
        if allow is None:
            allow = not negate
            names = members
        elif allow != negate:
            names |= members
        else:
            names -= members
    return names, allow is True


def exposure(unit_path):
    r = run("systemd-analyze", "security", "--offline=true", "--no-pager", unit_path)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
    return (float(m.group(1)) if m else None), r.stdout


def check_unit(text, binary, max_exposure, groups, verbose):
    """The failures found; unless @verbose, stops at the first kind found
    (settings, verify, exposure) to keep the broken-copy runs short."""
    failures = Failures()
    settings = service_settings(text)
    first = lambda key: (settings.get(key) or [""])[-1]

    exec_start = first("ExecStart").split()
    failures.check(exec_start and exec_start[0].endswith("/numaplaced"),
                   "ExecStart= does not run numaplaced")
    failures.check("--foreground" in exec_start, "ExecStart= lacks --foreground")
    failures.check(first("Type") == "notify", "Type= is not notify")
    failures.check(first("WatchdogSec") not in ("", "0", "infinity"), "WatchdogSec= is not set")
    failures.check(re.fullmatch(r"/bin/kill -HUP \$MAINPID", first("ExecReload")) is not None,
                   "ExecReload= does not send SIGHUP to $MAINPID")
    # The open-file limit the daemon's budget is written for (the unit's
    # comment): set, finite, and leaving room for a pidfd per tracked task.
    nofile = re.fullmatch(r"(\d+)(?::(\d+))?", first("LimitNOFILE"))
    failures.check(nofile is not None and int(nofile.group(1)) >= 4096,
                   "LimitNOFILE= is not a limit of at least 4096 (%r)" % first("LimitNOFILE"))
    caps = set(" ".join(settings.get("CapabilityBoundingSet", [])).split())
    failures.check(caps == CAPABILITIES,
                   "CapabilityBoundingSet= is %s, expected %s" % (sorted(caps), sorted(CAPABILITIES)))
    failures.check(first("PrivateUsers") in ("", "no", "false"),
                   "PrivateUsers= would move the capabilities out of the host's namespace")
    failures.check(first("ProtectProc") in ("", "default"),
                   "ProtectProc= would make tasks' visibility depend on access checks")
    failures.check(first("ProcSubset") in ("", "all"),
                   "ProcSubset=pid hides /proc/sys and /proc/meminfo")
    # The saved masks: the daemon's default --runtime-dir, private, and kept
    # over a restart after a crash.
    help_text = run(binary, "--help").stdout
    failures.check("(default /run/%s)" % first("RuntimeDirectory") in help_text,
                   "RuntimeDirectory= is not the daemon's default --runtime-dir")
    failures.check(first("RuntimeDirectoryMode") == "0700", "RuntimeDirectoryMode= is not 0700")
    failures.check(first("RuntimeDirectoryPreserve") in ("restart", "yes"),
                   "RuntimeDirectoryPreserve= lets a restart lose the saved masks")
    families = set(" ".join(settings.get("RestrictAddressFamilies", [])).split())
    failures.check({"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"} <= families,
                   "RestrictAddressFamilies= lacks AF_UNIX, AF_INET, AF_INET6 or AF_NETLINK")

    names, is_allow_list = allowed_syscalls(settings.get("SystemCallFilter", []), groups)
    blocked = sorted(s for s in REQUIRED_SYSCALLS if (s in names) != is_allow_list)
    failures.check(not blocked, "SystemCallFilter= blocks " + " ".join(blocked))
    if failures.messages and not verbose:
        return failures.messages

    with tempfile.TemporaryDirectory() as tmp:
        unit_path = os.path.join(tmp, "numaplaced.service")
        fixed = re.sub(r"^ExecStart=\S+", "ExecStart=" + binary, text, flags=re.M)
        with open(unit_path, "w") as f:
            f.write(fixed)
        r = run("systemd-analyze", "verify", "--man=no", unit_path)
        output = (r.stdout + r.stderr).strip()
        failures.check(r.returncode == 0 and not output,
                       "systemd-analyze verify: exit %d\n%s" % (r.returncode, output))
        if failures.messages and not verbose:
            return failures.messages
        score, report = exposure(unit_path)
        if verbose:
            print("\n".join(l for l in report.splitlines() if l.startswith("\u2717")))
            print("exposure score (systemd-analyze security --offline=true): %s" % score)
        failures.check(score is not None and score < max_exposure,
                       "exposure %s is not below %.1f" % (score, max_exposure))
    return failures.messages


# Broken copies of the unit; each must fail the checks above.
MUTATIONS = [
    ("drops CAP_SYS_PTRACE",
     "\nCapabilityBoundingSet=CAP_SYS_NICE CAP_SYS_PTRACE CAP_NET_ADMIN CAP_PERFMON\n",
     "\nCapabilityBoundingSet=CAP_SYS_NICE CAP_NET_ADMIN CAP_PERFMON\n"),
    ("drops AF_NETLINK", "\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n",
     "\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"),
    ("denies @resources", "\nSystemCallFilter=~@privileged\n",
     "\nSystemCallFilter=~@privileged @resources\n"),
    ("adds PrivateUsers", "\n[Service]\n", "\n[Service]\nPrivateUsers=yes\n"),
    ("adds ProtectProc=invisible", "\n[Service]\n", "\n[Service]\nProtectProc=invisible\n"),
    ("adds ProcSubset=pid", "\n[Service]\n", "\n[Service]\nProcSubset=pid\n"),
    ("forks", "\nType=notify\n", "\nType=forking\n"),
    ("misspells a key", "\nProtectHome=yes\n", "\nProtectHomes=yes\n"),
    ("drops LimitNOFILE", "\nLimitNOFILE=65536\n", "\n"),
    ("has a small LimitNOFILE", "\nLimitNOFILE=65536\n", "\nLimitNOFILE=64\n"),
    ("drops RuntimeDirectoryPreserve", "\nRuntimeDirectoryPreserve=restart\n", "\n"),
    ("moves the runtime directory", "\nRuntimeDirectory=numaplaced\n",
     "\nRuntimeDirectory=numaplace\n"),
    # Later assignments win, so the loosening goes at the end of [Service].
    ("loosens the sandbox", "\n[Install]\n",
     "\nProtectSystem=no\nProtectHome=no\nPrivateDevices=no\nSystemCallFilter=\n"
     "ProtectKernelTunables=no\nProtectKernelModules=no\n\n[Install]\n"),
]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if not shutil.which("systemd-analyze"):
        print("systemd-analyze not found: skipped")
        return 77
    unit, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    max_exposure = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    with open(unit) as f:
        text = f.read()
    groups = syscall_groups()
    if "@system-service" not in groups:
        print("systemd-analyze syscall-filter lists no @system-service", file=sys.stderr)
        return 1

    status = 0
    messages = check_unit(text, binary, max_exposure, groups, verbose=True)
    for m in messages:
        print("FAIL: " + m, file=sys.stderr)
        status = 1
    for what, old, new in MUTATIONS:
        if old not in text:
            print("FAIL: mutation '%s': '%s' not in the unit" % (what, old), file=sys.stderr)
            status = 1
            continue
        broken = check_unit(text.replace(old, new, 1), binary, max_exposure, groups, False)
        print("a unit that %s: %s" % (what, "; ".join(broken) or "NOT CAUGHT"))
        if not broken:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
