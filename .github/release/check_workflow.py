"""Structural checks of .github/workflows/release.yml that actionlint cannot make: the workflow
builds what the repository's tests build, the way they build it. Run by e2e/chart/test.sh; prints
one `ok     - …` / `FAILED - …` line per check (e2e/lib.sh's format).

    python3 .github/release/check_workflow.py
"""
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
failed = 0


def check(name, ok, detail=""):
    global failed
    if ok:
        print(f"ok     - release.yml: {name}")
    else:
        failed += 1
        print(f"FAILED - release.yml: {name}{': ' + detail if detail else ''}")


def runs(job):
    return "\n".join(step.get("run", "") for step in job.get("steps", []))


def final_stage(path):
    """The instructions of a Dockerfile's last stage, comments and continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    start = max(i for i, l in enumerate(lines) if l.startswith("FROM "))
    return lines[start:]


workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
# PyYAML reads the key `on` as True.
trigger = workflow.get("on", workflow.get(True, {}))
check("runs on tags v*.*.* only", trigger == {"push": {"tags": ["v*.*.*"]}}, repr(trigger))
jobs = workflow["jobs"]
check("jobs versions, binary, image, chart", set(jobs) == {"versions", "binary", "image", "chart"}, repr(sorted(jobs)))
check("the versions job runs .github/release/versions.sh", "bash .github/release/versions.sh" in runs(jobs["versions"]))

# The binary: the Dockerfile's cargo command, natively on each architecture.
dockerfile = (ROOT / "Dockerfile").read_text()
command = re.search(r"cargo build [^\n\\&]*", dockerfile).group(0).strip()
targets = {m["target"] for m in jobs["binary"]["strategy"]["matrix"]["include"]}
check("binary targets are x86_64 and aarch64 musl",
      targets == {"x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"}, repr(targets))
check(f"binary is built with the Dockerfile's command ({command}, target from the matrix)",
      command.replace("x86_64-unknown-linux-musl", '"$TARGET"') in runs(jobs["binary"]), runs(jobs["binary"]))
check("e2e/chart/image-build-check.sh (CI's image build stage) runs the same command",
      'cargo build --release --locked --target "$target"' in (ROOT / "e2e/chart/image-build-check.sh").read_text())

# The image: every architecture, from the release Dockerfile, whose stage is the Dockerfile's.
push = next(s for s in jobs["image"]["steps"] if str(s.get("uses", "")).startswith("docker/build-push-action"))
platforms = set(push["with"]["platforms"].split(","))
check("the image is multi-arch (linux/amd64, linux/arm64)", platforms == {"linux/amd64", "linux/arm64"}, repr(platforms))
check("the image is built from .github/release/Dockerfile", push["with"]["file"] == ".github/release/Dockerfile")
release, repo = final_stage(ROOT / ".github/release/Dockerfile"), final_stage(ROOT / "Dockerfile")
same = lambda stage: [l for l in stage if not l.startswith(("COPY ", "ARG "))]
check("the release image's stage is the Dockerfile's final stage but for COPY", same(release) == same(repo),
      f"{same(release)} != {same(repo)}")
check("the image job may write packages, nothing else", jobs["image"].get("permissions") == {"contents": "read", "packages": "write"})

# The chart: an OCI artifact, and an install.yaml naming the released image.
chart = runs(jobs["chart"])
check("the chart is pushed as an OCI artifact", re.search(r'helm push \S+ "oci://', chart) is not None, chart)
check("install.yaml comes from scripts/gen-install.sh with the released image",
      "scripts/gen-install.sh" in chart and "image.repository=$REGISTRY/$IMAGE_NAME" in chart)
check("top-level permissions are read-only", workflow.get("permissions") == {"contents": "read"})
unpinned = [s["uses"] for j in jobs.values() for s in j.get("steps", []) if "uses" in s and "@" not in s["uses"]]
check("every action is pinned to a version", not unpinned, repr(unpinned))
sys.exit(1 if failed else 0)
