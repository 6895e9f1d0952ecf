#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Build the Debian package from a clean copy of the tree and check it.

usage: test-deb.py SOURCE_ROOT WORK_DIR VERSION FIXTURES

The copy holds what git would commit (tracked and untracked files, not the
ignored build directories), or, outside git, the tree without build*/ and
.git. In WORK_DIR it runs `dpkg-buildpackage -us -uc -b`, then checks the
.deb: its control fields, its exact file list, the conffiles, that the
maintainer scripts enable the unit the Debian way, lintian (errors and
warnings fail), and, unpacked into a throwaway root (dpkg -x, and dpkg
--root for dpkg's own database), that the binary runs and accepts the
shipped configuration. The same checks then run on broken copies of the
.deb, each of which must fail, so that a check that cannot fail is caught.
Exits 77 (skipped) without dpkg-buildpackage, debhelper or lintian.
"""

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

PACKAGE = "numaplaced"
UNIT = "numaplaced.service"
CONFFILE = "/etc/numaplaced/numaplaced.conf"
# Every path the package ships but its directories, with its mode: what
# `meson install` installs, plus what debhelper adds to every package.
FILES = {
    "etc/numaplaced/numaplaced.conf": "-rw-r--r--",
    "lib/systemd/system/numaplaced.service": "-rw-r--r--",
    "usr/sbin/numaplaced": "-rwxr-xr-x",
    "usr/share/doc/numaplaced/changelog.gz": "-rw-r--r--",
    "usr/share/doc/numaplaced/copyright": "-rw-r--r--",
    "usr/share/man/man5/numaplaced.conf.5.gz": "-rw-r--r--",
    "usr/share/man/man8/numaplaced.8.gz": "-rw-r--r--",
    "usr/share/numaplaced/libvirt/numad": "-rwxr-xr-x",
}
# Shipped files that must be the source's own, byte for byte.
FROM_SOURCE = {
    "etc/numaplaced/numaplaced.conf": "conf/numaplaced.conf",
    "usr/share/doc/numaplaced/copyright": "debian/copyright",
    "usr/share/man/man5/numaplaced.conf.5.gz": "conf/numaplaced.conf.5",
    "usr/share/man/man8/numaplaced.8.gz": "daemon/numaplaced.8",
    "usr/share/numaplaced/libvirt/numad": "conf/libvirt/numad",
}
# The libraries the daemon links, by their Debian 12 package names;
# dpkg-shlibdeps must have found every one.
LIBRARY_PACKAGES = {"libc6", "libnuma1", "libproc2-0", "libevent-2.1-7",
                    "libjson-c5", "libsystemd0"}
# What dh_installsystemd writes into the maintainer scripts: enable at
# configure, start (or restart on upgrade), stop at remove, forget at purge.
SCRIPT_LINES = {
    "postinst": [f"deb-systemd-helper enable '{UNIT}'",
                 f"deb-systemd-invoke $_dh_action '{UNIT}'"],
    "prerm": [f"deb-systemd-invoke stop '{UNIT}'"],
    "postrm": [f"deb-systemd-helper purge '{UNIT}'"],
}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def failed_test_logs(lines):
    """The blocks of meson's test log (which dh_auto_test prints when the
    tests fail) of the tests that did not pass or skip, a long one cut to
    its first 15 lines and its last 40 (stderr, where a check's failure
    goes, comes last)."""
    blocks, block = [], None
    for line in lines:
        if re.match(r"^=+ \d+/\d+ =+$", line.strip()):
            block = [line]
            blocks.append(block)
        elif block is not None:
            block.append(line)
    failed = []
    for b in blocks:
        result = next((l for l in b if l.startswith("result:")), "")
        if not result or re.search(r"exit status (0|77)$|skipped", result.strip()):
            continue
        failed.extend(b if len(b) <= 60 else b[:15] + ["[...]\n"] + b[-40:])
    return failed


def clean_env():
    """The build sees a plain environment, not meson test's."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "TMPDIR") if k in os.environ}
    env["LC_ALL"] = "C.UTF-8"
    env["DEB_BUILD_OPTIONS"] = f"parallel={os.cpu_count() or 1}"
    return env


