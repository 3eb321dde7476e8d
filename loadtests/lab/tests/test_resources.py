"""Self-tests of the soak's resource sampler (lab.resources): the figures of a node's Prometheus
page (lines recorded from a real node), RSS and open files of local processes (psutil), a pod's
memory from its cgroup through kubectl exec (the fakes of test_k8s: a stand-in kubectl that runs the
command here, and one that records its calls), the sampler's thread and its file."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest
from pathlib import Path

from lab import profiling, promtext, resources
from lab.tests.test_k8s import FakeKubectl, FakePods, fault_executor, kvlab_pod

MIB = 1 << 20
# From a node's /actuator/prometheus (-Xmx512m, G1), the series the sampler reads.
PAGE = """\
jvm_gc_live_data_size_bytes{application="kvlab"} 0.0
jvm_gc_max_data_size_bytes{application="kvlab"} 5.36870912E8
jvm_memory_usage_after_gc{application="kvlab",area="heap",pool="long-lived"} 0.03201030194759369
jvm_memory_used_bytes{application="kvlab",area="heap",id="G1 Old Gen"} 1.71854E7
kvlab_rocksdb{application="kvlab",property="estimate-pending-compaction-bytes"} 1048576.0
kvlab_rocksdb{application="kvlab",property="total-sst-files-size"} 9.4371840E7
kvlab_rocksdb_flushes_total{application="kvlab"} 4.0
process_files_max_files{application="kvlab"} 20000.0
process_files_open_files{application="kvlab"} 31.0
"""
STAT_V2 = "anon 734003200\nfile 1048576000\nkernel 5242880\n"
STAT_V1 = "cache 1048576000\nrss 700000000\nrss_huge 0\ntotal_cache 1048576000\ntotal_rss 734003200\n"


class PageTest(unittest.TestCase):
    def test_the_page_gives_heap_after_gc_and_rocksdb(self):
        got = resources.page_figures(promtext.parse(PAGE))
        self.assertAlmostEqual(got["heap_after_gc_bytes"], 0.03201030194759369 * 536870912)
        self.assertEqual(got["heap_max_bytes"], 536870912)
        self.assertEqual(got["sst_bytes"], 94371840)
        self.assertEqual(got["pending_compaction_bytes"], 1048576)
        self.assertNotIn("open_files", got)  # the JVM's count holds its sockets too

    def test_a_page_without_them_gives_nothing_invented(self):
        got = resources.page_figures(promtext.parse('kvlab_rocksdb_flushes_total{application="kvlab"} 4.0\n'))
        self.assertEqual(set(got.values()), {None})
        unbounded = PAGE.replace("5.36870912E8", "-1.0")  # a heap pool without a maximum
        self.assertIsNone(resources.page_figures(promtext.parse(unbounded))["heap_after_gc_bytes"])


class LocalProcessesTest(unittest.TestCase):
    def test_rss_and_open_files_of_a_node_by_pid_and_why_not_for_one_gone(self):
        nodes = [profiling.Node("n0", os.getpid(), ""), profiling.Node("n1", 2**22 + 7, "")]
        before = resources.LocalProcesses(nodes).read()["n0"]["open_files"]
        with tempfile.NamedTemporaryFile(), socket.socket():
            got = resources.LocalProcesses(nodes).read()
        self.assertGreater(got["n0"]["rss_bytes"], 1 * MIB)
        self.assertEqual(got["n0"]["open_files"], before + 1, "a file counts, a socket does not")
        self.assertIn(f"pid {2**22 + 7}: NoSuchProcess", got["n1"])
        nodes[1].pid = os.getpid()  # the lab started the node again: the reader follows its new pid
        self.assertIsInstance(resources.LocalProcesses(nodes).read()["n1"], dict)


class PodMemoryTest(unittest.TestCase):
    def test_memory_stat_v2_and_v1_and_the_jvms_open_files(self):
        self.assertEqual(resources.pod_figures(STAT_V2), {"rss_bytes": 734003200})
        self.assertEqual(resources.pod_figures(STAT_V1 + "jvm_open_files 57\n"), {"rss_bytes": 734003200, "open_files": 57})
        with self.assertRaisesRegex(ValueError, "no anon"):
            resources.pod_figures("file 1\n")

    def test_the_pod_script_counts_the_files_the_jvm_holds_open_not_devices(self):
        """POD_SCRIPT in a process namespace of its own, with a `java` (a copy of sleep) holding a
        file and /dev/null open."""
        if not shutil.which("unshare"):
            self.skipTest("no unshare")
        with tempfile.TemporaryDirectory() as tmp:
            java = Path(tmp) / "java"
            java.write_bytes(Path(shutil.which("sleep")).read_bytes())
            java.chmod(0o755)
            (Path(tmp) / "sst").write_text("x")
            script = f"{java} 30 <{tmp}/sst >/dev/null 2>/dev/null & sleep 0.3\n"
            p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script + resources.POD_SCRIPT],
                               capture_output=True, text=True, timeout=30)
            if "unshare:" in p.stderr:
                self.skipTest(p.stderr.strip())
        self.assertEqual(resources.pod_figures(p.stdout)["open_files"], 1, p.stdout[-300:] + p.stderr)

    def test_each_pod_read_through_kubectl_exec_in_its_kvlab_container(self):
        class Stats(FakeKubectl):
            def run(self, *args, stdin=None, timeout=60, check=True):
                self.calls.append(args)
                if args[1] == "kvlab-1":
                    raise RuntimeError("error: unable to upgrade connection: container not found")
                return STAT_V2

        fake = Stats()
        got = resources.PodMemory(fake, ["kvlab-0", "kvlab-1"]).read()
        self.assertEqual(got["kvlab-0"], {"rss_bytes": 734003200})
        self.assertIn("container not found", got["kvlab-1"])
        call = next(c for c in fake.calls if c[1] == "kvlab-0")
        self.assertEqual(call[:6], ("exec", "kvlab-0", "-c", "kvlab", "--", "sh"))
        self.assertEqual(call[-1], resources.POD_SCRIPT)

    def test_the_k8s_executor_reads_pods_and_the_local_one_processes(self):
        k8s = fault_executor(FakeKubectl(), [kvlab_pod("kvlab-0"), kvlab_pod("kvlab-1")])
        reader = resources.process_reader(k8s)
        self.assertIsInstance(reader, resources.PodMemory)
        self.assertEqual(reader.pods, ["kvlab-0", "kvlab-1"])

        class Local:
            name = "local"
            nodes = [profiling.Node("n0", os.getpid(), "")]

        self.assertIsInstance(resources.process_reader(Local()), resources.LocalProcesses)

    def test_a_pod_sampled_end_to_end_its_page_and_its_cgroup(self):
        """The stand-in kubectl runs the exec here: the script reads this machine's cgroup memory.stat."""
        if not any(Path(p).is_file() for p in ("/sys/fs/cgroup/memory.stat", "/sys/fs/cgroup/memory/memory.stat")):
            self.skipTest("no cgroup memory.stat here")
        with tempfile.TemporaryDirectory() as tmp:
            pods = FakePods(Path(tmp))
            (pods.dir / "page").write_text(PAGE)
            ex = pods.executor(["kvlab-0"])
            ex.name = "k8s"
            try:
                sampler = resources.Sampler(resources.page_reader(ex), resources.process_reader(ex), 60)
                sampler.sample()
            finally:
                ex.management.close()
        row = sampler.samples["kvlab-0"][0]
        self.assertGreater(row["rss_bytes"], 0)
        self.assertEqual(row["sst_bytes"], 94371840)
        self.assertEqual(sampler.missing, {})


