#!/usr/bin/env python3
"""Writes the generated parts of docs/BENCHMARKS.md from docs/bench/results.json.

The page is hand-written prose with generated blocks in it. Each block sits between

    <!-- generated: NAME (e2e/bench/render_table.py; edit docs/bench/results.json, not this) -->
    ...
    <!-- end generated -->

and only the lines between those two markers are rewritten; everything outside them is left
byte for byte as it is. Blocks: `machine` (where the last runs ran), `scale` (the operator's
targets) and `engine` (the engine against the warmed JVM). The targets live here, in TARGETS and
ENGINE_PAIRS, and nowhere else; the report scripts import them.

    e2e/bench/render_table.py            # rewrite the blocks in place
    e2e/bench/render_table.py --check    # exit 1 (and print a diff) if the page is not what the JSON gives

A value missing from the JSON is shown as "not measured"; nothing is typed in here.
"""
import argparse
import difflib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_JSON = os.path.join(ROOT, "docs", "bench", "results.json")
DEFAULT_DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")

BEGIN_RE = re.compile(r"^<!-- generated: ([a-z_]+)\b.*-->$")
END = "<!-- end generated -->"

NOT_MEASURED = "not measured"

# The operator's scale targets (issue 7): (what, results.json key, op, target, target as written).
TARGETS = [
    ("Idle RSS", "idle_rss_mib", "<=", 12, "≤ 12 MiB"),
    ("RSS at N = 10,000, with ballast", "rss_10k_mib", "<=", 64, "≤ 64 MiB"),
    ("Peak RSS while relisting N = 10,000", "relist_peak_rss_10k_mib", "<=", 64, "≤ 64 MiB"),
    ("Initial sync of 10,000 stale outputs", "initial_sync_writes_per_s_10k", ">=", 200, "≥ 200 writes/s"),
    ("429s during that sync", "initial_sync_429_10k", "<=", 0, "0"),
    ("Restart with current outputs: writes", "restart_writes_10k", "<=", 0, "0"),
    ("Restart with current outputs: all reconciled", "restart_ready_s_10k", "<=", 10, "≤ 10 s"),
    ("Edit → output, p50 (paced, 10/s)", "edit_p50_ms", "<=", 100, "≤ 100 ms"),
    ("Edit → output, p99 (paced, 10/s)", "edit_p99_ms", "<=", 500, "≤ 500 ms"),
    ("Edit → output, p99 in a burst", "burst_p99_ms", "<=", 2000, "≤ 2,000 ms"),
    ("Reconciles per real change", "reconciles_per_change", "<=", 1.2, "≤ 1.2"),
]

# The engine's only target: never slower than the warmed JVM path, at any size. Checked on the
# paired rounds' median speedup (JVM time / engine time) of every pair and size.
ENGINE_TARGET = 1.0
SIZES = [20, 200, 5000]
# (engine bench, JVM op, key infix): engine_{infix}{n}key_speedup_vs_jvm
# Hostile input (issue 24), e2e/bench/hostile_input.py: case -> (max wall seconds, max peak RSS MiB)
# of `validate` on one hostile manifest, with what it is.
HOSTILE_BOUNDS = {
    "amplification": (1.0, 100),
    "policy": (3.0, 200),
    "long_keys": (2.0, 100),
    "long_tool": (1.0, 100),
}
HOSTILE_WHAT = {
    "amplification": "10,000 references to a 100 KB value (refused, OutputTooLarge)",
    "policy": "20,000 override-policy patterns × 10,000 keys",
    "long_keys": "two 450 KB keys (valid, 0.9 MB output)",
    "long_tool": "a 1 MB tool name (refused, UnknownTool)",
}

# Side by side with stakater Reloader (issue 30), e2e/bench/peer.sh: (what, key, op, goal, goal as
# written). Ratios are ours / Reloader's; the RSS key is that of the largest N measured.
PEER_GOALS = [
    ("Idle RSS (ballast only)", "idle_rss_ratio_vs_reloader", None, None, "–"),
    ("RSS at N = 10,000", "rss_10k_ratio_vs_reloader", "<=", 0.2, "≤ 0.2"),
    ("Peak RSS during the initial list, N = 10,000", "peak_rss_10k_ratio_vs_reloader", None, None, "–"),
    ("Sync CPU seconds", "sync_cpu_ratio_vs_reloader", "<=", 1.0, "≤ 1.0"),
    ("Edit → pod-template change, p50 (paced)", "edit_to_rollout_p50_ratio_vs_reloader", None, None, "–"),
    ("Edit → pod-template change, p99 (paced)", "edit_to_rollout_p99_ratio_vs_reloader", "<=", 1.0, "≤ 1.0"),
    ("Edit → pod-template change, p99 (burst)", "burst_to_rollout_p99_ratio_vs_reloader", None, None, "–"),
    ("Writes per edit by the tool (paced)", "edit_writes_per_edit_vs_reloader", None, None, "–"),
]
CEILING_GOAL = 0.8

ENGINE_PAIRS = [
    ("evaluate_and_render", "pipeline", ""),
    ("parse", "load", "parse_"),
    ("store", "store", "store_"),
]