def copy_tree(src, dst):
    """Copy what a commit of src would hold into dst."""
    listing = run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                   "--exclude-standard"])
    if listing.returncode == 0:
        os.makedirs(dst)
        for rel in filter(None, listing.stdout.split("\0")):
            path = os.path.join(src, rel)
            if not os.path.lexists(path):  # deleted, not yet committed
                continue
            os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(path, os.path.join(dst, rel), follow_symlinks=False)
    else:
        shutil.copytree(src, dst, symlinks=True,
                        ignore=shutil.ignore_patterns("build*", ".git", "obj-*"))


def control_fields(deb):
    out = run(["dpkg-deb", "-f", deb]).stdout
    fields, key = {}, None
    for line in out.splitlines():
        if line.startswith((" ", "\t")) and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def control_file(deb, name):
    """One member of the control archive, or None."""
    p = run(["sh", "-c", f'dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./{name}',
             "sh", deb])
    return p.stdout if p.returncode == 0 else None


def contents(deb):
    """{path: mode} of every non-directory in the data archive."""
    files = {}
    for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6 or fields[0].startswith("d"):
            continue
        path = fields[5].split(" -> ")[0]
        files[path[2:] if path.startswith("./") else path] = fields[0]
    return files


def dep_names(field):
    names = set()
    for alternative in re.split(r"[,|]", field):
        name = alternative.strip().split(" ")[0].split(":")[0]
        if name:
            names.add(name)
    return names


