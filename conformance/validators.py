"""Differential check of typed validation: for every key of the catalogue that has a validator
(and a few without, for type parsing), a handful of good and bad values get a verdict from Kafka
itself and from our engine, and the two must agree.

- Kafka: catalogue/generator's ValidatorOracle runs `ConfigDef.parseValue` (what
  `ConfigDef.parse` runs per key: parseType, ValidList de-duplication, the validator) on the
  key's real ConfigDef, from the Kafka jars the catalogue is generated from.
- Engine, end to end: `kafka-config-operator validate -o json` over one KafkaToolConfig per value,
  for the sets a role reads (producer, consumer, share-consumer, admin, broker, mirror-maker).
- Engine, every set: tests/typed_validation.rs runs `check_value` over the committed Kafka
  verdicts (tests/fixtures/conformance/validator-verdicts.json); here those are compared with
  what Kafka says now, so the committed file cannot drift from Kafka.

Keys whose validator the engine deliberately does not check, and why, are in UNCHECKED (and in
docs/conformance.md); they get no value that would tell the two apart.
"""
import base64
import json
import os
import shutil
import subprocess

import yaml

VERDICTS = "tests/fixtures/conformance/validator-verdicts.json"

# Sets in the order cases are made: a key whose definition (type and validator) repeats in a later
# set is tested once, in the first set; the sets a role reads come first so that the CLI sees them.
# controller is the broker's ConfigDef (catalogue: "sameAs": "broker").
SET_ORDER = ["producer", "consumer", "share-consumer", "admin", "broker", "mirror-maker", "topic",
             "streams", "connect-worker", "connect-worker-standalone", "mirror-source",
             "mirror-checkpoint", "mirror-heartbeat"]

# set -> (tool, role) of a KafkaToolConfig whose validation reads that set
ROLE_OF_SET = {
    "producer": ("client", "producer"),
    "consumer": ("client", "consumer"),
    "share-consumer": ("client", "share-consumer"),
    "admin": ("client", "admin"),
    "broker": ("kafka-server", "broker"),
    "mirror-maker": ("connect-mirror-maker", "mirror-maker"),
}

# Validators the engine deliberately leaves unchecked: (kind, class or definedIn, description
# prefix or None) -> why. Values that would tell Kafka and the engine apart are not generated.
UNCHECKED = [
    ("other", "org.apache.kafka.connect.util.ConcreteSubClassValidator", None,
     "needs the class itself: whether it is a concrete subclass depends on the worker's plugin path"),
    ("other", "org.apache.kafka.connect.util.InstantiableClassValidator", None,
     "needs the class itself: whether it has a public no-argument constructor depends on the plugin path"),
    ("other", "org.apache.kafka.connect.runtime.ConnectorConfig$PluginVersionValidator", None,
     "a Maven version range (maven-artifact's VersionRange and ComparableVersion ordering); "
     "connector-level keys are not validated by the engine (MirrorMaker 2's connector keys are "
     "checked against mirror-maker's set only)"),
    ("lambda", "org.apache.kafka.connect.runtime.distributed.DistributedConfig",
     "Any KeyGenerator algorithm",
     "depends on the security providers of the JVM the Connect worker runs in"),
    ("lambda", "org.apache.kafka.connect.runtime.distributed.DistributedConfig",
     "Any MAC algorithm",
     "depends on the security providers of the JVM the Connect worker runs in"),
    ("lambda", "org.apache.kafka.connect.runtime.distributed.DistributedConfig",
     "A list of one or more MAC algorithms",
     "only 'at least one' is checked; whether each algorithm exists depends on the worker JVM's "
     "security providers"),
]


# Structured kinds the generator gives to Kafka validators that are not ConfigDef's own classes.
OUTSIDE_CONFIGDEF = {"autoOffsetReset", "throttledReplicaList", "quorumVoters",
                     "quorumBootstrapServers", "restListeners", "responseHttpHeaders", "lambda",
                     "other"}


def unchecked_reason(v):
    for kind, where, prefix, why in UNCHECKED:
        if v.get("kind") != kind:
            continue
        if (v.get("class") or v.get("definedIn")) != where:
            continue
        if prefix is None or (v.get("description") or "").startswith(prefix):
            return why
    return None


