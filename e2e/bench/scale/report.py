#!/usr/bin/env python3
"""Turns one scale run (the summary JSON written by scale/run.py) into docs/bench/results.json
entries (read-modify-write: every other key is kept), then has e2e/bench/render_table.py rewrite
the generated tables of docs/BENCHMARKS.md from that JSON.

The full report of the run (per-N figures, API requests by verb, the history of runs) goes to
--detail, a markdown file next to the run's summary, not into the page. The targets are
render_table.TARGETS.

Every number comes from the summary of the run; nothing is typed in. Each run is also appended to
docs/bench/scale-history.json (the key figures, the commit and a label), so before/after rows of
operator changes stay on record, each from its own run.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import render_table  # noqa: E402  (e2e/bench/render_table.py)
from render_table import TARGETS, verdict  # noqa: E402


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, check=False).stdout.rstrip()
    except OSError:
        return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def suffix(n):
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def r1(x, d=1):
    return None if x is None else round(x, d)


def figures(s):
    """Flat {key: (value, unit, n, samples)} of one run."""
    out = {}
    idle = s.get("idle")
    if idle:
        out["idle_rss_mib"] = (r1(idle["rss_mib"]), "MiB (VmRSS, no objects, 5 s after /readyz)", 0, 1)
        if "anon_mib" in idle:
            out["idle_rss_anon_mib"] = (r1(idle["anon_mib"]), "MiB (RssAnon part of VmRSS: heap and stacks; the rest is the binary's file-backed pages)", 0, 1)
    ib = s.get("idle_ballast")
    if ib:
        out["idle_ballast_rss_mib"] = (r1(ib["rss_mib"]), f"MiB (VmRSS, no configs, {ib['ballast']} x "
                                       f"{ib['ballast_kib']} KiB ballast ConfigMaps)", 0, 1)
    largest = {}
    for n_str, r in sorted(s["sizes"].items(), key=lambda kv: int(kv[0])):
        n = int(n_str)
        x = suffix(n)
        sync = r.get("sync")
        if sync and sync.get("complete"):
            out[f"initial_sync_s_{x}"] = (r1(sync["seconds"]), "s (operator start to every output rendered and Ready)", n, 1)
            out[f"initial_sync_writes_per_s_{x}"] = (r1(sync["writes_per_s"]), "writes/s (kafka_config_writes_total excl. Events / sync time)", n, 1)
            out[f"initial_sync_output_writes_per_s_{x}"] = (r1(sync["output_writes_per_s"]), "output ConfigMap writes/s", n, 1)
            out[f"initial_sync_429_{x}"] = (sync["requests"]["http_429"] + sync["operator_log_429"], "429 responses (apiserver metric) + 429 mentions in the operator log", n, 1)
            largest["initial_sync_writes_per_s"] = out[f"initial_sync_writes_per_s_{x}"]
        if sync:
            out[f"sync_peak_rss_{x}_mib"] = (r1(sync["peak_rss_mib"]), "MiB (peak VmRSS sampled during the initial sync)", n, 1)
        a = r.get("after_sync")
        if a and sync and sync.get("complete"):
            out[f"rss_{x}_mib"] = (r1(a["rss_mib"]), "MiB (VmRSS 5 s after the initial sync, with ballast)", n, 1)
            if "anon_mib" in a:
                out[f"rss_{x}_anon_mib"] = (r1(a["anon_mib"]), "MiB (RssAnon part of VmRSS 5 s after the initial sync)", n, 1)
            if ib:
                per = (a["rss_mib"] - ib["rss_mib"]) * 1024 * 1024 / n
                out[f"bytes_per_cached_object_{x}"] = (round(per), "bytes of RSS per KafkaToolConfig (with its source and output), (RSS after sync - idle RSS with ballast) / N", n, 1)
        rs = r.get("restart")
        if rs:
            out[f"restart_writes_{x}"] = (rs["writes"], "writes (kafka_config_writes_total of the new process, 8 s after all reconciled)", n, 1)
            if rs.get("all_reconciled_s") is not None:
                out[f"restart_ready_s_{x}"] = (r1(rs["all_reconciled_s"], 2), "s (start to kafka_config_reconciles_total >= N)", n, 1)
            out[f"restart_readyz_s_{x}"] = (r1(rs["ready_s"], 2), "s (start to /readyz: caches synced)", n, 1)
            out[f"relist_peak_rss_{x}_mib"] = (r1(rs["peak_rss_mib"]), "MiB (peak VmRSS during the restart's relist and reconcile-all)", n, 1)
        for phase, key in (("edits", "edit"), ("burst", "burst")):
            e = r.get(phase)
            if not e or e.get("p50_ms") is None:
                continue
            k = e["observed"]
            what = "paced source edits" if phase == "edits" else (
                f"the worst of {e['runs']} bursts of source edits" if e.get("runs", 1) > 1
                else "a burst of source edits")
            out[f"{key}_p50_ms_{x}"] = (r1(e["p50_ms"]), f"ms (source PATCH to output watch event, {what})", n, k)
            out[f"{key}_p99_ms_{x}"] = (r1(e["p99_ms"]), f"ms (source PATCH to output watch event, {what})", n, k)
            rk = "reconciles_per_change" if phase == "edits" else "burst_reconciles_per_change"
            out[f"{rk}_{x}"] = (r1(e["reconciles_per_change"], 2), f"reconciles per source edit ({what})", n, e["edits"])
            largest[f"{key}_p50_ms"] = out[f"{key}_p50_ms_{x}"]
            largest[f"{key}_p99_ms"] = out[f"{key}_p99_ms_{x}"]
            largest[rk] = out[f"{rk}_{x}"]
    # The unsuffixed keys of the issue: at the largest N where they were measured.
    for k, v in largest.items():
        out[k] = v
    return out


def fmt(v):
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}".rstrip("0").rstrip(".")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--summary", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--doc", required=True, help="the page whose generated blocks render_table.py rewrites")
    ap.add_argument("--detail", help="markdown file for the run's full report (default: next to --summary)")
    ap.add_argument("--history", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--tree", help="file: HEAD, then `git status --porcelain` lines, taken before the build")
    ap.add_argument("--build-cmd", default="cargo build --release --locked")
    a = ap.parse_args()

    with open(a.summary) as f:
        s = json.load(f)
    when = s["finished"]
    if a.tree and os.path.exists(a.tree):
        with open(a.tree) as f:
            lines = f.read().splitlines()
        head, dirty = lines[0], [line for line in lines[1:] if line.strip()]
    else:
        head, dirty = sh("git rev-parse --short HEAD"), []
    figs = figures(s)

    results = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            results = json.load(f)
    for k, (value, unit, n, samples) in figs.items():
        results[k] = {"value": value, "unit": unit, "n": n, "samples": samples, "command": a.command,
                      "measured": when, "commit": head, "tree_dirty": bool(dirty)}
    mem = sh("free -g | awk '/Mem:/ {print $2}'")
    machine = {"cpu": cpu_model(), "nproc": int(sh("nproc") or 0) or None,
               "mem_gib": int(mem) if mem.isdigit() else None, "kernel": platform.release()}
    results["run_scale"] = {
        "value": f"{machine['cpu']}, {machine['nproc']} cores, {machine['mem_gib']} GiB RAM, kernel {machine['kernel']}",
        "unit": "the machine and run behind the scale figures", **machine,
        "loadavg_end": s.get("loadavg"), "wall_min": round(s["wall_s"] / 60) if "wall_s" in s else None,
        "label": a.label, "build": a.build_cmd, "command": a.command, "measured": when,
        "commit": head, "tree_dirty": bool(dirty), "operator_sha256": s.get("operator_sha256")}
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(dict(sorted(results.items())), f, indent=2)
        f.write("\n")

    history = []
    if os.path.exists(a.history):
        with open(a.history) as f:
            history = json.load(f)
    # Re-reporting the same run (same summary) replaces its row instead of adding one.
    history = [h for h in history if h.get("measured") != when]
    history.append({"measured": when, "commit": head, "tree_dirty": bool(dirty), "label": a.label,
                    "figures": {k: v[0] for k, v in figs.items()}})
    with open(a.history, "w") as f:
        json.dump(history, f, indent=2)
        f.write("\n")

    # ---- the run's full report (the page shows only the targets table)
    L = []
    w = L.append
    w(f"# Scale: run of {when}")
    w("")
    w("Written by e2e/bench/scale/report.py; the targets table is in docs/BENCHMARKS.md.")
    w("")
    w(f"Run: {when} ({s['wall_s'] / 60:.0f} min wall), one invocation of `{a.command}`"
      + (f" — {a.label}" if a.label else "") + ".")
    w("")
    w("- Machine: " + f"{cpu_model()}, `nproc` {sh('nproc')}, {mem} GiB RAM, "
      f"kernel `{platform.release()}`"
      + (f"; load average {s['loadavg']} at the end of the run" if s.get("loadavg") else "")
      + "; a machine shared with other work (absolute times are noisy; counts of writes, reconciles and "
      "requests are not).")
    w(f"- Operator: release build (`{a.build_cmd}`) of commit `{head}`"
      + (f", working tree dirty in {len(dirty)} path(s) of src/Cargo.*" if dirty else ", clean tree for src/Cargo.*")
      + (f", binary sha256 `{s['operator_sha256'][:16]}…`" if s.get("operator_sha256") else "")
      + "; run as the chart's ServiceAccount (impersonating kubeconfig), leader election on, one replica.")
    p = s["params"]
    w(f"- Control plane: e2e/controlplane (etcd, kube-apiserver, kube-controller-manager of the pinned release, "
      f"default flags: API Priority and Fairness on, --max-requests-inflight 400 / mutating 200); a fresh one per run "
      f"(`E2E_RUN_DIR={os.path.relpath(p['run_dir'], os.getcwd()) if p['run_dir'].startswith('/') else p['run_dir']}`).")
    w(f"- World: N KafkaToolConfigs (`kafka-console-producer`, one `configFiles` entry each) in {p['namespaces']} "
      f"namespaces, each with its own ~2 KB source ConfigMap (19 documented producer keys), plus {p['ballast']} unrelated "
      f"{p['ballast_kib']} KiB ConfigMaps as ballast. Sizes run in order {p['sizes']}; the larger one adds configs and "
      "edits the sources of the existing ones while the operator is stopped, so all N outputs are stale at its start.")
    w("- Rendered = Ready=True at the current generation and `status.configHash` equal to the output's hash "
      "annotation, seen through a watch by the harness. Edit latency = just before the source PATCH to the "
      "watch event of the output carrying a new hash (includes the operator's debounce, its reads and "
      "writes, and watch delivery to the operator and to the harness). The harness talks to the apiserver as system:masters (exempt from APF).")
    w("")
    w("| target (issue 7) | key | measured | target | |")
    w("| --- | --- | ---: | ---: | --- |")
    for label, key, op, target, text in TARGETS:
        v = figs.get(key, (None,))[0]
        w(f"| {label} | `{key}` | {fmt(v)} | {text} | {verdict(v, op, target)} |")
    w("")
    w("## Per N")
    w("")
    sizes = sorted(s["sizes"], key=int)
    w("| | " + " | ".join(f"N = {int(n):,}" for n in sizes) + " |")
    w("| --- |" + " ---: |" * len(sizes))

    def row(label, get):
        cells = []
        for n in sizes:
            try:
                v = get(s["sizes"][n])
            except (KeyError, TypeError):
                v = None
            cells.append(fmt(r1(v, 2) if isinstance(v, float) else v))
        w(f"| {label} | " + " | ".join(cells) + " |")

    row("objects created by the harness before the start (s)", lambda r: r["create_s"])
    row("initial sync: complete", lambda r: "yes" if r["sync"]["complete"] else f"no ({r['sync']['rendered']})")
    row("initial sync: /readyz after (s)", lambda r: r["sync"]["ready_s"])
    row("initial sync: all rendered after (s)", lambda r: r["sync"]["seconds"])
    row("initial sync: writes excl. Events", lambda r: r["sync"]["writes_excluding_events"])
    row("initial sync: writes/s", lambda r: r["sync"]["writes_per_s"])
    row("initial sync: output writes/s", lambda r: r["sync"]["output_writes_per_s"])
    row("initial sync: reconciles", lambda r: r["sync"]["reconciles"])
    row("initial sync: reconcile errors", lambda r: sum(r["sync"]["errors"].values()))
    row("initial sync: 429 (apiserver metric)", lambda r: r["sync"]["requests"]["http_429"])
    row("initial sync: 429 in operator log", lambda r: r["sync"]["operator_log_429"])
    row("initial sync: CPU s operator / kube-apiserver / etcd / harness", lambda r: " / ".join(
        "–" if r["sync"]["cpu_s"].get(k) is None else f"{r['sync']['cpu_s'][k]:.1f}"
        for k in ("operator", "kube-apiserver", "etcd", "harness")))
    row("RSS peak during sync (MiB)", lambda r: r["sync"]["peak_rss_mib"])
    row("RSS after sync (MiB)", lambda r: r["after_sync"]["rss_mib"])
    row("  of which anonymous / file-backed (MiB)", lambda r: f"{r['after_sync']['anon_mib']:.1f} / {r['after_sync']['file_mib']:.1f}")
    row("restart: /readyz after (s)", lambda r: r["restart"]["ready_s"])
    row("restart: all N reconciled after (s)", lambda r: r["restart"]["all_reconciled_s"])
    row("restart: writes", lambda r: r["restart"]["writes"])
    row("restart: RSS peak during relist (MiB)", lambda r: r["restart"]["peak_rss_mib"])
    row("edits (10/s): observed / sent", lambda r: f"{r['edits']['observed']}/{r['edits']['edits']}")
    row("edits: p50 / p99 (ms)", lambda r: f"{r['edits']['p50_ms']:.0f} / {r['edits']['p99_ms']:.0f}")
    row("edits: reconciles per change", lambda r: r["edits"]["reconciles_per_change"])
    row("burst: observed / sent (send time s)", lambda r: f"{r['burst']['observed']}/{r['burst']['edits']} ({r['burst']['send_s']:.1f})")
    row("burst: p50 / p99 / max (ms)", lambda r: f"{r['burst']['p50_ms']:.0f} / {r['burst']['p99_ms']:.0f} / {r['burst']['max_ms']:.0f}")
    row("burst: reconciles per change", lambda r: r["burst"]["reconciles_per_change"])
    row("burst: p99 of each run (ms; the rows above are the worst run)", lambda r: " / ".join(
        f"{x['p99_ms']:.0f}" for x in r.get("burst_runs", [r["burst"]])))
    row("burst: CPU s operator / kube-apiserver / etcd / harness", lambda r: " / ".join(
        "–" if r["burst"]["cpu_s"].get(k) is None else f"{r['burst']['cpu_s'][k]:.1f}"
        for k in ("operator", "kube-apiserver", "etcd", "harness")))
    row("RSS at the end (MiB)", lambda r: r["end"]["rss_mib"])
    w("")
    if s.get("idle"):
        w(f"Idle (no objects): {s['idle']['rss_mib']:.1f} MiB RSS; idle with the ballast only: "
          f"{s['idle_ballast']['rss_mib']:.1f} MiB."
          + (f" Of the idle RSS, {s['idle']['anon_mib']:.1f} MiB is anonymous (heap, stacks) and "
             f"{s['idle']['file_mib']:.1f} MiB file-backed pages of the binary itself (code and "
             "read-only data mapped from the page cache)." if "anon_mib" in s["idle"] else ""))
        w("")
    w("## API requests by verb (kube-apiserver `apiserver_request_total` deltas)")
    w("")
    w("Resources the operator uses only (configmaps, secrets, kafkatoolconfigs, events, leases, namespaces, …); "
      "all clients are counted, so the harness's own source PATCHes (listed) and kube-controller-manager are in "
      "these figures, and so is kube-apiserver's own identity Lease (`kube-system/apiserver-…`), which it renews "
      "with a PUT every 10 s: the operator's RBAC has no `update` on Leases, so a `PUT leases` here is never its. "
      "WATCH counts watch requests started, not events.")
    w("")
    for n in sizes:
        r = s["sizes"][n]
        for phase in ("sync", "restart", "edits", "burst"):
            if phase not in r:
                continue
            req = r[phase]["requests"]
            extra = f"; harness PATCHes: {r[phase]['harness_patches']}" if "harness_patches" in r[phase] else ""
            verbs = ", ".join(f"{v} {fmt(c)}" for v, c in req["by_verb"].items())
            w(f"- N = {int(n):,}, {phase}: {verbs}{extra}")
            detail = ", ".join(f"{k} {fmt(c)}" for k, c in req["by_verb_resource"].items())
            w(f"  <br>by resource: {detail}")
    w("")
    if s.get("notes"):
        w("Notes from the run:")
        w("")
        for note in s["notes"]:
            w(f"- {note}")
        w("")
    w("## Runs (before/after operator changes)")
    w("")
    w("Each row is one run of the script, from `docs/bench/scale-history.json`; later rows are after the "
      "change named in their label.")
    w("")
    cols = ["idle_rss_mib", "idle_rss_anon_mib", "rss_1k_mib", "rss_10k_mib", "relist_peak_rss_10k_mib", "initial_sync_writes_per_s_10k",
            "initial_sync_429_10k", "restart_writes_10k", "restart_ready_s_10k", "edit_p50_ms", "edit_p99_ms",
            "burst_p99_ms", "reconciles_per_change"]
    w("| measured | commit | change | " + " | ".join(f"`{c}`" for c in cols) + " |")
    w("| --- | --- | --- |" + " ---: |" * len(cols))
    for h in history:
        f = h["figures"]
        w(f"| {h['measured']} | `{h['commit']}`{'+dirty' if h['tree_dirty'] else ''} | {h['label'] or '–'} | "
          + " | ".join(fmt(f.get(c)) for c in cols) + " |")
    w("")
    w("Machine-readable: `docs/bench/results.json` (keys above, `n` = number of KafkaToolConfigs, `samples` = "
      "number of measurements behind the figure).")
    detail = a.detail or os.path.join(os.path.dirname(os.path.abspath(a.summary)), "report.md")
    with open(detail, "w") as f:
        f.write("\n".join(L))
    changed = render_table.update(a.json, a.doc)
    print(f"wrote {len(figs)} figures to {a.json}, run #{len(history)} to {a.history}, the full report to "
          f"{detail}; {a.doc}: generated tables {'rewritten' if changed else 'unchanged'}")
    for what, key, op, target, text in TARGETS:
        v = figs.get(key, (None,))[0]
        print(f"  {what}: {fmt(v)} (target {text}): {verdict(v, op, target)}")


if __name__ == "__main__":
    sys.exit(main())
