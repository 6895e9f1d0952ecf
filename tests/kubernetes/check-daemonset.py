#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check conf/kubernetes/daemonset.yaml field by field.

usage: check-daemonset.py MANIFEST NUMAPLACED

The DaemonSet runs the daemon in the host's PID namespace with the root
"/", only CAP_SYS_NICE and CAP_SYS_PTRACE, a read-only root file system,
/sys and the cgroup hierarchy mounted read-only and nothing of the host
writable, resource limits, and Prometheus annotations naming the port that
reaches the endpoint; the ConfigMap's configuration passes numaplaced -n,
and the daemon's arguments are options numaplaced knows.
"""
import subprocess
import sys
import tempfile

import yaml

failures = []


def want(cond, what):
    if not cond:
        failures.append(what)


def get(obj, *path):
    for key in path:
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and isinstance(key, int) and key < len(obj):
            obj = obj[key]
        else:
            return None
    return obj


def main():
    manifest, binary = sys.argv[1], sys.argv[2]
    with open(manifest) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d.get("kind"): d for d in docs}
    want(sorted(kinds) == ["ConfigMap", "DaemonSet"], "documents: %s" % sorted(kinds))
    ds, cm = kinds.get("DaemonSet", {}), kinds.get("ConfigMap", {})
    want(ds.get("apiVersion") == "apps/v1", "DaemonSet apiVersion")
    labels = get(ds, "spec", "selector", "matchLabels")
    want(labels and get(ds, "spec", "template", "metadata", "labels") == labels,
         "the selector matches the pod's labels")

    pod = get(ds, "spec", "template", "spec") or {}
    want(pod.get("hostPID") is True, "hostPID: true")
    want(not pod.get("hostNetwork"), "no hostNetwork")
    want(not pod.get("hostIPC"), "no hostIPC")
    want(pod.get("automountServiceAccountToken") is False, "no service account token")
    want(get(pod, "tolerations", 0, "operator") == "Exists", "tolerates every taint")

    containers = {c["name"]: c for c in pod.get("containers", [])}
    want(sorted(containers) == ["metrics-proxy", "numaplaced"], "containers: %s" % sorted(containers))
    daemon = containers.get("numaplaced", {})
    proxy = containers.get("metrics-proxy", {})

    # The daemon: root "/", so that it acts; its arguments are real options.
    args = daemon.get("args", [])
    want("--foreground" in args, "the daemon runs in the foreground")
    want(not any(a.startswith("--root") for a in args), "no --root: only observing under one")
    helptext = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    for a in args:
        want(a.split("=")[0] in helptext, "argument %s is not a numaplaced option" % a)

    sc = daemon.get("securityContext", {})
    want(sc.get("runAsUser") == 0, "the daemon runs as root (its capabilities need it)")
    want(sc.get("privileged") is False, "not privileged")
    want(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
    want(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem: true")
    want(get(sc, "capabilities", "drop") == ["ALL"], "drops ALL capabilities")
    want(sorted(get(sc, "capabilities", "add") or []) == ["SYS_NICE", "SYS_PTRACE"],
         "adds exactly SYS_NICE and SYS_PTRACE")
    want(get(sc, "seccompProfile", "type") == "RuntimeDefault", "seccomp RuntimeDefault")

    for name, c in containers.items():
        for kind in ("requests", "limits"):
            for res in ("cpu", "memory"):
                want(get(c, "resources", kind, res) is not None,
                     "%s: resources.%s.%s" % (name, kind, res))
    want(get(proxy, "securityContext", "runAsNonRoot") is True, "the proxy runs as non-root")
    want(get(proxy, "securityContext", "capabilities", "drop") == ["ALL"],
         "the proxy drops ALL capabilities")
    want(not get(proxy, "securityContext", "capabilities", "add"), "the proxy adds none")
    want(get(proxy, "securityContext", "readOnlyRootFilesystem") is True,
         "the proxy's root file system is read-only")

    # Volumes: /sys and the cgroup tree from the host, read-only; nothing
    # else of the host.
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    host = {n: get(v, "hostPath", "path") for n, v in volumes.items() if "hostPath" in v}
    want(sorted(host.values()) == ["/sys", "/sys/fs/cgroup"], "host paths: %s" % host)
    mounts = {m["name"]: m for m in daemon.get("volumeMounts", [])}
    for name, path in host.items():
        m = mounts.get(name, {})
        want(m.get("mountPath") == path, "%s is mounted at %s" % (name, path))
        want(m.get("readOnly") is True, "%s is mounted read-only" % path)
    want(not proxy.get("volumeMounts"), "the proxy mounts nothing")
    for m in daemon.get("volumeMounts", []):
        want(m.get("readOnly") is True or "emptyDir" in volumes.get(m["name"], {}),
             "%s is writable and not an emptyDir" % m["mountPath"])
    run = [a.split("=", 1)[1] for a in args if a.startswith("--runtime-dir=")]
    want(run and get(mounts, "run", "mountPath") and
         run[0].startswith(mounts["run"]["mountPath"] + "/"),
         "the runtime directory is its own directory inside the emptyDir")
    want(get(mounts, "config", "mountPath") == "/etc/numaplaced" and
         get(volumes, "config", "configMap", "name") == get(cm, "metadata", "name"),
         "the configuration comes from the ConfigMap")

    # Prometheus: the annotated port is the proxy's, which forwards to the
    # daemon's loopback endpoint.
    ann = get(ds, "spec", "template", "metadata", "annotations") or {}
    want(ann.get("prometheus.io/scrape") == "true", "prometheus.io/scrape: \"true\"")
    want(ann.get("prometheus.io/path") == "/metrics", "prometheus.io/path: /metrics")
    ports = [p.get("containerPort") for p in proxy.get("ports", [])]
    want(str(ports[0]) == ann.get("prometheus.io/port") if ports else False,
         "prometheus.io/port is the proxy's port: %s vs %s" % (ann.get("prometheus.io/port"), ports))
    conf = get(cm, "data", "numaplaced.conf") or ""
    listen = [l.split("=", 1)[1].strip() for l in conf.splitlines()
              if l.strip().startswith("metrics_listen")]
    want(listen == ["127.0.0.1:9464"], "the daemon listens on 127.0.0.1:9464: %s" % listen)
    want(any("TCP:%s" % listen[0] in a for a in proxy.get("args", [])) if listen else False,
         "the proxy forwards to the daemon's endpoint")
    want(any("TCP-LISTEN:%s," % ports[0] in a for a in proxy.get("args", [])) if ports else False,
         "the proxy listens on its declared port")

    # The configuration the pod gets is valid.
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(conf)
        f.flush()
        r = subprocess.run([binary, "-n", "-c", f.name], capture_output=True, text=True)
        want(r.returncode == 0, "numaplaced -n refuses the ConfigMap's config: " + r.stderr)

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
