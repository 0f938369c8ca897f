#!/usr/bin/env python3
"""Conformance check: runs Apache Kafka's own command-line tools with what the operator renders
and compares the configuration each Kafka client logs at construction with the merged values.

Run through conformance/run.sh (it fetches the jars and passes --jars). For each fixture in
tests/fixtures/conformance/*.yaml, and for every KafkaToolConfig of examples/ (rendered as one
set, as `render -f examples/` reads it):

  1. `kafka-config-operator render -o json`   -> the ConfigMap/Secret (files + tool.args),
     written to spec.output.mountPath (fixtures: under /tmp/kco-conformance/; examples: moved
     there, with the paths in tool.args and the files); Secrets listed in
     status.output.secretMounts are written where they would be mounted.
  2. `kafka-config-operator explain -o json`  -> the merged value of every key, per role.
  3. `kafka-config-operator validate -o json` -> the ForcedByTool warnings.
  4. `java -cp JARS/* <mainClass> <tool.args>` with stdin closed, until every client the tool
     builds before it needs a broker has logged its "<X>Config values:" block (or a time limit);
     `tool: client` builds its clients with ConstructClients.java.
  5. Every key the config sets (any layer but Kafka's defaults) is compared with the logged
     value, after normalising Kafka's rendering of types. A difference is explained only by a
     ForcedByTool warning for that key whose forced value is what Kafka logged (Modern); in
     Legacy, explain already shows the tool's forced values, so there is nothing to explain.
     Keys the config does not set are compared with Kafka's default from the catalogue too,
     minus the values a client derives at run time (listed in DERIVED with the reason).

Then the typed-validation differential (validators.py): values judged by Kafka's own
ConfigDef.parseValue and by the engine must get the same verdict.

Prints one line per fixture or example and `N passed, N failed`; exit 1 on any failure.
"""
import argparse
import base64
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

import yaml

import validators

MOUNT_ROOT = "/tmp/kco-conformance/"

# The header Kafka's AbstractConfig.logAll() prints: "<simple class name> values: ".
BLOCK_ROLE = {
    "ProducerConfig": "producer",
    "ConsumerConfig": "consumer",
    "ShareConsumerConfig": "share-consumer",
    "AdminClientConfig": "admin",
    # the servers: the broker's KafkaConfig, MirrorMaker 2's top-level MirrorMakerConfig
    "KafkaConfig": "broker",
    "MirrorMakerConfig": "mirror-maker",
}
HEADER = re.compile(r"\b(ProducerConfig|ConsumerConfig|ShareConsumerConfig|AdminClientConfig|KafkaConfig"
                    r"|MirrorMakerConfig) values: ?$")

# Which clients each tool builds before it needs a broker, in the order it builds them: the roles
# whose logged values can be checked without a cluster. Roles a tool builds only after talking to
# a broker are listed in NOT_COVERED with the reason (docs/conformance.md prints both).
CLIENTS = {
    "kafka-console-producer": ["producer"],
    "kafka-console-consumer": ["consumer"],
    "kafka-console-share-consumer": ["share-consumer"],
    "kafka-producer-perf-test": ["producer"],
    "kafka-consumer-perf-test": ["consumer"],
    "kafka-share-consumer-perf-test": ["share-consumer"],
    "kafka-verifiable-producer": ["producer"],
    "kafka-verifiable-consumer": ["consumer"],
    "kafka-verifiable-share-consumer": ["share-consumer", "admin"],
    "kafka-e2e-latency": ["consumer", "producer"],
    "kafka-streams-application-reset": ["admin"],
    "kafka-server": ["broker"],
    "connect-mirror-maker": ["mirror-maker"],
}
# What runs for a server tool instead of its mainClass. kafka.Kafka needs formatted storage and a
# controller quorum before it logs its KafkaConfig (tests/e2e_kafka.rs starts real brokers);
# `kafka-storage info -c FILE`, the tool an operator runs on the same server.properties before the
# first start, parses the file with the broker's own KafkaConfig, logs every value and writes
# nothing. MirrorMaker 2 runs as itself: it logs its MirrorMakerConfig before it needs a cluster.
SERVER_PROGRAM = {
    "kafka-server": ["kafka.tools.StorageTool", "info", "-c"],
}
NOT_COVERED = {
    "kafka-e2e-latency": {"admin": "the admin client is built only when consumer.listTopics() "
                          "(a broker round trip) says the topic is missing"},
    "kafka-streams-application-reset": {"consumer": "the consumer is built after the admin client "
                                        "has described the application's group on a broker"},
    "connect-mirror-maker": {"{cluster}.{producer,consumer,admin}": "MirrorMaker 2 builds its "
                             "per-cluster clients once the clusters answer; tests/e2e_kafka.rs "
                             "compares them with explain on two running clusters (\"Servers\" below)"},
}
ADMIN_TOOLS_DEFAULT = ["admin"]

# Where catalogue/tools.yaml's mainClass is not a class of the Kafka release the jars come from,
# the check fails (the catalogue is wrong for that release) and the values are still compared
# by running the class that release really has.
RELEASE_MAIN_CLASS = {
    "kafka-configs": "kafka.admin.ConfigCommand",  # kafka_2.13 up to 4.3.x; kafka-tools from 4.4.0
}

# Values a Kafka client derives while building its config (postProcessParsedConfig and friends),
# so the logged value of a key the config does NOT set may differ from the catalogue's default.
# key -> (roles, reason). Only consulted for keys nobody set.
DERIVED = {
    "client.id": (("consumer", "share-consumer", "producer"),
                  "ConsumerConfig/ProducerConfig.maybeOverrideClientId: consumer-<group>-<n>, "
                  "producer-<n> or producer-<transactional.id> when unset"),
    "enable.auto.commit": (("consumer",),
                           "ConsumerConfig.maybeOverrideEnableAutoCommit: false without group.id"),
    "enable.idempotence": (("producer",),
                           "ProducerConfig: false when acks/retries/max.in.flight are incompatible"),
    "acks": (("producer",), "ProducerConfig.parseAcks: logged as -1 for all"),
    "broker.id": (("broker",), "KafkaConfig: broker.id takes node.id's value (KRaft)"),
}

