#!/usr/bin/env python3
"""Paired, interleaved rounds of the engine against the JVM (issue 7's ratio, made steadier).

Starts the engine half (benches/engine_paired.rs) and the JVM half (`JvmConfigBench --serve`)
as long-lived processes, waits until both have warmed up, then runs ROUNDS rounds. A round times
every (pair, size) once on each side, back to back, alternating which side goes first (ABBA), so
both sides of one pair are measured seconds apart under the same machine load. Only one side runs
at a time: the other waits on its stdin. Writes every round's two medians to --out (JSON); the
report takes the median over rounds of each side and of the per-round speedups.
"""
import argparse
import json
import shlex
import subprocess
import sys
import time

SIZES = [20, 200, 5000]
# engine op (benches/engine.rs) ↔ JVM op (JvmConfigBench)
PAIRS = [("evaluate_and_render", "pipeline"), ("parse", "load"), ("store", "store")]


class Half:
    def __init__(self, name, cmd, log):
        self.name = name
        self.proc = subprocess.Popen(shlex.split(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, text=True, bufsize=1)
        self.expect("ready")

    def expect(self, word):
        line = self.proc.stdout.readline()
        if line.strip() != word:
            sys.exit(f"[paired] {self.name}: expected {word!r}, got {line!r} (exit {self.proc.poll()})")

    def measure(self, op, n, millis, batches):
        self.proc.stdin.write(f"{op} {n} {millis} {batches}\n")
        line = self.proc.stdout.readline()
        try:
            result = json.loads(line)
        except ValueError:
            sys.exit(f"[paired] {self.name}: no result for {op} {n}: {line!r} (exit {self.proc.poll()})")
        if "median_ns" not in result:
            sys.exit(f"[paired] {self.name}: {op} {n}: {result}")
        return result["median_ns"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine-cmd", required=True)
    ap.add_argument("--jvm-cmd", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--millis", type=int, default=1000, help="measured time per side per case")
    ap.add_argument("--batches", type=int, default=5, help="batches per measurement (median taken)")
    ap.add_argument("--log", required=True, help="file for both halves' stderr")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    started = time.time()
    with open(a.log, "w") as log:
        engine = Half("engine", a.engine_cmd, log)
        jvm = Half("jvm", a.jvm_cmd, log)
        print(f"[paired] both halves ready after {time.time() - started:.0f} s; "
              f"{a.rounds} rounds of {len(PAIRS) * len(SIZES)} cases", file=sys.stderr)
        results = []
        case = 0
        for r in range(a.rounds):
            for engine_op, jvm_op in PAIRS:
                for n in SIZES:
                    engine_first = case % 4 in (0, 3)  # ABBA over consecutive cases
                    case += 1
                    if engine_first:
                        e = engine.measure(engine_op, n, a.millis, a.batches)
                        j = jvm.measure(jvm_op, n, a.millis, a.batches)
                    else:
                        j = jvm.measure(jvm_op, n, a.millis, a.batches)
                        e = engine.measure(engine_op, n, a.millis, a.batches)
                    results.append({"round": r, "engine_op": engine_op, "jvm_op": jvm_op, "n": n,
                                    "first": "engine" if engine_first else "jvm",
                                    "engine_ns": e, "jvm_ns": j})
            done = [x for x in results if x["round"] == r and x["n"] == 200
                    and x["engine_op"] == "evaluate_and_render"][0]
            print(f"[paired] round {r + 1}/{a.rounds}: evaluate_and_render/200 "
                  f"{done['jvm_ns'] / done['engine_ns']:.2f}x", file=sys.stderr)
        engine.close()
        jvm.close()
    with open(a.out, "w") as f:
        json.dump({"rounds": a.rounds, "millis": a.millis, "batches": a.batches,
                   "seconds": round(time.time() - started, 1), "results": results}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
