"""Self-tests of the Kubernetes executor's pure parts (no cluster): execution segments, the Job and
ConfigMap manifests, the pods' wrapper job.sh and its log, the merge of k6 results from several
pods, and the report of a run in Kubernetes. Run: make lab-selftest."""

from __future__ import annotations

import ast
import json
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import defaults, healing, profiling, promtext, report, runrecord, settings, tools
from lab.scenarios import phases as phase_scenario
from lab.k8s import K8sConfig, cpu, executor, facts, kubectl, management, manifests, outputs, podfaults, podprofiling, release
from lab.tests.test_healing import PAGE
from lab.tests.test_lab import latency, write_run

PERCENTILES = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999, 1.0]


def k6_spectrum_percentiles() -> list[float]:
    """The points of k6/lib/kvlab.js's spectrum: 10 % steps to 40 %, the table's, then five per
    halving of 1-p down to 99.999 %; plus 0 and 1."""
    ps = {0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999}
    for half in range(1, 18):
        start, step = 1 - 2**-half, 2**-half / 10
        ps |= {round(start + i * step, 10) for i in range(5) if start + i * step <= 0.99999}
    return [0.0, *sorted(ps), 1.0]


def uniform_latency(low: float, high: float, mean: float | None = None) -> dict:
    """The latency summary of a uniform distribution on [low, high] ms, as k6's handleSummary writes it."""
    q = lambda p: low + (high - low) * p  # noqa: E731
    table = {
        "p50": q(0.5),
        "p75": q(0.75),
        "p90": q(0.9),
        "p99": q(0.99),
        "p99.9": q(0.999),
        "p99.99": q(0.9999),
        "p99.999": q(0.99999),
        "p100": high,
    }
    return {
        "unit": "ms",
        "min": low,
        "mean": (low + high) / 2 if mean is None else mean,
        "max": high,
        "percentiles": table,
        "spectrum": [[p, q(p)] for p in PERCENTILES],
    }


def k6_part(requests: int, lat: dict, rate: int | None = 200, dropped: int = 0, ok: bool = True) -> dict:
    return {
        "tool": "k6",
        "model": "open (constant-arrival-rate)" if rate else "closed (shared-iterations)",
        "scenario": "get",
        "targets": ["http://kvlab.kvlab.svc.cluster.local:8080"],
        "requested_rate": rate,
        "duration_s": 10 if rate else requests / 100,
        "test_run_duration_s": 10.2,
        "requests": requests,
        "achieved_rate": requests / 10 if rate else 100.0,
        "dropped_iterations": dropped,
        "vus_max": 32,
        "error_rate": 0.01,
        "status_counts": {"200": requests - 1, "504": 1},
        "bytes_received": 1000,
        "bytes_sent": 500,
        "keys": 1000,
        "value_size": 1024,
        "replicas": "",
        "slo_p99_ms": 10,
        "latency": {"all": lat},
        "thresholds": {"http_req_duration": ok, "http_req_duration{op:get}": ok, "http_req_failed": True},
    }


class SegmentsTest(unittest.TestCase):
    def test_sequences_split_the_test_in_equal_reduced_fractions(self):
        self.assertEqual(manifests.segment_sequence(1), ["0", "1"])
        self.assertEqual(manifests.segment_sequence(2), ["0", "1/2", "1"])
        self.assertEqual(manifests.segment_sequence(4), ["0", "1/4", "1/2", "3/4", "1"])
        self.assertEqual(manifests.segments(3), ["0:1/3", "1/3:2/3", "2/3:1"])
        with self.assertRaises(ValueError):
            manifests.segment_sequence(0)


class ManifestTest(unittest.TestCase):
    def test_resources(self):
        self.assertEqual(
            manifests.parse_resources("requests.cpu=200m, requests.memory=128Mi,limits.memory=1Gi"),
            {"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": {"memory": "1Gi"}},
        )
        for bad in ("cpu=1", "requests.cpu", "wishes.cpu=1", "requests.=1"):
            with self.assertRaises(SystemExit):
                manifests.parse_resources(bad)

    def test_job_is_indexed_bounded_labelled_and_locked_down(self):
        labels = manifests.labels("kvlab", "abc123", "loadgen", "1.8.1")
        job = manifests.job_manifest(
            "kvlab-lab-abc123-02-put",
            "ns",
            labels,
            "loadgen",
            "kvlab/k6:1.8.1",
            ["bash", "/scripts/job.sh", "k6", "run", "/scripts/k6/put.js"],
            {"RATE": "200"},
            3,
            300,
            {"requests": {"cpu": "200m"}},
            "cm",
            [{"key": "job.sh", "path": "job.sh"}],
            3600,
        )
        spec = job["spec"]
        self.assertEqual((spec["completionMode"], spec["completions"], spec["parallelism"]), ("Indexed", 3, 3))
        self.assertEqual((spec["backoffLimit"], spec["activeDeadlineSeconds"]), (0, 300))
        self.assertEqual(job["metadata"]["labels"]["app.kubernetes.io/name"], "kvlab-lab")
        self.assertEqual(job["metadata"]["labels"][manifests.RUN_LABEL], "abc123")
        self.assertTrue(all(k.startswith("app.kubernetes.io/") or k == manifests.RUN_LABEL for k in labels))
        pod = spec["template"]["spec"]
        self.assertEqual(pod["restartPolicy"], "Never")
        self.assertFalse(pod["automountServiceAccountToken"])
        self.assertTrue(pod["securityContext"]["runAsNonRoot"])
        c = pod["containers"][0]
        self.assertEqual((c["command"], c["args"][:2]), (["bash"], ["/scripts/job.sh", "k6"]))
        self.assertEqual(c["env"], [{"name": "RATE", "value": "200"}])
        self.assertEqual(c["resources"], {"requests": {"cpu": "200m"}})
        self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
        self.assertEqual(c["imagePullPolicy"], "IfNotPresent")

    def test_job_names_fit_a_label(self):
        name = manifests.job_name("a-release-with-a-very-long-name-indeed-" * 3, "abc123", 12, "get@1500")
        self.assertLessEqual(len(name), 63)
        self.assertTrue(name.endswith("-lab-abc123-12-get-1500"))
        self.assertEqual(manifests.job_name("kvlab", "abc123", 5, "get@wrk"), "kvlab-lab-abc123-05-get-wrk")

    def test_configmap_holds_the_scripts_at_their_paths(self):
        cm, items = manifests.scripts_configmap("cm", "ns", {"a": "b"})
        paths = {i["path"]: i["key"] for i in items}
        for path in ("job.sh", "k6/put.js", "k6/lib/kvlab.js", "wrk2/get.lua", "wrk2/kvlab.lua", "lab/defaults.env"):
            self.assertIn(path, paths)
            self.assertNotIn("/", paths[path])
            self.assertIn(paths[path], cm["data"])
        self.assertIn("KVLAB-JOB", cm["data"]["job.sh"])
        self.assertEqual(cm["data"][paths["lab/defaults.env"]], defaults.FILE.read_text())
        # Each script library finds the defaults file where it finds it in the repository.
        for lib, pattern in (("k6/lib/kvlab.js", r"KVLAB_DEFAULTS \|\| '([^']+)'"),
                             ("wrk2/kvlab.lua", r'here \.\. "([^"]+)"')):
            relative = re.search(pattern, cm["data"][paths[lib]]).group(1)
            self.assertEqual("lab/defaults.env", posixpath.normpath(posixpath.join(posixpath.dirname(lib), relative)), lib)