def walk(v):
    """The validator and, for a composite, every part."""
    if not v:
        return
    yield v
    for part in v.get("validators") or []:
        yield from walk(part)


def num(x, typ):
    if typ == "DOUBLE":
        return repr(float(x))
    return str(int(x))


# --- values ---------------------------------------------------------------------------------

PARSE_PROBES = {
    "INT": ["+5", " 7\t", "0x10", "1_000", "\u0663", "\uff15", "2147483647", "2147483648",
            "-2147483648", "-", "", "1.0", "1e3"],
    "LONG": ["+5", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
             "\u0663\u0660", "0x1", ""],
    "SHORT": ["32767", "32768", "-32768", "+1", "1.0"],
    "DOUBLE": ["1.5", "1.5f", "1.5D", "0x1p3", "0x1.8p1", "0x1", "Infinity", "-Infinity", "inf",
               "NaN", "nan", ".5", "5.", "1e3", "1e", "1.0e+3", "", "1,5", " 2.5 ", "1.5e3d"],
    "BOOLEAN": ["true", "TRUE", "False", " true ", "yes", "1", "", "fal\u017fe", "true\u0001",
                "true\u00a0"],
    "STRING": ["anything", "", "\u0001x\u0001", " padded "],
    "LIST": ["a,b", "", "a,,b", "a,a", " a , b ", ","],
}

LAMBDA_VALUES = {
    "org.apache.kafka.common.record.internal.CompressionType$1":
        ["-1", "0", "1", "9", "10", "-2", "x"],
    "org.apache.kafka.connect.runtime.TopicCreationConfig":
        ["-1", "0", "1", "3", "-2", "32767", "32768"],
    "org.apache.kafka.connect.runtime.ConnectorConfig":
        ["a", "a,b", "a,a", "", "a,,b", "a,,b,"],
    "org.apache.kafka.streams.StreamsConfig":
        ["all", "none", "all,none", "reuse.ktable.source.topics,merge.repartition.topics",
         "merge.repartition.topics,merge.repartition.topics", ",", "", "bogus", "none,", "ALL",
         "single.store.self.join , all"],
}
CONNECT_PROTOCOL = ["eager", "SESSIONED", "Compatible", "default", "", "\u017fessioned",
                    "se\u00dfioned"]
VERIFICATION_ALGORITHMS = ["HmacSHA256", "HmacSHA256,HmacSHA1", ""]

KIND_VALUES = {
    "autoOffsetReset": [
        "latest", "earliest", "none", "LATEST", "by_duration", "by_duration:", "by_duration:PT1H",
        "by_duration:P1D", "by_duration:P1DT2H3M4.5S", "by_duration:-PT1H", "by_duration:PT-1H",
        "by_duration:pt1h", "by_duration:PT", "by_duration:P", "by_duration:PT1.S",
        "by_duration:PT0S", "by_duration:PT1,5S", "by_duration:P1W", "by_duration: PT1H",
        "by_duration:PT1H2H", "by_duration:PT2M1H", "by_duration:PT-0.5S", "by_duration:-PT-1S",
        "by_duration:+P1D", "by_duration:P9223372036854775807D",
        "by_duration:PT9223372036854775807S", "by_duration:-PT9223372036854775808S",
        "by_duration:PT1.0000000001S", "by_duration:PT1.123456789S", "BY_DURATION:PT1H",
        "bogus", ""],
    "throttledReplicaList": [
        "", "*", "0:1", "0:1,1:2", "0:1 , 1:2", "*,0:1", "0", "a:1", "0:1:2", ",", " * ", "0:1,",
        "0:-1", "*,", "\u0663:1"],
    "quorumVoters": [
        "", "1@localhost:9093", "1@localhost:9093,2@h2:9093", "1@[::1]:9093", "1@localhost",
        "x@localhost:9093", "1@localhost:99999", "1@localhost:65535", "1@localhost:2147483648",
        "1@@h:1", "1@h:1@", "@h:1", "1@:9093", "1@http://h:1", "1@h_x:1", "1@h/x:1", "-1@h:1",
        "1@0.0.0.0:9093", "1@h:1,,2@h:2", "\u0661@h:1", "1 @h:1", "1@h:1,1@h:2", "1@[h:1",
        "1@h]:1"],
    "quorumBootstrapServers": [
        "", "h:9093", "h:9093,h2:9094", "h", ":9093", "[::1]:9093", "h:99999", "h:0", "h:",
        "h:9093,", "http://h:1", "h x:1", "a://b://c:1", "h:09093"],
    "restListeners": [
        "http://localhost:8083", "http://a:1,https://b:2", "", "http://a:1,", "a,,b",
        "http://a:1,\u0001", "anything"],
    "responseHttpHeaders": [
        "", "set X-Frame-Options:DENY", "add Cache-Control: no-cache", "SET X:1",
        "setDate Expires:31540000000", "ADDDATE X:1", "bogus X:1", "set X", "set X:1:2",
        "set :1", "set X Y:1", "set X:", "\"set X:a,b\"", "set X:1,add Y:2", "set X:1,,add Y:2",
        "set X:1,", "set\tX:1", "set X:1, bogus Y:2", "\"set X:1\",\"add Y:\\\"2\\\"\"",
        "set X\u2028:1", "set X\u0085Y:1", "set  X:1"],
}