def check_deb(deb, source, version, fixtures, root):
    """Every check on one .deb; returns the failures as messages."""
    failures = []

    def check(cond, message):
        if not cond:
            failures.append(message)

    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    fields = control_fields(deb)
    for key, want in (("Package", PACKAGE), ("Version", version),
                      ("Architecture", arch), ("Section", "admin"),
                      ("Priority", "optional")):
        check(fields.get(key) == want, f"{key}: {fields.get(key)!r}, want {want!r}")
    check(fields.get("Description", "").startswith("userspace NUMA placement daemon\n"),
          f"Description: {fields.get('Description')!r}")
    check("@" in fields.get("Maintainer", ""), f"Maintainer: {fields.get('Maintainer')!r}")
    depends = fields.get("Depends", "")
    check("${" not in depends, f"Depends has an unsubstituted variable: {depends}")
    missing = LIBRARY_PACKAGES - dep_names(depends)
    check(not missing, f"Depends lacks {sorted(missing)}: {depends}")

    files = contents(deb)
    for path in sorted(set(files) | set(FILES)):
        check(files.get(path) == FILES.get(path),
              f"{path}: shipped as {files.get(path)}, want {FILES.get(path)}")

    conffiles = (control_file(deb, "conffiles") or "").split()
    check(conffiles == [CONFFILE], f"conffiles: {conffiles}, want [{CONFFILE}]")
    for script, lines in SCRIPT_LINES.items():
        text = control_file(deb, script) or ""
        for line in lines:
            check(line in text, f"{script} lacks: {line}")

    # The files, unpacked as they land on a system.
    shutil.rmtree(root, ignore_errors=True)
    p = run(["dpkg-deb", "-x", deb, root])
    check(p.returncode == 0, f"dpkg-deb -x: {p.stderr.strip()}")
    for shipped, src in FROM_SOURCE.items():
        path = os.path.join(root, shipped)
        if not os.path.exists(path):
            continue  # reported with the file list
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f, open(os.path.join(source, src), "rb") as g:
            check(f.read() == g.read(), f"{shipped} differs from {src}")

    unit = os.path.join(root, "lib/systemd/system", UNIT)
    unit_text = open(unit).read() if os.path.exists(unit) else ""
    exec_start = re.search(r"^ExecStart=(\S+)", unit_text, re.M)
    check(exec_start and exec_start.group(1).lstrip("/") in files,
          f"{UNIT}: ExecStart= is not a shipped file: "
          f"{exec_start.group(0) if exec_start else 'none'}")
    # What postinst's deb-systemd-helper line does, done into the throwaway
    # root (DPKG_ROOT keeps it off this machine's systemd): the unit's
    # WantedBy= gets its link.
    env = dict(os.environ, DPKG_ROOT=os.path.abspath(root),
               DPKG_MAINTSCRIPT_PACKAGE=PACKAGE, DPKG_MAINTSCRIPT_NAME="postinst")
    p = run(["deb-systemd-helper", "enable", UNIT], env=env)
    link = os.path.join(root, "etc/systemd/system/multi-user.target.wants", UNIT)
    check(p.returncode == 0 and os.path.islink(link)
          and os.readlink(link) == "/lib/systemd/system/" + UNIT,
          f"deb-systemd-helper enable {UNIT}: exit {p.returncode}, "
          f"{p.stderr.strip()}; no link {link}")

    binary = os.path.join(root, "usr/sbin/numaplaced")
    conf = os.path.join(root, CONFFILE.lstrip("/"))
    if os.path.exists(binary):
        p = run([binary, "--version"])
        check(p.returncode == 0 and p.stdout.strip() == f"numaplaced {version}",
              f"numaplaced --version: exit {p.returncode}, {p.stdout.strip()!r}")
        p = run([binary, "-n", "-c", conf])
        check(p.returncode == 0, f"numaplaced -n -c {conf}: exit {p.returncode}, "
              f"{(p.stdout + p.stderr).strip()}")
        p = run([binary, "--report", "--root", os.path.join(fixtures, "engine-2node"),
                 "-c", conf])
        check(p.returncode == 0 and "2 nodes, 4 CPUs" in p.stdout,
              f"numaplaced --report on a fixture: exit {p.returncode}, {p.stderr.strip()}")

    # dpkg's own view: unpacked into an empty root of its own, every file is
    # registered, the configuration as a conffile, and the md5sums match.
    dpkg_root = root + "-dpkg"
    shutil.rmtree(dpkg_root, ignore_errors=True)
    admin = os.path.join(dpkg_root, "var/lib/dpkg")
    for d in ("info", "updates"):
        os.makedirs(os.path.join(admin, d))
    open(os.path.join(admin, "status"), "w").close()
    # --unpack runs no maintainer script (there is no preinst); configuring
    # would run postinst chrooted into a root with no shell.
    p = run(["dpkg", "--root", dpkg_root, "--force-depends", "--unpack", deb])
    check(p.returncode == 0, f"dpkg --root --unpack: {p.stderr.strip()}")
    q = run(["dpkg-query", "--admindir", admin, "-W",
             "-f", "${Status}\n${Version}\n${Conffiles}\n", PACKAGE])
    check(q.returncode == 0 and q.stdout.split("\n")[:2] == ["install ok unpacked", version],
          f"dpkg-query in the throwaway root: {q.stdout.strip()!r} {q.stderr.strip()}")
    check(re.search(rf"^ {re.escape(CONFFILE)} ", q.stdout, re.M),
          f"dpkg did not register {CONFFILE} as a conffile: {q.stdout.strip()!r}")
    # The conffile waits as .dpkg-new until configure, so -V reports it
    # missing; any other line is a file that does not match its md5sum.
    v = run(["dpkg", "--root", dpkg_root, "-V", PACKAGE])
    bad = [line for line in v.stdout.splitlines() if line.split()[-1:] != [CONFFILE]]
    check(not bad, f"dpkg -V: {bad}")
    new = os.path.join(dpkg_root, CONFFILE.lstrip("/") + ".dpkg-new")
    if os.path.exists(new) and os.path.exists(conf):
        with open(new, "rb") as f, open(conf, "rb") as g:
            check(f.read() == g.read(), f"{new} differs from the package's")
    return failures