class JobScriptTest(unittest.TestCase):
    """k8s/loadgen/job.sh with a stand-in k6 that records its arguments and writes a summary."""

    def run_job(self, tmp: Path, signal: bool, index: int = 1, extra: dict | None = None) -> subprocess.CompletedProcess:
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "k6"
        fake.write_text(
            "#!/bin/bash\n"
            'if [ "$1" = version ]; then echo "k6 v0.0.0 (test)"; exit 0; fi\n'
            'echo "$@" > "$WORK/args"\n'
            'echo \'{"requests": 5}\' > "$SUMMARY_JSON"\n'
            # Its per-request samples: a header, then durations among other metrics' rows.
            'echo "metric_name,timestamp,metric_value" > "$K6_SAMPLES"\n'
            'for i in $(seq 3000); do echo "http_reqs,$i,1"; echo "http_req_duration,$i,$RANDOM.$RANDOM"; '
            'done >> "$K6_SAMPLES"\n'
            "exit 99\n"
        )
        fake.chmod(0o755)
        if signal:
            (tmp / "start-at").write_text(str(time.time_ns() + 200_000_000))
        env = os.environ | {
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "WORK": str(tmp),
            "SUMMARY_JSON": str(tmp / "summary.json"),
            "K6_SEGMENT_SEQUENCE": "0,1/3,2/3,1",
            "JOB_COMPLETION_INDEX": str(index),
            "START_TIMEOUT": "1",
            "K6_SAMPLES": str(tmp / "samples.csv"),
        } | (extra or {})
        return subprocess.run(
            ["bash", str(manifests.JOB_SH), "k6", "run", "--no-color", "/scripts/k6/get.js"],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )

    def test_runs_its_segment_after_the_signal_and_reports(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            t = time.time_ns()
            p = self.run_job(tmp, signal=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual(
                (tmp / "args").read_text().split(),
                "run --execution-segment 1/3:2/3 --execution-segment-sequence 0,1/3,2/3,1 --no-color "
                "/scripts/k6/get.js".split(),
            )
            out = outputs.parse_job_log(p.stdout, 1)
            self.assertEqual(out.version, "k6 v0.0.0 (test)")
            self.assertEqual(out.segment, "1/3:2/3")
            self.assertEqual(out.exit_code, 99)
            self.assertEqual(out.summary, {"requests": 5})
            self.assertGreaterEqual(out.start_ns, t + 150_000_000)
            self.assertGreaterEqual(out.end_ns, out.start_ns)
            self.assertIsNotNone(out.cpu_s)
            self.assertEqual(out.error, "")
            rows = out.samples.decode().splitlines()
            self.assertEqual("metric_name,timestamp,metric_value", rows[0])
            self.assertEqual(3000, len(rows) - 1)
            self.assertTrue(all(r.startswith("http_req_duration,") for r in rows[1:]))
            self.assertGreater(p.stdout.count("KVLAB-JOB samples "), 1, "in lines a log keeps whole")
            self.assertTrue(all(len(line) < 8100 for line in p.stdout.splitlines()))

    def test_samples_too_large_for_the_log_are_left_out_and_said_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.run_job(Path(tmp), signal=True, extra={"SAMPLES_MAX_BYTES": "100"})
            out = outputs.parse_job_log(p.stdout, 1)
            self.assertIsNone(out.samples)
            self.assertIn("over 100", out.samples_note)
            self.assertEqual({"requests": 5}, out.summary)

    def test_without_a_signal_it_gives_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.run_job(Path(tmp), signal=False)
            self.assertEqual(p.returncode, 3)
            self.assertIn("no start signal", outputs.parse_job_log(p.stdout, 1).error)

    def test_an_index_past_the_sequence_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = self.run_job(Path(tmp), signal=True, index=3)
            self.assertEqual(p.returncode, 3)
            self.assertIn("has no segment", p.stdout)


class ParsingTest(unittest.TestCase):
    def test_job_log(self):
        log = (
            "KVLAB-JOB version wrk debian/4.1.0\nKVLAB-JOB ready\nKVLAB-JOB start 100\nRunning 15s test\n"
            "KVLAB-JOB end 200\nKVLAB-JOB exit 0\nKVLAB-JOB times 0m0.004s 0m0.001s 1m2.500s 0m0.500s \n"
        )
        out = outputs.parse_job_log(log, 0)
        self.assertEqual((out.version, out.start_ns, out.end_ns, out.exit_code), ("wrk debian/4.1.0", 100, 200, 0))
        self.assertAlmostEqual(out.cpu_s, 63.0)
        self.assertIsNone(out.summary)

    def test_why_a_pod_waits(self):
        pending = {
            "metadata": {"name": "p0"},
            "status": {"conditions": [{"type": "PodScheduled", "status": "False", "message": "Insufficient cpu"}]},
        }
        self.assertEqual(kubectl.why_waiting(pending), "p0 not scheduled: Insufficient cpu")
        creating = {
            "metadata": {"name": "p1"},
            "status": {"containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]},
        }
        self.assertEqual(kubectl.why_waiting(creating), "")

    def test_cgroup_cpu(self):
        self.assertAlmostEqual(cpu.container_cpu_seconds("usage_usec 2500000\nuser_usec 1\n"), 2.5)
        self.assertAlmostEqual(cpu.container_cpu_seconds("1500000000\n"), 1.5)
        with self.assertRaises(ValueError):
            cpu.container_cpu_seconds("cat: no such file")

    def test_phases_may_name_their_tool(self):
        self.assertEqual(phase_scenario.phase_spec("get"), ("get", None))
        self.assertEqual(phase_scenario.phase_spec("get@wrk"), ("get", "wrk"))
        for bad in ("nap", "get@ab", "mixed@wrk", "fill@wrk"):
            with self.assertRaises(SystemExit):
                phase_scenario.phase_spec(bad)
        cfg = settings.RunConfig(targets=["http://x"], pids=[], tool="k6")
        self.assertEqual(cfg.spec("get", tool="wrk").tool, "wrk")
        self.assertEqual(cfg.spec("mixed").tool, "k6")

    def test_profiling_windows_leave_gaps_for_copying(self):
        windows = profiling.plan(["cpu", "alloc", "lock", "wall"], 12, gap_s=2.0)
        self.assertEqual([w.event for w in windows], ["cpu", "alloc", "lock"])
        for a, b in zip(windows, windows[1:]):
            self.assertAlmostEqual(b.offset_s - (a.offset_s + a.seconds), 2.0)
        self.assertLessEqual(windows[-1].offset_s + windows[-1].seconds, 11.0 + 1e-9)
        self.assertEqual(profiling.plan(["cpu"], 30, gap_s=2.0), profiling.plan(["cpu"], 30))


class MergeTest(unittest.TestCase):
    def test_k6_results_of_the_pods_add_up(self):
        parts = [k6_part(1000, uniform_latency(1, 3), dropped=2), k6_part(3000, uniform_latency(1, 30), ok=True)]
        r = outputs.merge_k6(parts)
        self.assertEqual(r["requested_rate"], 200)  # every pod knows the whole rate; it sends its segment
        self.assertEqual(r["requests"], 4000)
        self.assertAlmostEqual(r["achieved_rate"], 400)
        self.assertEqual((r["dropped_iterations"], r["vus_max"]), (2, 64))
        self.assertEqual(r["status_counts"], {"200": 3998, "504": 2})
        self.assertAlmostEqual(r["error_rate"], 0.01)
        self.assertIn("2 pods", r["model"])
        # p99 of the whole is over the 10 ms SLO although it held in one pod: recomputed, not ANDed.
        self.assertFalse(r["thresholds"]["http_req_duration"])
        self.assertFalse(r["thresholds"]["http_req_duration{op:get}"])
        self.assertTrue(r["thresholds"]["http_req_failed"])

    def test_fill_of_several_pods(self):
        a, b = k6_part(500, uniform_latency(1, 2), rate=None), k6_part(500, uniform_latency(1, 2), rate=None)
        b["duration_s"] = 8
        r = outputs.merge_k6([a, b])
        self.assertIsNone(r["requested_rate"])
        self.assertEqual(r["duration_s"], 8)
        self.assertAlmostEqual(r["achieved_rate"], 1000 / 8)

    def test_pods_table(self):
        outs = [
            outputs.PodOutput(0, pod="p0", start_ns=1_000_000_000, cpu_s=2.0, exit_code=0),
            outputs.PodOutput(1, pod="p1", start_ns=1_004_000_000, cpu_s=1.0, exit_code=99),
        ]
        rows = outputs.pods_table(outs, [k6_part(10, uniform_latency(1, 3)), None], 10.0)
        self.assertEqual([r["start_ms"] for r in rows], [0.0, 4.0])
        self.assertEqual([r["cores"] for r in rows], [0.2, 0.1])
        self.assertEqual(rows[0]["requests"], 10)
        self.assertIsNone(rows[1]["p99"])


class K8sConfigTest(unittest.TestCase):
    def test_the_default_wrk_image_is_the_one_make_builds(self):
        out = subprocess.run(["make", "-s", "-n", "--eval=print-wrk-image: ; @echo $(WRK_IMAGE)", "print-wrk-image"],
                             cwd=tools.ROOT, capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(["echo", K8sConfig().wrk_image], out[-2:])


class PodProfilingTest(unittest.TestCase):
    def test_runs_profile_pod_sh_and_keeps_its_graph_under_the_usual_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            prof = podprofiling.PodProfiling([profiling.Node("kvlab-1", 0, "")], [], out, namespace="ns", kubectl="kubectl")
            path = out / "kvlab-1-cpu.html"
            argv, _ = prof.command(prof.nodes[0], "cpu", 4.0, path)
            self.assertEqual(argv[:3], ["env", "K8S_NAMESPACE=ns", "KUBECTL=kubectl"])
            self.assertEqual(argv[3:7], [str(podprofiling.PROFILE_POD_SH), "kvlab-1", "cpu", "4.0"])
            folder = Path(argv[7])
            folder.mkdir()
            (folder / "kvlab-1-cpu-20260101-000000.html").write_text("<html>graph</html>")
            self.assertTrue(prof.collected(prof.nodes[0], path, 0))
            self.assertEqual(path.read_text(), "<html>graph</html>")
            self.assertFalse(folder.exists())
            self.assertFalse(prof.collected(prof.nodes[0], out / "kvlab-1-alloc.html", 1))


class FakePods:
    """A stand-in kubectl whose `exec ... -- CMD` runs CMD here, with a stand-in curl that serves
    the management port: the Prometheus page, the kvlab actuator, the repair request. A file
    missing-POD makes kubectl fail for that pod; paused-POD makes curl hang for the seconds it holds."""

    def __init__(self, tmp: Path):
        self.dir = tmp
        (tmp / "page").write_text(PAGE)
        self.kubectl = tmp / "kubectl"
        self.kubectl.write_text(
            "#!/bin/sh\n"
            f'echo "$*" >> {tmp}/calls\n'
            "pod=\n"
            'while [ $# -gt 0 ] && [ "$1" != -- ]; do case "$1" in kvlab-*) pod=$1;; esac; shift; done\n'
            "shift\n"
            f'if [ -e "{tmp}/missing-$pod" ]; then echo "Error from server (NotFound): pods \\"$pod\\" not found" >&2; '
            "exit 1; fi\n"
            f'PATH="{tmp}/bin:$PATH" POD=$pod KVLAB_CLUSTER_SECRET_FILE={tmp}/secret exec "$@"\n'
        )
        (tmp / "bin").mkdir()
        curl = tmp / "bin" / "curl"
        curl.write_text(
            "#!/bin/sh\n"
            f'echo "$POD $*" >> {tmp}/curl\n'
            f'case " $* " in *" @- "*) echo "$POD stdin $(cat)" >> {tmp}/curl ;; esac\n'
            "for a; do url=$a; done\n"
            f'paused={tmp}/paused-$POD\n'
            'if [ -e "$paused" ]; then sleep "$(cat "$paused")"; echo "curl: (28) timed out" >&2; exit 28; fi\n'
            'case "$url" in\n'
            f'  */actuator/prometheus) cat {tmp}/page ;;\n'
            "  */actuator/kvlab/repair) echo '{}' ;;\n"
            '  */actuator/kvlab) echo \'{"repair": {"peers": {"p": {"running": false, '
            '"lastRound": {"started": "2999-01-01T00:00:00Z"}}}}}\' ;;\n'
            '  *) echo "curl: (22) The requested URL returned error: 404" >&2; exit 22 ;;\n'
            "esac\n"
        )
        (tmp / "secret").write_text("the-pods-cluster-secret-0123456789\n")
        for f in (self.kubectl, curl):
            f.chmod(0o755)

    def executor(self, pods: list[str]) -> executor.K8sExecutor:
        ex = executor.K8sExecutor.__new__(executor.K8sExecutor)
        ex.kubectl = kubectl.Kubectl(str(self.kubectl), "ns")
        ex.nodes = [profiling.Node(p, 0, "") for p in pods]
        ex.management = management.Management(ex.kubectl, pods, retry_s=0.0)
        return ex

    def calls(self, name: str = "calls") -> list[str]:
        path = self.dir / name
        return path.read_text().splitlines() if path.exists() else []


class ManagementTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.pods = FakePods(Path(self.tmp.name))
        self.ex = self.pods.executor(["kvlab-0", "kvlab-1"])

    def tearDown(self):
        self.ex.management.close()
        self.tmp.cleanup()

    def test_every_pods_metrics_through_one_exec_each_or_why_not(self):
        (self.pods.dir / "missing-kvlab-1").touch()
        for _ in range(3):
            got = self.ex.node_metrics(timeout=5)
            self.assertEqual(got["kvlab-0"], promtext.parse(PAGE))
            self.assertIn('pods "kvlab-1" not found', got["kvlab-1"])
        execs = [c for c in self.pods.calls() if "kvlab-0" in c]
        self.assertEqual(len(execs), 1, "one long-lived exec answers every scrape")
        self.assertIn("--namespace ns exec -i kvlab-0 -c kvlab -- sh -c", execs[0])
        scrapes = [c for c in self.pods.calls("curl") if c.startswith("kvlab-0 ")]
        self.assertEqual(len(scrapes), 3)
        self.assertTrue(all(c.endswith(" http://127.0.0.1:9080/actuator/prometheus") for c in scrapes))
        self.assertEqual(self.ex.heal_sample()["kvlab-0"], healing.parse(PAGE))

    def test_a_pod_that_does_not_answer_costs_its_deadline_and_nothing_piles_up(self):
        self.assertIsInstance(self.ex.node_metrics(timeout=5)["kvlab-0"], dict)
        (self.pods.dir / "paused-kvlab-0").write_text("1.5")
        before = len(self.pods.calls("curl"))
        for _ in range(3):
            t = time.monotonic()
            got = self.ex.node_metrics(timeout=0.2)
            self.assertLess(time.monotonic() - t, 0.5)
            self.assertIsInstance(got["kvlab-0"], str)
            self.assertIsInstance(got["kvlab-1"], dict)
        scrapes = [c for c in self.pods.calls("curl")[before:] if c.startswith("kvlab-0 ")]
        self.assertEqual(len(scrapes), 1, "a call waits for the pod's earlier scrape instead of sending another")
        (self.pods.dir / "paused-kvlab-0").unlink()
        self.assertEqual(self.ex.node_metrics(timeout=2)["kvlab-0"], promtext.parse(PAGE))

    def test_an_exec_that_ended_starts_again(self):
        self.assertIsInstance(self.ex.node_metrics(timeout=5)["kvlab-0"], dict)
        channel = self.ex.management.channels["kvlab-0"]
        channel._proc.kill()  # as when the pod's container restarts
        deadline = time.monotonic() + 5
        while channel._proc is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.ex.node_metrics(timeout=5)["kvlab-0"], promtext.parse(PAGE))
        self.assertEqual(channel.starts, 2)

    def test_a_sampler_may_read_other_figures_of_the_page(self):
        lines = lambda page: {"lines": float(len(page.splitlines()))}  # noqa: E731
        got = self.ex.node_metrics(timeout=5, parse=lines)
        self.assertEqual(got["kvlab-0"], {"lines": float(len(PAGE.splitlines()))})

    def test_a_request_that_fails_says_how(self):
        with self.assertRaisesRegex(RuntimeError, "kvlab-0: /nowhere: curl exited 22: .*404"):
            self.ex.management.request("kvlab-0", "/nowhere")

    def test_after_a_fault_it_waits_for_the_hints_then_asks_every_pod_for_repair(self):
        pending = 'kvlab_hints_pending{application="kvlab"}'
        page = PAGE.replace(f"{pending} 20.0", f"{pending} 0.0")
        self.assertNotEqual(page, PAGE)
        (self.pods.dir / "page").write_text(page)
        out = self.ex.await_healed(10)
        self.assertTrue(out["healed"], out)
        repairs = [c for c in self.pods.calls("curl") if "-X POST" in c and c.endswith("/actuator/kvlab/repair")]
        self.assertEqual(sorted(c.split()[0] for c in repairs), ["kvlab-0", "kvlab-1"])
        # Each with the pod's own secret as its credential, given to curl on its stdin.
        credentials = [c for c in self.pods.calls("curl") if " stdin " in c]
        self.assertEqual(sorted(credentials), [f"{p} stdin Authorization: Bearer the-pods-cluster-secret-0123456789" for p in ("kvlab-0", "kvlab-1")])

    def test_closed_channels_end_their_execs(self):
        self.ex.node_metrics(timeout=5)
        proc = self.ex.management.channels["kvlab-0"]._proc
        self.ex.management.close()
        self.assertIsNotNone(proc.poll())
        self.assertIn("closed", self.ex.node_metrics(timeout=1)["kvlab-0"])


def kvlab_pod(name: str, uid: str = "u0", restarts: int = 0, ready: bool = True, sidecar: bool = True) -> dict:
    """A kvlab pod as kubectl get pod -o json shows it (the parts the executor reads)."""
    liveness = {"httpGet": {"path": "/health"}, "periodSeconds": 10, "failureThreshold": 3, "timeoutSeconds": 3}
    containers = [{"name": "kvlab", "image": "kvlab/service:0.1.0", "livenessProbe": liveness}]
    if sidecar:
        containers.append({"name": "profiler", "image": "kvlab/profiler:0.1.0"})
    return {
        "metadata": {"name": name, "uid": uid},
        "spec": {"containers": containers},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [
                {"name": c["name"], "restartCount": restarts if c["name"] == "kvlab" else 0} for c in containers
            ],
        },
    }


class FakeKubectl:
    """Records every call; `get pod` answers from a queue per pod (the last answer repeats, an
    exception is raised), the sidecar's signal script prints the JVM's pid, other calls print
    nothing. fail maps a call's first words to the errors it raises, one per call."""

    def __init__(self, pods: dict[str, list] | None = None, pid: int = 4242):
        self.pods = pods or {}
        self.pid = pid
        self.calls: list[tuple[str, ...]] = []
        self.fail: dict[tuple[str, ...], list[Exception]] = {}

    def _failure(self, args: tuple[str, ...]) -> None:
        for prefix, errors in self.fail.items():
            if args[: len(prefix)] == prefix and errors:
                raise errors.pop(0)

    def run(self, *args: str, stdin=None, timeout: float = 60, check: bool = True) -> str:
        self.calls.append(args)
        self._failure(args)
        if args[0] == "exec" and podfaults.SIGNAL in args:
            return f"{self.pid}\n"
        return ""

    def json(self, *args: str, timeout: float = 60) -> dict:
        self.calls.append(args)
        self._failure(args)
        if args[:2] == ("get", "pod"):
            queue = self.pods[args[2]]
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
            if isinstance(answer, Exception):
                raise answer
            return answer
        if args[:2] == ("get", "pods"):
            return {"items": [q[0] for q in self.pods.values()]}
        raise AssertionError(f"unexpected kubectl {args}")

    def signals(self) -> list[tuple[str, ...]]:
        """The signal calls: (pod, signal[, pid])."""
        return [(c[1], *c[c.index("sh", 8) + 1 :]) for c in self.calls if c[0] == "exec" and podfaults.SIGNAL in c]


def fault_executor(fake: FakeKubectl, pods: list[dict]) -> executor.K8sExecutor:
    ex = executor.K8sExecutor.__new__(executor.K8sExecutor)
    ex.kubectl = fake
    ex.pods = pods
    ex.nodes = [profiling.Node(p["metadata"]["name"], 0, "") for p in pods]
    ex.restarts = {p["metadata"]["name"]: 0 for p in pods}
    ex.release = release.Release.__new__(release.Release)
    ex.release.kubectl, ex.release.selector = fake, "app.kubernetes.io/instance=kvlab"
    ex.faults, ex._counted_faults = [], set()
    ex.management = management.Management(fake, [])
    return ex


class PodFaultsTest(unittest.TestCase):
    def test_a_pause_stops_the_jvm_from_the_sidecar_and_lets_the_same_one_go_on(self):
        fake = FakeKubectl()
        f = podfaults.PodPause("kvlab-2", 0, 1, kubectl=fake)
        f.begin()
        f.end()
        self.assertEqual(fake.signals(), [("kvlab-2", "STOP"), ("kvlab-2", "CONT", "4242")])
        self.assertEqual(fake.calls[0][:4], ("exec", "kvlab-2", "-c", "profiler"))
        self.assertEqual(f.describe(), "pod kvlab-2's JVM (pid 4242) paused (SIGSTOP, then SIGCONT)")

    def test_sigcont_is_tried_again_unless_the_jvm_is_another_one(self):
        fake = FakeKubectl()
        fake.fail[("exec",)] = [RuntimeError("error dialing backend: EOF")]
        f = podfaults.PodPause("kvlab-2", 0, 1, kubectl=fake, pid=4242, sleep=lambda s: None)
        f.end()
        self.assertEqual(fake.signals(), [("kvlab-2", "CONT", "4242")] * 2)
        fake.fail[("exec",)] = [RuntimeError("the JVM is pid 77 now, not 4242: it was restarted")]
        with self.assertRaisesRegex(RuntimeError, "it was restarted"):
            f.end()
        self.assertEqual(len(fake.signals()), 3)

    def test_on_its_schedule_and_ended_by_stop_when_the_phase_is_cut_short(self):
        fake = FakeKubectl()
        f = podfaults.PodPause("kvlab-1", 0.05, 60, kubectl=fake).start(time.monotonic())
        deadline = time.monotonic() + 5
        while f.began_at_s is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertGreaterEqual(f.began_at_s, 0.05)
        f.stop()
        self.assertEqual(fake.signals(), [("kvlab-1", "STOP"), ("kvlab-1", "CONT", "4242")])
        record = f.record()
        self.assertEqual((record["kind"], record["node"], record["error"]), ("pause", "kvlab-1", ""))
        self.assertLess(record["ended_at_s"], 5)

    def test_a_kill_ends_once_a_new_container_is_ready(self):
        before = kvlab_pod("kvlab-0", restarts=1)
        after = [kvlab_pod("kvlab-0", restarts=2, ready=False), kvlab_pod("kvlab-0", restarts=2)]
        fake = FakeKubectl({"kvlab-0": [before, before, *after]})
        slept = []
        f = podfaults.PodKill("kvlab-0", 0, 1, kubectl=fake, sleep=slept.append)
        f.begin()
        self.assertEqual(fake.signals(), [("kvlab-0", "KILL")])
        f.end()
        self.assertEqual(len(slept), 2)  # not restarted yet, then restarted but not ready
        self.assertIn("killed (SIGKILL)", f.describe())

    def test_without_a_sidecar_the_pod_is_deleted_and_waited_for(self):
        gone = RuntimeError('Error from server (NotFound): pods "kvlab-0" not found')
        fake = FakeKubectl(
            {"kvlab-0": [kvlab_pod("kvlab-0", "u0", sidecar=False), gone, kvlab_pod("kvlab-0", "u1", sidecar=False)]}
        )
        f = podfaults.PodKill("kvlab-0", 0, 1, kubectl=fake, sidecar=False, sleep=lambda s: None)
        f.begin()
        f.end()
        self.assertIn(("delete", "pod", "kvlab-0", "--grace-period=1", "--wait=false"), fake.calls)
        self.assertEqual(fake.signals(), [])

    def test_a_pod_that_does_not_come_back_is_an_error_in_bounded_time(self):
        fake = FakeKubectl({"kvlab-0": [kvlab_pod("kvlab-0")]})
        now = [0.0]
        f = podfaults.PodKill(
            "kvlab-0",
            0,
            1,
            kubectl=fake,
            ready_timeout_s=30,
            clock=lambda: now[0],
            sleep=lambda s: now.__setitem__(0, now[0] + s),
        )
        f.begin()
        with self.assertRaisesRegex(RuntimeError, "kvlab-0 not ready 30 s after the kill .not restarted yet"):
            f.end()

    def test_the_signal_script_finds_the_jvm_and_no_other_process(self):
        """SIGNAL in a process namespace of its own, with a `java` (a copy of sleep) in it."""
        with tempfile.TemporaryDirectory() as tmp:
            java = Path(tmp) / "java"
            java.write_bytes(Path(shutil.which("sleep")).read_bytes())
            java.chmod(0o755)
            script = (
                f'{java} 30 & sleep 0.2\n'
                'pid=$(sh -c "$SIGNAL" sh STOP) || exit 1\n'
                'echo "stopped $pid $(sed -n "s/^State:\\t\\(.\\).*/\\1/p" /proc/$pid/status)"\n'
                'sh -c "$SIGNAL" sh CONT 999999 2>&1; echo "other $?"\n'
                'sh -c "$SIGNAL" sh CONT "$pid" >/dev/null && sleep 0.1\n'
                'echo "going $(sed -n "s/^State:\\t\\(.\\).*/\\1/p" /proc/$pid/status)"\n'
                'sh -c "$SIGNAL" sh KILL >/dev/null; wait; sh -c "$SIGNAL" sh KILL 2>&1; echo "none $?"\n'
            )
            try:
                p = subprocess.run(
                    ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script],
                    env=os.environ | {"SIGNAL": podfaults.SIGNAL},
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
            except OSError as e:
                self.skipTest(f"no unshare: {e}")
            if "unshare:" in p.stderr:
                self.skipTest(p.stderr.strip())
            lines = p.stdout.splitlines()
            self.assertRegex(lines[0], r"^stopped \d+ T$", p.stdout + p.stderr)
            self.assertIn("it was restarted", lines[1])
            self.assertEqual(lines[2], "other 4")
            self.assertIn(lines[3], ("going S", "going R"))
            self.assertEqual(lines[4:], ["no JVM among the pod's processes", "none 3"])


class ExecutorFaultsTest(unittest.TestCase):
    def setUp(self):
        self.pods = [kvlab_pod(f"kvlab-{i}") for i in range(3)]
        self.fake = FakeKubectl({p["metadata"]["name"]: [p] for p in self.pods})
        self.ex = fault_executor(self.fake, self.pods)

    def test_the_outage_pauses_the_last_pod(self):
        f = runrecord.Run.outage(mock.Mock(executor=self.ex), 10, 10)
        self.assertIsInstance(f, podfaults.PodPause)
        self.assertEqual((f.node, f.at_s, f.for_s), ("kvlab-2", 10, 10))

    def test_what_cannot_be_done_is_refused_before_the_run(self):
        with self.assertRaisesRegex(SystemExit, "NetworkPolicy only stops new connections"):
            self.ex.fault("cutoff", 1, 5, 5)
        with self.assertRaisesRegex(SystemExit, "cannot make a flood fault"):
            self.ex.fault("flood", 1, 5, 5)
        bare = fault_executor(self.fake, [kvlab_pod("kvlab-0", sidecar=False), kvlab_pod("kvlab-1", sidecar=False)])
        with self.assertRaisesRegex(SystemExit, "profiler.enabled=true"):
            bare.fault("pause", 0, 5, 5)
        self.assertFalse(bare.fault("kill", 0, 5, 5).sidecar)
        with self.assertRaisesRegex(SystemExit, "no pod 3 for a kill fault: the release has 3"):
            self.ex.fault("kill", 3, 5, 5)
        with self.assertRaisesRegex(SystemExit, "two pods or more"):
            fault_executor(self.fake, self.pods[:1]).fault("kill", 0, 5, 5)
        self.assertEqual(self.fake.calls, [])

    def test_a_pause_longer_than_the_liveness_probe_allows_is_warned_about(self):
        self.assertEqual(podfaults.liveness_allows_s(self.pods[0]), 23)
        with mock.patch.object(podfaults, "log") as log:
            self.ex.fault("pause", 0, 5, 10)
            log.assert_not_called()
            self.ex.fault("pause", 0, 5, 30)
        self.assertIn("longer than pod kvlab-0's liveness probe allows (23 s)", log.call_args[0][0])

    def test_a_restart_the_phases_kill_made_is_expected_and_no_other(self):
        kill = self.ex.fault("kill", 1, 0, 1)
        kill.began_at_s = 0.5
        self.fake.pods["kvlab-1"] = [kvlab_pod("kvlab-1", restarts=1)]
        self.ex.after_phase("put")
        self.assertEqual(self.ex.restarts["kvlab-1"], 1)
        self.ex.after_phase("get")
        self.fake.pods["kvlab-1"] = [kvlab_pod("kvlab-1", restarts=2)]
        with self.assertRaisesRegex(SystemExit, "pod kvlab-1 restarted during phase mixed"):
            self.ex.after_phase("mixed")

    def test_a_kill_made_before_the_first_phase_is_expected_in_the_phase_it_begins_in(self):
        kill = self.ex.fault("kill", 1, 20, 15)  # the fault scenario makes its faults before the fill
        self.ex.after_phase("fill")
        self.ex.after_phase("warm-up mixed")
        kill.began_at_s = 20.0
        self.fake.pods["kvlab-1"] = [kvlab_pod("kvlab-1", restarts=1)]
        self.ex.after_phase("faults")
        self.assertEqual(self.ex.restarts["kvlab-1"], 1)

    def test_closing_ends_a_pause_still_on(self):
        self.ex.fault("kill", 0, 0, 1)  # never started: nothing to end
        f = self.ex.fault("pause", -1, 0, 20).start(time.monotonic())
        deadline = time.monotonic() + 5
        while f.began_at_s is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self.ex.k, self.ex.run_id = K8sConfig(), "abc123"
        self.ex.close()  # as when the run is interrupted
        self.assertEqual(self.fake.signals(), [("kvlab-2", "STOP"), ("kvlab-2", "CONT", "4242")])
        self.assertEqual(self.fake.calls[-1][:3], ("delete", "jobs,configmaps", "-l"))


class LabScriptTest(unittest.TestCase):
    """k8s/lab.sh (make lab LAB_TARGET=k8s) hands each scenario to its command of python -m lab."""

    def lab_sh(self, tmp: Path, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
        py = tmp / "python"
        py.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp}/argv\n')
        py.chmod(0o755)
        p = subprocess.run(
            ["bash", str(tools.ROOT / "k8s" / "lab.sh"), "--rate", "300"],
            env=os.environ | {"LAB_PY": str(py), "LAB_WRK_IMAGE": "kvlab/wrk:0.1.0"} | env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        argv = (tmp / "argv").read_text().splitlines() if (tmp / "argv").exists() else []
        return p, argv

    def test_each_scenario_its_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, argv = self.lab_sh(Path(tmp), SCENARIO="faults")
            self.assertEqual(argv[:3], ["-m", "lab", "faults"])
            self.assertEqual(argv[-2:], ["--rate", "300"])
            self.assertIn("--executor", argv)
            _, argv = self.lab_sh(Path(tmp), SCENARIO="saturation")
            self.assertEqual(argv[:3], ["-m", "lab", "saturate"])
            _, argv = self.lab_sh(Path(tmp), SCENARIO="phases")
            self.assertEqual(argv[:3], ["-m", "lab", "run"])

    def test_an_unknown_scenario_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, argv = self.lab_sh(Path(tmp), SCENARIO="chaos")
            self.assertEqual((p.returncode, argv), (2, []))
            self.assertIn("unknown SCENARIO=chaos", p.stderr)


class FactsTest(unittest.TestCase):
    def test_a_pod_and_its_jvm_for_the_report(self):
        pod = {
            "metadata": {"name": "kvlab-1"},
            "spec": {
                "nodeName": "vm",
                "containers": [
                    {
                        "name": "kvlab",
                        "image": "kvlab/service:0.1.0",
                        "env": [{"name": "JAVA_OPTS", "value": "-XX:MaxRAMPercentage=50"}],
                        "resources": {"limits": {"memory": "1Gi"}},
                    },
                    {"name": "profiler", "image": "kvlab/profiler:0.1.0"},
                ],
            },
            "status": {
                "containerStatuses": [
                    {"name": "kvlab", "imageID": "sha256:abc", "restartCount": 2},
                    {"name": "profiler", "imageID": "sha256:def", "restartCount": 1},
                ]
            },
        }
        pod_, jvm = facts.pod_facts(pod, "openjdk 25\nOpenJDK Runtime")
        self.assertEqual((pod_["node"], pod_["restarts"]), ("vm", 3))
        self.assertEqual(
            pod_["containers"][0],
            {
                "name": "kvlab",
                "image": "kvlab/service:0.1.0",
                "image_id": "sha256:abc",
                "resources": "limits memory 1Gi",
            },
        )
        self.assertEqual(pod_["containers"][1]["resources"], "none set")
        self.assertEqual(jvm["version"], "openjdk 25; OpenJDK Runtime")
        self.assertEqual(jvm["command_line"], "(the image's entrypoint); JAVA_OPTS=-XX:MaxRAMPercentage=50")

    def test_the_loopback_is_this_machine_and_a_documentation_address_is_not(self):
        self.assertTrue(facts.is_local_address("127.0.0.1"))
        self.assertFalse(facts.is_local_address("192.0.2.1"))


class ImportsTest(unittest.TestCase):
    def test_the_k8s_package_is_in_no_import_cycle(self):
        """Every import between the lab's modules (also those inside functions) as an edge: no
        cycle may pass through lab.k8s, and only the CLI reaches into it from outside."""
        root = Path(__file__).resolve().parents[1]
        graph: dict[str, set[str]] = {}
        for path in root.rglob("*.py"):
            if "tests" in path.relative_to(root).parts:
                continue
            parts = ["lab", *path.relative_to(root).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            module = ".".join(parts[:-1] if is_package else parts)
            package = module.split(".") if is_package else module.split(".")[:-1]
            edges = graph.setdefault(module, set())
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                    for alias in node.names:
                        sub = f"{target}.{alias.name}"
                        edges.add(sub if (root.parent / sub.replace(".", "/")).with_suffix(".py").exists() else target)
        seen: dict[str, int] = {}

        def visit(m: str, stack: list[str]) -> None:
            seen[m] = 1
            for n in sorted(graph.get(m, ())):
                if n not in graph or n == m:
                    continue
                if seen.get(n) == 1:
                    cycle = stack[stack.index(n) :] + [n]
                    if any(x.startswith("lab.k8s") for x in cycle):
                        self.fail("import cycle: " + " -> ".join(cycle))
                elif n not in seen:
                    visit(n, stack + [n])
            seen[m] = 2

        for m in sorted(graph):
            if m not in seen:
                visit(m, [m])
        self.assertIn("lab.k8s.executor", graph["lab.k8s"])
        inside = lambda m: m.startswith("lab.k8s")  # noqa: E731
        outside = {m for m, edges in graph.items() if not inside(m) and any(inside(e) for e in edges)}
        self.assertEqual(outside, {"lab.options"})


class K8sReportTest(unittest.TestCase):
    def test_report_of_a_run_in_kubernetes(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_run(root, "20260101-000000-test", 1.0)  # a local run: not compared with
            d = write_run(root, "20260102-000000-test", 1.0)
            doc = json.loads((d / "run.json").read_text())
            doc["executor"] = "k8s"
            doc["nodes"] = [{"name": "kvlab-0", "pid": 0, "target": "http://kvlab.ns.svc.cluster.local:8080"}]
            for ph in doc["phases"]:
                ph["cpu"]["processes"] = {"kvlab-0": {"cpu_s": 5, "cores": 0.5, "us_per_request": 50.0}}
                del ph["cpu"]["others_cpu_s"]
                ph["result"]["pods"] = [
                    {
                        "index": 0,
                        "pod": "lab-put-0-x",
                        "node": "vm",
                        "segment": "0:1/2",
                        "start_ms": 0.0,
                        "exit_code": 0,
                        "requests": 100,
                        "achieved_rate": 10.0,
                        "dropped": 0,
                        "p50": 1.0,
                        "p99": 2.0,
                        "max": 3.0,
                        "cpu_s": 1.0,
                        "cores": 0.1,
                    }
                ]
                ph["result"]["latency_merge"] = "the pods' percentile spectra mixed"
            (d / "run.json").write_text(json.dumps(doc))
            env = json.loads((d / "env.json").read_text())
            env["jvms"] = [{"pid": "kvlab-0", "label": "in pod kvlab-0", "version": "openjdk 25", "command_line": "x"}]
            env["wrk"]["image"] = "kvlab/wrk:0.1.0"
            env["k8s"] = {
                "api_server_local": False,
                "kubectl": "v1.34.4",
                "server": "v1.34.4",
                "helm": "v3.19.5",
                "nodes": [
                    {
                        "name": "vm",
                        "cpu": "2",
                        "memory": "24Gi",
                        "allocatable_cpu": "2",
                        "os_image": "Debian",
                        "kernel": "6",
                        "runtime": "containerd://1.6",
                        "kubelet": "v1.34.4",
                    }
                ],
                "namespace": "ns",
                "release": {
                    "name": "kvlab",
                    "chart": "kvlab-0.1.0",
                    "app_version": "0.1.0",
                    "revision": 1,
                    "values": "{}",
                },
                "target": "http://kvlab.ns.svc.cluster.local:8080",
                "pods": [
                    {
                        "name": "kvlab-0",
                        "node": "vm",
                        "restarts": 0,
                        "containers": [{"name": "kvlab", "image": "kvlab/service:0.1.0", "resources": "x"}],
                    }
                ],
                "k6_image": "kvlab/k6:1.8.1",
                "k6_pods": 2,
                "k6_resources": "requests cpu 200m",
                "wrk_image": "kvlab/wrk:0.1.0",
                "wrk_resources": "requests cpu 100m",
            }
            (d / "env.json").write_text(json.dumps(env))
            md = report.generate(d)[0].read_text()
            for part in (
                "| JVM in pod kvlab-0 | openjdk 25 |",
                "| Kubernetes | server v1.34.4, kubectl v1.34.4, helm v3.19.5; the cluster runs on other machines |",
                "| node vm | 2 cores (2 allocatable)",
                "| pod kvlab-0 | on node vm, 0 restarts; kvlab: `kvlab/service:0.1.0` (x) |",
                "| k6 Jobs | image `kvlab/k6:1.8.1`, 2 pods per phase",
                "| pod kvlab-0 | 0.50 | 50.0 |",
                "| lab-put-0-x | 0:1/2 | 0 | 100 | 10 | 1.00 | 2.00 | 3.00 | 0.10 | 0 |",
                "the pods' percentile spectra mixed",
                "No previous report",
            ):
                self.assertIn(part, md)
            self.assertNotIn("everything else on the machine", md)


if __name__ == "__main__":
    unittest.main()
