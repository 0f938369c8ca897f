#!/usr/bin/env python3
"""Operator scale benchmark on the real control plane (issue 7). Started by e2e/bench/scale.sh,
which brings up a fresh control plane and builds the release binary first; see that script.

What it does, for each N in --sizes (ascending; each size adds configs to the previous one):

  idle      operator running, no KafkaToolConfigs, no ballast: RSS; then the ballast (2,000
            unrelated 64 KiB ConfigMaps) is created while it runs: RSS again.
  sync      operator stopped; configs [previous N, N) are created, each with its own ~2 KB source
            ConfigMap, and the sources of the configs that already existed are edited (so all N
            outputs are stale); the operator starts; time until every config is Ready=True at its
            generation with status.configHash equal to its output's hash annotation (and that hash
            differs from the stale one), as seen by a watch; writes/s from kafka_config_writes_total.
  restart   every output current; SIGTERM, start a new process: time to /readyz, time until it has
            reconciled all N (kafka_config_reconciles_total >= N), writes (target 0), peak RSS.
  edits     --edits source edits at --edit-rate/s, each to a different config: latency from just
            before the PATCH to the watch event of the output with a new hash; reconciles/change.
  burst     --burst edits as fast as the harness can send them (8 threads), same measurement;
            --burst-repeats times, each on other configs. `burst` is the worst run (highest p99,
            highest reconciles/change), `burst_runs` each run.

apiserver_request_total deltas by verb are taken for each phase (the harness's own PATCHes are
reported separately); 429s from the apiserver's metrics and the operator's log.
Writes a JSON summary to --summary; scale/report.py turns that into results.json and the doc.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kube import ApiError, Kube, parse_prometheus  # noqa: E402

GROUP = "kafkaconfig.dev"
VERSION = "v1alpha1"
HASH = "kafkaconfig.dev/config-hash"
MANAGED = "app.kubernetes.io/managed-by=kafka-config-operator"
OPERATOR_RESOURCES = {"kafkatoolconfigs", "globalclientdefaults", "configmaps", "secrets", "namespaces",
                      "events", "leases", "deployments", "statefulsets", "daemonsets", "replicasets"}


def log(msg):
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def pct(values, p):
    """Nearest-rank percentile."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


# ------------------------------------------------------------------ objects

def config_name(i):
    return f"cfg-{i:05d}"


def source_name(i):
    return f"cfg-{i:05d}-src"


def source_properties(i, version):
    """~2 KB of a realistic producer file: every key documented by a comment line."""
    keys = [
        ("bootstrap.servers", "kafka-0.kafka.svc:9092,kafka-1.kafka.svc:9092,kafka-2.kafka.svc:9092",
         "brokers of the shared cluster, all three listed so a restart of one never blocks start-up"),
        ("client.id", f"bench-{i:05d}", "shows up in broker quotas and request logs"),
        ("acks", "all", "wait for the full ISR; the topic has min.insync.replicas=2"),
        ("enable.idempotence", "true", "no duplicates on retry"),
        ("linger.ms", str(5 + version), "batch a little; latency budget of the service is 50 ms"),
        ("batch.size", "65536", "64 KiB batches, measured as the sweet spot for our 1 KiB records"),
        ("compression.type", "zstd", "zstd level 3 is the broker default; cuts network by ~4x"),
        ("delivery.timeout.ms", "120000", "two minutes before a record is reported as failed"),
        ("request.timeout.ms", "30000", "per request; must stay below delivery.timeout.ms"),
        ("max.in.flight.requests.per.connection", "5", "the maximum that keeps ordering with idempotence"),
        ("buffer.memory", "33554432", "32 MiB of buffer before send() blocks"),
        ("max.block.ms", "60000", "how long send() may block on metadata or a full buffer"),
        ("metadata.max.age.ms", "300000", "refresh metadata every five minutes"),
        ("reconnect.backoff.ms", "50", "first reconnect quickly"),
        ("reconnect.backoff.max.ms", "1000", "then back off up to a second"),
        ("retry.backoff.ms", "100", "between retries of a failed produce request"),
        ("send.buffer.bytes", "131072", "socket send buffer"),
        ("receive.buffer.bytes", "32768", "socket receive buffer"),
        ("security.protocol", "PLAINTEXT", "in-cluster traffic; TLS terminates at the mesh sidecar"),
    ]
    lines = [f"# Producer configuration of bench service {i:05d}.",
             "# Owned by the platform team; changes go through review. Generated by e2e/bench/scale.", ""]
    for k, v, why in keys:
        lines.append(f"# {k}: {why}.")
        lines.append(f"{k}={v}")
    return "\n".join(lines) + "\n"