def values_for(key):
    """The values to try for one key, or [] when its validator is deliberately unchecked."""
    typ = key["type"]
    v = key["validator"]
    out = []
    for part in walk(v):
        kind = part["kind"]
        if unchecked_reason(part):
            if part.get("description", "").startswith("A list of one or more MAC"):
                out += VERIFICATION_ALGORITHMS
            continue
        if kind == "range":
            lo, hi = part.get("min"), part.get("max")
            if lo is not None:
                out += [num(lo, typ), num(lo - 1, typ)]
            if hi is not None:
                out += [num(hi, typ), num(hi + 1, typ)]
            out.append("x")
        elif kind == "validString":
            for s in part["values"]:
                out.append(s)
                if s.upper() != s:
                    out.append(s.upper())
            out += ["bogus", ""]
        elif kind == "caseInsensitiveValidString":
            for s in part["values"]:
                out.append(s.lower())
            first = part["values"][0]
            out.append(first[:1].lower() + first[1:])
            with_s = next((s for s in part["values"] if "S" in s), None)
            if with_s:  # LATIN SMALL LETTER LONG S upper-cases to S in Java and in Rust
                out.append(with_s.lower().replace("s", "\u017f", 1))
            out += ["bogus", ""]
        elif kind == "validList":
            vals = part["values"]
            if vals:
                out += vals[:4] + [",".join(vals), f"{vals[0]},{vals[0]}", "",
                                   f"{vals[0]},,{vals[-1]}", f"{vals[0]},bogus", vals[0].upper(),
                                   f" {vals[0]} , {vals[-1]} "]
            else:
                out += ["a", "a,b", "a,a", "", "a,,b", "a,", " a , b "]
        elif kind == "nonEmptyString":
            out += ["x", "", "   "]
        elif kind == "nonEmptyStringWithoutControlChars":
            out += ["x", "", "a\u0007b", "a\u0085b", "a\u0001", "a\u00a0b"]
        elif kind == "nonNullValidator":
            out += ["x", ""]
        elif kind == "listSize":
            n = part["maxSize"]
            out += [",".join(f"t{i}" for i in range(n)), ",".join(f"t{i}" for i in range(n + 1))]
        elif kind == "lambda":
            where = part.get("definedIn")
            if where == "org.apache.kafka.connect.runtime.distributed.DistributedConfig":
                out += CONNECT_PROTOCOL
            else:
                out += LAMBDA_VALUES.get(where, [])
        elif kind in KIND_VALUES:
            out += KIND_VALUES[kind]
    seen = set()
    return [x for x in out if not (x in seen or seen.add(x))]


def make_cases(catalogue_path):
    """[(set, key, value)] in a stable order."""
    with open(catalogue_path) as f:
        sets = json.load(f)["sets"]
    cases = []
    seen = set()
    probed = {}  # type -> number of keys without a validator that got the parse probes
    for set_name in SET_ORDER:
        for key in sets[set_name]["keys"]:
            if key["type"] in ("CLASS", "PASSWORD"):
                continue  # CLASS: whether the class exists depends on the classpath (docs)
            identity = (key["name"], key["type"], json.dumps(key["validator"], sort_keys=True))
            if identity in seen:
                continue
            seen.add(identity)
            if key["validator"]:
                values = values_for(key)
            elif set_name in ROLE_OF_SET and probed.get(key["type"], 0) < 2:
                probed[key["type"]] = probed.get(key["type"], 0) + 1
                values = PARSE_PROBES.get(key["type"], [])
            else:
                continue
            cases += [(set_name, key["name"], value) for value in values]
    return cases


