#!/usr/bin/env python3
"""Side by side with stakater Reloader, and initial sync against the API server's ceiling (issue 30).
Started by e2e/bench/peer.sh, which brings up a fresh control plane, builds both tools and the
ceiling client first; see that script.

One world, both tools, alternated (never both running at once). For each N in --sizes:

  Deployment app-i (replicas 0) mounts two ConfigMaps: cfg-i-kafka, the operator's output of
  KafkaToolConfig cfg-i (which names app-i in rollout.targets and reads source ConfigMap cfg-i-src),
  and peer-i, a ConfigMap of the same content that a Reloader user would edit by hand. app-i is
  annotated reloader.stakater.com/auto=true. Plus the ballast of unrelated ConfigMaps and Secrets.

  ours-initial  operator started on the new configs: time, CPU and configs/s until every new config
                has its output and its Deployment's template carries the output's hash.
  ours          operator restarted on the current world; then reloader likewise:
                  sync   peak RSS while listing, CPU seconds from start until quiet (and, for the
                         operator, every config reconciled), RSS after it
                  edits  --edits edits at --edit-rate/s, each to a different workload's config (ours:
                         the source ConfigMap; Reloader: peer-i): latency from just before the PATCH
                         to the watch event of the Deployment whose template annotations changed;
                         writes per edit by the tool's own identity (audit log), all API requests
                         per edit (apiserver metrics, minus the harness's PATCHes)
                  burst  --burst edits as fast as the harness sends them (8 threads)
  ceiling       (largest N only) the sync-ceiling client does per config what the operator's initial
                sync must: create the output ConfigMap and patch the config's status, with the
                operator's concurrency, on --ceiling-configs fresh configs; the operator then syncs
                as many fresh configs of the same shape. Ratio: operator configs/s / client's.

Idle: both tools on the world with only the ballast, RSS after 10 s.
"""

import argparse
import base64
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
from kube import ApiError, Kube  # noqa: E402
import run as scale  # noqa: E402

GROUP, VERSION = scale.GROUP, scale.VERSION
HASH = scale.HASH
RELOADER_AUTO = "reloader.stakater.com/auto"
log = scale.log
pct = scale.pct


# ------------------------------------------------------------------ the world

def ns_of(namespaces, i):
    return namespaces[i % len(namespaces)]


def peer_cm(i, ns, version):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"peer-{i:05d}", "namespace": ns, "labels": {"bench": "peer"}},
            "data": {"client.properties": scale.source_properties(i, version)}}


def config(i, ns):
    c = scale.config(i, ns)
    c["spec"]["rollout"] = {"targets": [{"kind": "Deployment", "name": f"app-{i:05d}"}]}
    return c


def deployment(i, ns):
    name = f"app-{i:05d}"
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"bench": "peer"},
                         "annotations": {RELOADER_AUTO: "true"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": "client", "image": "apache/kafka:4.3.1",
                                         "volumeMounts": [{"name": "kafka-config", "mountPath": "/etc/kafka-config"},
                                                          {"name": "peer", "mountPath": "/etc/peer"}]}],
                         "volumes": [{"name": "kafka-config", "configMap": {"name": f"{scale.config_name(i)}-kafka"}},
                                     {"name": "peer", "configMap": {"name": f"peer-{i:05d}"}}]}}}}


def ballast_secret(j, ns, kib):
    cm = scale.ballast_cm(j, ns, kib)
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": f"ballast-s-{j:05d}", "namespace": ns, "labels": {"bench": "ballast"}},
            "data": {"blob.txt": base64.b64encode(cm["data"]["blob.txt"].encode()).decode()}}


def create_all(kube, objects, threads=4):
    paths = {"ConfigMap": "/api/v1/namespaces/{}/configmaps", "Secret": "/api/v1/namespaces/{}/secrets",
             "Deployment": "/apis/apps/v1/namespaces/{}/deployments",
             "KafkaToolConfig": f"/apis/{GROUP}/{VERSION}/namespaces/{{}}/kafkatoolconfigs"}

    def one(o):
        try:
            kube.request("POST", paths[o["kind"]].format(o["metadata"]["namespace"]), o)
        except ApiError as e:
            if e.status != 409:
                raise
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, objects))


def patch_cm(kube, ns, name, i, version):
    kube.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/{name}",
                 {"data": {"client.properties": scale.source_properties(i, version)}},
                 content_type="application/merge-patch+json")


# ------------------------------------------------------------------ watch of the workloads