def source_cm(i, ns, version):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": source_name(i), "namespace": ns, "labels": {"bench": "source"}},
            "data": {"client.properties": source_properties(i, version)}}


def config(i, ns):
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaToolConfig",
            "metadata": {"name": config_name(i), "namespace": ns},
            "spec": {"tool": "kafka-console-producer", "args": {"topic": f"bench-{i}"},
                     "configFiles": [{"configMapKeyRef": {"name": source_name(i), "key": "client.properties"}}]}}


def ballast_cm(j, ns, kib):
    line = "ballast-" + "0123456789abcdef" * 7 + "\n"  # 128 bytes
    blob = (line * (kib * 1024 // len(line) + 1))[: kib * 1024]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"ballast-{j:05d}", "namespace": ns, "labels": {"bench": "ballast"}},
            "data": {"blob.txt": blob}}


# ------------------------------------------------------------------ CPU accounting

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    """utime + stime of a process (and its reaped children), in seconds; None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def cpu_snapshot(run_dir, op):
    """CPU seconds so far of the operator, each control-plane process and this harness: the
    phases are CPU-bound on 2 cores, so who spends the CPU says where the time goes."""
    snap = {"operator": proc_cpu_s(op.proc.pid)}
    for name in ("kube-apiserver", "etcd", "kube-controller-manager"):
        try:
            with open(os.path.join(run_dir, f"{name}.pid")) as f:
                snap[name] = proc_cpu_s(int(f.read().strip()))
        except (OSError, ValueError):
            snap[name] = None
    t = os.times()
    snap["harness"] = t.user + t.system
    return snap


def cpu_delta(before, after):
    return {k: (round(after[k] - before[k], 2) if after.get(k) is not None and before.get(k) is not None
                else None) for k in before}


def cpu_text(d):
    return ", ".join(f"{k} {v:.1f}" for k, v in d.items() if v is not None)


# ------------------------------------------------------------------ operator process

class Operator:
    def __init__(self, binary, kubeconfig, run_dir, label, port):
        self.label = label
        self.port = port
        self.log_path = os.path.join(run_dir, f"operator-{label}.log")
        self.log_file = open(self.log_path, "w")
        env = dict(os.environ, KUBECONFIG=kubeconfig, RUST_LOG=os.environ.get("SCALE_RUST_LOG", "info,kube=warn"))
        env.pop("POD_NAMESPACE", None)
        env.pop("POD_NAME", None)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [binary, "run", "--metrics-address", f"127.0.0.1:{port}", "--lease-namespace", "kafka-config-operator",
             "--lease-name", "kco-bench", "--identity", f"bench-{label}"],
            env=env, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.peak_rss = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        log(f"operator {label} started (pid {self.proc.pid}, metrics :{port}, log {self.log_path})")

    def status_kib(self):
        out = {}
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                        k, v = line.split(":", 1)
                        out[k] = int(v.split()[0])
        except OSError:
            pass
        return out

    def rss_mib(self):
        return self.status_kib().get("VmRSS", 0) / 1024.0

    def hwm_mib(self):
        return self.status_kib().get("VmHWM", 0) / 1024.0

    def memory(self):
        """VmRSS, VmHWM and the anonymous / file-backed parts of VmRSS, in MiB."""
        k = self.status_kib()
        return {"rss_mib": k.get("VmRSS", 0) / 1024.0, "hwm_mib": k.get("VmHWM", 0) / 1024.0,
                "anon_mib": k.get("RssAnon", 0) / 1024.0, "file_mib": k.get("RssFile", 0) / 1024.0}

    def _sample(self):
        while not self._stop.is_set() and self.proc.poll() is None:
            self.peak_rss = max(self.peak_rss, self.status_kib().get("VmRSS", 0))
            time.sleep(0.1)

    def http(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"operator exited ({self.proc.returncode}); log {self.log_path}")
            try:
                if self.http("/readyz")[0] == 200:
                    return time.monotonic()
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"operator not ready in {timeout}s; log {self.log_path}")

    def metrics(self):
        text = self.http("/metrics")[1]
        out = {}
        for name, labels, v in parse_prometheus(text):
            key = name + ("{" + ",".join(f"{k}={labels[k]}" for k in sorted(labels)) + "}" if labels else "")
            out[key] = v
        return out

    def sum(self, prefix, metrics=None):
        m = metrics if metrics is not None else self.metrics()
        return sum(v for k, v in m.items() if k == prefix or k.startswith(prefix + "{"))

    def by_label(self, prefix, metrics=None):
        m = metrics if metrics is not None else self.metrics()
        return {k[len(prefix):]: v for k, v in m.items() if k.startswith(prefix + "{")}

    def stop(self):
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()

    def count_429(self):
        try:
            with open(self.log_path, errors="replace") as f:
                text = f.read()
        except OSError:
            return 0
        # kube-rs errors print the Status: `reason: "TooManyRequests", code: 429`
        return len(re.findall(r"TooManyRequests|Too Many Requests|\bcode\W{1,3}429\b", text))


# ------------------------------------------------------------------ tracker (watches)

class Tracker:
    """Watches KafkaToolConfigs and the operator's output ConfigMaps across all namespaces."""

    def __init__(self, kube):
        self.kube = kube
        self.lock = threading.Lock()
        self.configs = {}   # (ns, name) -> (generation, observedGeneration, ready, configHash)
        self.outputs = {}   # (ns, owner) -> hash
        self.stale = {}     # (ns, name) -> hash that does not count as rendered
        self.pending = {}   # (ns, name) -> (t_sent, previous hash)
        self.latencies = {}  # (ns, name) -> seconds
        self.errors = []  # watch errors (each followed by a relist), reported in the summary
        self.stop = threading.Event()
        self.threads = []

    def start(self):
        items, rv = self.kube.list_all(f"/apis/{GROUP}/{VERSION}/kafkatoolconfigs")
        for o in items:
            self._config(o, False)
        t = threading.Thread(target=self.kube.watch, daemon=True, args=(
            f"/apis/{GROUP}/{VERSION}/kafkatoolconfigs", rv, self._config_event, self.stop, self.errors.append))
        t.start()
        self.threads.append(t)
        items, rv = self.kube.list_all(f"/api/v1/configmaps?labelSelector={MANAGED}")
        for o in items:
            self._output(o, False, time.monotonic())
        t = threading.Thread(target=self.kube.watch, daemon=True, args=(
            f"/api/v1/configmaps?labelSelector={MANAGED}", rv, self._output_event, self.stop, self.errors.append))
        t.start()
        self.threads.append(t)

    def _config_event(self, event, _t):
        self._config(event["object"], event["type"] == "DELETED")

    def _config(self, o, deleted):
        m = o["metadata"]
        key = (m["namespace"], m["name"])
        with self.lock:
            if deleted:
                self.configs.pop(key, None)
                return
            st = o.get("status") or {}
            ready = next((c.get("status") for c in st.get("conditions") or [] if c.get("type") == "Ready"), None)
            self.configs[key] = (m.get("generation"), st.get("observedGeneration"), ready, st.get("configHash"))

    def _output_event(self, event, t):
        self._output(event["object"], event["type"] == "DELETED", t)

    def _output(self, o, deleted, t):
        m = o["metadata"]
        owner = next((r["name"] for r in m.get("ownerReferences") or [] if r.get("controller")), None)
        if owner is None:
            return
        key = (m["namespace"], owner)
        h = (m.get("annotations") or {}).get(HASH)
        with self.lock:
            if deleted:
                self.outputs.pop(key, None)
                return
            self.outputs[key] = h
            p = self.pending.get(key)
            if p is not None and h is not None and h != p[1]:
                self.latencies[key] = t - p[0]
                del self.pending[key]

    def rendered(self, key):
        c = self.configs.get(key)
        h = self.outputs.get(key)
        return (c is not None and h is not None and c[2] == "True" and c[0] == c[1] and c[3] == h
                and h != self.stale.get(key))

    def count_rendered(self, keys):
        with self.lock:
            return sum(1 for k in keys if self.rendered(k))

    def mark_stale(self, keys):
        with self.lock:
            for k in keys:
                if k in self.outputs:
                    self.stale[k] = self.outputs[k]

    def expect(self, key, t_sent):
        with self.lock:
            self.latencies.pop(key, None)
            self.pending[key] = (t_sent, self.outputs.get(key))

    def close(self):
        self.stop.set()


# ------------------------------------------------------------------ apiserver metrics

def apiserver_requests(kube):
    """{(verb, resource, code): count} of apiserver_request_total."""
    out = {}
    for name, labels, v in parse_prometheus(kube.text("/metrics")):
        if name == "apiserver_request_total":
            k = (labels.get("verb", ""), labels.get("resource", ""), labels.get("subresource", ""),
                 labels.get("code", ""))
            out[k] = out.get(k, 0) + v
    return out


def request_delta(before, after):
    by_verb, by_verb_resource, codes429 = {}, {}, 0
    for k, v in after.items():
        d = v - before.get(k, 0)
        if d <= 0:
            continue
        verb, resource, sub, code = k
        if code == "429":
            codes429 += d
        if resource not in OPERATOR_RESOURCES:
            continue
        by_verb[verb] = by_verb.get(verb, 0) + d
        r = resource + (f"/{sub}" if sub else "")
        by_verb_resource[f"{verb} {r}"] = by_verb_resource.get(f"{verb} {r}", 0) + d
    return {"by_verb": dict(sorted(by_verb.items())), "by_verb_resource": dict(sorted(by_verb_resource.items())),
            "http_429": codes429}


# ------------------------------------------------------------------ main

def create_all(kube, objects, threads=4):
    def one(o):
        m = o["metadata"]
        if o["kind"] == "ConfigMap":
            path = f"/api/v1/namespaces/{m['namespace']}/configmaps"
        else:
            path = f"/apis/{GROUP}/{VERSION}/namespaces/{m['namespace']}/kafkatoolconfigs"
        try:
            kube.request("POST", path, o)
        except ApiError as e:
            if e.status != 409:
                raise
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for _ in pool.map(one, objects):
            pass


def patch_source(kube, i, ns, version):
    kube.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/{source_name(i)}",
                 {"data": {"client.properties": source_properties(i, version)}},
                 content_type="application/merge-patch+json")