def engine_keys(bench, jvm_op, infix, n):
    """(engine ns key, JVM ns key, speedup key) of one pair and size in results.json."""
    jvm_infix = f"{jvm_op}_" if infix else ""
    return (f"engine_{infix}{n}key_ns", f"jvm_{jvm_infix}{n}key_ns", f"engine_{infix}{n}key_speedup_vs_jvm")


def verdict(value, op, target):
    if value is None:
        return NOT_MEASURED
    ok = value <= target if op == "<=" else value >= target
    return "met" if ok else "**missed**"


def num(v):
    """A figure as the page shows it: thousands separators, at most two decimals."""
    if v is None:
        return NOT_MEASURED
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.2f}".rstrip("0").rstrip(".")


def ns(v):
    if v is None:
        return NOT_MEASURED
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.2f} µs"
    return f"{v:.0f} ns"


def value(results, key):
    entry = results.get(key)
    return entry.get("value") if isinstance(entry, dict) else None


def source_line(results, keys):
    """Which run(s) the figures of a block come from, read from their entries."""
    runs = {}
    for k in keys:
        e = results.get(k)
        if not isinstance(e, dict) or "measured" not in e:
            continue
        commit = e.get("commit")
        runs.setdefault(e["measured"], set())
        if commit:
            runs[e["measured"]].add(f"`{commit}`" + (" (uncommitted changes in the tree)" if e.get("tree_dirty") else ""))
    if not runs:
        return "No run recorded in `docs/bench/results.json`."
    parts = []
    for when in sorted(runs):
        commits = sorted(runs[when])
        parts.append(f"{when}" + (f", built from {', '.join(commits)}" if commits else ""))
    return "Run" + ("s" if len(parts) > 1 else "") + ": " + "; ".join(parts) + "."


def block_scale(results):
    L = ["| what | key | measured | target | measured / target | |",
         "| --- | --- | ---: | ---: | ---: | --- |"]
    for what, key, op, target, text in TARGETS:
        v = value(results, key)
        ratio = "–" if v is None or target == 0 else f"{v / target:.2f}"
        L.append(f"| {what} | `{key}` | {num(v)} | {text} | {ratio} | {verdict(v, op, target)} |")
    L.append("")
    L.append(source_line(results, [k for _, k, *_ in TARGETS]))
    return L