class SamplerTest(unittest.TestCase):
    def test_samples_figures_of_both_sources_and_says_once_why_one_is_missing(self):
        now = [T := 1_795_642_000.0]
        pages = lambda: {"n0": promtext.parse(PAGE), "n1": "http://127.0.0.1:9901/actuator/prometheus: refused"}  # noqa: E731
        processes = type("P", (), {"read": lambda self: {"n0": {"rss_bytes": 700.0 * MIB, "open_files": 40.0},
                                                        "n1": {"rss_bytes": 650.0 * MIB, "open_files": 38.0}},
                                   "source": resources.LocalProcesses.source})()

        def clock():
            now[0] += 0.5
            return now[0]

        sampler = resources.Sampler(pages, processes, 10, clock=clock)
        sampler.sample()
        sampler.sample()
        n0, n1 = sampler.samples["n0"], sampler.samples["n1"]
        self.assertEqual(len(n0), 2)
        self.assertEqual(n0[0]["open_files"], 40)
        self.assertEqual((n0[0]["rss_bytes"], n0[0]["sst_bytes"]), (700 * MIB, 94371840))
        self.assertEqual((n1[0]["rss_bytes"], n1[0]["sst_bytes"], n1[0]["heap_after_gc_bytes"]), (650 * MIB, None, None))
        self.assertEqual(sampler.missing, {"n1": {"page": "http://127.0.0.1:9901/actuator/prometheus: refused"}})
        with tempfile.TemporaryDirectory() as tmp:
            doc = json.loads(sampler.write(Path(tmp), T).read_text())
        self.assertEqual([s["t"] for s in doc["nodes"]["n0"]], [0.75, 1.75])
        self.assertEqual(doc["figures"], list(resources.FIGURES))
        self.assertIn("psutil", doc["sources"]["rss_bytes"])
        self.assertIn("total-sst-files-size", doc["sources"]["sst_bytes"])

    def test_the_thread_samples_until_stopped_and_a_failing_source_never_stops_it(self):
        logged = []

        def pages():
            raise RuntimeError("kubectl is gone")

        reader = type("P", (), {"read": lambda self: {"n0": {"rss_bytes": 1.0}}})()
        sampler = resources.Sampler(pages, reader, 0.01, log=logged.append).start()
        deadline = 200
        while len(sampler.samples.get("n0", [])) < 3 and deadline:
            deadline -= 1
            __import__("time").sleep(0.01)
        sampler.stop()
        self.assertFalse(sampler._thread.is_alive())
        self.assertGreaterEqual(len(sampler.samples["n0"]), 3)
        self.assertIn("kubectl is gone", logged[0])


if __name__ == "__main__":
    unittest.main()
