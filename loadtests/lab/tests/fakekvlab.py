"""A stand-in kvlab cluster for the ledger's tests, in this process: nodes that answer the client API
(/v0/entity PUT, DELETE, GET with replicas=ack/from), one replica's record
(/internal/v1/record, signed calls only) and /actuator/kvlab on their management port (the client
port + 1000), with the key's replicas chosen as the real nodes choose them. Its faults are the
test's: a node that acknowledges writes it never keeps (liar), one whose data is wiped, a node
that answers reads from its own copy alone (stale)."""

from __future__ import annotations

import hmac
import http.server
import itertools
import json
import threading
from urllib.parse import parse_qs, urlparse

from lab.ledger.replicas import ack_from, authorization, replicas_for


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    node: FakeNode

    def log_message(self, *args):
        pass

    def answer(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.node.serve(self, "GET")

    def do_PUT(self):
        self.node.serve(self, "PUT")

    def do_DELETE(self):
        self.node.serve(self, "DELETE")


class FakeNode:
    def __init__(self, cluster: FakeCluster):
        self.cluster = cluster
        self.store: dict[str, tuple[int, bool, bytes]] = {}  # key -> (version, tombstone, value)
        self.liar = False  # acknowledges writes and keeps none
        self.reads_own_copy = False  # answers reads from its own copy alone, whatever ack says
        self.nonces: set[str] = set()  # of the replica calls it took: each is taken once
        self.servers = self._bind()
        self.url = f"http://127.0.0.1:{self.servers[0].server_address[1]}"
        for s in self.servers:
            threading.Thread(target=s.serve_forever, daemon=True).start()

    def _bind(self) -> list[http.server.ThreadingHTTPServer]:
        handler = type("NodeHandler", (Handler,), {"node": self})
        for _ in range(50):
            client = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            try:
                management = http.server.ThreadingHTTPServer(("127.0.0.1", client.server_address[1] + 1000), handler)
            except OSError:
                client.server_close()
                continue
            return [client, management]
        raise OSError("no free pair of ports")

    def keep(self, key: str, version: int, tombstone: bool, value: bytes) -> None:
        with self.cluster.lock:
            held = self.store.get(key)
            if not self.liar and (held is None or held[0] < version):
                self.store[key] = (version, tombstone, value)

    def serve(self, h: Handler, method: str) -> None:
        u = urlparse(h.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        if u.path == "/actuator/kvlab":
            status = {"self": self.url, "nodes": [n.url for n in self.cluster.nodes]}
            return h.answer(200, json.dumps(status).encode(), {"Content-Type": "application/json"})
        if u.path == "/internal/v1/record":
            return self.record(h, q["id"])
        if u.path != "/v0/entity":
            return h.answer(404)
        body = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        ack, count = ack_from(q.get("replicas", ""), len(self.cluster.nodes))
        owners = self.cluster.owners(q["id"], count)
        if method == "GET":
            copies = [self.store.get(q["id"])] if self.reads_own_copy else [n.store.get(q["id"]) for n in owners]
            newest = max((c for c in copies if c), default=None)
            return h.answer(404) if newest is None or newest[1] else h.answer(200, newest[2])
        version = next(self.cluster.versions)
        for n in owners:
            n.keep(q["id"], version, method == "DELETE", body)
        h.answer(201 if method == "PUT" else 202)

    def record(self, h: Handler, key: str) -> None:
        given = h.headers.get("Authorization", "")
        fields = dict(f.partition("=")[::2] for f in given.removeprefix("kvlab-hmac-sha256 ").split(","))
        millis, nonce = fields.get("t", ""), fields.get("n", "")
        expected = authorization(self.cluster.secret, self.url, "GET", h.path, int(millis), nonce=nonce) if millis.isdigit() else ""
        if not hmac.compare_digest(given, expected):
            return h.answer(401, b"the call's signature does not match: signed with another secret, for another node, or altered")
        with self.cluster.lock:
            if nonce in self.nonces:
                return h.answer(401, b"this call was taken already: a replay")
            self.nonces.add(nonce)
        held = self.store.get(key)
        if held is None:
            return h.answer(404, b"this replica has no record of the key")
        version, tombstone, value = held
        h.answer(200, b"" if tombstone else value, {"X-Kvlab-Version": f"{version}.0", "X-Kvlab-Tombstone": str(tombstone).lower()})

    def close(self) -> None:
        for s in self.servers:
            s.shutdown()
            s.server_close()


class FakeCluster:
    def __init__(self, nodes: int = 3, secret: bytes = b"fake-cluster-secret"):
        self.secret = secret
        self.lock = threading.Lock()
        self.versions = itertools.count(1)
        self.nodes = [FakeNode(self) for _ in range(nodes)]

    def owners(self, key: str, count: int) -> list[FakeNode]:
        by_url = {n.url: n for n in self.nodes}
        return [by_url[u] for u in replicas_for(key, list(by_url), count)]

    @property
    def targets(self) -> list[str]:
        return [n.url for n in self.nodes]

    def close(self) -> None:
        for n in self.nodes:
            n.close()
