#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check the numaplaced(8) manual page.

usage: check-man.py PAGE BINARY

groff must format PAGE without a single warning; the page must have the
sections a daemon's page needs and the references the project promises; and
every option `BINARY --help` lists must be documented, so an option added to
the program and not to the page fails here. Exits 77 (skipped) without
groff.
"""

import re
import shutil
import subprocess
import sys

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SIGNALS", "FILES", "EXIT STATUS",
            "SEE ALSO"]
SEE_ALSO = ["numaplaced.conf (5)", "numad (8)", "numastat (8)"]
# Documented whether or not --help lists them yet.
OPTIONS = ["--report", "--status", "--json", "--root", "--config", "-c", "-n", "-v", "--dry-run",
           "--foreground", "--record", "--replay", "--runtime-dir", "--help", "--version"]
SIGNALS = ["SIGHUP", "SIGTERM", "SIGINT", "SIGUSR1"]


def documented_options(page):
    """Options named in the page's source (roff writes - as \\-)."""
    text = page.replace("\\-", "-").replace("\\%", "")
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))


def check(page, help_text):
    failures = []
    headings = re.findall(r'^\.SH\s+"?([^"\n]+)"?$', page, flags=re.M)
    for section in SECTIONS:
        if section not in headings:
            failures.append("no section " + section)
    for ref in SEE_ALSO:
        if not re.search(r"^\.BR\s+(\\%)?" + re.escape(ref), page, flags=re.M):
            failures.append("SEE ALSO lacks " + ref.replace(" ", ""))
    options = documented_options(page)
    wanted = set(OPTIONS) | set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_text))
    for opt in sorted(wanted - options):
        failures.append("option %s is not documented" % opt)
    for sig in SIGNALS:
        if not re.search(r"^\.(B|BR)\s.*\b" + sig + r"\b", page, flags=re.M):
            failures.append("signal %s is not documented" % sig)
    return failures


def groff_warnings(path):
    r = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True)
    return (r.stderr.strip() or ("groff exit %d" % r.returncode if r.returncode else ""))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if not shutil.which("groff"):
        print("groff not found: skipped")
        return 77
    path, binary = sys.argv[1:]
    with open(path) as f:
        page = f.read()
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    # Options are the first word of an indented line ("  -c, --config=FILE").
    help_text = "\n".join(re.split(r"\s{2,}", l.strip())[0] for l in help_text.splitlines()
                          if l.startswith(" "))

    status = 0
    warnings = groff_warnings(path)
    if warnings:
        print("FAIL: groff: " + warnings, file=sys.stderr)
        status = 1
    for m in check(page, help_text):
        print("FAIL: " + m, file=sys.stderr)
        status = 1
    print("options in --help: %s" % (" ".join(sorted(set(
        re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_text)))) or "(none)"))

    # The checks must be able to fail: a page missing an option, a section
    # and a signal is caught.
    broken = page.replace(".SH SIGNALS", ".SH SIGNAL").replace("\\-\\-dry\\-run", "")
    broken = broken.replace(".B SIGUSR1", ".B USR1")
    caught = check(broken, help_text + "\n--no-such-option")
    expected = ["no section SIGNALS", "option --dry-run is not documented",
                "option --no-such-option is not documented", "signal SIGUSR1 is not documented"]
    for e in expected:
        if e not in caught:
            print("FAIL: a broken page is not caught: " + e, file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
