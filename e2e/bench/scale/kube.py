"""A minimal Kubernetes API client for the scale benchmark (Python stdlib only).

Talks HTTPS/1.1 to the e2e control plane's kube-apiserver with the admin client certificate of
$E2E_RUN_DIR/pki (system:masters, exempt from API Priority and Fairness, so the harness itself is
never throttled and never competes with the operator's flow). One keep-alive connection per
thread; watches get their own connection and stream one JSON event per line.
"""

import http.client
import json
import os
import socket
import ssl
import threading
import time


def read_state(run_dir):
    state = {}
    with open(os.path.join(run_dir, "state.env")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key:
                state[key] = value
    return state


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        super().__init__(f"{method} {path}: HTTP {status}: {body[:300]!r}")
        self.status = status


class Kube:
    def __init__(self, run_dir):
        pki = os.path.join(run_dir, "pki")
        self.port = int(read_state(run_dir)["APISERVER_PORT"])
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.local = threading.local()

    def _connect(self, timeout=60):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def request(self, method, path, body=None, content_type="application/json", accept="application/json",
                ok=(200, 201)):
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in range(5):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self._connect()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
                continue
            if resp.status == 429 or (resp.status >= 500 and attempt < 4):
                time.sleep(float(resp.getheader("Retry-After") or 0.5))
                continue
            if ok and resp.status not in ok:
                raise ApiError(method, path, resp.status, payload)
            return resp.status, payload
        raise ApiError(method, path, -1, b"retries exhausted")

    def get_json(self, path):
        return json.loads(self.request("GET", path)[1])

    def text(self, path):
        return self.request("GET", path, accept="text/plain")[1].decode()

    def list_all(self, path, limit=500):
        """Items of a list, paginated; returns (items, resourceVersion of the first page)."""
        items, cont, rv = [], None, None
        sep = "&" if "?" in path else "?"
        while True:
            url = f"{path}{sep}limit={limit}" + (f"&continue={cont}" if cont else "")
            page = self.get_json(url)
            rv = rv or page["metadata"].get("resourceVersion")
            items.extend(page.get("items") or [])
            cont = page["metadata"].get("continue")
            if not cont:
                return items, rv

    def watch(self, path, resource_version, on_event, stop, on_error=None):
        """Streams watch events of `path` from resource_version into on_event(event, t_received)
        until stop is set (checked between events; the thread is a daemon). Reads block: a read
        timeout in the middle of a chunked response would corrupt it. Bookmarks keep the
        resourceVersion fresh; after an ERROR (410 Gone: compacted) or a broken stream it relists
        and reports every listed object as a MODIFIED event, then watches on from the new list."""
        sep = "&" if "?" in path else "?"
        rv = resource_version
        while not stop.is_set():
            conn = self._connect(timeout=None)
            relist = False
            try:
                conn.request("GET", f"{path}{sep}watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
                             "&timeoutSeconds=3600", headers={"Accept": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise ApiError("WATCH", path, resp.status, resp.read())
                while not stop.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    t = time.monotonic()
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        if on_error:
                            on_error(event)
                        relist = True
                        break
                    obj = event.get("object") or {}
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if event.get("type") != "BOOKMARK":
                        on_event(event, t)
            except (http.client.HTTPException, OSError, ValueError) as e:
                if stop.is_set():
                    break
                if on_error:
                    on_error({"exception": repr(e)})
                relist = True
                time.sleep(0.5)
            finally:
                conn.close()
            if relist and not stop.is_set():
                items, rv = self.list_all(path)
                t = time.monotonic()
                for obj in items:
                    on_event({"type": "MODIFIED", "object": obj}, t)


def parse_prometheus(text):
    """[(name, {label: value}, value)] of a Prometheus text exposition."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        try:
            v = float(value)
        except ValueError:
            continue
        if "{" in head:
            name, _, rest = head.partition("{")
            labels = {}
            rest = rest.rstrip("}")
            # label values here never contain '",' sequences
            for part in rest.split('",'):
                if "=" in part:
                    k, _, val = part.partition("=")
                    labels[k.strip()] = val.strip().strip('"')
        else:
            name, labels = head, {}
        out.append((name, labels, v))
    return out
