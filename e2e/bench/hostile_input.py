#!/usr/bin/env python3
"""Time and memory bounds of hostile input (issue 24), measured on the real binary.

One object must not be able to take the operator down: each case is a manifest a hostile tenant
could apply, run through `kafka-config-operator validate -f` under /usr/bin/time, and held to a
bound on wall time and peak RSS (the same engine runs in the operator). The refusal itself is
checked by tests/bad_input.rs; this harness checks what it costs.

    e2e/bench/hostile_input.py                  # measure, check the bounds, write docs/bench/results.json
                                                # and the `hostile` block of docs/BENCHMARKS.md
    NO_WRITE=1 e2e/bench/hostile_input.py       # measure and check only (what CI runs)
    KCO_BIN=path/to/kafka-config-operator ...   # the binary (default: the release musl build, else
                                                # target/release, else target/debug)

Exit 1 when a bound is exceeded or a case does not end as expected.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import render_table  # noqa: E402  (the bounds live there, with every other target)


def binary():
    if os.environ.get("KCO_BIN"):
        return os.environ["KCO_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    for sub in ("x86_64-unknown-linux-musl/release", "release", "debug"):
        path = os.path.join(target, sub, "kafka-config-operator")
        if os.access(path, os.X_OK):
            return path
    sys.exit("hostile_input.py: no kafka-config-operator binary; build one or set KCO_BIN")


def config(name, spec_lines):
    return ("apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\n"
            f"metadata: {{name: {name}, namespace: ns}}\nspec:\n" + "".join(f"  {l}\n" for l in spec_lines))


def amplification():
    big = "x" * 100_000
    many = "${env.BIG}" * 10_000
    return config("amplified", [
        "tool: client", "roles: [producer]",
        f"env: [{{name: BIG, value: '{big}'}}]",
        f"properties: {{producer: {{bootstrap.servers: 'k:9092', custom.big: '{many}'}}}}",
    ]), 1


def policy_patterns():
    # 20,000 exact and prefix patterns against 10,000 keys: not O(patterns x keys).
    patterns = [f"'deny.{i}.*'" if i % 2 else f"deny.exact.{i}" for i in range(20_000)]
    gcd = ("apiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {name: wide}\n"
           f"spec:\n  overridePolicy: {{mode: Denylist, keys: [{', '.join(patterns)}]}}\n")
    keys = "\n".join(f"      custom.k{i}: v" for i in range(10_000))
    return gcd + "---\n" + config("many-keys", [
        "tool: client", "roles: [producer]", "properties:", "  producer:",
        "    bootstrap.servers: 'k:9092'",
    ]) + keys + "\n", 0


def long_keys():
    # Two 450 KB keys: a valid 0.9 MB output; YAML explicit keys (simple keys stop at 1024).
    lines = ["tool: client", "roles: [producer]", "properties:", "  producer:",
             "    bootstrap.servers: 'k:9092'"]
    for c in "ab":
        lines += [f"    ? custom.{c * 450_000}", f"    : {c}"]
    return config("long-keys", lines), 0


def long_tool_name():
    return config("long-tool", [f"tool: {'t' * 1_000_000}"]), 1


CASES = [
    ("amplification", "10,000 references to a 100 KB value", amplification),
    ("policy", "20,000 override-policy patterns x 10,000 keys", policy_patterns),
    ("long_keys", "two 450 KB keys (valid, 0.9 MB output)", long_keys),
    ("long_tool", "a 1 MB tool name", long_tool_name),
]


def measure(bin_path, text, workdir, name):
    path = os.path.join(workdir, f"{name}.yaml")
    with open(path, "w") as f:
        f.write(text)
    timing = os.path.join(workdir, f"{name}.time")
    r = subprocess.run(["/usr/bin/time", "-o", timing, "-f", "%e %M", bin_path, "validate", "-o", "json",
                        "-f", path], capture_output=True)
    with open(timing) as f:
        last = f.read().strip().splitlines()[-1]
    seconds, kib = last.split()
    return r.returncode, float(seconds), int(kib) / 1024, len(r.stdout) + len(r.stderr)


def main():
    bin_path = binary()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True).stdout.strip())
    failures, results = [], {}
    with tempfile.TemporaryDirectory() as work:
        for key, what, make in CASES:
            text, expected_exit = make()
            code, seconds, rss, out_bytes = measure(bin_path, text, work, key)
            max_s, max_rss = render_table.HOSTILE_BOUNDS[key]
            ok = code == expected_exit and seconds <= max_s and rss <= max_rss
            print(f"{'ok  ' if ok else 'FAIL'} {what:48s} exit {code} (want {expected_exit}), "
                  f"{seconds:.2f} s (≤ {max_s}), {rss:.1f} MiB (≤ {max_rss}), output {out_bytes} bytes")
            if not ok:
                failures.append(key)
            for suffix, value, unit in (("s", seconds, "s"), ("rss_mib", rss, "MiB")):
                results[f"hostile_{key}_{suffix}"] = {
                    "value": round(value, 3), "unit": unit, "n": 1,
                    "command": "e2e/bench/hostile_input.py", "binary": os.path.relpath(bin_path, ROOT)
                    if bin_path.startswith(ROOT) else os.path.basename(bin_path),
                    "measured": now, "commit": commit, "tree_dirty": dirty}
    if not os.environ.get("NO_WRITE"):
        with open(render_table.DEFAULT_JSON) as f:
            all_results = json.load(f)
        all_results.update(results)
        with open(render_table.DEFAULT_JSON, "w") as f:
            json.dump(all_results, f, indent=2, sort_keys=True)
            f.write("\n")
        render_table.update()
    if failures:
        print(f"hostile_input.py: bounds exceeded or wrong outcome: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