class Workloads:
    """Template annotations of every bench Deployment, and edit -> template-change latencies."""

    def __init__(self, kube):
        self.kube = kube
        self.lock = threading.Lock()
        self.templates = {}   # (ns, name) -> template annotations
        self.pending = {}     # (ns, name) -> (t_sent, annotations at send time)
        self.latencies = {}   # (ns, name) -> seconds
        self.errors = []
        self.stop = threading.Event()

    def start(self):
        path = "/apis/apps/v1/deployments?labelSelector=bench%3Dpeer"
        items, rv = self.kube.list_all(path)
        for o in items:
            self._seen(o, time.monotonic())
        threading.Thread(target=self.kube.watch, daemon=True,
                         args=(path, rv, lambda e, t: self._seen(e["object"], t), self.stop,
                               self.errors.append)).start()

    def _seen(self, o, t):
        m = o["metadata"]
        key = (m["namespace"], m["name"])
        ann = ((o.get("spec") or {}).get("template") or {}).get("metadata", {}).get("annotations") or {}
        with self.lock:
            self.templates[key] = ann
            p = self.pending.get(key)
            if p is not None and ann != p[1]:
                self.latencies[key] = t - p[0]
                del self.pending[key]

    def expect(self, key, t_sent):
        with self.lock:
            self.latencies.pop(key, None)
            self.pending[key] = (t_sent, dict(self.templates.get(key) or {}))

    def count_hash(self, keys, outputs):
        """How many of keys carry, on their template, the hash their output carries."""
        with self.lock:
            return sum(1 for k in keys if outputs.get(k) and (self.templates.get(k) or {}).get(HASH) == outputs[k])


# ------------------------------------------------------------------ the two tools

