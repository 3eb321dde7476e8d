"""The ledger in Kubernetes (lab.k8s.podledger) without a cluster: the k6 ledger's log, its Job from
manifest to operations with a stand-in kubectl, and the read-back through `kubectl exec` loops that a
stand-in kubectl runs here, with curl, against a stand-in cluster (lab.tests.fakekvlab)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import profiling
from lab.k8s import K8sConfig, executor, kubectl, management, podledger
from lab.k8s.jobs import Jobs
from lab.ledger import readback, record
from lab.ledger.check import TOMBSTONE, VALUE
from lab.ledger.history import DELETE, FAILED, FOREIGN, GET, OK, PUT, UNCERTAIN
from lab.ledger.workload import Plan, Workload
from lab.tests.fakekvlab import FakeCluster

LOG = """KVLAB-JOB version k6 v1.8.1
KVLAB-JOB start 1700000000500000000
KVLAB-LEDGER 1 put ledger-ab12-00000 1700000001000 1700000001020 ok 201 -
KVLAB-LEDGER 2 get ledger-ab12-00000 1700000001500 1700000001510 ok 200 1
KVLAB-LEDGER 3 get ledger-ab12-00001 1700000001600 1700000001610 ok 404 -
KVLAB-LEDGER 4 delete ledger-ab12-00000 1700000002000 1700000003000 uncertain e1050 -
KVLAB-LEDGER 5 put ledger-ab12-00001 1700000002000 1700000002001 failed e1212 -
KVLAB-LEDGER 6 get ledger-ab12-00001 1700000002100 1700000002110 ok 200 -1

  █ TOTAL RESULTS
