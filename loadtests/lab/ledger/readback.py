"""The read-back after the cluster healed: every key the ledger acknowledged a write of, read at each
of its replicas (the first `from` nodes of its order), every node read at once, and judged
(lab.ledger.check)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .check import UNREADABLE, Held, KeyResult, judge_key, last_acknowledged
from .history import Op, by_key
from .replicas import Topology, ack_from

# read(address, node, keys, tag): the node's records of the keys, read at its address (a URL, a pod)
# and signed for it by its name in the cluster.
Reader = Callable[[str, str, list[str], str], dict[str, Held]]


def read_all(read: Reader, topo: Topology, replicas: dict[str, list[str]], tag: str) -> dict[str, dict[str, Held]]:
    """Each key's record at each of its replicas (replicas: the node names of each key's), every
    node read at once: key -> the node's address (its URL, its pod) -> Held."""
    per_node: dict[str, list[str]] = {}
    for key, nodes in replicas.items():
        for n in nodes:
            per_node.setdefault(n, []).append(key)
    names = list(per_node)
    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
        answers = list(pool.map(lambda n: read(topo.address[n], n, per_node[n], tag), names))
    out: dict[str, dict[str, Held]] = {key: {} for key in replicas}
    for name, answer in zip(names, answers):
        for key in per_node[name]:
            out[key][topo.address[name]] = answer.get(key, Held(UNREADABLE, detail="no answer"))
    return out


def read_back(cluster, ops: list[Op], tag: str, replicas: str) -> tuple[list[KeyResult], str]:
    """Each acknowledged key judged at its replicas, and the ack/from they were read with ("2/3").
    cluster: lab.ledger.local.LocalCluster or lab.k8s.podledger.PodCluster."""
    topo = cluster.topology()
    ack, count = ack_from(replicas, len(topo.nodes))
    keys = {key: key_ops for key, key_ops in by_key(ops).items() if last_acknowledged(key_ops)}
    held = read_all(cluster.reader(), topo, {key: topo.replicas(key, count) for key in keys}, tag)
    return [judge_key(key, key_ops, held[key]) for key, key_ops in keys.items()], f"{ack}/{count}"