# Equivalent spellings Kafka normalises while parsing (value as given -> value as logged).
EQUIVALENT = {
    "acks": {"all": "-1"},  # ProducerConfig.parseAcks
}

# spec.output.mountPath's default (docs/api.md): examples written for it are moved under
# MOUNT_ROOT, tool.args and file paths with them.
DEFAULT_MOUNT_PATH = "/etc/kafka-config"

# `tool: client` has no command line: ConstructClients.java builds each role's client from its
# file the way an application does, passing serializers/deserializers in code when the file names
# none; those keys are then the application's, not a default to compare.
CLIENT_TOOL = "client"
APP_SUPPLIED = {"key.serializer", "value.serializer", "key.deserializer", "value.deserializer"}

# Examples whose tool is not run, and why (the table in docs/conformance.md lists them).
NOT_RUN = {
    "kafka-broker-api-versions": "builds its admin client through its own ConfigDef with logging "
                                 "off, so it logs nothing to compare",
}


def fail(msg):
    print(f"conformance: {msg}", file=sys.stderr)
    sys.exit(2)


# A thread that forks while another holds a stand-in script open for writing leaves that write
# descriptor open in its child until the child execs; exec'ing the script in that window fails
# with ETXTBSY ("Text file busy", seen in CI). Forks and script writes therefore never overlap.
SPAWN_LOCK = threading.Lock()


def spawn(cmd, **kw):
    with SPAWN_LOCK:
        return subprocess.Popen(cmd, **kw)


def run(cmd):
    with spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


# --- java.util.Properties.load, enough for what we render and what users write ---------------

def load_properties(text):
    lines = text.split("\n")
    out = {}
    i = 0
    logical = []
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not logical and (line == "" or line[0] in "#!"):
            continue
        # continuation: an odd number of trailing backslashes
        stripped = line.rstrip("\r")
        n = len(stripped) - len(stripped.rstrip("\\"))
        if n % 2 == 1:
            logical.append(stripped[:-1])
            continue
        logical.append(stripped)
        full = "".join(logical)
        logical = []
        k, v = split_kv(full)
        out[unescape(k)] = unescape(v)
    return out