KVLAB-JOB exit 0
"""


class LogTest(unittest.TestCase):
    def test_the_operations_of_a_ledger_pods_log(self):
        ops = podledger.parse_log(LOG, 1700000000.0)
        self.assertEqual([1, 2, 3, 4, 5, 6], [o.seq for o in ops])
        first = ops[0]
        self.assertEqual((PUT, "ledger-ab12-00000", OK, "201"), (first.kind, first.key, first.outcome, first.status))
        self.assertAlmostEqual(1.0, first.invoked)
        self.assertAlmostEqual(1.02, first.completed)
        self.assertEqual((GET, 1), (ops[1].kind, ops[1].saw))
        self.assertIsNone(ops[2].saw, "404: nothing")
        self.assertEqual((DELETE, UNCERTAIN, "e1050"), (ops[3].kind, ops[3].outcome, ops[3].status))
        self.assertEqual(FAILED, ops[4].outcome)
        self.assertEqual(FOREIGN, ops[5].saw)
        with self.assertRaisesRegex(ValueError, "7 fields"):
            podledger.parse_log("KVLAB-LEDGER 1 put k 1 2 ok 201\n", 0)

    def test_curls_answer(self):
        text = "HTTP/1.1 200 OK\r\nX-Kvlab-Version: 17.2\r\nX-Kvlab-Tombstone: false\r\n\r\nledger t k 5\n"
        expected = (200, {"x-kvlab-version": "17.2", "x-kvlab-tombstone": "false"}, b"ledger t k 5")
        self.assertEqual(expected, podledger.parse_curl(text))
        self.assertEqual(expected, podledger.parse_curl(text.replace("\r\n", "\n")), "as a text pipe reads it")
        with self.assertRaisesRegex(RuntimeError, "not an HTTP answer"):
            podledger.parse_curl("curl: (7) Failed to connect")


class JobKubectl:
    """kubectl for one ledger Job: its pod runs at the second look, the Job succeeds at the second, its log is LOG."""

    def __init__(self):
        self.calls: list[tuple[str, ...]] = []
        self.looks = {"pods": 0, "job": 0}

    def run(self, *args, stdin=None, timeout=60, check=True) -> str:
        self.calls.append(args)
        return LOG if args[0] == "logs" else ""

    def json(self, *args, timeout=60) -> dict:
        self.calls.append(args)
        if args[:2] == ("get", "pods"):
            self.looks["pods"] += 1
            state = {"running": {}} if self.looks["pods"] > 1 else {"waiting": {"reason": "ContainerCreating"}}
            return {"items": [{"metadata": {"name": "ledger-pod"}, "status": {"containerStatuses": [{"state": state}]}}]}
        if args[:2] == ("get", "job"):
            self.looks["job"] += 1
            return {"status": {"succeeded": 1} if self.looks["job"] > 1 else {"active": 1}}
        raise AssertionError(args)


def k8s_executor(kube, pods: list[str]) -> executor.K8sExecutor:
    """A K8sExecutor of a release with these pods, made without a cluster."""
    ex = executor.K8sExecutor.__new__(executor.K8sExecutor)
    ex.k = K8sConfig(namespace="ns", release="kvlab", start_timeout_s=5)
    ex.kubectl = kube
    ex.run_id = "r1"
    ex.target = "http://kvlab.ns.svc.cluster.local:8080"
    ex.jobs = Jobs.__new__(Jobs)
    ex.jobs.k, ex.jobs.kubectl, ex.jobs.run_id, ex.jobs.target = ex.k, kube, ex.run_id, ex.target
    ex.jobs.configmap, ex.jobs.items = "kvlab-lab-r1-scripts", [{"key": "job.sh", "path": "job.sh"}]
    ex.jobs.k6_resources = {"requests": {"cpu": "100m"}}
    ex.nodes = [profiling.Node(p, 0, ex.target) for p in pods]
    ex.management = management.Management(kube, pods, retry_s=0.0)
    return ex


class JobTest(unittest.TestCase):
    def test_the_ledgers_job_from_manifest_to_operations(self):
        kube = JobKubectl()
        cluster = k8s_executor(kube, ["kvlab-0"]).ledger()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            plan = Plan("ab12", 200, 50, "2/3", 1.0, 60)
            job = cluster.workload(plan, out)
            manifest = json.loads((out / "ledger-job.json").read_text())
            self.assertEqual("kvlab-lab-r1-00-ledger-ab12", manifest["metadata"]["name"])
            self.assertEqual("ledger", manifest["metadata"]["labels"]["app.kubernetes.io/component"])
            self.assertEqual(1, manifest["spec"]["parallelism"])
            c = manifest["spec"]["template"]["spec"]["containers"][0]
            self.assertEqual(("ledger", K8sConfig().k6_image), (c["name"], c["image"]))
            self.assertEqual(["/scripts/job.sh", "k6", "run"], c["args"][:3])
            self.assertEqual(["--log-format", "raw", "/scripts/k6/ledger.js"], c["args"][-3:])
            env = {e["name"]: e["value"] for e in c["env"]}
            self.assertEqual(
                {"TARGETS": "http://kvlab.ns.svc.cluster.local:8080", "DURATION": "60s", "LEDGER_TAG": "ab12",
                 "LEDGER_KEYS": "200", "LEDGER_RATE": "50", "REPLICAS": "2/3", "REQUEST_TIMEOUT": "1s"},
                {k: env[k] for k in ("TARGETS", "DURATION", "LEDGER_TAG", "LEDGER_KEYS", "LEDGER_RATE", "REPLICAS", "REQUEST_TIMEOUT")},
            )
            self.assertIn(("apply", "-f", str(out / "ledger-job.json")), kube.calls)
            t0 = time.monotonic() + 1.0
            job.start(t0)
            signal = next(c for c in kube.calls if c[0] == "exec")
            self.assertEqual(("exec", "ledger-pod", "-c", "ledger", "--", "sh", "-c"), signal[:7])
            start_ns = int(signal[7].split()[2])
            self.assertAlmostEqual(time.time() + 1.0, start_ns / 1e9, delta=0.5)
            job.t0_epoch = 1700000000.0  # the log's clock
            ops = job.stop()
            self.assertEqual(6, len(ops))
            self.assertAlmostEqual(1.0, ops[0].invoked)
            self.assertEqual(LOG, (out / "ledger-k6.log").read_text())
            self.assertEqual(("delete", "job", "kvlab-lab-r1-00-ledger-ab12"), kube.calls[-1][:3])

    def test_a_job_that_does_not_end_proves_nothing(self):
        kube = JobKubectl()
        kube.looks["job"] = -10**9  # it never succeeds
        cluster = k8s_executor(kube, ["kvlab-0"]).ledger()
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(podledger, "JOB_END_SLACK_S", 0):
            job = cluster.workload(Plan("ab12", 200, 50, "", 0, 0), Path(tmp))
            with self.assertRaisesRegex(RuntimeError, "still runs long after the load ended"):
                job.stop()
        self.assertEqual(("delete", "job", "kvlab-lab-r1-00-ledger-ab12"), kube.calls[-1][:3])

    def test_the_k6_and_python_workloads_share_their_proportions_and_key_names(self):
        script = (Path(podledger.__file__).resolve().parents[3] / "loadtests" / "k6" / "ledger.js").read_text()
        from lab.ledger import workload

        shares = dict(workload.MIX)
        self.assertIn(f"const PUT_SHARE = {shares[PUT]};", script)
        self.assertIn(f"const GET_SHARE = {shares[GET]};", script)
        self.assertIn("`ledger-${tag}-${String(i).padStart(5, '0')}`", script)
        self.assertEqual("ledger-ab-00007", Plan("ab", 10, 1, "", 1, 1).key(7))
        self.assertIn("`ledger ${tag} ${k} ${seq}`", script)
        self.assertIn(f"LEDGER_WORKERS || {workload.WORKERS}", script)


@unittest.skipUnless(shutil.which("curl"), "needs curl")
class PodReadBackTest(unittest.TestCase):
    """Each pod's records read inside it: a stand-in kubectl runs `exec POD ... -- CMD` here, with the
    pod's ports and secret file in its environment, against the stand-in cluster's nodes."""

    def setUp(self):
        self.fake = FakeCluster(3)
        self.tmp = tempfile.TemporaryDirectory()
        tmp = Path(self.tmp.name)
        (tmp / "secret").write_text(self.fake.secret.decode() + "\n")
        ports = "\n".join(
            f"  kvlab-{i}) m={n.servers[1].server_address[1]}; c={n.servers[0].server_address[1]};;"
            for i, n in enumerate(self.fake.nodes)
        )
        script = tmp / "kubectl"
        script.write_text(
            "#!/bin/sh\n"
            "pod=\n"
            'while [ $# -gt 0 ] && [ "$1" != -- ]; do case "$1" in kvlab-*) pod=$1;; esac; shift; done\n'
            "shift\n"
            f'case "$pod" in\n{ports}\nesac\n'
            f'MANAGEMENT_SERVER_PORT=$m KVLAB_REPLICATION_PORT=$c KVLAB_CLUSTER_SECRET_FILE={tmp}/secret exec "$@"\n'
        )
        script.chmod(0o755)
        self.kube = kubectl.Kubectl(str(script), "ns")
        self.ex = k8s_executor(self.kube, [f"kvlab-{i}" for i in range(3)])

    def tearDown(self):
        self.ex.management.close()
        self.fake.close()
        self.tmp.cleanup()

    def test_the_pods_are_read_in_place_and_what_they_lost_is_found(self):
        ops = Workload(Plan("pods", 12, 200, "", 10.0, 1.0), self.fake.targets).start(time.monotonic())
        time.sleep(0.8)
        ops = ops.stop()
        cluster = self.ex.ledger()
        topo = cluster.topology()
        self.assertEqual({n.url: f"kvlab-{i}" for i, n in enumerate(self.fake.nodes)}, topo.address)
        results, replicas = readback.read_back(cluster, ops, "pods", "")
        self.assertEqual("2/3", replicas)
        rec = record.build(ops, results, True, None, {})
        self.assertTrue(rec["checked"], rec["why_not_checked"])
        self.assertEqual(0, rec["lost"])
        # The same read-back after a pod lost its data.
        self.fake.nodes[1].store.clear()
        results, _ = readback.read_back(cluster, ops, "pods", "")
        lost = record.build(ops, results, True, None, {})
        self.assertGreater(lost["lost"], 0)
        self.assertTrue(all("nothing" in e["found"] for e in lost["lost_examples"]))
        cluster.close()

    def test_a_pod_holds_values_and_tombstones_as_its_records_say(self):
        ops = Workload(Plan("pods", 4, 200, "", 10.0, 1.0), self.fake.targets).start(time.monotonic())
        time.sleep(0.5)
        ops = ops.stop()
        cluster = self.ex.ledger()
        read = cluster.reader()
        keys = sorted({o.key for o in ops})
        found = read("kvlab-0", self.fake.nodes[0].url, keys, "pods")
        for key in keys:
            kept = self.fake.nodes[0].store.get(key)
            if kept:
                self.assertEqual(TOMBSTONE if kept[1] else VALUE, found[key].state, key)
        cluster.close()


if __name__ == "__main__":
    unittest.main()
