#!/usr/bin/env python3
"""Turns one engine-vs-jvm run into docs/bench/results.json entries, then has
e2e/bench/render_table.py rewrite the generated tables of docs/BENCHMARKS.md from that JSON.

The full report of the run (paired and sequential tables, criterion and JVM medians with their
spread, input checksums) goes to --detail, a markdown file next to the run's raw results, not into
the page. The engine's target is only "never slower than the warmed JVM path at any size"
(every paired `engine_*_speedup_vs_jvm` >= 1.0; render_table.ENGINE_TARGET); it is printed here.

Every number written comes from the files of the run given on the command line (criterion's
estimates.json/sample.json copied right after the bench, the JVM harness's JSON); nothing is
typed in. With --no-write nothing is written at all.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import render_table  # noqa: E402  (e2e/bench/render_table.py)

SIZES = render_table.SIZES


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


def fmt_ns(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--criterion", required=True)
    ap.add_argument("--jvm", required=True)
    ap.add_argument("--paired", required=True, help="paired.py's JSON: interleaved rounds")
    ap.add_argument("--paired-cmd", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--rust-cmd", required=True)
    ap.add_argument("--jvm-cmd", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--doc", required=True, help="the page whose generated blocks render_table.py rewrites")
    ap.add_argument("--detail", help="markdown file for the run's full report (default: next to --jvm)")
    ap.add_argument("--started", type=float, help="epoch seconds the run started (for its wall time)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--tree", help="file: HEAD, then `git status --porcelain` lines, taken before the bench")
    a = ap.parse_args()

    crit = {}
    for bench in ["parse", "evaluate_and_render", "store", "content_hash"]:
        for n in SIZES:
            d = os.path.join(a.criterion, bench, str(n))
            with open(os.path.join(d, "estimates.json")) as f:
                est = json.load(f)
            with open(os.path.join(d, "sample.json")) as f:
                samples = len(json.load(f)["iters"])
            crit[(bench, n)] = {
                "median": est["median"]["point_estimate"],
                "lo": est["median"]["confidence_interval"]["lower_bound"],
                "hi": est["median"]["confidence_interval"]["upper_bound"],
                "samples": samples,
            }
    with open(a.jvm) as f:
        jvm_run = json.load(f)
    jvm = {(r["op"], r["n"]): r for r in jvm_run["results"]}
    inputs = {}
    for n in SIZES:
        with open(os.path.join(a.inputs, f"client-{n}.properties"), "rb") as f:
            data = f.read()
        inputs[n] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                     "lines": data.count(b"\n")}

    # engine side ↔ JVM side
    pairs = [("evaluate_and_render", "pipeline"), ("parse", "load"), ("store", "store")]
    rows = []
    for rust_b, jvm_op in pairs:
        for n in SIZES:
            e, j = crit[(rust_b, n)], jvm[(jvm_op, n)]
            rows.append({"rust": rust_b, "jvm": jvm_op, "n": n, "engine_ns": e["median"],
                         "jvm_ns": j["median_ns"], "ratio": e["median"] / j["median_ns"],
                         "speedup": j["median_ns"] / e["median"], "e": e, "j": j})

    # The paired rounds: per (pair, size), the median over rounds of each side and of the
    # per-round speedups (each round's two figures were taken seconds apart).
    with open(a.paired) as f:
        paired_run = json.load(f)
    paired = []
    for rust_b, jvm_op in pairs:
        for n in SIZES:
            rounds = [x for x in paired_run["results"] if x["engine_op"] == rust_b and x["n"] == n]
            speedups = [x["jvm_ns"] / x["engine_ns"] for x in rounds]
            engine_ns = statistics.median(x["engine_ns"] for x in rounds)
            jvm_ns = statistics.median(x["jvm_ns"] for x in rounds)
            paired.append({"rust": rust_b, "jvm": jvm_op, "n": n, "rounds": len(rounds),
                           "engine_ns": engine_ns, "jvm_ns": jvm_ns,
                           "speedup": statistics.median(speedups),
                           "speedup_min": min(speedups), "speedup_max": max(speedups)})

    print("sequential (criterion, then the JVM harness):")
    for r in rows:
        print(f"{r['rust']:>20} vs {r['jvm']:<8} n={r['n']:<5} engine {fmt_ns(r['engine_ns']):>10}  "
              f"jvm {fmt_ns(r['jvm_ns']):>10}  engine/jvm {r['ratio']:.2f}  speedup {r['speedup']:.2f}x")
    print(f"paired ({paired_run['rounds']} interleaved rounds):")
    for p in paired:
        print(f"{p['rust']:>20} vs {p['jvm']:<8} n={p['n']:<5} engine {fmt_ns(p['engine_ns']):>10}  "
              f"jvm {fmt_ns(p['jvm_ns']):>10}  speedup {p['speedup']:.2f}x "
              f"({p['speedup_min']:.2f}–{p['speedup_max']:.2f})")
    slower = [p for p in paired if p["speedup"] < render_table.ENGINE_TARGET]
    print(f"target (paired median speedup >= {render_table.ENGINE_TARGET}): " + (
        "met at every pair and size" if not slower else "MISSED at " + ", ".join(
            f"{p['rust']}/{p['n']} ({p['speedup']:.2f}x)" for p in slower)))
    if a.no_write:
        return

    # The tree as the script saw it just before `cargo bench` (others edit it concurrently).
    if a.tree and os.path.exists(a.tree):
        with open(a.tree) as f:
            lines = f.read().splitlines()
        head, dirty = lines[0], [l for l in lines[1:] if l.strip()]
    else:
        head = sh("git rev-parse --short HEAD")
        dirty = sh("git status --porcelain -- src benches Cargo.toml Cargo.lock catalogue").splitlines()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    jvm_batches = jvm_run["batches"]
    results = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            results = json.load(f)
    rust_cmd, jvm_cmd = a.rust_cmd, a.jvm_cmd
    def keys(r, suffix=""):
        n = r["n"]
        if r["rust"] == "evaluate_and_render":
            return (f"engine_{n}key_ns{suffix}", f"jvm_{n}key_ns{suffix}",
                    f"engine_{n}key_speedup_vs_jvm{suffix}")
        op = r["rust"]
        return (f"engine_{op}_{n}key_ns{suffix}", f"jvm_{r['jvm']}_{n}key_ns{suffix}",
                f"engine_{op}_{n}key_speedup_vs_jvm{suffix}")

    # The headline keys are the paired rounds' (the steadier estimate); the sequential run's
    # figures keep their own keys with a `_sequential` suffix.
    rounds = paired_run["rounds"]
    for p in paired:
        prefix_e, prefix_j, prefix_s = keys(p)
        results[prefix_e] = {"value": round(p["engine_ns"], 1),
                             "unit": "ns/op (median over paired rounds)", "n": rounds,
                             "command": a.paired_cmd, "bench": f"{p['rust']}/{p['n']}",
                             "measured": when, "commit": head, "tree_dirty": bool(dirty)}
        results[prefix_j] = {"value": round(p["jvm_ns"], 1),
                             "unit": "ns/op (median over paired rounds)", "n": rounds,
                             "command": a.paired_cmd, "op": p["jvm"], "measured": when}
        results[prefix_s] = {"value": round(p["speedup"], 3),
                             "unit": "x (median over paired rounds of JVM / engine; >1 means the engine is faster)",
                             "n": rounds, "min": round(p["speedup_min"], 3),
                             "max": round(p["speedup_max"], 3), "command": a.script,
                             "measured": when}
    for r in rows:
        prefix_e, prefix_j, prefix_s = keys(r, "_sequential")
        results[prefix_e] = {"value": round(r["engine_ns"], 1), "unit": "ns/op (criterion median)",
                             "n": r["e"]["samples"], "command": rust_cmd,
                             "bench": f"{r['rust']}/{r['n']}", "measured": when, "commit": head,
                             "tree_dirty": bool(dirty)}
        results[prefix_j] = {"value": round(r["jvm_ns"], 1), "unit": "ns/op (median of batches)",
                             "n": jvm_batches, "command": jvm_cmd, "op": r["jvm"], "measured": when}
        results[prefix_s] = {"value": round(r["speedup"], 3),
                             "unit": "x (JVM median / engine median, sequential run; >1 means the engine is faster)",
                             "n": min(r["e"]["samples"], jvm_batches), "command": a.script,
                             "measured": when}
    for n in SIZES:
        e = crit[("content_hash", n)]
        results[f"engine_content_hash_{n}key_ns"] = {
            "value": round(e["median"], 1), "unit": "ns/op (criterion median)", "n": e["samples"],
            "command": rust_cmd, "bench": f"content_hash/{n}", "measured": when, "commit": head,
            "tree_dirty": bool(dirty)}
    mem = sh("free -g | awk '/Mem:/ {print $2}'")
    machine = {"cpu": cpu_model(), "nproc": int(sh("nproc") or 0) or None,
               "mem_gib": int(mem) if mem.isdigit() else None, "kernel": platform.release()}
    results["run_engine_vs_jvm"] = {
        "value": f"{machine['cpu']}, {machine['nproc']} cores, {machine['mem_gib']} GiB RAM, kernel {machine['kernel']}",
        "unit": "the machine and run behind the engine-vs-JVM figures", **machine,
        "rustc": sh("rustc --version"), "jvm": jvm_run["java"], "kafka_clients": "4.3.1",
        "paired_s": round(paired_run["seconds"]), "paired_rounds": rounds,
        "wall_min": round((time.time() - a.started) / 60) if a.started else None,
        "command": a.script, "measured": when, "commit": head, "tree_dirty": bool(dirty)}
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(dict(sorted(results.items())), f, indent=2)
        f.write("\n")
    changed = render_table.update(a.json, a.doc)
    print(f"wrote {a.json}; {a.doc}: generated tables {'rewritten' if changed else 'unchanged'}")

    # --- the run's full report (not the page: docs/BENCHMARKS.md shows only the paired table) ---
    L = []
    w = L.append
    w(f"# Engine vs JVM: run of {when}")
    w("")
    w("Written by e2e/bench/jvm/report.py; the summary table is in docs/BENCHMARKS.md.")
    w("")
    w(f"Run: {when}, one invocation of `{a.script}` on the same input bytes: first "
      f"{rounds} paired rounds (engine and JVM measured alternately, seconds apart, per case; "
      f"{paired_run['seconds']:.0f} s), then the engine's criterion bench and the JVM harness "
      "back to back (sequential). Ratios below come only from that one run; the paired rounds' "
      "are the headline figures.")
    w("")
    w("> **Noise.** This is a shared 2-core machine with other work running on it. Absolute "
      "numbers move between runs (easily by tens of percent); the engine/JVM ratios of one run are "
      "the figures to read, and even those are ± noise. Do not compare absolute numbers across "
      "runs or machines.")
    w("")
    w("## Machine")
    w("")
    w(f"- CPU: {cpu_model()}")
    w(f"- `nproc`: {sh('nproc')}")
    mem = sh("free -h")
    w("- `free -h`:")
    w("")
    w("```")
    w(mem)
    w("```")
    w("")
    w(f"- rustc: `{sh('rustc --version')}`; JVM: `{jvm_run['java']}`; Kafka clients 4.3.1")
    w(f"- kernel: `{platform.release()}`")
    w("")
    w("## Tree")
    w("")
    w(f"Engine built from commit `{head}`" + (
        ", **with uncommitted changes in the working tree** (other engineers edit it concurrently; "
        "as seen just before `cargo bench` started): " + ", ".join(f"`{d.split(maxsplit=1)[-1]}`" for d in dirty) + "."
        if dirty else ", clean working tree for `src`, `benches`, `Cargo.*`, `catalogue`."))
    w("")
    w("## Commands")
    w("")
    w("```sh")
    w(f"{a.script}          # everything below, in one run")
    w(f"{a.paired_cmd}          # the paired rounds")
    w(f"{rust_cmd}          # the engine side (benches/engine.rs, unchanged)")
    w(f"{jvm_cmd}")
    w("```")
    w("")
    nsamp = sorted({c["samples"] for c in crit.values()})
    w("Criterion settings are those of `benches/engine.rs` (2 s measurement, 0.5 s warm-up; "
      f"samples per bench in this run: {', '.join(map(str, nsamp))}; the bench's own default is 30, "
      "`RUST_SAMPLE_SIZE` lowers it because the 5,000-key evaluate takes seconds per iteration); "
      "the reported figure is criterion's median point estimate. The JVM harness "
      f"(`e2e/bench/jvm/src/JvmConfigBench.java`, plain `javac` against kafka-clients-4.3.1.jar) warms "
      f"each (operation, size) up for {jvm_run['warmup_s']} s of wall time, sizes a batch to "
      f"~{jvm_run['batch_ms']} ms, times {jvm_batches} batches and reports the median batch's ns/op. "
      "Heap is fixed at 512 MiB; default JIT and GC.")
    w("")
    w("## Inputs (byte-identical on both sides)")
    w("")
    w("The script cuts `properties_file(n)` verbatim out of `benches/inputs/mod.rs`, compiles it with "
      "`rustc` and writes `target/bench-inputs/client-N.properties`; the JVM reads those files, so "
      "both sides parse the same bytes. Each file: a comment, `bootstrap.servers`, five real "
      "producer keys, then `custom.interceptor.setting.i=value-i with spaces and \\u00e9` lines.")
    w("")
    w("| keys | bytes | sha256 |")
    w("| ---: | ---: | --- |")
    for n in SIZES:
        w(f"| {n} | {inputs[n]['bytes']} | `{inputs[n]['sha256']}` |")
    w("")
    w("## What each side does")
    w("")
    w("| | engine (Rust) | JVM (Kafka 4.3.1 clients) |")
    w("| --- | --- | --- |")
    w("| parse | `properties::load(bytes)`: full `Properties.load` grammar (continuations, escapes, "
      "`\\uXXXX`, surrogate checks) into a `Vec<Entry>` with line numbers | `new Properties().load(InputStream)` "
      "into a `Hashtable` |")
    w("| store | `properties::store` of a sorted `BTreeMap`: `Properties.store` escaping, no date "
      "comment | `Properties.store(StringWriter, null)`: same escaping, writes a date comment, hashtable order |")
    w("| end to end | `evaluate()` of a `KafkaToolConfig` for `kafka-console-producer`: read the "
      "ConfigMap source and parse the file, merge it with the spec's n/10 inline producer "
      "overrides and the tool's forced/default layers **with a provenance chain per key**, "
      "resolve `${...}` references, validate every key against the Kafka config catalogue (types, "
      "validators, unknown-key suggestions, sensitive keys), render `producer.properties` **and** "
      "`tool.args`, hash the output (sha256) | `Properties.load`, `putAll` of the same n/10 overrides, "
      "`key.serializer`/`value.serializer` set as kafka-console-producer forces them (ProducerConfig "
      "has no default for them; parse throws without), `ProducerConfig.configDef().parse(props)` "
      "(type conversion + validators of every key ProducerConfig defines, defaults included; unknown keys ignored), "
      "`Properties.store` to a `StringWriter` |")
    w("")
    w("So the end-to-end comparison is **not like for like**: the engine does strictly more "
      "(provenance, reference resolution, validation of unknown keys with suggestions, tool.args, "
      "hashing) than the JVM path, which is what a Kafka client does with its config before it "
      "starts. It answers \"is rendering a config with the engine in the same league as Kafka "
      "itself reading one?\", not \"which parser is faster\". The parse and store rows are the "
      "closer like-for-like pairs. The JVM figures are for a fully JIT-warmed JVM; a cold "
      "`kafka-*.sh` start pays JVM start-up and class loading on top, which this does not measure.")
    w("")
    w("## Engine vs JVM: paired rounds (headline)")
    w("")
    w(f"Both halves run as long-lived processes (`benches/engine_paired.rs`, `JvmConfigBench "
      f"--serve`, JIT warmed up before the first round). A round times every case once on each "
      f"side, {paired_run['millis']} ms each in {paired_run['batches']} batches (median batch), "
      "the two sides back to back with the first side alternating (ABBA), and only one side "
      "running at a time. A drift in machine load between minutes therefore hits both figures "
      "of a round alike. speedup = median over rounds of JVM / engine (min–max over rounds); "
      "engine and JVM columns are the medians over rounds of each side.")
    w("")
    w("| engine op | JVM op | keys | engine | JVM | engine ns/key | JVM ns/key | speedup | rounds (min–max) |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in paired:
        n = p["n"]
        w(f"| `{p['rust']}/{n}` | `{p['jvm']}` | {n} | {fmt_ns(p['engine_ns'])} | {fmt_ns(p['jvm_ns'])} | "
          f"{p['engine_ns'] / n:.0f} | {p['jvm_ns'] / n:.0f} | **{p['speedup']:.2f}×** | "
          f"{p['rounds']} ({p['speedup_min']:.2f}–{p['speedup_max']:.2f}) |")
    w("")
    w("## Engine vs JVM: sequential (criterion, then the JVM harness)")
    w("")
    w("The engine's whole criterion bench first, then the JVM harness: minutes apart, so a change "
      "in machine load between the two moves these ratios (compare them with the paired ones). "
      "ratio = engine median / JVM median (< 1: the engine is faster); speedup = JVM / engine.")
    w("")
    w("| engine bench | JVM op | keys | engine | JVM | engine ns/key | JVM ns/key | engine/JVM | speedup |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        n = r["n"]
        w(f"| `{r['rust']}/{n}` | `{r['jvm']}` | {n} | {fmt_ns(r['engine_ns'])} | {fmt_ns(r['jvm_ns'])} | "
          f"{r['engine_ns'] / n:.0f} | {r['jvm_ns'] / n:.0f} | {r['ratio']:.2f} | {r['speedup']:.2f}× |")
    w("")
    slower = [r for r in rows if r["ratio"] > 1]
    if slower:
        w("**Where the engine is slower than the JVM in this run:** " + ", ".join(
            f"`{r['rust']}` at {r['n']} keys ({r['ratio']:.2f}× the JVM's time)" for r in slower) + ".")
    else:
        w("In this run the engine was faster than the JVM on every pair.")
    w("")
    w("## Criterion medians (engine, same run)")
    w("")
    w("| bench | 20 keys | 200 keys | 5,000 keys |")
    w("| --- | ---: | ---: | ---: |")
    for b in ["parse", "evaluate_and_render", "store", "content_hash"]:
        cells = [f"{fmt_ns(crit[(b, n)]['median'])} ({fmt_ns(crit[(b, n)]['lo'])}–{fmt_ns(crit[(b, n)]['hi'])})"
                 for n in SIZES]
        w(f"| `{b}` | " + " | ".join(cells) + " |")
    w("")
    w(f"Median point estimate (95 % confidence interval of the median); samples per bench: {', '.join(map(str, nsamp))}.")
    w("")
    w("## JVM medians (same run)")
    w("")
    w("| op | 20 keys | 200 keys | 5,000 keys |")
    w("| --- | ---: | ---: | ---: |")
    for op in ["load", "store", "pipeline"]:
        cells = [f"{fmt_ns(jvm[(op, n)]['median_ns'])} ({fmt_ns(jvm[(op, n)]['min_ns'])}–{fmt_ns(jvm[(op, n)]['max_ns'])})"
                 for n in SIZES]
        w(f"| `{op}` | " + " | ".join(cells) + " |")
    w("")
    w(f"Median of {jvm_batches} batches (min–max of the batches).")
    w("")
    w("The machine-readable figures are in `docs/bench/results.json` (`engine_200key_ns`, "
      "`jvm_200key_ns`, `engine_200key_speedup_vs_jvm`, and the same for 20 and 5,000 keys and for "
      "parse/store: the paired rounds; the sequential figures under the same names with "
      "`_sequential`), written by the same run.")
    w("")
    detail = a.detail or os.path.join(os.path.dirname(os.path.abspath(a.jvm)), "report.md")
    with open(detail, "w") as f:
        f.write("\n".join(L))
    print(f"full report of the run: {detail}")


if __name__ == "__main__":
    sys.exit(main())
