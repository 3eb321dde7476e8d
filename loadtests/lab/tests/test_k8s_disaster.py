"""Self-tests of the disaster scenario's steps in Kubernetes (lab.k8s.disaster), without a cluster:
what the pods and the release's values say (the claims, the backup target), the fresh release's
helm arguments, the restore init container's state, the steps' order against a stand-in kubectl
and helm (the data claims deleted only after the uninstall, the backups' claim never; the install
only after them), a failed restore stopping with its log, and the keys read back through each
pod's client port with a stand-in kubectl exec and curl. Run: make lab-selftest."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace

from lab import tools
from lab.k8s import disaster, kubectl
from lab.ledger.check import ABSENT, UNREADABLE, VALUE, Held


def pod(name: str, ready: bool = True, restore: dict | None = None, backups: str | None = "kvlab-backups") -> dict:
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}]
    if backups:
        volumes.append({"name": "backups", "persistentVolumeClaim": {"claimName": backups}})
    volumes.append({"name": "secret", "secret": {"secretName": "kvlab-cluster"}})
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if restore is not None:
        status["initContainerStatuses"] = [{"name": "restore", **restore}]
    return {"metadata": {"name": name}, "spec": {"volumes": volumes}, "status": status}


def terminated(code: int, began: str = "2026-01-01T10:00:00Z", ended: str = "2026-01-01T10:00:07Z") -> dict:
    return {"terminated": {"exitCode": code, "startedAt": began, "finishedAt": ended}}


PODS = ["kvlab-0", "kvlab-1", "kvlab-2"]


class PureTest(unittest.TestCase):
    def test_each_pods_data_claim_and_the_backups_claim(self):
        data, backups = disaster.claims([pod(p) for p in PODS])
        self.assertEqual({p: f"data-{p}" for p in PODS}, data)
        self.assertEqual("kvlab-backups", backups)
        self.assertEqual(disaster.claims([pod("kvlab-0", backups=None)]), ({"kvlab-0": "data-kvlab-0"}, None))
        bare = pod("kvlab-0")
        bare["spec"]["volumes"] = bare["spec"]["volumes"][1:]
        with self.assertRaisesRegex(RuntimeError, "kvlab-0"):
            disaster.claims([bare])

    def test_the_target_or_why_the_release_cannot_be_restored(self):
        with self.assertRaisesRegex(SystemExit, "backup.enabled"):
            disaster.backup_target({"backup": {"enabled": False}}, "kvlab-backups")
        s3 = {"backup": {"enabled": True, "target": "s3://lab/kvlab"}}
        self.assertEqual("s3://lab/kvlab", disaster.backup_target(s3, None))
        self.assertEqual("the claim kvlab-backups (/backups)",
                         disaster.backup_target({"backup": {"enabled": True, "target": ""}}, "kvlab-backups"))
        with self.assertRaisesRegex(SystemExit, "no backups' claim"):
            disaster.backup_target({"backup": {"enabled": True}}, None)

    def test_the_fresh_release_has_the_old_values_its_size_the_restore_and_the_kept_claim(self):
        args = disaster.install_args("kvlab", Path("/c/helm/kvlab"), Path("/r/values.json"), 3, "kvlab-20260101", "kvlab-backups")
        self.assertEqual(
            ["install", "kvlab", "/c/helm/kvlab", "-f", "/r/values.json", "--set", "replicaCount=3",
             "--set-string", "restore.backup=kvlab-20260101", "--set", "restore.force=false",
             "--set-string", "backup.persistence.existingClaim=kvlab-backups"],
            args,
        )
        s3 = disaster.install_args("kvlab", Path("/c"), Path("/v"), 2, "b", None)
        self.assertNotIn("existingClaim", " ".join(s3))
        self.assertIn("replicaCount=2", s3)

    def test_where_a_pods_restore_is(self):
        self.assertEqual(("waiting", None, None), disaster.restore_state(pod("kvlab-0", False, {"state": {"running": {}}})))
        self.assertEqual(("waiting", None, None), disaster.restore_state(pod("kvlab-0", False)))
        self.assertEqual(("done", 0, 7.0), disaster.restore_state(pod("kvlab-0", False, {"state": terminated(0)})))
        self.assertEqual(("failed", 4, 7.0), disaster.restore_state(pod("kvlab-0", False, {"state": terminated(4)})))
        # Restarted after it failed: waiting again, its last run says it failed.
        again = {"state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": terminated(3)}
        self.assertEqual(("failed", 3, 7.0), disaster.restore_state(pod("kvlab-0", False, again)))
        with self.assertRaisesRegex(RuntimeError, "without the restore init container"):
            disaster.restore_state(pod("kvlab-0", True))

    def test_a_key_is_read_from_every_replica(self):
        self.assertEqual("/v0/entity?id=a%2Fb%20c&replicas=3/3", disaster.client_path("a/b c", 3))


class FakeCluster:
    """A stand-in kubectl and helm over one release: its pods go with `helm uninstall` (after one more
    look), `helm install` makes them again, each pod's restore init container then ends with
    restore_codes[pod] (0 unless said) on the next look and the pod is ready on the one after.
    Every call is recorded in order as ("kubectl"|"helm", args...)."""

    def __init__(self, restore_codes: dict[str, int] | None = None, values: dict | None = None):
        self.calls: list[tuple[str, ...]] = []
        self.restore_codes = restore_codes or {}
        self.values = values if values is not None else {"backup": {"enabled": True, "target": ""}, "replicaCount": 3}
        self.state = "up"
        self.looks = 0

    # kubectl
    def run(self, *args: str, stdin=None, timeout: float = 60, check: bool = True) -> str:
        self.calls.append(("kubectl", *args))
        if args[0] == "exec" and disaster.DATA_BYTES in args:
            return "1048576\n"
        if args[0] == "logs":
            return "restore: node 1 of 3\nrestore: checksums do not match: sst 000012\n"
        return ""

    def json(self, *args: str, timeout: float = 60) -> dict:
        self.calls.append(("kubectl", *args))
        assert args[:2] == ("get", "pods"), args
        return {"items": self.pods()}

    def pods(self) -> list[dict]:
        if self.state == "up":
            return [pod(p) for p in PODS]
        if self.state == "going":
            self.state = "gone"
            return [pod(p, ready=False) for p in PODS]
        if self.state == "gone":
            return []
        self.looks += 1  # installed
        if self.looks == 1:
            return [pod(p, False, {"state": {"running": {}}}) for p in PODS]
        if self.looks == 2:
            return [pod(p, False, {"state": terminated(self.restore_codes.get(p, 0))}) for p in PODS]
        return [pod(p, True, {"state": terminated(self.restore_codes.get(p, 0))}) for p in PODS]

    # helm
    def helm(self, *args: str, timeout: float = 120) -> str:
        self.calls.append(("helm", *args))
        if args[0] == "get":
            return json.dumps(self.values)
        if args[0] == "uninstall":
            self.state = "going"
        if args[0] == "install":
            self.state, self.looks = "installed", 0
            values = Path(args[args.index("-f") + 1])
            self.installed_values = (values, json.loads(values.read_text()), values.stat().st_mode & 0o777)
        return ""

    def steps(self, out: Path) -> disaster.K8sDisaster:
        release = SimpleNamespace(pods=lambda: self.json("get", "pods", "-l", "app.kubernetes.io/instance=kvlab")["items"])
        closed = []
        executor = SimpleNamespace(
            kubectl=self, release=release, k=SimpleNamespace(release="kvlab", namespace="ns", helm="helm"),
            cfg=SimpleNamespace(replicas="2/3"), management=SimpleNamespace(close=lambda: closed.append(1)),
        )
        self.closed = closed
        return disaster.K8sDisaster(executor, out, helm=SimpleNamespace(run=self.helm), chart=Path("/chart"),
                                    timeout_s=60, sleep=lambda s: None)

    def names(self) -> list[str]:
        """The calls, shortened to what the order is about."""
        out = []
        for c in self.calls:
            if c[0] == "helm":
                out.append(f"helm {c[1]}")
            elif c[1] == "exec":
                out.append(f"du {c[2]}")
            elif c[1:3] == ("get", "pods"):
                if not out or out[-1] != "get pods":
                    out.append("get pods")
            elif c[1] == "delete":
                out.append(" ".join(a for a in c[1:] if not a.startswith("-")))
            else:
                out.append(" ".join(c[1:3]))
        return out


class StepsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_uninstalled_then_its_data_claims_deleted_then_installed_again_in_restore_mode(self):
        fake = FakeCluster()
        steps = fake.steps(self.out)
        self.assertEqual("the claim kvlab-backups (/backups)", steps.target())
        fake.calls.clear()
        destroyed = steps.destroy()
        restored = steps.restore("kvlab-20260101")
        started = steps.start()
        self.assertEqual(
            ["du kvlab-0", "du kvlab-1", "du kvlab-2", "helm uninstall", "get pods",
             "delete pvc data-kvlab-0 data-kvlab-1 data-kvlab-2", "helm install", "get pods",
             "logs kvlab-0", "logs kvlab-1", "logs kvlab-2", "get pods", "du kvlab-0", "du kvlab-1", "du kvlab-2"],
            sorted(fake.names()[:3]) + fake.names()[3:12] + fake.names()[12:],
        )
        install = next(c for c in fake.calls if c[:2] == ("helm", "install"))
        values, content, mode = fake.installed_values
        self.assertEqual(("helm", *disaster.install_args("kvlab", Path("/chart"), values, 3, "kvlab-20260101",
                                                         "kvlab-backups")), install)
        # The old release's values (they may hold the cluster's secret): readable by this user alone,
        # outside the report, gone after the install.
        self.assertEqual(({"backup": {"enabled": True, "target": ""}, "replicaCount": 3}, 0o600), (content, mode))
        self.assertFalse(values.exists())
        self.assertEqual([], list(self.out.glob("*values*")))
        self.assertIn("-f OLD-RELEASE-VALUES.json --set replicaCount=3", restored["command"])
        self.assertFalse([c for c in fake.calls if c[1] == "delete" and "kvlab-backups" in c], "the backups' claim stays")
        self.assertEqual([1], fake.closed, "the executor's management channels end with the pods")
        self.assertEqual([{"node": p, "claim": f"data-{p}", "bytes": 1048576} for p in PODS], destroyed["removed"])
        self.assertEqual("kvlab-backups", destroyed["kept"])
        self.assertEqual([(p, 0, 7.0, 1048576) for p in PODS],
                         [(n["node"], n["exit_code"], n["seconds"], n["bytes"]) for n in restored["nodes"]])
        self.assertEqual(3 * 1048576, restored["bytes"])
        self.assertIn("restore: node 1 of 3", (self.out / "restore-kvlab-1.log").read_text())
        self.assertGreaterEqual(started["seconds"], 0)

    def test_a_restore_that_fails_stops_the_scenario_with_its_last_log_line(self):
        fake = FakeCluster(restore_codes={"kvlab-1": 4})
        steps = fake.steps(self.out)
        steps.destroy()
        with self.assertRaisesRegex(RuntimeError, "the restore of kvlab-1 exited with 4: restore: checksums do not match"):
            steps.restore("kvlab-20260101")

    def test_a_release_without_backups_is_refused_before_anything_happens(self):
        fake = FakeCluster(values={"backup": {"enabled": False}})
        with self.assertRaisesRegex(SystemExit, "backup.enabled=true"):
            fake.steps(self.out)
        self.assertEqual([], [c for c in fake.calls if c[1] in ("uninstall", "delete", "install")])

    def test_a_restore_that_never_ends_is_an_error_in_bounded_time(self):
        fake = FakeCluster()
        steps = fake.steps(self.out)
        steps.destroy()
        clock = iter(range(0, 10_000, 30))
        steps.clock = lambda: float(next(clock))
        fake.pods = lambda: [pod(p, False, {"state": {"running": {}}}) for p in PODS]
        naps = []

        def sleep(s: float) -> None:
            naps.append(s)
            if len(naps) > 100:
                raise AssertionError("the restore is waited for without end")

        steps.sleep = sleep
        with self.assertRaisesRegex(RuntimeError, "not every pod restored within 60 s"):
            steps.restore("b")


class ReadBackTest(unittest.TestCase):
    """read() through a stand-in `kubectl exec` that runs the client loop here, with a curl that
    answers as the pod's client port would: the ledger's value, 404, or 503 for key 'busy'."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        tmp = Path(self.tmp.name)
        self.dir = tmp
        (tmp / "bin").mkdir()
        ctl = tmp / "kubectl"
        ctl.write_text(
            "#!/bin/sh\n"
            "pod=\n"
            'while [ $# -gt 0 ] && [ "$1" != -- ]; do case "$1" in kvlab-*) pod=$1;; esac; shift; done\n'
            "shift\n"
            f'PATH="{tmp}/bin:$PATH" POD=$pod SERVER_PORT=8080 exec "$@"\n'
        )
        curl = tmp / "bin" / "curl"
        curl.write_text(
            "#!/bin/sh\n"
            "for a; do url=$a; done\n"
            f'echo "$POD $url" >> {tmp}/curl\n'
            'key=${url#*id=}; key=${key%%&*}\n'
            'case "$key" in\n'
            "  gone) printf 'HTTP/1.1 404 Not Found\\r\\ncontent-length: 0\\r\\n\\r\\n' ;;\n"
            "  busy) printf 'HTTP/1.1 503 Service Unavailable\\r\\n\\r\\noverloaded' ;;\n"
            "  *) printf 'HTTP/1.1 200 OK\\r\\ncontent-type: application/octet-stream\\r\\n\\r\\n"
            "ledger t1 %s 7' \"$key\" ;;\n"
            "esac\n"
        )
        for f in (ctl, curl):
            f.chmod(0o755)
        self.kubectl = kubectl.Kubectl(str(ctl), "ns")

    def tearDown(self):
        self.tmp.cleanup()

    def steps(self) -> disaster.K8sDisaster:
        steps = disaster.K8sDisaster.__new__(disaster.K8sDisaster)
        steps.kubectl = self.kubectl
        steps.pods = PODS
        steps.cfg = SimpleNamespace(replicas="2/3")
        steps.sleep = lambda s: None
        return steps

    def test_every_key_read_at_from_of_from_through_the_pods_client_ports(self):
        keys = ["k1", "k2", "gone", "k4", "busy"]
        held = self.steps().read(keys, "t1")
        self.assertEqual(
            {"k1": Held(VALUE, 7), "k2": Held(VALUE, 7), "gone": Held(ABSENT), "k4": Held(VALUE, 7)},
            {k: v for k, v in held.items() if k != "busy"},
        )
        self.assertEqual(UNREADABLE, held["busy"].state)
        lines = (self.dir / "curl").read_text().splitlines()
        self.assertTrue(all(line.endswith("&replicas=3/3") and "http://127.0.0.1:8080/v0/entity?id=" in line for line in lines))
        by_pod = {p: sorted(line.split("id=")[1].split("&")[0] for line in lines if line.startswith(p + " ")) for p in PODS}
        # Shared out over the pods in turn; the 503 asked again, READ_TRIES times in all.
        self.assertEqual({"kvlab-0": ["k1", "k4"], "kvlab-1": ["busy"] * disaster.READ_TRIES + ["k2"], "kvlab-2": ["gone"]},
                         by_pod)


class LabShTest(unittest.TestCase):
    def test_k8s_lab_sh_runs_the_disaster_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            py = Path(tmp) / "python"
            py.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp}/argv\n')
            py.chmod(0o755)
            p = subprocess.run(
                ["bash", str(tools.ROOT / "k8s" / "lab.sh"), "--rate", "200"],
                env=os.environ | {"LAB_PY": str(py), "LAB_WRK_IMAGE": "kvlab/wrk:0.1.0", "SCENARIO": "disaster"},
                capture_output=True, text=True, timeout=30,
            )
            self.assertEqual(0, p.returncode, p.stderr)
            argv = (Path(tmp) / "argv").read_text().splitlines()
            self.assertEqual(["-m", "lab", "disaster"], argv[:3])
            self.assertIn("--executor", argv)
            self.assertEqual(["--rate", "200"], argv[-2:])


if __name__ == "__main__":
    unittest.main()