def block_engine(results):
    L = ["| engine bench | JVM op | keys | engine | JVM | speedup (rounds min–max) | target | |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    used = []
    for bench, jvm_op, infix in ENGINE_PAIRS:
        for n in SIZES:
            ek, jk, sk = engine_keys(bench, jvm_op, infix, n)
            used += [ek, jk, sk]
            s = value(results, sk)
            entry = results.get(sk) or {}
            spread = (f" ({entry['min']:.2f}–{entry['max']:.2f})"
                      if s is not None and "min" in entry and "max" in entry else "")
            shown = NOT_MEASURED if s is None else f"{s:.2f}×{spread}"
            L.append(f"| `{bench}/{n}` | `{jvm_op}` | {n:,} | {ns(value(results, ek))} | "
                     f"{ns(value(results, jk))} | {shown} | ≥ {ENGINE_TARGET:.1f}× | "
                     f"{verdict(s, '>=', ENGINE_TARGET)} |")
    L.append("")
    rounds = {(results.get(k) or {}).get("n") for k in used if k.endswith("_speedup_vs_jvm") and k in results}
    rounds.discard(None)
    if rounds:
        L.append(f"Paired rounds per figure: {', '.join(map(str, sorted(rounds)))}. " + source_line(results, used))
    else:
        L.append(source_line(results, used))
    return L


def machine_line(e, what):
    if not isinstance(e, dict):
        return f"- {what}: {NOT_MEASURED}."
    parts = [e.get("cpu") or "CPU not recorded",
             f"{e['nproc']} cores (`nproc`)" if e.get("nproc") else "cores not recorded",
             f"{e['mem_gib']} GiB RAM" if e.get("mem_gib") else "memory not recorded",
             f"kernel `{e['kernel']}`" if e.get("kernel") else "kernel not recorded"]
    tools = [f"`{e[k]}`" for k in ("rustc", "jvm") if e.get(k)]
    if e.get("kafka_clients"):
        tools.append(f"kafka-clients {e['kafka_clients']}")
    extra = []
    if e.get("loadavg_end"):
        extra.append(f"load average {e['loadavg_end']} at its end")
    if e.get("paired_s") is not None:
        extra.append(f"paired rounds {num(e['paired_s'])} s" + (f" ({e['paired_rounds']} rounds)" if e.get("paired_rounds") else ""))
    if e.get("wall_min") is not None:
        extra.append(f"about {num(e['wall_min'])} min wall for the whole run (builds excluded)")
    else:
        extra.append("wall time of the whole run not recorded")
    if e.get("label"):
        extra.append(f"label \"{e['label']}\"")
    line = f"- {what}, {e.get('measured', '?')} (`{e.get('command', '?')}`): " + ", ".join(parts)
    if tools:
        line += "; " + ", ".join(tools)
    if extra:
        line += "; " + ", ".join(extra)
    return line + "."


def block_hostile(results):
    L = ["| hostile manifest | wall time | bound | peak RSS | bound | |",
         "| --- | ---: | ---: | ---: | ---: | --- |"]
    for key, (max_s, max_rss) in HOSTILE_BOUNDS.items():
        s, rss = value(results, f"hostile_{key}_s"), value(results, f"hostile_{key}_rss_mib")
        ok = None if s is None or rss is None else (s <= max_s and rss <= max_rss)
        mark = "–" if ok is None else ("met" if ok else "**not met**")
        L.append(f"| {HOSTILE_WHAT[key]} | {num(s)} s | ≤ {max_s} s | {num(rss)} MiB | ≤ {max_rss} MiB | {mark} |")
    L.append("")
    L.append(source_line(results, [f"hostile_{k}_{x}" for k in HOSTILE_BOUNDS for x in ("s", "rss_mib")]))
    return L


def block_peer(results):
    L = ["| what | key | ours | Reloader | ratio | n | goal | |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for what, key, op, goal, text in PEER_GOALS:
        e = results.get(key) or {}
        v = e.get("value")
        mark = "–" if op is None else verdict(v, op, goal)
        L.append(f"| {what} | `{key}` | {num(e.get('ours'))} | {num(e.get('reloader'))} | {num(v)} | "
                 f"{num(e.get('n'))} | {text} | {mark} |")
    c = results.get("initial_sync_fraction_of_ceiling") or {}
    L.append(f"| Initial sync, configs/s: operator vs the minimal client | `initial_sync_fraction_of_ceiling` | "
             f"{num(c.get('ours_configs_per_s'))} | {num(c.get('ceiling_configs_per_s'))} (client) | "
             f"{num(c.get('value'))} | {num(c.get('n'))} | ≥ {CEILING_GOAL} | "
             f"{verdict(c.get('value'), '>=', CEILING_GOAL)} |")
    small = results.get("initial_sync_fraction_of_small_status_ceiling")
    if small:
        L.append(f"| …against the client writing a small status ({num(small.get('status_bytes'))} B, not the "
                 f"operator's {num(c.get('status_bytes'))} B) | `initial_sync_fraction_of_small_status_ceiling` | "
                 f"{num(small.get('ours_configs_per_s'))} | {num(small.get('ceiling_configs_per_s'))} (client) | "
                 f"{num(small.get('value'))} | {num(small.get('n'))} | – | – |")
    L.append("")
    keys = [k for _, k, *_ in PEER_GOALS] + ["initial_sync_fraction_of_ceiling"]
    if small:
        keys.append("initial_sync_fraction_of_small_status_ceiling")
    L.append(source_line(results, keys))
    return L


def block_machine(results):
    return [machine_line(results.get("run_scale"), "Scale run"),
            machine_line(results.get("run_engine_vs_jvm"), "Engine-vs-JVM run")]


BLOCKS = {"machine": block_machine, "scale": block_scale, "engine": block_engine,
          "hostile": block_hostile, "peer": block_peer}


def render(doc, results):
    """The page with every generated block rewritten from results; raises on a broken marker."""
    lines = doc.split("\n")
    out, i, seen = [], 0, []
    while i < len(lines):
        line = lines[i]
        m = BEGIN_RE.match(line)
        if not m:
            out.append(line)
            i += 1
            continue
        name = m.group(1)
        if name not in BLOCKS:
            raise SystemExit(f"render_table.py: unknown generated block {name!r}")
        try:
            end = lines.index(END, i + 1)
        except ValueError:
            raise SystemExit(f"render_table.py: block {name!r} has no {END!r}") from None
        out.append(line)
        out += BLOCKS[name](results)
        out.append(END)
        seen.append(name)
        i = end + 1
    missing = set(BLOCKS) - set(seen)
    if missing:
        raise SystemExit(f"render_table.py: the page has no block for {', '.join(sorted(missing))}")
    return "\n".join(out)


def update(json_path=DEFAULT_JSON, doc_path=DEFAULT_DOC):
    """Rewrites the generated blocks of doc_path from json_path; True if the page changed.
    The report scripts call this right after writing the JSON."""
    with open(json_path) as f:
        results = json.load(f)
    with open(doc_path) as f:
        doc = f.read()
    new = render(doc, results)
    if new == doc:
        return False
    with open(doc_path, "w") as f:
        f.write(new)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=DEFAULT_JSON)
    ap.add_argument("--doc", default=DEFAULT_DOC)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the page's generated parts differ from the JSON's")
    a = ap.parse_args()
    with open(a.json) as f:
        results = json.load(f)
    with open(a.doc) as f:
        doc = f.read()
    new = render(doc, results)
    if a.check:
        if new != doc:
            sys.stdout.writelines(difflib.unified_diff(
                doc.splitlines(True), new.splitlines(True), a.doc, a.doc + " (from " + a.json + ")"))
            print(f"{a.doc}: generated parts are stale; run e2e/bench/render_table.py", file=sys.stderr)
            return 1
        return 0
    if update(a.json, a.doc):
        print(f"render_table.py: rewrote the generated parts of {a.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