def broken_copies(deb, work):
    """(what, path, failure expected) for copies of deb with one thing wrong
    each."""
    tree = os.path.join(work, "broken-tree")

    def variant(name, change, expect):
        shutil.rmtree(tree, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
        change(tree)
        out = os.path.join(work, f"broken-{name}.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", tree, out],
                       check=True, capture_output=True)
        return name, out, expect

    def no_conffile(t):
        os.remove(os.path.join(t, "DEBIAN/conffiles"))

    def not_enabled(t):
        path = os.path.join(t, "DEBIAN/postinst")
        text = open(path).read().replace(f"deb-systemd-helper enable '{UNIT}'", "true")
        open(path, "w").write(text)

    def unit_under_usr(t):
        os.makedirs(os.path.join(t, "usr/lib/systemd"))
        os.rename(os.path.join(t, "lib/systemd/system"),
                  os.path.join(t, "usr/lib/systemd/system"))

    def extra_file(t):
        os.makedirs(os.path.join(t, "usr/bin"))
        shutil.copy(os.path.join(t, "usr/sbin/numaplaced"), os.path.join(t, "usr/bin/np-hog"))

    def bad_conf(t):
        with open(os.path.join(t, "etc/numaplaced/numaplaced.conf"), "a") as f:
            f.write("no_such_key = 1\n")

    return [variant(*v) for v in (
        ("no-conffile", no_conffile, "conffiles: []"),
        ("not-enabled", not_enabled, "postinst lacks: deb-systemd-helper enable"),
        ("unit-under-usr", unit_under_usr, "lib/systemd/system/numaplaced.service: shipped as None"),
        ("extra-file", extra_file, "usr/bin/np-hog: shipped as"),
        ("bad-conf", bad_conf, "numaplaced -n -c"),
    )]


def main():
    source, work, version, fixtures = sys.argv[1:5]
    for tool, pkg in (("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper"),
                      ("lintian", "lintian"), ("fakeroot", "fakeroot"),
                      ("deb-systemd-helper", "init-system-helpers")):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found (tests/install-deps.sh installs {pkg})")
            return 77

    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, f"{PACKAGE}-{version}")
    copy_tree(source, src)
    log = os.path.join(work, "dpkg-buildpackage.log")
    started = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src,
                           stdout=f, stderr=subprocess.STDOUT, env=clean_env())
    if p.returncode != 0:
        lines = open(log).readlines()
        failed = failed_test_logs(lines)
        print(f"FAIL: dpkg-buildpackage exit {p.returncode}; the end of {log}:")
        print("".join(lines[-60:]))
        if failed:
            print("the logs of the tests that failed in the package build:")
            print("".join(failed))
        return 1
    print(f"dpkg-buildpackage: {time.monotonic() - started:.0f} s")
    changelog_version = run(["dpkg-parsechangelog", "-S", "Version"], cwd=src).stdout.strip()

    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(work, f"{PACKAGE}_{changelog_version}_{arch}.deb")
    changes = os.path.join(work, f"{PACKAGE}_{changelog_version}_{arch}.changes")
    failures = []
    if changelog_version != version:
        failures.append(f"debian/changelog has {changelog_version}, meson.build {version}")
    if not os.path.exists(deb):
        print(f"FAIL: no {deb}; built: {sorted(os.listdir(work))}")
        return 1

    failures += check_deb(deb, src, version, fixtures, os.path.join(work, "root"))
    print(run(["dpkg-deb", "-c", deb]).stdout)

    # Lintian: errors and warnings fail; an accepted one belongs in
    # debian/numaplaced.lintian-overrides with the reason beside it.
    started = time.monotonic()
    lint = run(["lintian", "--fail-on", "error,warning", "--display-info", changes])
    print(f"lintian ({time.monotonic() - started:.0f} s):", lint.stdout.strip() or "no tags")
    if lint.returncode != 0:
        failures.append(f"lintian exit {lint.returncode}: {lint.stdout.strip()} "
                        f"{lint.stderr.strip()}")

    # The broken copies are made from a package that passed.
    for name, path, expect in [] if failures else broken_copies(deb, work):
        caught = check_deb(path, src, version, fixtures, os.path.join(work, "root"))
        hit = [m for m in caught if expect in m]
        if hit:
            print(f"broken copy {name}: caught: {hit[0]}")
        else:
            failures.append(f"broken copy {name}: no failure with {expect!r}: {caught}")

    for message in failures:
        print("FAIL:", message)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