class Reloader(scale.Operator):
    """Reloader as a local process, measured like the operator (RSS sampling, CPU from /proc)."""

    def __init__(self, binary, kubeconfig, run_dir, label):  # noqa: super().__init__ starts the operator
        self.label = label
        self.log_path = os.path.join(run_dir, f"reloader-{label}.log")
        self.log_file = open(self.log_path, "w")
        env = dict(os.environ, KUBECONFIG=kubeconfig)
        self.started = time.monotonic()
        # annotations: a pod-template annotation per reload, as the operator does (its default,
        # env-vars, adds an env var to each container instead).
        self.proc = subprocess.Popen([binary, "--reload-strategy=annotations", "--log-level=info"],
                                     env=env, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.peak_rss = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        log(f"reloader {label} started (pid {self.proc.pid}, log {self.log_path})")


def wait_quiet(proc, min_s=3.0, window_s=2.0, max_cpu_frac=0.02, timeout=900, extra=None):
    """Seconds from the process's start until its CPU use stayed under max_cpu_frac of a core for
    window_s (and extra(), if given, holds), and the CPU seconds it had spent by then."""
    samples = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        t, c = time.monotonic(), scale.proc_cpu_s(proc.proc.pid)
        if c is None:
            raise RuntimeError(f"{proc.label} exited; log {proc.log_path}")
        samples.append((t, c))
        old = [s for s in samples if s[0] <= t - window_s]
        if old and t - proc.started >= min_s and (c - old[-1][1]) <= max_cpu_frac * (t - old[-1][0]) \
                and (extra is None or extra()):
            return old[-1][0] - proc.started, old[-1][1]
        time.sleep(0.25)
    raise RuntimeError(f"{proc.label} not quiet after {timeout}s")


class Audit:
    """Writes by one identity, from the control plane's audit log (writes only, see its policy)."""

    def __init__(self, run_dir):
        self.path = os.path.join(run_dir, "audit.log")
        self.offset = 0

    def mark(self):
        self.offset = os.path.getsize(self.path)

    def writes_by(self, user):
        n = 0
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                # The harness's kubeconfigs impersonate the tools' ServiceAccounts.
                who = e.get("impersonatedUser") or e.get("user") or {}
                if who.get("username") == user:
                    n += 1
        return n


OPERATOR_USER = "system:serviceaccount:kafka-config-operator:kafka-config-operator"
RELOADER_USER = "system:serviceaccount:reloader:reloader"


def measure_tool(a, kube, audit, workloads, tracker, tool, n, namespaces, version, port):
    """sync, edits and burst of one tool on the current world of n workloads."""
    r = {}
    keys = [(ns_of(namespaces, i), f"app-{i:05d}") for i in range(n)]
    before = scale.apiserver_requests(kube)
    audit.mark()
    if tool == "ours":
        p = scale.Operator(a.operator, a.sa_kubeconfig, a.run_dir, f"peer-{n}", port)
        p.wait_ready(600)
        extra = lambda: p.sum("kafka_config_reconciles_total") >= n  # noqa: E731
        user = OPERATOR_USER
    else:
        p = Reloader(a.reloader, a.reloader_kubeconfig, a.run_dir, f"peer-{n}")
        extra, user = None, RELOADER_USER
    sync_s, sync_cpu = wait_quiet(p, extra=extra)
    r["sync"] = {"seconds": sync_s, "cpu_s": sync_cpu, "peak_rss_mib": p.peak_rss / 1024.0,
                 "writes": audit.writes_by(user),
                 "requests": scale.request_delta(before, scale.apiserver_requests(kube))}
    time.sleep(3)
    r["after_sync"] = p.memory()
    log(f"{tool} N={n}: quiet after {sync_s:.1f}s, {sync_cpu:.2f} CPU-s, peak RSS {r['sync']['peak_rss_mib']:.1f}"
        f" MiB, RSS {r['after_sync']['rss_mib']:.1f} MiB, {r['sync']['writes']} writes")
    for phase, count, rate, offset in (("edits", a.edits, a.edit_rate, 0), ("burst", a.burst, None, a.edits)):
        idx = [(offset + j) % n for j in range(min(count, n))]
        ekeys = [keys[i] for i in idx]
        before = scale.apiserver_requests(kube)
        audit.mark()
        cpu0 = scale.proc_cpu_s(p.proc.pid)
        t_begin = time.monotonic()

        def edit(j):
            i = idx[j]
            ns = ns_of(namespaces, i)
            if rate:
                delay = t_begin + j / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            workloads.expect(keys[i], time.monotonic())
            name = scale.source_name(i) if tool == "ours" else f"peer-{i:05d}"
            patch_cm(kube, ns, name, i, version)

        with concurrent.futures.ThreadPoolExecutor(1 if rate else 8) as pool:
            list(pool.map(edit, range(len(idx))))
        t_sent = time.monotonic() - t_begin
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with workloads.lock:
                if all(k in workloads.latencies for k in ekeys):
                    break
            time.sleep(0.2)
        time.sleep(3)
        with workloads.lock:
            lat = [workloads.latencies[k] * 1000 for k in ekeys if k in workloads.latencies]
        req = scale.request_delta(before, scale.apiserver_requests(kube))
        all_requests = sum(req["by_verb"].values()) - len(idx)
        r[phase] = {"edits": len(idx), "observed": len(lat), "send_s": t_sent,
                    "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": max(lat) if lat else None,
                    "tool_writes_per_edit": audit.writes_by(user) / len(idx),
                    "requests_per_edit": all_requests / len(idx),
                    "cpu_s": scale.proc_cpu_s(p.proc.pid) - cpu0, "requests": req}
        log(f"{tool} N={n} {phase}: {len(lat)}/{len(idx)} observed, p50 {r[phase]['p50_ms']} ms, p99 "
            f"{r[phase]['p99_ms']} ms, {r[phase]['tool_writes_per_edit']:.2f} writes/edit, "
            f"{r[phase]['requests_per_edit']:.2f} requests/edit")
        version += 1
    r["end"] = p.memory()
    p.stop()
    return r, version


def idle(a, tool, port):
    if tool == "ours":
        p = scale.Operator(a.operator, a.sa_kubeconfig, a.run_dir, "peer-idle", port)
        p.wait_ready(60)
    else:
        p = Reloader(a.reloader, a.reloader_kubeconfig, a.run_dir, "idle")
    time.sleep(10)
    m = dict(p.memory(), cpu_s=scale.proc_cpu_s(p.proc.pid), peak_rss_mib=p.peak_rss / 1024.0)
    p.stop()
    log(f"{tool} idle (ballast only): RSS {m['rss_mib']:.1f} MiB")
    return m


def ceiling(a, kube, tracker, namespaces, port):
    """Operator initial sync of fresh configs vs. the minimal client doing the same writes on as
    many other fresh configs (created only after the operator has stopped, so it never sees them)."""
    n = a.ceiling_configs
    cns = [f"ceil-{k}" for k in range(len(namespaces))]
    for ns in cns:
        create_ns(kube, ns)

    def fresh(first):
        objs = []
        for i in range(first, first + n):
            objs += [scale.source_cm(i, ns_of(cns, i), 0), scale.config(i, ns_of(cns, i))]
        create_all(kube, objs)
        return [(ns_of(cns, i), scale.config_name(i)) for i in range(first, first + n)]

    ours_keys = fresh(90000)
    requests_before = scale.apiserver_requests(kube)
    p = scale.Operator(a.operator, a.sa_kubeconfig, a.run_dir, "ceiling", port)
    t_ready = p.wait_ready(600)
    done = 0
    while time.monotonic() - p.started < 1800:
        done = tracker.count_rendered(ours_keys)
        if done >= n:
            break
        time.sleep(0.2)
    ours_s = time.monotonic() - p.started
    ours_cpu_s = scale.proc_cpu_s(p.proc.pid)
    p.stop()
    # "The same writes": the client replays one of the operator's outputs and statuses, byte for
    # byte but for the config's name (the status content is the product's, DESIGN.md section 4).
    template = operator_writes(kube, ours_keys[0])
    template_file = os.path.join(a.run_dir, "ceiling-template.json")
    with open(template_file, "w") as f:
        json.dump(template, f)
    # Where each side's requests went (the watches of this harness are in both).
    ours_requests = scale.request_delta(requests_before, scale.apiserver_requests(kube))
    client_keys = fresh(95000)
    requests_before = scale.apiserver_requests(kube)
    keys_file = os.path.join(a.run_dir, "ceiling-keys.txt")
    with open(keys_file, "w") as f:
        f.writelines(f"{ns} {name}\n" for ns, name in client_keys)
    out = subprocess.run([a.ceiling_bin, "--keys", keys_file, "--template", template_file],
                         env=dict(os.environ, KUBECONFIG=a.sa_kubeconfig),
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"sync-ceiling failed: {out.stderr[-2000:]}")
    client = json.loads(out.stdout)
    client_requests = scale.request_delta(requests_before, scale.apiserver_requests(kube))
    # The same client with the small status it wrote until 2026-12-06 (0.6 KB: hash, output,
    # Valid and Ready), on as many other fresh configs: what the status's size costs the API server.
    small_keys = fresh(85000)
    small_file = os.path.join(a.run_dir, "ceiling-keys-small.txt")
    with open(small_file, "w") as f:
        f.writelines(f"{ns} {name}\n" for ns, name in small_keys)
    out = subprocess.run([a.ceiling_bin, "--keys", small_file], env=dict(os.environ, KUBECONFIG=a.sa_kubeconfig),
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"sync-ceiling (small status) failed: {out.stderr[-2000:]}")
    small = json.loads(out.stdout)
    # From the process's start, as the client's figure includes its own start and list; the
    # figure from /readyz (caches filled) is kept beside it.
    r = {"configs": n, "client": client, "operator_seconds": ours_s, "operator_rendered": done,
         "operator_configs_per_s": done / ours_s, "client_configs_per_s": client["configs_per_s"],
         "operator_ready_s": t_ready - p.started,
         "operator_configs_per_s_from_ready": done / max(ours_s - (t_ready - p.started), 1e-3),
         "operator_requests": ours_requests, "client_requests": client_requests,
         "operator_cpu_s": ours_cpu_s}
    r["fraction"] = r["operator_configs_per_s"] / r["client_configs_per_s"]
    r["client_small_status"] = small
    r["fraction_of_small_status_client"] = r["operator_configs_per_s"] / small["configs_per_s"]
    r["status_bytes"] = {"operator": len(json.dumps(template["status"], separators=(",", ":"))),
                         "small": small.get("status_bytes")}
    log(f"ceiling: operator {r['operator_configs_per_s']:.0f} configs/s, client {r['client_configs_per_s']:.0f}"
        f" configs/s: fraction {r['fraction']:.2f}")
    return r


def operator_writes(kube, key):
    """The output ConfigMap and the status the operator wrote for config `key`, as a template for
    the ceiling client (server-set metadata dropped)."""
    ns, name = key
    config = kube.get_json(f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/kafkatoolconfigs/{name}")
    status = config["status"]
    out = status["output"]
    output = kube.get_json(f"/api/v1/namespaces/{ns}/configmaps/{out['name']}")
    meta = output["metadata"]
    output["metadata"] = {k: meta[k] for k in ("name", "namespace", "labels", "annotations",
                                               "ownerReferences") if k in meta}
    return {"config": name, "output": output, "status": status}


def create_ns(kube, ns):
    try:
        kube.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": ns, "labels": {"bench": "peer"}}})
    except ApiError as e:
        if e.status != 409:
            raise


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--operator", required=True)
    ap.add_argument("--sa-kubeconfig", required=True)
    ap.add_argument("--reloader", required=True)
    ap.add_argument("--reloader-kubeconfig", required=True)
    ap.add_argument("--ceiling-bin", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--namespaces", type=int, default=4)
    ap.add_argument("--ballast", type=int, default=2000)
    ap.add_argument("--ballast-secrets", type=int, default=500)
    ap.add_argument("--ballast-kib", type=int, default=64)
    ap.add_argument("--edits", type=int, default=500)
    ap.add_argument("--edit-rate", type=float, default=10.0)
    ap.add_argument("--burst", type=int, default=500)
    ap.add_argument("--ceiling-configs", type=int, default=5000)
    a = ap.parse_args()
    t_run = time.monotonic()
    kube = Kube(a.run_dir)
    audit = Audit(a.run_dir)
    summary = {"started": scale.now_utc(), "params": vars(a).copy(), "sizes": {}}
    port = 18080 + os.getpid() % 1000
    namespaces = [f"peer-{k}" for k in range(a.namespaces)]
    for ns in namespaces:
        create_ns(kube, ns)
    t0 = time.monotonic()
    create_all(kube, [scale.ballast_cm(j, ns_of(namespaces, j), a.ballast_kib) for j in range(a.ballast)]
               + [ballast_secret(j, ns_of(namespaces, j), a.ballast_kib) for j in range(a.ballast_secrets)])
    log(f"ballast: {a.ballast} ConfigMaps + {a.ballast_secrets} Secrets x {a.ballast_kib} KiB in "
        f"{time.monotonic() - t0:.0f}s")
    tracker = scale.Tracker(kube)
    tracker.start()
    workloads = Workloads(kube)
    workloads.start()
    summary["idle"] = {tool: idle(a, tool, port) for tool in ("ours", "reloader")}
    scale.save(summary, a.summary, t_run)

    have, version = 0, 1
    for n in sorted(int(s) for s in a.sizes.split(",") if s):
        r = summary["sizes"][str(n)] = {}
        t0 = time.monotonic()
        objs = []
        for i in range(have, n):
            ns = ns_of(namespaces, i)
            objs += [scale.source_cm(i, ns, 0), config(i, ns), peer_cm(i, ns, 0), deployment(i, ns)]
        create_all(kube, objs)
        r["create_s"] = time.monotonic() - t0
        log(f"N={n}: {n - have} workloads with their configs created in {r['create_s']:.0f}s")
        # ---- the operator renders the new configs and stamps their workloads
        new = [(ns_of(namespaces, i), scale.config_name(i)) for i in range(have, n)]
        new_apps = [(ns_of(namespaces, i), f"app-{i:05d}") for i in range(have, n)]
        p = scale.Operator(a.operator, a.sa_kubeconfig, a.run_dir, f"initial-{n}", port)
        cpu0 = scale.proc_cpu_s(p.proc.pid) or 0
        p.wait_ready(600)
        while time.monotonic() - p.started < 1800:
            with tracker.lock:
                outs = {(ns, f"app-{name[4:]}"): tracker.outputs.get((ns, name)) for ns, name in new}
            if tracker.count_rendered(new) >= len(new) and workloads.count_hash(new_apps, outs) >= len(new):
                break
            time.sleep(0.2)
        secs = time.monotonic() - p.started
        r["ours_initial"] = {"configs": len(new), "seconds": secs, "configs_per_s": len(new) / secs,
                             "cpu_s": (scale.proc_cpu_s(p.proc.pid) or 0) - cpu0,
                             "peak_rss_mib": p.peak_rss / 1024.0}
        p.stop()
        log(f"N={n}: operator rendered and rolled {len(new)} new configs in {secs:.1f}s")
        for tool in ("ours", "reloader"):
            r[tool], version = measure_tool(a, kube, audit, workloads, tracker, tool, n, namespaces, version, port)
            scale.save(summary, a.summary, t_run)
        have = n
    if a.ceiling_configs > 0:
        summary["ceiling"] = ceiling(a, kube, tracker, namespaces, port)
    tracker.close()
    workloads.stop.set()
    scale.save(summary, a.summary, t_run)
    log(f"summary in {a.summary} (wall {summary['wall_s']:.0f}s)")


if __name__ == "__main__":
    main()