# --- Kafka ----------------------------------------------------------------------------------

def build_oracle(root, m2):
    """Compiles catalogue/generator (Maven, warm: seconds) and returns the java command."""
    gen = os.path.join(root, "catalogue/generator")
    target = os.path.join(gen, "target")
    os.makedirs(target, exist_ok=True)
    cp_file = os.path.join(target, "oracle-classpath.txt")
    log = os.path.join(target, "oracle-mvn.log")
    with open(log, "w") as out:
        r = subprocess.run(["mvn", "-B", "-f", os.path.join(gen, "pom.xml"), f"-Dmaven.repo.local={m2}",
                            "compile", "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}"],
                           stdout=out, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        with open(log) as f:
            raise RuntimeError("building catalogue/generator for the validator oracle failed:\n" + f.read()[-3000:])
    with open(cp_file) as f:
        cp = os.path.join(target, "classes") + ":" + f.read().strip()
    return ["java", "-Djava.io.tmpdir=/tmp", "-Dfile.encoding=UTF-8", "-Duser.language=en",
            "-Duser.country=US", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
            "-Dorg.slf4j.simpleLogger.logFile=System.err", "-cp", cp,
            "io.kafkaconfigoperator.catalogue.ValidatorOracle"]


def kafka_verdicts(java_cmd, cases):
    lines = "".join(f"{s}\t{k}\t{base64.b64encode(v.encode()).decode()}\n" for s, k, v in cases)
    r = subprocess.run(java_cmd, input=lines.encode(), capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("ValidatorOracle failed: " + r.stderr.decode(errors="replace")[-3000:])
    out = r.stdout.decode().splitlines()
    if len(out) != len(cases):
        raise RuntimeError(f"ValidatorOracle answered {len(out)} of {len(cases)} cases")
    verdicts = []
    for (s, k, v), line in zip(cases, out):
        if line == "missing":
            raise RuntimeError(f"ValidatorOracle: {s} has no key {k}")
        verdict, _, why = line.partition("\t")
        why = base64.b64decode(why).decode() if why else ""
        # "ConfigException: Invalid value V for configuration K: reason" -> "reason"
        prefix = f"ConfigException: Invalid value {v} for configuration {k}: "
        verdicts.append((verdict, why[len(prefix):] if why.startswith(prefix) else why))
    return verdicts


# --- the engine through the CLI -----------------------------------------------------------------

def engine_verdicts(binary, cases, workdir):
    """{case index: 'accept'|'reject', message} for the cases whose set a role reads."""
    docs, index = [], {}
    for i, (s, k, v) in enumerate(cases):
        if s not in ROLE_OF_SET:
            continue
        tool, role = ROLE_OF_SET[s]
        name = f"v{i}"
        spec = {"tool": tool, "properties": {role: {k: v}}}
        if tool != "connect-mirror-maker":
            spec["roles"] = [role]
        docs.append({"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                     "metadata": {"name": name, "namespace": "validators"}, "spec": spec})
        index[name] = (i, role, k)
    # the CLI reads at most 1,024 documents per file: several files in one folder
    path = os.path.join(workdir, "validator-cases")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for n in range(0, len(docs), 500):
        with open(os.path.join(path, f"cases-{n // 500:03d}.yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump_all(docs[n:n + 500], f, allow_unicode=False, default_flow_style=False,
                               default_style="\"")  # every scalar quoted: 1e3 stays text
    r = subprocess.run([binary, "validate", "-o", "json", "-f", path], capture_output=True, text=True)
    try:
        statuses = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"validate -o json over the validator cases: {e}: {r.stderr[-2000:]}")
    out = {}
    for st in statuses:
        name = st["metadata"]["name"]
        if name not in index:
            continue
        i, role, key = index[name]
        valid = next((c for c in st["status"]["conditions"] if c["type"] == "Valid"), None)
        message = (valid or {}).get("message", "")
        marker = f"InvalidValue: properties.{role}: {key}="
        if marker in message:
            start = message.index(marker)
            out[i] = ("reject", message[start:].split("; InvalidValue: ")[0])
        else:
            out[i] = ("accept", "")
    missing = [n for n, (i, _, _) in index.items() if i not in out]
    if missing:
        raise RuntimeError(f"validate -o json did not report {len(missing)} validator cases, e.g. {missing[:3]}")
    return out


# --- the committed verdicts ---------------------------------------------------------------------

def verdict_file_text(kafka_version, cases, verdicts):
    lines = ['{', f'  "kafkaVersion": {json.dumps(kafka_version)},',
             '  "generatedBy": "conformance/run.sh --write-verdicts (Kafka: ConfigDef.parseValue through '
             'catalogue/generator ValidatorOracle)",',
             '  "cases": [']
    rows = []
    for (s, k, v), (verdict, why) in zip(cases, verdicts):
        rows.append("    " + json.dumps({"set": s, "key": k, "value": v, "kafka": verdict, "why": why},
                                        ensure_ascii=True))
    lines.append(",\n".join(rows))
    lines += ['  ]', '}', '']
    return "\n".join(lines)


class Report:
    def __init__(self):
        self.cases = 0
        self.keys = {}            # (set, key) -> [cases, engine compared, disagreements]
        self.failures = []        # text
        self.cli_compared = 0
        self.committed_drift = []
        self.unchecked = []       # (set, key, Kafka class, why)
        self.key_kinds = {}       # (set, key) -> True when a Kafka validator outside ConfigDef's own
        self.kinds = {}           # validator kind -> [keys, values, values through the CLI]


def run(root, binary, m2, workdir, kafka_version, write_verdicts=False):
    rep = Report()
    cat_path = os.path.join(root, "catalogue/kafka-configs.json")
    cases = make_cases(cat_path)
    rep.cases = len(cases)
    java_cmd = build_oracle(root, m2)
    kafka = kafka_verdicts(java_cmd, cases)
    engine = engine_verdicts(binary, cases, workdir)
    for i, ((s, k, v), (kv, kwhy)) in enumerate(zip(cases, kafka)):
        row = rep.keys.setdefault((s, k), [0, 0, 0])
        row[0] += 1
        if i in engine:
            row[1] += 1
            rep.cli_compared += 1
            ev, ewhy = engine[i]
            if ev != kv:
                row[2] += 1
                rep.failures.append(f"{s} {k}={v!r}: Kafka {kv}s ({kwhy or 'ok'}), the engine {ev}s"
                                    f" ({ewhy or 'no problem reported'})")
    text = verdict_file_text(kafka_version, cases, kafka)
    path = os.path.join(root, VERDICTS)
    if write_verdicts:
        with open(path, "w", encoding="ascii") as f:
            f.write(text)
    else:
        try:
            with open(path, encoding="ascii") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = ""
        if committed != text:
            rep.committed_drift.append(f"{VERDICTS} differs from what Kafka answers now "
                                       "(run conformance/run.sh --write-verdicts and review the diff)")
    with open(cat_path) as f:
        sets = json.load(f)["sets"]
    defs = {(s, k["name"]): k for s in SET_ORDER for k in sets[s]["keys"]}
    for (s, k), (n, cli, _) in rep.keys.items():
        kinds = {p["kind"] for p in walk(defs[(s, k)]["validator"])} - {"composite"} or {"(type only)"}
        rep.key_kinds[(s, k)] = any(p["kind"] in OUTSIDE_CONFIGDEF or "class" in p
                                    for p in walk(defs[(s, k)]["validator"]))
        for kind in kinds:
            row = rep.kinds.setdefault(kind, [0, 0, 0])
            row[0] += 1
            row[1] += n
            row[2] += cli
    for s in SET_ORDER:
        for key in sets[s]["keys"]:
            for part in walk(key["validator"]):
                why = unchecked_reason(part)
                if why:
                    rep.unchecked.append((s, key["name"], part.get("class") or part.get("definedIn"), why))
    return rep