def split_kv(s):
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = s[:i]
    rest = s[i:]
    rest = rest.lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def unescape(s):
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u":
                out.append(chr(int(s[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


# host:port in a bootstrap list, a URL or an argument; the host is what the JVM must resolve
HOST_PORT = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9.-]*):[0-9]+")

PROVIDER_REF = re.compile(r"\$\{(dir|file):([^}]*):([^:}]*)\}")


def resolve_providers(value):
    """${dir:PATH:KEY} (DirectoryConfigProvider) and ${file:PATH:KEY} (FileConfigProvider)."""
    if value is None:
        return None

    def sub(m):
        provider, path, key = m.groups()
        if provider == "dir":
            with open(os.path.join(path, key), encoding="utf-8") as f:
                return f.read()
        with open(path, encoding="latin-1") as f:
            return load_properties(f.read())[key]
    return PROVIDER_REF.sub(sub, value)


# --- catalogue ------------------------------------------------------------------------------

class Catalogue:
    def __init__(self, root):
        with open(os.path.join(root, "catalogue/kafka-configs.json")) as f:
            sets = json.load(f)["sets"]
        self.keys = {role: {k["name"]: k for k in sets[role]["keys"]}
                     for role in ("producer", "consumer", "share-consumer", "admin", "broker",
                                  "mirror-maker")}
        # ShareConsumerConfig parses (and logs) every ConsumerConfig key; the catalogue's
        # share-consumer set leaves out the ones a share consumer rejects when set (rejectedKeys).
        # Their logged value is still the consumer default.
        self.logged_only = {"share-consumer": {
            k: self.keys["consumer"][k] for k in sets["share-consumer"].get("rejectedKeys", [])}}
        with open(os.path.join(root, "catalogue/tools.yaml")) as f:
            self.tools = {t["name"]: t for t in yaml.safe_load(f)["tools"]}

    def case_insensitive(self, role, key):
        k = self.keys.get(role, {}).get(key)
        v = k and k["validator"]
        return bool(v) and v["kind"] == "caseInsensitiveValidString"

    def type_of(self, role, key):
        k = self.keys.get(role, {}).get(key)
        return k["type"] if k else None

    def forced_value(self, tool, role, key):
        """Value the tool forces for key: its `forced` entry, or the default of a flag option
        (a flag cannot carry any other value), or None."""
        t = self.tools[tool]
        forced = (t.get("forced") or {}).get(role, {})
        if key in forced:
            return str(forced[key])
        for o in t.get("options") or []:
            if o.get("key") == key and "flag" in o and role in o.get("roles", [role]):
                return str(o.get("default")) if o.get("default") is not None else None
        return None


# --- normalisation ----------------------------------------------------------------------------

HIDDEN = "[hidden]"


def norm_kafka(raw, typ):
    """Kafka's logged rendering -> comparable value."""
    if raw == "null":
        return None
    if raw == HIDDEN:
        return HIDDEN
    if typ == "LIST" or (raw.startswith("[") and raw.endswith("]") and typ is None):
        inner = raw[1:-1]
        return tuple(x for x in (s.strip() for s in inner.split(",")) if x != "") if inner else ()
    if typ == "CLASS" and raw.startswith("class "):
        return raw[len("class "):]
    if typ == "CLASS" and raw.startswith("interface "):
        return raw[len("interface "):]
    return norm_scalar(raw, typ)


def norm_scalar(v, typ):
    v = v.strip()  # ConfigDef.parseType trims every value before parsing it
    if typ in ("INT", "LONG", "SHORT"):
        try:
            return int(v.strip())
        except ValueError:
            return v
    if typ == "DOUBLE":
        try:
            return float(v.strip())
        except ValueError:
            return v
    if typ == "BOOLEAN":
        return v.strip().lower()
    if typ == "CLASS":
        return v.strip()
    return v


def norm_ours(value, typ, key):
    """A merged value (a .properties string) -> the value Kafka would log, as Kafka parses it."""
    if value is None:
        return None
    value = EQUIVALENT.get(key, {}).get(value, value)
    if typ == "PASSWORD":
        return HIDDEN
    if typ == "LIST":
        return tuple(x for x in (s.strip() for s in value.split(",")) if x != "")
    return norm_scalar(value, typ)


def show(v):
    if v is None:
        return "null"
    if isinstance(v, tuple):
        return ",".join(v)
    return str(v)


# --- one fixture ------------------------------------------------------------------------------

class Result:
    def __init__(self, label, tool, precedence, source="fixture"):
        self.fixture = label       # the fixture's name, or examples/<folder> (<namespace>/<name>)
        self.source = source       # "fixture" | "example"
        self.tool = tool
        self.precedence = precedence
        self.roles = []
        self.compared = 0          # keys the config sets, compared
        self.defaults = 0          # keys it does not set, compared with Kafka's default
        self.forced = []           # (role, key, ours, kafka) explained by ForcedByTool
        self.not_logged = []       # (role, key): set by us, not a key the client logs
        self.failures = []         # text
        self.rows = []             # (role, key, layer, ours, kafka) for every key set, compared
        self.skipped = None        # why the tool was not run (examples of server tools)
        self.refused = None        # hostile corpus: the reason it was refused before rendering
        self.seconds = 0.0
        self.log_tail = ""

    @property
    def ok(self):
        return not self.failures


def read_fixture(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ktcs = [d for d in docs if d.get("kind") == "KafkaToolConfig"]
    if len(ktcs) != 1:
        raise ValueError(f"{path}: exactly one KafkaToolConfig expected, found {len(ktcs)}")
    return docs, ktcs[0]


def secret_data(doc):
    data = {}
    for k, v in (doc.get("data") or {}).items():
        data[k] = base64.b64decode(v)
    for k, v in (doc.get("stringData") or {}).items():
        data[k] = str(v).encode()
    return data


# The launch line of docs/workloads.md, word for word but for the two paths: the mount path and
# the image's bin directory (apache/kafka: /opt/kafka/bin). `mapfile -t` reads tool.args one
# argument per line; "${A[@]}" passes each as one argument, with no word splitting or globbing.
LAUNCH = 'mapfile -t A < {mount}/tool.args && exec {bin}/{script} "${{A[@]}}"'
# The script of the apache/kafka image that starts each tool (default: <tool>.sh).
SCRIPT = {"kafka-server": "kafka-server-start.sh"}


def launch_line(tool, java, mount):
    """bash -c LAUNCH, with a bin directory whose <tool>.sh stands in for the image's script:
    it passes its arguments on untouched ("$@"), as kafka-run-class.sh does, to the tool's class."""
    bin_dir = os.path.join(mount, ".bin")
    os.makedirs(bin_dir, exist_ok=True)
    script = SCRIPT.get(tool, tool + ".sh")
    path = os.path.join(bin_dir, script)
    with SPAWN_LOCK:
        with open(path, "w") as f:
            f.write("#!/usr/bin/env bash\nexec " + " ".join(shlex.quote(w) for w in java) + ' "$@"\n')
        os.chmod(path, 0o755)
    return ["bash", "-c", LAUNCH.format(mount=shlex.quote(mount.rstrip("/")), bin=shlex.quote(bin_dir),
                                        script=script)]


def run_tool(java_cmd, expected, timeout, cwd):
    """Runs the tool; returns (blocks, log, reason). blocks: list of (role, {key: raw})."""
    proc = spawn(java_cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.STDOUT, text=True, encoding="utf-8",
                 errors="replace", cwd=cwd, start_new_session=True)
    blocks = []
    log = []
    state = {"timed_out": False}

    def kill():
        state["timed_out"] = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    current = None
    reason = None
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            log.append(line)
            if current is not None:
                if line.startswith("\t"):
                    k, _, v = line[1:].partition(" = ")
                    current[1][k] = v
                    continue
                blocks.append(current)
                current = None
                if len(blocks) >= len(expected):
                    reason = "all expected config blocks logged"
                    break
            m = HEADER.search(line)
            if m:
                current = (BLOCK_ROLE[m.group(1)], {})
        if current is not None:
            blocks.append(current)
    finally:
        timer.cancel()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
    if reason is None:
        reason = "time limit reached" if state["timed_out"] else f"tool exited with {proc.returncode}"
    return blocks, log, reason


class Job:
    """One KafkaToolConfig as the CLI rendered it: what run_job needs to run the real tool."""

    def __init__(self, label, source, ktc, files, status, merged, secrets):
        spec = ktc["spec"]
        self.label = label
        self.source = source
        self.spec = spec
        self.tool = spec["tool"]
        self.precedence = spec.get("precedence", "Modern")
        self.namespace = ktc["metadata"].get("namespace", "default")
        self.name = ktc["metadata"]["name"]
        self.files = files          # {file name: bytes} of the ConfigMap/Secret
        self.status = status        # status as `validate -o json` prints it
        self.merged = merged        # {role: {key: explain entry}}
        self.secrets = secrets      # {Secret name: manifest} of the config's namespace
        # Where a pod would mount the output (API default /etc/kafka-config) and where it is
        # written here: paths in tool.args and in the files are moved from one to the other.
        self.declared_mount = (spec.get("output") or {}).get("mountPath") or DEFAULT_MOUNT_PATH
        if self.declared_mount.startswith(MOUNT_ROOT):
            self.mount = self.declared_mount
        else:
            self.mount = os.path.join(MOUNT_ROOT, "examples", self.namespace, self.name)

    def remap(self, text):
        """A path under the declared mount path -> the same path where the files are written."""
        if text is None or self.mount == self.declared_mount:
            return text
        d = self.declared_mount.rstrip("/")
        if text == d:
            return self.mount
        return text.replace(d + "/", self.mount.rstrip("/") + "/")


def output_files(obj):
    files = {}
    for k, v in (obj.get("data") or {}).items():
        files[k] = base64.b64decode(v) if obj["kind"] == "Secret" else v.encode("utf-8")
    return files


def prepare_fixture(path, ctx):
    """Renders one fixture file: the Job of its KafkaToolConfig."""
    docs, ktc = read_fixture(path)
    spec = ktc["spec"]
    mount = (spec.get("output") or {}).get("mountPath", "")
    if not mount.startswith(MOUNT_ROOT):
        raise ValueError(f"spec.output.mountPath must be under {MOUNT_ROOT} (it is {mount!r})")
    b = ctx.binary
    r = run([b, "render", "-o", "json", "-f", path])
    if r.returncode != 0:
        raise RuntimeError(f"render failed: {r.stderr.strip()}")
    objects = [o for o in json.loads(r.stdout) if o.get("kind") in ("ConfigMap", "Secret")]
    if len(objects) != 1:
        raise RuntimeError(f"render: one ConfigMap/Secret expected, got {len(objects)}")
    v = run([b, "validate", "-o", "json", "-f", path])
    statuses = json.loads(v.stdout)
    status = next(s["status"] for s in statuses if s["kind"] == "KafkaToolConfig")
    e = run([b, "explain", "-o", "json", "-f", path])
    if e.returncode != 0:
        raise RuntimeError(f"explain failed: {e.stderr.strip()}")
    merged = {}
    for entry in json.loads(e.stdout):
        merged.setdefault(entry["role"], {})[entry["key"]] = entry
    secrets = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Secret"}
    name = os.path.splitext(os.path.basename(path))[0]
    return Job(name, "fixture", ktc, output_files(objects[0]), status, merged, secrets)


def example_manifests(folder):
    """Every YAML document under folder, read as the CLI reads -f FOLDER (recursive, .yaml/.yml),
    with the file it came from."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith((".yaml", ".yml")):
                path = os.path.join(dirpath, f)
                with open(path) as fh:
                    out += [(path, d) for d in yaml.safe_load_all(fh) if d]
    return out


def prepare_examples(ctx):
    """Renders examples/ as one set, as `render -f examples/` does (GlobalClientDefaults and
    Namespaces of one example apply to the others): a Job per KafkaToolConfig, or a Result saying
    why its tool is not run."""
    folder = os.path.join(ctx.root, "examples")
    b = ctx.binary
    manifests = example_manifests(folder)
    ktcs = {}
    for path, d in manifests:
        if d.get("kind") == "KafkaToolConfig":
            md = d["metadata"]
            ktcs[(md.get("namespace", "default"), md["name"])] = (path, d)
    secrets = {}
    for _, d in manifests:
        if d.get("kind") == "Secret":
            md = d["metadata"]
            secrets.setdefault(md.get("namespace", "default"), {})[md["name"]] = d
    r = run([b, "render", "-o", "json", "-f", folder])
    if r.returncode != 0:
        raise RuntimeError(f"render -f examples/ failed (exit {r.returncode}): {r.stderr.strip()}")
    objects = {(o["metadata"].get("namespace"), o["kind"], o["metadata"]["name"]): o
               for o in json.loads(r.stdout) if o.get("kind") in ("ConfigMap", "Secret")}
    v = run([b, "validate", "-o", "json", "-f", folder])
    statuses = {(s["metadata"].get("namespace"), s["metadata"]["name"]): s["status"]
                for s in json.loads(v.stdout) if s["kind"] == "KafkaToolConfig"}
    if set(statuses) != set(ktcs):
        raise RuntimeError(f"the CLI read other KafkaToolConfigs from examples/ than this harness: "
                           f"CLI {sorted(statuses)}, harness {sorted(ktcs)}")
    e = run([b, "explain", "-o", "json", "-f", folder])
    if e.returncode != 0:
        raise RuntimeError(f"explain -f examples/ failed: {e.stderr.strip()}")
    merged = {}
    for entry in json.loads(e.stdout):
        merged.setdefault((entry["namespace"], entry["name"]), {}) \
              .setdefault(entry["role"], {})[entry["key"]] = entry
    jobs, skipped = [], []
    for (ns, name), (path, ktc) in sorted(ktcs.items()):
        folder_name = os.path.relpath(os.path.dirname(path), ctx.root)
        label = f"{folder_name} ({ns}/{name})"
        tool = ktc["spec"]["tool"]
        why = NOT_RUN.get(tool)
        if why:
            res = Result(label, tool, ktc["spec"].get("precedence", "Modern"), "example")
            res.skipped = why
            skipped.append(res)
            continue
        out = (statuses[(ns, name)].get("output") or {})
        obj = objects.get((ns, out.get("kind"), out.get("name")))
        if obj is None:
            res = Result(label, tool, ktc["spec"].get("precedence", "Modern"), "example")
            res.failures.append(f"render -f examples/ wrote no output for {ns}/{name} "
                                f"(status: {json.dumps(statuses[(ns, name)].get('conditions'))})")
            skipped.append(res)
            continue
        jobs.append(Job(label, "example", ktc, output_files(obj), statuses[(ns, name)],
                        merged.get((ns, name), {}), secrets.get(ns, {})))
    return jobs, skipped


def check_fixture(path, ctx, tamper=None):
    name = os.path.splitext(os.path.basename(path))[0]
    t0 = time.monotonic()
    try:
        job = prepare_fixture(path, ctx)
    except Exception as e:  # a broken fixture is a failure, with the reason
        _, ktc = read_fixture(path)
        res = Result(name, ktc["spec"]["tool"], ktc["spec"].get("precedence", "Modern"))
        res.failures.append(f"{type(e).__name__}: {e}")
        res.seconds = time.monotonic() - t0
        return res
    return check_job(job, ctx, tamper, t0)


EXPECT = "conformance.kafkaconfig.dev/expect"


def check_hostile(path, ctx):
    """A fixture of the hostile corpus (tests/fixtures/conformance-hostile, issue 23). Its
    annotation says what must happen: `refused` -- render and validate exit 1, nothing is
    rendered, and Valid is False with a named reason; `renders` -- it is checked like any
    fixture: the real tool, started with our launcher line (one argument per line, no word
    splitting), logs exactly explain's values."""
    name = "hostile/" + os.path.splitext(os.path.basename(path))[0]
    t0 = time.monotonic()
    _, ktc = read_fixture(path)
    spec = ktc["spec"]
    expect = ((ktc.get("metadata") or {}).get("annotations") or {}).get(EXPECT)
    if expect == "renders":
        res = check_fixture(path, ctx)
        res.fixture = name
        return res
    res = Result(name, spec["tool"], spec.get("precedence", "Modern"))
    if expect != "refused":
        res.failures.append(f"annotation {EXPECT} must be refused or renders, not {expect!r}")
        return res
    r = run([ctx.binary, "render", "-o", "json", "-f", path])
    v = run([ctx.binary, "validate", "-o", "json", "-f", path])
    if r.returncode != 1 or v.returncode != 1:
        res.failures.append(f"expected to be refused: render exited {r.returncode}, validate {v.returncode}")
    else:
        rendered = [o for o in json.loads(r.stdout or "[]") if o.get("kind") in ("ConfigMap", "Secret")]
        status = next((s["status"] for s in json.loads(v.stdout) if s["kind"] == "KafkaToolConfig"), {})
        valid = next((c for c in status.get("conditions", []) if c["type"] == "Valid"), {})
        if rendered:
            res.failures.append(f"refused, yet render printed {len(rendered)} object(s)")
        if valid.get("status") != "False" or not valid.get("reason"):
            res.failures.append(f"refused without Valid=False and a reason: {valid}")
        res.refused = f"{valid.get('reason')}: {valid.get('message', '')[:120]}"
    res.seconds = time.monotonic() - t0
    return res


def check_job(job, ctx, tamper=None, t0=None):
    t0 = t0 if t0 is not None else time.monotonic()
    res = Result(job.label, job.tool, job.precedence, job.source)
    try:
        _check(job, res, ctx, tamper)
    except Exception as e:  # a broken render or tool run is a failure, with the reason
        res.failures.append(f"{type(e).__name__}: {e}")
    res.seconds = time.monotonic() - t0
    return res


def _check(job, res, ctx, tamper=None):
    tool = job.tool
    precedence = job.precedence
    cat = ctx.catalogue
    if tool == CLIENT_TOOL:
        roles = list(job.spec.get("roles") or [])
        main_class = None
    else:
        if tool not in cat.tools or not cat.tools[tool].get("mainClass"):
            raise ValueError(f"tool {tool} has no mainClass in catalogue/tools.yaml")
        main_class = cat.tools[tool]["mainClass"]
        if main_class not in ctx.classes:
            res.failures.append(f"catalogue/tools.yaml: mainClass {main_class} is not a class of the "
                                f"Kafka {os.path.basename(os.path.normpath(ctx.jars))} jars"
                                + (f" (this release has {RELEASE_MAIN_CLASS[tool]})"
                                   if RELEASE_MAIN_CLASS.get(tool) in ctx.classes else ""))
            main_class = RELEASE_MAIN_CLASS.get(tool)
            if main_class not in ctx.classes:
                return
    status = job.status
    warnings = status.get("warnings") or []
    merged = job.merged
    files = {k: (job.remap(v.decode("latin-1")).encode("latin-1") if k.endswith(".properties") else v)
             for k, v in job.files.items()}

    # Write the output where the pod would mount it, and the deferred Secrets under it.
    mount = job.mount
    shutil.rmtree(mount, ignore_errors=True)
    os.makedirs(mount)
    for k, data in files.items():
        with open(os.path.join(mount, k), "wb") as f:
            f.write(data)
    for sm in (status.get("output") or {}).get("secretMounts") or []:
        target = job.remap(sm["mountPath"])
        if not target.startswith(MOUNT_ROOT):
            raise ValueError(f"secret mount {sm['mountPath']} is outside {MOUNT_ROOT}")
        os.makedirs(target, exist_ok=True)
        for k, data in secret_data(job.secrets[sm["secret"]]).items():
            with open(os.path.join(target, k), "wb") as f:
                f.write(data)

    if tamper:  # self-test: change one rendered value behind explain's back
        fname, line = tamper
        with open(os.path.join(mount, fname), "ab") as f:
            f.write(line.encode())
        files[fname] = files[fname] + line.encode()
    rendered_files = {k: load_properties(d.decode("latin-1"))
                      for k, d in files.items() if k.endswith(".properties")}

    if tool == CLIENT_TOOL:
        # No command line: construct each role's client from its file, as an application would
        # (conformance/ConstructClients.java), serializers supplied in code when the file has none.
        expected = [r for r in roles if r in BLOCK_ROLE.values()]
        args = []
        for role in expected:
            args += [role, os.path.join(mount, f"{role}.properties")]
        program = [os.path.join(ctx.here, "ConstructClients.java")]
    else:
        args = files["tool.args"].decode("utf-8").split("\n")
        if args and args[-1] == "":
            args.pop()
        args = [job.remap(a) for a in args]
        expected = CLIENTS.get(tool, ADMIN_TOOLS_DEFAULT)
        program = SERVER_PROGRAM.get(tool, [main_class])
        # tool.args as the pod would mount it (paths moved with the mount), one argument a line.
        with open(os.path.join(mount, "tool.args"), "w", encoding="utf-8") as f:
            f.write("".join(a + "\n" for a in args))
    res.roles = list(expected)
    # Host names in the config (examples name kafka-0.kafka, ...) resolve to 127.0.0.1 for this
    # JVM only: clients refuse bootstrap servers that do not resolve ("No resolvable bootstrap
    # urls"), and nothing listens there, so nothing connects.
    hosts = sorted({m.group(1) for text in args + [v for f in rendered_files.values() for v in f.values()]
                    for m in HOST_PORT.finditer(text)})
    hosts_file = os.path.join(mount, ".hosts")
    with open(hosts_file, "w") as f:
        f.write("".join(f"127.0.0.1 {h}\n" for h in hosts))
    java = ["java", "-XX:TieredStopAtLevel=1", "-Dfile.encoding=UTF-8", "-Djdk.net.hosts.file=" + hosts_file,
            "-Dsun.stdout.encoding=UTF-8", "-Dsun.stderr.encoding=UTF-8", "-XX:+UseSerialGC", "-Xshare:auto",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-Dorg.slf4j.simpleLogger.logFile=System.out",
            "-Djava.io.tmpdir=" + mount,
            "-cp", ctx.classpath] + program
    if tool == CLIENT_TOOL:
        command = java + args
    else:
        command = launch_line(tool, java, mount)
    blocks, log, reason = run_tool(command, expected, ctx.timeout, mount)
    res.log_tail = "\n".join(log[-25:])
    got = [role for role, _ in blocks]
    if got != expected:
        errors = [ln for ln in log if re.search(r"(Exception|Error)\b.*: ", ln) and not ln.startswith("\t")]
        detail = errors[0].strip() if errors else "last lines: " + " / ".join(log[-5:])
        res.failures.append(f"{tool}: expected {expected} config blocks, Kafka logged {got} "
                            f"({reason}): {detail}")
        return

    for role, logged in blocks:
        ours = merged.get(role, {})
        role_file = rendered_files.get(f"{role}.properties") or rendered_files.get("client.properties") or {}
        for key, entry in sorted(ours.items()):
            if entry["layer"] == "kafkaDefaults":
                continue
            typ = cat.type_of(role, key)
            if key not in logged:
                res.not_logged.append((role, key))
                continue
            value = entry["value"]
            if (value == "[redacted]" or value.startswith("[from Secret ")) and typ != "PASSWORD":
                # explain redacts Secret-sourced values: take the rendered one, resolving the
                # config-provider references Kafka resolves (output.secrets: Deferred)
                value = resolve_providers(role_file.get(key))
            value = job.remap(value)
            want = norm_ours(value, typ, key)
            have = norm_kafka(logged[key], typ)
            if cat.case_insensitive(role, key) and isinstance(want, str) and isinstance(have, str):
                # ConfigDef.CaseInsensitiveValidString: CLASSIC and classic are the same value
                want, have = want.upper(), have.upper()
            res.compared += 1
            res.rows.append((role, key, entry["layer"], show(want), logged[key]))
            if want == have:
                continue
            forced = cat.forced_value(tool, role, key) if tool != CLIENT_TOOL else None
            warned = any(w.get("reason") == "ForcedByTool" and w.get("key") == key
                         and w.get("role") in (role, None) for w in warnings)
            if (precedence == "Modern" and warned and forced is not None
                    and norm_ours(forced, typ, key) == have):
                res.forced.append((role, key, show(want), logged[key]))
                continue
            why = " (ForcedByTool warned, but Kafka logged another value)" if warned else ""
            res.failures.append(f"{tool} {role} {key}: ours={show(want)!s} kafka={logged[key]}{why}")

        # Keys nobody set: Kafka's default, unless the client derives it or the tool sets it.
        t = cat.tools.get(tool) or {}
        forced_here = {k: str(v) for k, v in ((t.get("forced") or {}).get(role) or {}).items()}
        dynamic = set(((t.get("dynamic") or {}).get(role) or {}).keys())
        for key, raw in sorted(logged.items()):
            if key in ours and ours[key]["layer"] != "kafkaDefaults":
                continue
            meta = cat.keys[role].get(key) or cat.logged_only.get(role, {}).get(key)
            if meta is None:
                res.failures.append(f"{tool} {role} {key}: logged by Kafka, not in the catalogue")
                continue
            if key in role_file:
                # rendered into the file, yet explain does not report it
                typ = meta["type"]
                fv = role_file[key]
                same = norm_ours(fv, typ, key) == norm_kafka(raw, typ)
                res.failures.append(f"{tool} {role} {key}: rendered in the file ({fv}) but absent "
                                    f"from explain; kafka={raw}"
                                    + (" (the file value took effect)" if same else ""))
                continue
            if key in dynamic:
                continue
            if tool == CLIENT_TOOL and key in APP_SUPPLIED:
                continue
            if key in forced_here:
                # The catalogue says the tool forces this value: Kafka must have logged it.
                typ = meta["type"]
                want, have = norm_ours(forced_here[key], typ, key), norm_kafka(raw, typ)
                res.defaults += 1
                if want != have:
                    res.failures.append(f"{tool} {role} {key} (not set by the config): the catalogue "
                                        f"says the tool forces {forced_here[key]}, kafka={raw}")
                continue
            d = DERIVED.get(key)
            if d and role in d[0]:
                continue
            typ = meta["type"]
            want = norm_ours(meta["default"], typ, key) if meta["default"] is not None else None
            have = norm_kafka(raw, typ)
            if typ == "PASSWORD" and meta["default"] is None:
                want = None
            if cat.case_insensitive(role, key) and isinstance(want, str) and isinstance(have, str):
                want, have = want.upper(), have.upper()
            res.defaults += 1
            if want != have:
                res.failures.append(f"{tool} {role} {key} (not set by the config): "
                                    f"Kafka default per catalogue={show(want)} kafka={raw}")


class Ctx:
    pass


def self_test(fixdir, ctx):
    """The harness must see a value that differs from explain: append linger.ms=12345 to the
    rendered producer.properties of one fixture (after rendering, before running Kafka)."""
    r = check_fixture(os.path.join(fixdir, "console-producer-modern.yaml"), ctx,
                      tamper=("producer.properties", "linger.ms=12345\n"))
    caught = any(" linger.ms: ours=5 kafka=12345" in f for f in r.failures)
    if not caught:
        fail("self-test: a rendered linger.ms changed behind explain's back was not reported:\n  "
             + "\n  ".join(r.failures or ["(no failure)"]))
    print("self-test: a rendered value changed after rendering (linger.ms=12345) is reported")


def main_classes(jars):
    """Every class name in the Kafka jars (kafka-tools, kafka_2.13)."""
    import zipfile
    names = set()
    for j in os.listdir(jars):
        if j.startswith(("kafka-tools-", "kafka_2.13-", "connect-mirror-")) and j.endswith(".jar"):
            with zipfile.ZipFile(os.path.join(jars, j)) as z:
                for n in z.namelist():
                    if n.endswith(".class") and "$" not in n:
                        names.add(n[:-len(".class")].replace("/", "."))
    return names


def replace_between(text, start, end, body, path):
    if start not in text or end not in text:
        fail(f"{path} lacks the {start} / {end} markers")
    pre, rest = text.split(start, 1)
    _, post = rest.split(end, 1)
    return pre + start + "\n" + body + end + post


def write_doc(root, results, elapsed, cmdline, kafka_version, vrep):
    path = os.path.join(root, "docs/conformance.md")
    with open(path) as f:
        text = f.read()
    rows = ["| tool | fixture or example | precedence | roles checked | keys set, compared | unset keys vs default | forced by tool (warned) | result |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(results, key=lambda r: (r.source != "fixture", r.tool, r.fixture)):
        where = f"`{r.fixture}.yaml`" if r.source == "fixture" else f"`{r.fixture}`"
        if r.fixture.startswith("hostile/"):
            where = f"`conformance-hostile/{r.fixture[len('hostile/'):]}.yaml`"
        if r.skipped:
            rows.append(f"| `{r.tool}` | {where} | {r.precedence} | - | - | - | - | not run: {r.skipped} |")
            continue
        if r.refused is not None and r.ok:
            reason = r.refused.split(":", 1)[0]
            rows.append(f"| `{r.tool}` | {where} | {r.precedence} | - | - | - | - | "
                        f"pass: refused before rendering (`{reason}`) |")
            continue
        forced = "<br>".join(f"`{k}` ({role}): ours `{o}`, Kafka `{kv}`" for role, k, o, kv in r.forced) or "-"
        result = "pass" if r.ok else "**FAIL**: " + "<br>".join(
            f.replace("|", "\\|").replace("\n", " ") for f in r.failures)
        rows.append(f"| `{r.tool}` | {where} | {r.precedence} | {', '.join(r.roles)} | "
                    f"{r.compared} | {r.defaults} | {forced} | {result} |")
    ran = [r for r in results if not r.skipped]
    passed = sum(r.ok for r in ran)
    examples = sum(1 for r in ran if r.source == "example")
    hostile = sum(1 for r in ran if r.fixture.startswith("hostile/"))
    not_run = sum(1 for r in results if r.skipped)
    uncovered = ["", "Roles a covered tool builds only after it has talked to a broker (not checked):", ""]
    for tool, roles in sorted(NOT_COVERED.items()):
        for role, why in roles.items():
            uncovered.append(f"- `{tool}` `{role}`: {why}.")
    body = "\n".join(rows) + (f"\n\n{passed} passed, {len(ran) - passed} failed ({len(ran) - examples - hostile} "
                              f"fixtures, {hostile} of the hostile corpus, {examples} examples"
                              + (f"; {not_run} examples not run" if not_run else "") + ") "
                              f"(`{cmdline}`, Kafka {kafka_version}, {elapsed:.0f} s on the 2-core dev "
                              f"machine).\n") + "\n".join(uncovered) + "\n"
    text = replace_between(text, "<!-- conformance:table:start -->", "<!-- conformance:table:end -->",
                           body, path)
    text = replace_between(text, "<!-- validators:table:start -->", "<!-- validators:table:end -->",
                           validators_doc(vrep), path)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def validators_doc(vrep):
    lines = ["| validator kind | keys | values tried | of them through the CLI |",
             "| --- | --- | --- | --- |"]
    for kind, (keys, n, cli) in sorted(vrep.kinds.items()):
        lines.append(f"| `{kind}` | {keys} | {n} | {cli} |")
    lines += ["", "Keys whose validator is a Kafka class or lambda outside `ConfigDef`'s own kinds, one "
              "row each:", "",
              "| catalogue set | key | values tried | through the CLI | result |",
              "| --- | --- | --- | --- | --- |"]
    for (s, k), (n, cli, disagree) in sorted(vrep.keys.items(), key=lambda kv: (validators.SET_ORDER.index(kv[0][0]), kv[0][1])):
        if not vrep.key_kinds.get((s, k)):
            continue  # only keys with a validator Kafka implements outside ConfigDef's own kinds
        result = "agree" if not disagree else f"**{disagree} differ**"
        lines.append(f"| {s} | `{k}` | {n} | {cli or '-'} | {result} |")
    lines += ["", f"{vrep.cases} values of {len(vrep.keys)} keys in all (every key with a validator, "
              f"plus type-parsing probes), {vrep.cli_compared} of them through `validate -o json`; "
              f"{len(vrep.failures)} disagreements; committed verdicts "
              + ("up to date." if not vrep.committed_drift else "**out of date**."), "",
              "Validators the engine does not check (no value that would tell Kafka and the engine apart is tried):",
              "", "| catalogue sets | key | Kafka validator | why not checked |", "| --- | --- | --- | --- |"]
    grouped = {}
    for s, k, where, why in vrep.unchecked:
        grouped.setdefault((k, where, why), []).append(s)
    for (k, where, why), sets in sorted(grouped.items()):
        lines.append(f"| {', '.join(sets)} | `{k}` | `{where}` | {why} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--jars", required=True)
    ap.add_argument("--mirror-jars", help="connect-mirror and connect-mirror-client (fetch.sh mirror)")
    ap.add_argument("--bin", default=os.environ.get("KCO_BIN"))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", "2")))
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--write-doc", action="store_true")
    ap.add_argument("--write-verdicts", action="store_true",
                    help=f"rewrite {validators.VERDICTS} from what Kafka answers now")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--no-self-test", action="store_true",
                    help="skip the check that a tampered rendered file is caught")
    ap.add_argument("fixtures", nargs="*", help="fixture names or paths (default: all, plus examples/ "
                    "and the validators)")
    a = ap.parse_args()

    if a.write_doc and a.fixtures:
        fail("--write-doc runs every fixture; do not name fixtures")
    ctx = Ctx()
    ctx.root = a.root
    ctx.here = os.path.dirname(os.path.abspath(__file__))
    ctx.binary = a.bin or os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(a.root, "target"),
                                         "debug/kafka-config-operator")
    if not os.access(ctx.binary, os.X_OK):
        fail(f"{ctx.binary} not found: run `cargo build` or set KCO_BIN")
    ctx.jars = a.jars
    ctx.timeout = a.timeout
    ctx.catalogue = Catalogue(a.root)
    ctx.classes = main_classes(a.jars) | (main_classes(a.mirror_jars) if a.mirror_jars else set())
    # MirrorMaker 2's jars (fetch.sh mirror) beside the others
    ctx.classpath = os.pathsep.join(os.path.join(d, "*") for d in (a.jars, a.mirror_jars) if d)

    fixdir = os.path.join(a.root, "tests/fixtures/conformance")
    if a.fixtures:
        paths = [f if os.path.exists(f) else os.path.join(fixdir, f + ("" if f.endswith(".yaml") else ".yaml"))
                 for f in a.fixtures]
    else:
        paths = sorted(os.path.join(fixdir, f) for f in os.listdir(fixdir) if f.endswith(".yaml"))

    t0 = time.monotonic()
    if not a.fixtures and not a.no_self_test:
        self_test(fixdir, ctx)
    results = []
    hostile_dir = os.path.join(a.root, "tests/fixtures/conformance-hostile")
    hostile = [] if a.fixtures else sorted(
        os.path.join(hostile_dir, f) for f in os.listdir(hostile_dir) if f.endswith(".yaml"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = [pool.submit(check_fixture, p, ctx) for p in paths]
        futures += [pool.submit(check_hostile, p, ctx) for p in hostile]
        if not a.fixtures:
            try:
                jobs, skipped = prepare_examples(ctx)
            except Exception as e:
                r = Result("examples/", "-", "-", "example")
                r.failures.append(f"{type(e).__name__}: {e}")
                jobs, skipped = [], [r]
            futures += [pool.submit(check_job, j, ctx) for j in jobs]
            results += skipped
        for fut in futures:
            results.append(fut.result())
    for r in sorted(results, key=lambda r: (r.source != "fixture", r.tool, r.fixture)):
        if r.skipped:
            print(f"skip {r.tool:34s} {r.fixture}: {r.skipped}")
            continue
        status = "ok  " if r.ok else "FAIL"
        if r.refused is not None:
            print(f"{status} {r.tool:34s} {r.fixture:40s} refused before rendering: {r.refused}"
                  f" ({r.seconds:.1f} s)", flush=True)
            for f in r.failures:
                print(f"     {f}")
            continue
        extra = f", {len(r.forced)} forced by tool (warned)" if r.forced else ""
        nl = f", {len(r.not_logged)} not logged" if r.not_logged else ""
        print(f"{status} {r.tool:34s} {r.fixture:40s} {r.precedence:6s} "
              f"{'+'.join(r.roles):24s} {r.compared:3d} keys set, {r.defaults:3d} defaults{extra}{nl}"
              f" ({r.seconds:.1f} s)", flush=True)
        for f in r.failures:
            print(f"     {f}")
        if a.verbose:
            for role, k, layer, o, kv in r.rows:
                print(f"     {role} {k} [{layer}]: ours={o} kafka={kv}")
            for role, k, o, kv in r.forced:
                print(f"     forced: {role} {k}: ours={o} kafka={kv}")
            for role, k in r.not_logged:
                print(f"     not logged by the client: {role} {k}")

    vrep = None
    validator_failures = 0
    if not a.fixtures:
        m2 = os.environ.get("CONFORMANCE_M2") or os.path.join(a.root, ".cache/m2")
        with open(os.path.join(a.root, "catalogue/kafka-configs.json")) as f:
            catalogue_version = json.load(f)["kafkaVersion"]
        try:
            vrep = validators.run(a.root, ctx.binary, m2, os.path.join(MOUNT_ROOT, "validators"),
                                  catalogue_version, write_verdicts=a.write_verdicts)
        except Exception as e:
            fail(f"validators: {type(e).__name__}: {e}")
        for f in vrep.failures + vrep.committed_drift:
            print(f"FAIL validators: {f}")
        validator_failures = len(vrep.failures) + len(vrep.committed_drift)
        print(f"validators: {vrep.cases} values of {len(vrep.keys)} keys judged by Kafka's "
              f"ConfigDef.parseValue, {vrep.cli_compared} of them also by `validate -o json`: "
              f"{len(vrep.failures)} disagreements"
              + ("" if not vrep.committed_drift else "; committed verdicts out of date")
              + ("" if not a.write_verdicts else f"; wrote {validators.VERDICTS}"))
    elapsed = time.monotonic() - t0
    ran = [r for r in results if not r.skipped]
    passed = sum(r.ok for r in ran)
    failed = len(ran) - passed
    if a.write_doc:
        write_doc(a.root, results, elapsed, "conformance/run.sh --write-doc",
                  os.path.basename(os.path.normpath(a.jars)), vrep)
    print(f"{passed} passed, {failed} failed" + (f", validators: {validator_failures} failed" if vrep else ""))
    sys.exit(1 if failed or validator_failures else 0)


if __name__ == "__main__":
    main()
