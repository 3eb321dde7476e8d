"""Where a key lives and how one replica's record of it is read, as the nodes themselves do it:

- a key's replicas are the first `from` nodes of its rendezvous-hashing order over the cluster's
  node names (service RendezvousHashing: FNV-1a, then MurmurHash3's fmix64, highest score first);
- `GET /internal/v1/record?id=` shows one replica's record (docs/api.md, "Between nodes"), signed
  with the cluster's secret as kvlab-hmac-sha256 (service PeerAuthentication): for the node it is
  sent to, by its name in the cluster, with the body's digest and a nonce the node takes once;
- the cluster's node names, and which one a node is, come from its /actuator/kvlab."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import itertools
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from .check import ABSENT, TOMBSTONE, UNREADABLE, VALUE, Held
from .history import seq_in

MASK = (1 << 64) - 1
RECORD_PATH = "/internal/v1/record"
VERSION_HEADER = "x-kvlab-version"
TOMBSTONE_HEADER = "x-kvlab-tombstone"
GIVE_UP = 3  # failures in a row after which a node is asked no more


def mix(value: int) -> int:
    h = value & MASK
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def hash64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return mix(h)


def replicas_for(key: str, nodes: list[str], count: int) -> list[str]:
    """The key's first `count` replicas among the node names, in the cluster's order for it."""
    if not 1 <= count <= len(nodes):
        raise ValueError(f"{count} replicas of {len(nodes)} nodes")
    k = hash64(key.encode())
    scores = {n: mix(k ^ hash64(n.encode())) for n in nodes}
    return sorted(nodes, key=lambda n: (-scores[n], n))[:count]


def ack_from(replicas: str, nodes: int) -> tuple[int, int]:
    """ack/from of a request with this `replicas` parameter ("" is the servers' default: a majority of all)."""
    if not replicas:
        return nodes // 2 + 1, nodes
    m = re.fullmatch(r"(\d+)/(\d+)", replicas.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]) <= nodes:
        raise ValueError(f"replicas {replicas!r}: ack/from with 1 <= ack <= from <= {nodes}")
    return int(m[1]), int(m[2])


def record_target(key: str) -> str:
    """The request target of one replica's record of the key, as it is signed."""
    return f"{RECORD_PATH}?id={quote(key, safe='')}"


# This process's signer session (16 hex digits), and the sequence numbers of its calls, per node.
SESSION = secrets.token_hex(8)
_sequences: dict[str, itertools.count] = {}
_sequences_lock = threading.Lock()


def nonce_for(node: str) -> str:
    """A new nonce for a call to the node: this process's session and the call's number there."""
    with _sequences_lock:
        count = _sequences.setdefault(node, itertools.count(1))
        return f"{SESSION}.{next(count)}"


def body_digest(body: bytes) -> str:
    """What a signature says of a body: the standard base64 of its SHA-256."""
    return base64.b64encode(hashlib.sha256(body).digest()).decode()


def authorization(secret: bytes, node: str, method: str, target: str, millis: int | None = None, version: str = "",
                  body: bytes = b"", nonce: str | None = None) -> str:
    """The Authorization header of a replica call to the node named `node` in the cluster (service
    PeerAuthentication); each call needs a new one, as a node takes a nonce once."""
    millis = int(time.time() * 1000) if millis is None else millis
    nonce = nonce_for(node) if nonce is None else nonce
    digest = body_digest(body)
    signed = f"kvlab-hmac-sha256\n{method}\n{target}\n{node}\n{millis}\n{nonce}\n{version}\n{digest}".encode()
    signature = base64.b64encode(hmac.new(secret, signed, hashlib.sha256).digest()).decode()
    return f"kvlab-hmac-sha256 t={millis},n={nonce},b={digest},s={signature}"


def held(status: int, headers: dict[str, str], body: bytes, tag: str, key: str) -> Held:
    """One replica's answer to GET /internal/v1/record as what it holds (headers' names in lower case)."""
    if status == 404:
        return Held(ABSENT)
    if status != 200:
        return Held(UNREADABLE, detail=f"{status}: {body[:200].decode(errors='replace').strip()}")
    if headers.get(TOMBSTONE_HEADER, "").lower() == "true":
        return Held(TOMBSTONE, detail=headers.get(VERSION_HEADER, ""))
    return Held(VALUE, seq_in(tag, key, body), headers.get(VERSION_HEADER, ""))


@dataclass(frozen=True)
class Topology:
    """The cluster's node names in its order, and how to reach each (a URL, a pod's name)."""

    nodes: list[str]
    address: dict[str, str]

    def replicas(self, key: str, count: int) -> list[str]:
        return replicas_for(key, self.nodes, count)


def topology(statuses: dict[str, dict]) -> Topology:
    """The topology from each node's /actuator/kvlab (by address): the node names the nodes agree on.
    ValueError when they disagree, or a node's own name is not among them."""
    lists = {tuple(s["nodes"]) for s in statuses.values()}
    if len(lists) != 1:
        raise ValueError(f"the nodes see different clusters: {sorted(map(list, lists))}")
    nodes = list(lists.pop())
    address = {s["self"]: where for where, s in statuses.items()}
    missing = [n for n in nodes if n not in address]
    if missing:
        raise ValueError(f"no node answered as {', '.join(missing)}")
    return Topology(nodes, address)


def read_each(keys: list[str], fetch: Callable[[str], Held]) -> dict[str, Held]:
    """fetch(key) for each key, in order: a key whose fetch failed (OSError, RuntimeError, an HTTP
    error) is unreadable with why, and after GIVE_UP failures in a row the node is asked no more."""
    out: dict[str, Held] = {}
    failures, last = 0, ""
    for key in keys:
        if failures >= GIVE_UP:
            out[key] = Held(UNREADABLE, detail=f"not asked after {GIVE_UP} failures in a row: {last}")
            continue
        try:
            out[key] = fetch(key)
            failures = 0
        except (OSError, RuntimeError, ValueError, http.client.HTTPException) as e:
            last = f"{type(e).__name__}: {e}"
            out[key] = Held(UNREADABLE, detail=last)
            failures += 1
    return out