def save(summary, path, t_run, tracker=None):
    """Written after every phase, so an interrupted run keeps what it measured."""
    if tracker is not None:
        summary["watch_errors"] = [repr(e)[:300] for e in tracker.errors]
    summary["finished"] = now_utc()
    summary["wall_s"] = time.monotonic() - t_run
    summary["loadavg"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with open(path + ".tmp", "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--operator", required=True)
    ap.add_argument("--sa-kubeconfig", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--namespaces", type=int, default=4)
    ap.add_argument("--ballast", type=int, default=2000)
    ap.add_argument("--ballast-kib", type=int, default=64)
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--edit-rate", type=float, default=10.0)
    ap.add_argument("--burst", type=int, default=1000)
    # One burst's p99 ranged from 0.48 to 3.50 s between runs of one build (2026-12-07): the
    # verdict is taken on the worst of several bursts, each on other configs.
    ap.add_argument("--burst-repeats", type=int, default=3)
    ap.add_argument("--sync-timeout", type=float, default=1800)
    ap.add_argument("--budget", type=float, default=float(os.environ.get("SCALE_BUDGET_S", 3600)),
                    help="skip further sizes once the run has taken this long (seconds)")
    a = ap.parse_args()
    t_run = time.monotonic()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    kube = Kube(a.run_dir)
    summary = {"started": now_utc(), "sizes": {}, "params": vars(a).copy(), "notes": []}
    # Which binary was measured: a build into a shared target directory can leave another tree's.
    with open(a.operator, "rb") as f:
        summary["operator_sha256"] = hashlib.file_digest(f, "sha256").hexdigest()
    log(f"operator {a.operator}: sha256 {summary['operator_sha256']}")
    summary["params"].pop("summary", None)
    port = 18080 + os.getpid() % 1000
    namespaces = [f"bench-{k}" for k in range(a.namespaces)]
    ns_of = lambda i: namespaces[i % len(namespaces)]  # noqa: E731
    for ns in namespaces:
        try:
            kube.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": ns, "labels": {"bench": "scale"}}})
        except ApiError as e:
            if e.status != 409:
                raise
    tracker = Tracker(kube)
    tracker.start()

    # ---- idle
    op = Operator(a.operator, a.sa_kubeconfig, a.run_dir, "idle", port)
    op.wait_ready(60)
    time.sleep(5)
    summary["idle"] = op.memory()
    log(f"idle: RSS {summary['idle']['rss_mib']:.1f} MiB (peak {summary['idle']['hwm_mib']:.1f})")
    t0 = time.monotonic()
    create_all(kube, (ballast_cm(j, ns_of(j), a.ballast_kib) for j in range(a.ballast)))
    log(f"ballast: {a.ballast} x {a.ballast_kib} KiB ConfigMaps created in {time.monotonic() - t0:.1f}s")
    time.sleep(5)
    summary["idle_ballast"] = dict(op.memory(), ballast=a.ballast, ballast_kib=a.ballast_kib)
    log(f"idle with ballast: RSS {summary['idle_ballast']['rss_mib']:.1f} MiB")
    op.stop()
    save(summary, a.summary, t_run, tracker)

    have = 0
    version = 1
    for n in sizes:
        if time.monotonic() - t_run > a.budget:
            summary["notes"].append(f"N={n} skipped: the run had taken {time.monotonic() - t_run:.0f}s "
                                    f"(budget {a.budget:.0f}s)")
            log(summary["notes"][-1])
            continue
        r = summary["sizes"][str(n)] = {}
        keys = [(ns_of(i), config_name(i)) for i in range(n)]
        # ---- create [have, n); make [0, have) stale
        t0 = time.monotonic()
        objs = []
        for i in range(have, n):
            objs.append(source_cm(i, ns_of(i), 0))
            objs.append(config(i, ns_of(i)))
        create_all(kube, objs)
        tracker.mark_stale(keys[:have])
        if have:
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda i: patch_source(kube, i, ns_of(i), version), range(have)))
            version += 1
        r["create_s"] = time.monotonic() - t0
        log(f"N={n}: created {n - have} configs + sources, edited {have} sources in {r['create_s']:.1f}s")
        time.sleep(2)

        # ---- initial sync
        before = apiserver_requests(kube)
        op = Operator(a.operator, a.sa_kubeconfig, a.run_dir, f"sync-{n}", port)
        cpu0 = cpu_snapshot(a.run_dir, op)
        t_start = op.started
        t_ready = op.wait_ready(600)
        last_log, done, t_done = 0, 0, None
        writes_first = None
        while time.monotonic() - t_start < a.sync_timeout:
            done = tracker.count_rendered(keys)
            if done >= n:
                t_done = time.monotonic()
                break
            if writes_first is None:
                try:
                    if op.sum("kafka_config_writes_total") > 0:
                        writes_first = time.monotonic()
                except OSError:
                    pass
            if time.monotonic() - last_log > 15:
                last_log = time.monotonic()
                try:
                    gauge = op.metrics().get("kafka_config_configs{ready=true}")
                except OSError:
                    gauge = None
                log(f"N={n}: sync {done}/{n} after {time.monotonic() - t_start:.0f}s (operator's Ready gauge: "
                    f"{gauge}), RSS {op.rss_mib():.1f} MiB, watch errors so far: {len(tracker.errors)}")
            time.sleep(0.2)
        sync_cpu = cpu_delta(cpu0, cpu_snapshot(a.run_dir, op))
        m = op.metrics()
        after = apiserver_requests(kube)
        writes = op.by_label("kafka_config_writes_total", m)
        writes_total = sum(v for k, v in writes.items() if "Event" not in k)
        outputs_written = sum(v for k, v in writes.items() if "ConfigMap" in k)
        elapsed = (t_done or time.monotonic()) - t_start
        r["sync"] = {
            "complete": t_done is not None, "rendered": done, "seconds": elapsed,
            "ready_s": t_ready - t_start,
            "writes": writes, "writes_excluding_events": writes_total, "output_writes": outputs_written,
            "writes_per_s": writes_total / elapsed, "output_writes_per_s": outputs_written / elapsed,
            "reconciles": op.sum("kafka_config_reconciles_total", m),
            "errors": op.by_label("kafka_config_reconcile_errors_total", m),
            "requests": request_delta(before, after), "operator_log_429": op.count_429(),
            "peak_rss_mib": op.peak_rss / 1024.0, "cpu_s": sync_cpu,
        }
        log(f"N={n}: sync CPU seconds: {cpu_text(sync_cpu)}")
        log(f"N={n}: sync {'complete' if t_done else 'INCOMPLETE'} {done}/{n} in {elapsed:.1f}s: "
            f"{writes_total:.0f} writes ({r['sync']['writes_per_s']:.0f}/s), output writes "
            f"{r['sync']['output_writes_per_s']:.0f}/s, 429s: apiserver {r['sync']['requests']['http_429']:.0f}, "
            f"log {r['sync']['operator_log_429']}")
        time.sleep(5)
        r["after_sync"] = op.memory()
        log(f"N={n}: after sync RSS {r['after_sync']['rss_mib']:.1f} MiB (peak {r['after_sync']['hwm_mib']:.1f})")
        save(summary, a.summary, t_run, tracker)
        if t_done is None:
            summary["notes"].append(f"N={n}: initial sync incomplete after {a.sync_timeout:.0f}s "
                                    f"({done}/{n}); later phases skipped")
            op.stop()
            have = n
            continue

        # ---- restart with everything current
        time.sleep(3)
        op.stop()
        before = apiserver_requests(kube)
        op = Operator(a.operator, a.sa_kubeconfig, a.run_dir, f"restart-{n}", port)
        t_start = op.started
        t_ready = op.wait_ready(600)
        t_all = None
        while time.monotonic() - t_start < 600:
            try:
                if op.sum("kafka_config_reconciles_total") >= n:
                    t_all = time.monotonic()
                    break
            except OSError:
                pass
            time.sleep(0.05)
        time.sleep(8)  # late writes (status rounds) would show up here
        m = op.metrics()
        after = apiserver_requests(kube)
        r["restart"] = {
            "ready_s": t_ready - t_start, "all_reconciled_s": (t_all - t_start) if t_all else None,
            "writes": op.sum("kafka_config_writes_total", m),
            "writes_by_kind": op.by_label("kafka_config_writes_total", m),
            "reconciles": op.sum("kafka_config_reconciles_total", m),
            "peak_rss_mib": op.peak_rss / 1024.0, "memory": op.memory(),
            "requests": request_delta(before, after),
        }
        log(f"N={n}: restart: /readyz after {r['restart']['ready_s']:.1f}s, all reconciled after "
            f"{r['restart']['all_reconciled_s']}, {r['restart']['writes']:.0f} writes, peak RSS "
            f"{r['restart']['peak_rss_mib']:.1f} MiB")
        save(summary, a.summary, t_run, tracker)

        # ---- paced edits, then bursts (each on configs the earlier phases did not edit, while N allows)
        phases = [("edits", a.edits, a.edit_rate, 0)] + [
            ("burst", a.burst, None, a.edits + k * a.burst) for k in range(a.burst_repeats)]
        for phase, count, rate, offset in phases:
            if time.monotonic() - t_run > a.budget * 1.5:
                summary["notes"].append(f"N={n}: {phase} skipped (time budget)")
                continue
            idx = [(offset + j) % n for j in range(min(count, n))]
            ekeys = [(ns_of(i), config_name(i)) for i in idx]
            before = apiserver_requests(kube)
            rec0 = op.sum("kafka_config_reconciles_total")
            with tracker.lock:
                for k in ekeys:
                    tracker.latencies.pop(k, None)
            v = version
            version += 1
            cpu0 = cpu_snapshot(a.run_dir, op)
            t_begin = time.monotonic()

            def edit(j):
                i = idx[j]
                key = (ns_of(i), config_name(i))
                if rate:
                    target = t_begin + j / rate
                    delay = target - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                tracker.expect(key, time.monotonic())
                patch_source(kube, i, ns_of(i), v)

            with concurrent.futures.ThreadPoolExecutor(1 if rate else 8) as pool:
                list(pool.map(edit, range(len(idx))))
            t_sent = time.monotonic() - t_begin
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with tracker.lock:
                    got = sum(1 for k in ekeys if k in tracker.latencies)
                if got >= len(ekeys):
                    break
                time.sleep(0.2)
            time.sleep(3)  # follow-up reconciles (e.g. of the output's own watch event)
            with tracker.lock:
                lat = [tracker.latencies[k] * 1000 for k in ekeys if k in tracker.latencies]
            phase_cpu = cpu_delta(cpu0, cpu_snapshot(a.run_dir, op))
            after = apiserver_requests(kube)
            reconciles = op.sum("kafka_config_reconciles_total") - rec0
            req = request_delta(before, after)
            result = {
                "edits": len(idx), "observed": len(lat), "send_s": t_sent,
                "p50_ms": pct(lat, 50), "p90_ms": pct(lat, 90), "p99_ms": pct(lat, 99),
                "max_ms": max(lat) if lat else None,
                "mean_ms": statistics.fmean(lat) if lat else None,
                "reconciles": reconciles, "reconciles_per_change": reconciles / len(idx),
                "requests": req, "harness_patches": len(idx), "cpu_s": phase_cpu,
            }
            if phase == "burst":
                # `burst` is the worst run (highest p99; reconciles per change the highest of any
                # run), `burst_runs` every run.
                runs = r.setdefault("burst_runs", [])
                runs.append(result)
                worst = dict(max(runs, key=lambda x: x["p99_ms"] if x["p99_ms"] is not None else float("inf")))
                worst["reconciles_per_change"] = max(x["reconciles_per_change"] for x in runs)
                worst["runs"] = len(runs)
                result = worst
            r[phase] = result
            log(f"N={n}: {phase} CPU seconds (incl. the 3 s settle): {cpu_text(phase_cpu)}")
            log(f"N={n}: {phase}: {len(lat)}/{len(idx)} observed (sent in {t_sent:.1f}s), p50 "
                f"{pct(lat, 50)} ms, p99 {pct(lat, 99)} ms, reconciles/change "
                f"{reconciles / len(idx):.2f}" + (f" (burst {result['runs']}, worst p99 so far "
                                                  f"{result['p99_ms']} ms)" if phase == "burst" else ""))
            save(summary, a.summary, t_run, tracker)
        r["end"] = op.memory()
        op.stop()
        have = n

    tracker.close()
    summary["watch_errors"] = [repr(e)[:300] for e in tracker.errors]
    save(summary, a.summary, t_run, tracker)
    log(f"summary in {a.summary} (wall {summary['wall_s']:.0f}s)")


if __name__ == "__main__":
    main()
