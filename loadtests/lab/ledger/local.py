"""The ledger on nodes that run as processes on this machine: its workload as threads here
(lab.ledger.workload), each node's /actuator/kvlab on its management port, and each replica's own
records read over HTTP, signed with the secret the node was started with (its command line or
environment, as scripts/local-cluster.sh starts it)."""

from __future__ import annotations

import http.client
import json
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

from .. import healing
from ..faults import Launch
from .check import Held
from .replicas import Topology, authorization, held, read_each, record_target, topology
from .workload import Plan, Workload

# How a node is told its secret: Spring's option and environment forms.
SECRET_FILE_OPTIONS = ("--kvlab.cluster.secret-file=", "--kvlab.cluster.secretFile=", "-Dkvlab.cluster.secret-file=")
SECRET_OPTIONS = ("--kvlab.cluster.secret=", "-Dkvlab.cluster.secret=")
READ_TIMEOUT_S = 10.0


def secret_of(launch: Launch) -> bytes:
    """The cluster's secret a node process was started with; RuntimeError saying why none."""
    value = file = None
    for arg in launch.argv:
        file = next((arg[len(o) :] for o in SECRET_FILE_OPTIONS if arg.startswith(o)), file)
        value = next((arg[len(o) :] for o in SECRET_OPTIONS if arg.startswith(o)), value)
    file = file or launch.env.get("KVLAB_CLUSTER_SECRET_FILE")
    value = value or launch.env.get("KVLAB_CLUSTER_SECRET")
    if file:
        path = Path(launch.cwd) / file
        try:
            return path.read_text().strip().encode()
        except OSError as e:
            raise RuntimeError(f"the cluster's secret file {path} cannot be read: {e}") from e
    if value:
        return value.strip().encode()
    raise RuntimeError("the node was started without a cluster secret (kvlab.cluster.secret-file): it takes no replica calls")


class LocalCluster:
    """targets: the nodes' client URLs; pids: their processes', which the runner updates when it
    starts a node again."""

    def __init__(self, targets: list[str], pids: list[int]):
        self.targets = targets
        self.pids = pids

    def workload(self, plan: Plan, out: Path) -> Workload:
        return Workload(plan, self.targets)

    def topology(self) -> Topology:
        def status(target: str) -> dict:
            with urllib.request.urlopen(f"{healing.management_url(target)}/actuator/kvlab", timeout=READ_TIMEOUT_S) as r:
                return json.load(r)

        return topology({t: status(t) for t in self.targets})

    def cluster_secret(self) -> bytes:
        """The cluster's secret, as a node that runs now was started with it."""
        return secret_of(self._launch())

    def reader(self):
        """A function that reads keys of the ledger at one node (its client URL): key -> Held."""
        secret = self.cluster_secret()

        def read(target: str, node: str, keys: list[str], tag: str) -> dict[str, Held]:
            return read_records(target, node, keys, tag, secret)

        return read

    def _launch(self) -> Launch:
        """How a node that runs now was started: the secret is the cluster's, any node's will do."""
        why = "no node's pid is known (--pids)"
        for pid in self.pids:
            try:
                return Launch.of(pid)
            except (OSError, RuntimeError) as e:
                why = f"process {pid}: {e}"
        raise RuntimeError(f"the nodes' secret cannot be found: {why}")

    def close(self) -> None:
        pass


def read_records(target: str, node: str, keys: list[str], tag: str, secret: bytes, timeout_s: float = READ_TIMEOUT_S) -> dict[str, Held]:
    """What the node at target (named `node` in the cluster) holds of each key itself, on one
    keep-alive connection (lab.ledger.replicas.read_each)."""
    u = urlparse(target)
    conn: list[http.client.HTTPConnection] = []

    def fetch(key: str) -> Held:
        path = record_target(key)
        if not conn:
            conn.append(http.client.HTTPConnection(u.hostname, u.port, timeout=timeout_s))
        try:
            conn[0].request("GET", path, headers={"Authorization": authorization(secret, node, "GET", path)})
            r = conn[0].getresponse()
            body = r.read()
        except BaseException:
            conn.pop().close()
            raise
        if r.will_close:
            conn.pop().close()
        return held(r.status, {k.lower(): v for k, v in r.getheaders()}, body, tag, key)

    try:
        return read_each(keys, fetch)
    finally:
        for c in conn:
            c.close()
