#!/usr/bin/env python3
"""Turns e2e/bench/peer/run.py's summary into docs/bench/results.json keys (issue 30).

    report.py --summary S                       # print the ratios
    report.py --summary S --check-complete      # smoke run: fail unless every phase measured something
    report.py --summary S --json results.json --command CMD   # also write the keys

Keys (ours / Reloader's, each with its n, both raw values and the command):
  idle_rss_ratio_vs_reloader, rss_10k_ratio_vs_reloader (largest N measured), peak_rss_..._vs_reloader,
  sync_cpu_ratio_vs_reloader, edit_to_rollout_p50_ratio_vs_reloader, edit_to_rollout_p99_ratio_vs_reloader,
  burst_to_rollout_p99_ratio_vs_reloader, writes_per_edit_ours / _reloader;
  initial_sync_fraction_of_ceiling (operator configs/s / the minimal client's).
"""
import argparse
import datetime
import json
import subprocess
import sys


def ratio_entry(ours, theirs, n, unit, command, what):
    return {"value": round(ours / theirs, 3) if ours is not None and theirs else None, "ours": ours,
            "reloader": theirs, "n": n, "unit": unit, "what": what, "command": command}


def entries(s, command):
    out = {}
    idle = s.get("idle") or {}
    if "ours" in idle and "reloader" in idle:
        out["idle_rss_ratio_vs_reloader"] = ratio_entry(
            idle["ours"]["rss_mib"], idle["reloader"]["rss_mib"], 0, "MiB",
            command, "RSS after 10 s on a world of ballast only")
    sizes = sorted((int(k), v) for k, v in (s.get("sizes") or {}).items() if "ours" in v and "reloader" in v)
    if sizes:
        n, r = sizes[-1]
        o, t = r["ours"], r["reloader"]
        key = "10k" if n == 10000 else f"{n}"
        out[f"rss_{key}_ratio_vs_reloader"] = ratio_entry(
            o["after_sync"]["rss_mib"], t["after_sync"]["rss_mib"], n, "MiB", command, "RSS after the sync")
        out[f"peak_rss_{key}_ratio_vs_reloader"] = ratio_entry(
            o["sync"]["peak_rss_mib"], t["sync"]["peak_rss_mib"], n, "MiB", command, "peak RSS during the initial list")
        out["sync_cpu_ratio_vs_reloader"] = ratio_entry(
            o["sync"]["cpu_s"], t["sync"]["cpu_s"], n, "CPU-s", command,
            "CPU from start until quiet on a current world (ours also verifies every config: it renders "
            "and hashes each one; Reloader only lists)")
        for phase, name in (("edits", "edit"), ("burst", "burst")):
            for p in ("p50", "p99"):
                out[f"{name}_to_rollout_{p}_ratio_vs_reloader"] = ratio_entry(
                    o[phase][f"{p}_ms"], t[phase][f"{p}_ms"], n, "ms", command,
                    f"{'paced' if phase == 'edits' else 'burst'} edit PATCH -> Deployment template change "
                    f"(ours: source ConfigMap -> render, validate, output write, rollout; Reloader: the "
                    f"mounted ConfigMap -> rollout)")
            out[f"{name}_writes_per_edit_vs_reloader"] = ratio_entry(
                o[phase]["tool_writes_per_edit"], t[phase]["tool_writes_per_edit"], n, "writes/edit", command,
                "writes by the tool's identity per edit (audit log); ours writes the output, the "
                "template and the status")
    c = s.get("ceiling")
    if c:
        out["initial_sync_fraction_of_ceiling"] = {
            "value": round(c["fraction"], 3), "ours_configs_per_s": c["operator_configs_per_s"],
            "ceiling_configs_per_s": c["client_configs_per_s"], "n": c["configs"], "command": command,
            "status_bytes": (c.get("status_bytes") or {}).get("operator"),
            "what": "operator configs synced/s (start to last Ready) / the minimal client's (output apply + "
                    "status apply per config, same concurrency, replaying the operator's output and status "
                    "bytes)"}
        if c.get("client_small_status"):
            out["initial_sync_fraction_of_small_status_ceiling"] = {
                "value": round(c["fraction_of_small_status_client"], 3),
                "ours_configs_per_s": c["operator_configs_per_s"],
                "ceiling_configs_per_s": c["client_small_status"]["configs_per_s"], "n": c["configs"],
                "status_bytes": c["client_small_status"].get("status_bytes"), "command": command,
                "what": "the same, against the client writing a made-up output and a small status "
                        "(hash, output, Valid, Ready) instead of the operator's"}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--summary", required=True)
    ap.add_argument("--json")
    ap.add_argument("--command", default="e2e/bench/peer.sh")
    ap.add_argument("--check-complete", action="store_true")
    ap.add_argument("--commit", help="the commit the operator was built from (default: HEAD)")
    a = ap.parse_args()
    with open(a.summary) as f:
        s = json.load(f)
    got = entries(s, a.command)
    for k, v in sorted(got.items()):
        print(f"{k:45} {v['value']}  (ours {v.get('ours', v.get('ours_configs_per_s'))}, "
              f"theirs {v.get('reloader', v.get('ceiling_configs_per_s'))}, n {v['n']})")
    if a.check_complete:
        missing = [k for k, v in got.items() if v["value"] is None]
        for n, r in (s.get("sizes") or {}).items():
            for tool in ("ours", "reloader"):
                for phase in ("edits", "burst"):
                    ph = (r.get(tool) or {}).get(phase) or {}
                    if ph.get("observed") != ph.get("edits"):
                        missing.append(f"N={n} {tool} {phase}: {ph.get('observed')}/{ph.get('edits')} observed")
        if len(got) < 10 or missing:
            print(f"peer smoke run incomplete: {len(got)} keys; {missing}", file=sys.stderr)
            return 1
        print("peer smoke run complete")
    if a.json:
        with open(a.json) as f:
            results = json.load(f)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                            text=True).stdout.strip()
        for k, v in got.items():
            results[k] = dict(v, measured=stamp, commit=commit)
        with open(a.json, "w") as f:
            json.dump(dict(sorted(results.items())), f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
