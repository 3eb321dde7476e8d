"""Self-tests of the lab's pure parts: profiling windows, wrk output parsing, and the report
generator on a synthetic run (no server, no load). Run: make lab-selftest."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from lab import envinfo, flamegraph, jvmpauses, load, procstat, profiling, replication_cost, report, runrecord, settings, tools, wrkresult
from lab.scenarios import phases as phase_scenario
from lab.__main__ import main
from lab.executor import Prepared
from lab.options import duration as _duration
from lab.report import flames


def spectrum(scale: float) -> list[list[float]]:
    ps = [0.0, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0]
    return [[p, scale * (1 + 10 * p**8)] for p in ps]


def latency(scale: float) -> dict:
    spec = spectrum(scale)
    table = {
        "p50": spec[1][1],
        "p75": spec[2][1],
        "p90": spec[3][1],
        "p99": spec[4][1],
        "p99.9": spec[5][1],
        "p99.99": spec[6][1],
        "p99.999": spec[7][1],
        "p100": spec[8][1],
    }
    return {
        "unit": "ms",
        "min": spec[0][1],
        "mean": scale * 2,
        "max": spec[-1][1],
        "percentiles": table,
        "spectrum": spec,
    }


def phase(label: str, scale: float, rate: int, profiles: bool) -> dict:
    result = {
        "tool": "k6",
        "model": "open (constant-arrival-rate)",
        "scenario": label,
        "targets": ["http://127.0.0.1:8080"],
        "requested_rate": rate,
        "duration_s": 10,
        "requests": rate * 10,
        "achieved_rate": rate * 0.995,
        "dropped_iterations": 3,
        "error_rate": 0.001,
        "status_counts": {"200": rate * 10 - 10, "503": 10},
        "latency": {"all": latency(scale)},
        "thresholds": {"http_req_duration": scale < 5},
    }
    return {
        "label": label,
        "scenario": label,
        "dir": f"phases/01-{label}",
        "commands": [f"k6 run {label}.js"],
        "exit_codes": [0],
        "started": "",
        "finished": "",
        "cpu": {
            "wall_s": 10,
            "processes": {"123": {"cpu_s": 5, "cores": 0.5, "us_per_request": 50.0}},
            "loadgen": {"cpu_s": 3, "cores": 0.3, "us_per_request": 30.0, "tool": "k6"},
            "machine_busy_s": 9,
            "machine_busy_share": 0.45,
            "cores": 2,
            "others_cpu_s": 1,
            "jvm_pauses": {"123": {"safepoints": 40, "stopped_s": 0.12, "stopped_share": 0.012, "gc_pauses": 30, "gc_s": 0.105}},
            "threads": {
                "RocksDB flushes": {
                    "user_s": 0.5, "sys_s": 0.5, "waits": 10, "preemptions": 2,
                    "us_per_request": 10.0, "waits_per_request": 0.0001, "preemptions_per_request": 0.00002,
                },
                "event loops (HTTP, peers)": {
                    "user_s": 3, "sys_s": 1, "waits": 20000, "preemptions": 5000,
                    "us_per_request": 40.0, "waits_per_request": 0.2, "preemptions_per_request": 0.05,
                },
            },
        },
        "profiles": [
            {
                "node": "n0",
                "pid": 123,
                "target": "",
                "event": "cpu",
                "seconds": 4,
                "offset_s": 1,
                "file": "n0-cpu.html",
                "ok": True,
                "error": "",
                "command": "profile.sh 123 cpu 4 x.html",
            }
        ]
        if profiles
        else [],
        "result": result,
    }


# A saturation search as run.json records it: two steps met the SLO, the third did not.
SEARCH = {
    "scenario": "get",
    "start_rate": 1000,
    "factor": 1.5,
    "step_duration_s": 10,
    "tolerance": 0.02,
    "slo_p99_ms": 10,
    "max_sustainable_rate": 1500,
    "stop_reason": "at 2250/s: p99 12 ms > SLO 10 ms",
    "steps": [
        {"rate": 1000, "achieved_rate": 1000, "p99_ms": 3, "error_rate": 0, "ok": True},
        {"rate": 1500, "achieved_rate": 1499, "p99_ms": 6, "error_rate": 0, "ok": True},
        {"rate": 2250, "achieved_rate": 2200, "p99_ms": 12, "error_rate": 0, "ok": False},
    ],
}


def write_run(root: Path, name: str, scale: float, saturation: bool = False) -> Path:
    d = root / name
    d.mkdir(parents=True)
    doc = {
        "name": "test",
        "kind": "saturation" if saturation else "phases",
        "started": name,
        "finished": name,
        "invocation": "make lab-local",
        "config": {
            "targets": ["http://127.0.0.1:8080"],
            "keys": 1000,
            "value_size": 1024,
            "replicas": "",
            "slo_p99_ms": 10,
        },
        "nodes": [{"name": "n0", "pid": 123, "target": "http://127.0.0.1:8080"}],
        "phases": [phase("put", scale, 1000, True), phase("get", scale * 2, 2000, False)],
    }
    if saturation:
        doc["saturation"] = json.loads(json.dumps(SEARCH))
    (d / "run.json").write_text(json.dumps(doc))
    (d / "env.json").write_text(
        json.dumps(
            {
                "cores": 2,
                "cpu_model": "test cpu",
                "memory_gib": 24,
                "os": "Debian",
                "kernel": "6",
                "load_average": "0",
                "python": "3.11",
                "git": {"commit": "abcdef0123456789", "dirty": False},
                "jvms": [{"pid": 123, "version": "openjdk 25", "command_line": "java -jar kvlab.jar"}],
                "load_tool": "k6",
                "k6": "k6 v1.8.1",
                "async_profiler": "4.6",
                "jattach": "jattach 2.1",
                "wrk": {"path": "/usr/bin/wrk", "is_wrk2": False, "version": "wrk 4.1.0", "label": "Debian's wrk"},
            }
        )
    )
    return d


class ReportTest(unittest.TestCase):
    def test_report_has_every_part_and_compares_with_the_previous_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_run(root, "20260101-000000-test", 1.0)
            this = write_run(root, "20260102-000000-test", 2.0)
            (this / "conclusion.md").write_text("GET got slower.\n\nSecond paragraph.")
            md_path, html_path = report.generate(this)
            md, page = md_path.read_text(), html_path.read_text()
            for part in (
                "## Findings",
                "## Conclusion",
                "GET got slower.",
                "## Environment",
                "## Commands",
                "k6 run put.js",
                "| latency, ms | 50% | 75% | 90% | 99% | 99.9% | 99.99% | 99.999% | 100% |",
                "plots/spectrum-01-put.png",
                "phases/01-put/profiles/n0-cpu.html",
                "| threads | CPU, cores | CPU per request, µs | in the kernel | waits per request "
                "| preempted per request |",
                # The busiest threads first.
                "| event loops (HTTP, peers) | 0.40 | 40.0 | 25% | 0.20 | 0.05 |\n"
                "| RocksDB flushes | 0.10 | 10.0 | 50% | 0.00 | 0.00 |",
                "| node | safepoints | stopped, ms | share of the phase | GC pauses | GC, ms | mean GC pause, ms |",
                "| node n0 (pid 123) | 40 | 120 | 1.20% | 30 | 105 | 3.5 |",
                # One node: no "of the nodes" and no "longest".
                "; node n0 (pid 123) used 0.50 cores, the load generator 0.30; the JVM of node n0 (pid 123) "
                "stood still 1.20% of the phase (its GC pauses 3.5 ms on average)",
                "## Comparison with the previous report",
                "20260101-000000-test",
                "| put | all | 995 / 995 (×1.00) | 2.08 / 1.04 (×2.00) | 20.5 / 10.2 (×2.00) |",
            ):
                self.assertIn(part, md)
            self.assertIn("data:image/png;base64,", page)
            self.assertIn('href="phases/01-put/profiles/n0-cpu.html"', page)
            self.assertIn("<p>Second paragraph.</p>", page)
            self.assertIn('<td>event loops (HTTP, peers)</td>\n<td style="text-align: right;">0.40</td>', page)
            self.assertTrue((this / "plots" / "spectrum-01-put.png").read_bytes().startswith(b"\x89PNG"))

    def test_saturation_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-sat", 1.0, saturation=True)
            md_path, _ = report.generate(d)
            md = md_path.read_text()
            self.assertIn("**Maximum sustainable rate: 1 500/s.**", md)
            self.assertIn("No previous report", md)
            self.assertTrue((d / "plots" / "saturation.png").exists())

    def test_hotpath_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-hot", 1.0)
            doc = json.loads((d / "run.json").read_text())
            doc["kind"] = "hotpath"
            row = {
                "label": "get@25000",
                "requested": 25000,
                "achieved": 24900.0,
                "p99": 3.2,
                "server_cores": 1.1,
                "server_us": 44.0,
                "ratio": 1.2,
                "ratio_text": "1.20x",
                "loadgen_cores": 0.6,
                "others_cores": 0.1,
                "error_rate": 0.0,
            }
            doc["hotpath"] = {
                "java_options": "-Xmx256m",
                "keys": 1000000,
                "value_size": 1024,
                "connections": 64,
                "tool": "wrk",
                "rows": [row],
                "checks": ["get@25000: target held"],
                "node_command": "java -jar kvlab.jar",
                "jar": "kvlab.jar (sha256 0)",
                "idle_cores": 0.01,
                "settle_s": 3,
                "settled": True,
            }
            (d / "run.json").write_text(json.dumps(doc))
            md = report.generate(d)[0].read_text()
            self.assertIn("## Hot path", md)
            self.assertIn("| get@25000 | 25 000 | 24 900 | 3.20 | 1.10 | 44.0 | 1.20x | 0.60 | 0.10 |", md)


class JvmPausesTest(unittest.TestCase):
    def test_reads_the_pauses_of_a_running_jvm(self):
        java = Path(os.environ.get("JAVA_HOME", "/nonexistent")) / "bin" / "java"
        if not java.exists():
            self.skipTest("no JDK at JAVA_HOME")

        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "Collect.java"
            source.write_text(
                "class Collect { public static void main(String[] a) throws Exception {"
                " System.gc(); System.out.println(\"collected\"); Thread.sleep(60_000); } }"
            )
            jvm = subprocess.Popen(
                [str(java), "-XX:+UseSerialGC", "-XX:+UsePerfData", str(source)], stdout=subprocess.PIPE, text=True
            )
            try:
                self.assertEqual(jvm.stdout.readline().strip(), "collected")
                found = jvmpauses.sample([jvm.pid, os.getpid()])
            finally:
                jvm.kill()
                jvm.wait()
                jvm.stdout.close()
        # This Python process publishes no counters: it is left out.
        self.assertEqual(list(found), [jvm.pid])
        pauses = found[jvm.pid]
        self.assertGreaterEqual(pauses.gc_pauses, 1)  # the System.gc() at least
        self.assertGreater(pauses.gc_s, 0)
        self.assertGreaterEqual(pauses.safepoints, pauses.gc_pauses)
        self.assertGreaterEqual(pauses.stopped_s, pauses.gc_s)
        self.assertLess(pauses.stopped_s, 30)

    def test_refuses_a_file_that_is_not_perf_data(self):
        with self.assertRaises(ValueError):
            jvmpauses.read_counters(b"\0" * 64)

    def test_delta_is_per_process_sampled_both_times(self):
        before = {1: jvmpauses.Pauses(10, 0.5, 8, 0.4), 2: jvmpauses.Pauses(3, 0.1, 3, 0.1)}
        after = {1: jvmpauses.Pauses(25, 0.8, 20, 0.6)}  # 2 ended
        d = jvmpauses.delta(before, after, wall_s=10)
        self.assertEqual(list(d), [1])
        self.assertEqual(d[1]["safepoints"], 15)
        self.assertEqual(d[1]["gc_pauses"], 12)
        self.assertAlmostEqual(d[1]["stopped_s"], 0.3)
        self.assertAlmostEqual(d[1]["stopped_share"], 0.03)
        self.assertAlmostEqual(d[1]["gc_s"], 0.2)


class ThreadTimesTest(unittest.TestCase):
    def test_roles_from_jvm_thread_names(self):
        self.assertEqual(procstat.thread_role("reactor-http-nio-1"), "event loops (HTTP, peers)")
        self.assertEqual(procstat.thread_role("kvlab-storage-3"), "storage calls (RocksDB reads, writes)")
        self.assertEqual(procstat.thread_role("rocksdb:low"), "RocksDB compactions")
        self.assertEqual(procstat.thread_role("C2 CompilerThre"), "JIT compilers")
        self.assertEqual(procstat.thread_role("G1 Refine#0"), "garbage collector, safepoints")
        self.assertEqual(procstat.thread_role("kvlab-timeouts-2"), procstat.OTHER_THREADS)

    def test_delta_sums_roles_counts_new_threads_from_zero_and_tells_reused_ids_apart(self):
        def t(role, started, user, waits):
            return procstat.ThreadTimes(role, started, user, user / 4, waits, 1)

        before = procstat.CpuSample(
            0, 0, 0, {1: 0, 2: 0},
            {1: {10: t("a", 5, 1.0, 100), 11: t("b", 5, 2.0, 7)}, 2: {20: t("a", 5, 1.0, 50)}},
        )
        after = procstat.CpuSample(
            10, 0, 0, {1: 0, 2: 0},
            {
                1: {10: t("a", 5, 3.0, 300), 11: t("b", 9, 0.5, 3)},  # 11 ended; a new thread took its id
                2: {20: t("a", 5, 2.0, 60), 21: t("a", 8, 0.25, 5)},  # 21 started meanwhile
            },
        )
        roles = procstat.delta(before, after)["threads"]
        self.assertAlmostEqual(roles["a"]["user_s"], 2.0 + 1.0 + 0.25)
        self.assertEqual(roles["a"]["waits"], 200 + 10 + 5)
        self.assertAlmostEqual(roles["b"]["user_s"], 0.5)
        self.assertEqual(roles["b"]["waits"], 3)

    def test_reads_this_process_threads(self):
        import threading

        done = threading.Event()
        worker = threading.Thread(target=done.wait, name="waiting")
        worker.start()
        try:
            threads = procstat.thread_times(os.getpid())
        finally:
            done.set()
            worker.join()
        self.assertIn(worker.native_id, threads)
        self.assertGreaterEqual(len(threads), 2)
        self.assertTrue(all(t.role == procstat.OTHER_THREADS for t in threads.values()))


class SpawnTest(unittest.TestCase):
    """The lab's helpers run in process groups of their own (the lab stops them with killpg) but in
    the lab's session, so the kernel does not give each a scheduling group of its own."""

    def spawn_sleep(self, **popen):
        with tempfile.TemporaryFile() as out:
            if popen:
                p = subprocess.Popen(["sleep", "30"], stdout=out, **popen)
            else:
                p = tools.spawn(["sleep", "30"], out)
        self.addCleanup(p.wait)
        self.addCleanup(os.killpg, p.pid, signal.SIGTERM)
        return p

    def test_a_helper_has_a_process_group_of_its_own_in_the_labs_session(self):
        p = self.spawn_sleep()
        self.assertEqual(os.getpgid(p.pid), p.pid)
        self.assertEqual(os.getsid(p.pid), os.getsid(0))
        self.assertEqual(os.readlink(f"/proc/{p.pid}/fd/0"), "/dev/null")
        self.assertEqual(envinfo.scheduling_group(p.pid), envinfo.scheduling_group())

    def test_a_node_in_a_session_of_its_own_is_reported_apart(self):
        if envinfo.scheduling_group()[1] == "":
            self.skipTest("the kernel's autogroups are off here: a session is no scheduling group")
        apart = self.spawn_sleep(start_new_session=True)
        alike = self.spawn_sleep()
        self.assertEqual(envinfo.nodes_apart([alike.pid, apart.pid]), [apart.pid])
        self.assertIn(f"node pid {apart.pid} runs in another scheduling group", envinfo.scheduling([alike.pid, apart.pid]))
        self.assertIn("share one scheduling group", envinfo.scheduling([alike.pid]))


class WrkParsingTest(unittest.TestCase):
    OUTPUT = """Running 5s test @ http://127.0.0.1:8080
  2 threads and 64 connections
KVLAB-WRK-JSON {"scenario":"get","requests":15007,"duration_s":5.006739,"bytes_received":16582735,"threads":2,"paced_rate":3000,"errors":{"connect":0,"read":1,"write":0,"status":4,"timeout":0},"status_counts":{"200":15003,"404":4},"latency":{"unit":"ms","min":0.104,"mean":0.49,"stdev":0.49,"max":9.431,"percentiles":{"p50":0.384,"p75":0.545,"p90":0.796,"p99":2.45,"p99.9":6.48,"p99.99":9.34,"p99.999":9.43,"p100":9.431},"spectrum":[[0,0.104],[0.5,0.384],[1,9.431]]}}
"""

    def test_wrk_processes_share_the_threads_connections_and_rate_of_a_phase(self):
        one = load.LoadSpec("get", ["http://a"], 3000, 5, tool="wrk")
        three = load.LoadSpec("get", ["http://a", "http://b", "http://c"], 3000, 5, tool="wrk")
        many = load.LoadSpec("get", ["http://a", "http://b"], 3000, 5, tool="wrk", threads=8)

        self.assertEqual(load.wrk_args(one, True, 1)[0][:2], ["-t2", "-c64"])
        self.assertEqual(load.wrk_args(three, True, 3)[0][:2], ["-t1", "-c21"])
        self.assertIn("-R1000", load.wrk_args(three, True, 3)[0])
        self.assertEqual(load.wrk_args(many, False, 2)[0][:2], ["-t4", "-c32"])
        self.assertEqual(load.wrk_args(many, False, 2)[1]["WRK_THREADS"], "4")

    def test_a_timed_phase_gives_up_on_a_request_after_the_timeout_the_fill_does_not(self):
        cfg = settings.RunConfig(targets=["http://a"], pids=[], request_timeout_s=2)
        self.assertEqual("2s", load.k6_env(cfg.spec("get"))["REQUEST_TIMEOUT"])
        self.assertIn("--timeout=2s", load.wrk_args(cfg.spec("get", tool="wrk"), True)[0])
        self.assertNotIn("REQUEST_TIMEOUT", load.k6_env(cfg.spec("fill")))
        self.assertEqual(1, settings.RunConfig(targets=[], pids=[]).request_timeout_s, "the default")

    def test_wrk_output_becomes_a_result(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "wrk-0.txt"
            log.write_text(self.OUTPUT)
            spec = load.LoadSpec("get", ["http://127.0.0.1:8080"], 3000, 5, tool="wrk")
            raw = wrkresult.parse_wrk(log, "http://127.0.0.1:8080")
            # Debian's wrk ran it: a parsing test needs no wrk on this machine.
            result = wrkresult.merge_wrk(spec, [raw], tools.Wrk("/usr/bin/wrk", False, "wrk 4.1.0"))
            self.assertEqual(result["requests"], 15007)
            self.assertAlmostEqual(result["achieved_rate"], 15007 / 5.006739)
            self.assertEqual(result["status_counts"], {"200": 15003, "404": 4, "0": 1})
            self.assertAlmostEqual(result["error_rate"], 5 / 15007)
            self.assertEqual(result["latency"]["all"]["percentiles"]["p99"], 2.45)


class PlanTest(unittest.TestCase):
    def test_windows_fit_inside_the_phase(self):
        windows = profiling.plan(["cpu", "alloc", "lock", "wall"], 30)
        self.assertEqual([w.event for w in windows], ["cpu", "alloc", "lock", "wall"])
        self.assertLessEqual(windows[-1].offset_s + windows[-1].seconds, 30 - 1 + 1e-9)
        self.assertTrue(all(math.isclose(w.seconds, windows[0].seconds) for w in windows))

    def test_short_phase_keeps_the_events_that_fit(self):
        self.assertEqual([w.event for w in profiling.plan(["cpu", "alloc", "lock", "wall"], 4)], ["cpu", "alloc"])
        self.assertEqual(profiling.plan(["cpu"], 1), [])

    def test_every_event_samples_finer_than_the_defaults_and_the_command_says_how(self):
        prof = profiling.Profiling([], [], Path("/tmp"), 0.0)
        node = profiling.Node("n0", 123, "")
        with mock.patch.object(tools, "profiler_lib", return_value=Path("lib.so")), \
                mock.patch.object(tools, "jattach", return_value="jattach"):
            for event, option in (("cpu", "interval=1ms"), ("alloc", "alloc=64k"), ("lock", "lock=1us")):
                argv, _ = prof.command(node, event, 5.0, Path("x.html"))
                self.assertEqual(["env", f"PROFILER_OPTS={option}"], argv[:2], event)
                self.assertEqual(["123", event, "5.0", "x.html"], argv[3:], event)
            argv, _ = prof.command(node, "itimer", 5.0, Path("x.html"))
            self.assertEqual(str(tools.PROFILE_SH), argv[0], "an event of its own keeps the profiler's defaults")


class DurationTest(unittest.TestCase):
    def test_durations(self):
        self.assertEqual(_duration("30"), 30)
        self.assertEqual(_duration("30s"), 30)
        self.assertEqual(_duration("2m"), 120)
        self.assertEqual(_duration("1m30s"), 90)


if __name__ == "__main__":
    unittest.main()


class FakeExecutor:
    """Records the phases a run asks for; no load, no nodes."""

    name = "fake"
    nodes: list = []

    def __init__(self):
        self.specs = []

    def check(self):
        pass

    def config(self):
        return {}

    def env(self):
        return {}

    def profiling_gap_s(self):
        return 0.0

    def prepare(self, spec, out, label):
        self.specs.append((label, spec))
        return Prepared(spec, out, label, 0.0)

    def run(self, prepared, status=None):
        result = {"achieved_rate": prepared.spec.rate or 0, "requested_rate": prepared.spec.rate, "latency": {}}
        return load.PhaseRun(result, {}, [], [0], "", "")

    def after_phase(self, label):
        pass

    def close(self):
        pass


class ConditionalPhaseTest(unittest.TestCase):
    """The conditional-updates phase: k6/conditional.js, or wrk2/conditional.lua with TOOL=wrk, its
    412s shown in the report as refused updates, not as failures."""

    def run_with(self, tool: str) -> list:
        executor = FakeExecutor()
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(
                targets=["http://127.0.0.1:1"], pids=[], phases=["fill", "conditional"], duration_s=30,
                warmup_s=20, events=[], reports_dir=Path(tmp), tool=tool,
            )
            with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
                phase_scenario.run_phases(cfg, executor)
        return executor.specs

    def test_make_lab_phases_fill_conditional_runs_the_conditional_script_on_k6(self):
        specs = self.run_with("k6")
        self.assertEqual(
            [(label, spec.scenario, spec.tool) for label, spec in specs],
            [("fill", "fill", "k6"), ("warm-up conditional", "conditional", "k6"),
             ("warm-up conditional on new connections", "conditional", "k6"), ("conditional", "conditional", "k6")],
        )
        spec = specs[-1][1]
        with tempfile.TemporaryDirectory() as tmp:
            (command,) = load.commands(spec, Path(tmp))
        script = Path(command.argv[-1])
        self.assertEqual("conditional.js", script.name)
        self.assertTrue(script.is_file())
        self.assertIn("If-Match", script.read_text())
        self.assertEqual(str(spec.rate), command.env["RATE"])

    def test_with_tool_wrk_the_conditional_phase_runs_its_wrk_script_one_connection_a_thread(self):
        specs = self.run_with("wrk")
        self.assertEqual(
            [(label, spec.scenario, spec.tool) for label, spec in specs],
            [("fill", "fill", "k6"), ("warm-up conditional", "conditional", "wrk"),
             ("warm-up conditional on new connections", "conditional", "wrk"), ("conditional", "conditional", "wrk")],
        )
        spec = specs[-1][1]
        self.assertEqual(("conditional", "wrk"), phase_scenario.phase_spec("conditional@wrk"))
        options, _ = load.wrk_args(spec, True)
        self.assertEqual([f"-t{spec.connections}", f"-c{spec.connections}"], options[:2], "one connection per thread")
        self.assertIn(f"-R{2 * spec.rate}", options, "RATE counts updates, two requests each")
        three = load.LoadSpec("conditional", ["http://a", "http://b", "http://c"], 300, 5, tool="wrk", connections=30, threads=2)
        options, env = load.wrk_args(three, False, 3)
        self.assertEqual(["-t10", "-c10"], options[:2])
        self.assertEqual(("200", "10"), (env["WRK_RATE"], env["WRK_THREADS"]))
        self.assertEqual(["-t1", "-c21"], load.wrk_args(load.LoadSpec("get", ["http://a"] * 3, 300, 5, tool="wrk"), True, 3)[0][:2],
                         "other phases keep their threads")
        with self.assertRaises(SystemExit):
            phase_scenario.phase_spec("mixed@wrk")
        with self.assertRaises(SystemExit):
            load.LoadSpec("mixed", ["http://a"], 100, 5, tool="wrk")

    def test_a_wrk_result_counts_412s_as_refused_updates_not_failures(self):
        spec = load.LoadSpec("conditional", ["http://a"], 100, 10, tool="wrk")
        raw = {
            "requests": 2000, "duration_s": 10.0, "bytes_received": 1, "threads": 64,
            "errors": {"connect": 0, "read": 0, "write": 0, "status": 110, "timeout": 0},
            "status_counts": {"200": 990, "404": 10, "201": 900, "412": 100},
            "latency": latency(1.0), "histogram_us": None, "target": "http://a",
        }
        result = wrkresult.merge_wrk(spec, [raw], tools.Wrk("/usr/bin/wrk", False, "wrk 4.1.0"))
        self.assertAlmostEqual(10 / 2000, result["error_rate"], msg="the 404s fail, the 412s do not")
        self.assertEqual((900, 100, 0.1, 2), (result["conditional_updates"], result["conditional_conflicts"],
                                              result["conflict_share"], result["requests_per_update"]))
        self.assertEqual(100.0, result["achieved_rate"], "updates per second, as k6 counts them")
        other = wrkresult.merge_wrk(load.LoadSpec("get", ["http://a"], 100, 10, tool="wrk"), [raw], tools.Wrk("/usr/bin/wrk", False, "wrk 4.1.0"))
        self.assertAlmostEqual(110 / 2000, other["error_rate"], msg="another phase's 412 is a failure")
        self.assertNotIn("conditional_updates", other)

    def test_the_report_shows_the_updates_and_the_412s_apart_from_failures(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = write_run(Path(tmp), "20260103-000000-test", 1.0)
            doc = json.loads((run_dir / "run.json").read_text())
            conditional = phase("conditional", 1.0, 200, False)
            conditional["dir"] = "phases/02-conditional"
            conditional["result"] |= {
                "requests": 4000, "error_rate": 0.0, "status_counts": {"200": 2000, "201": 1900, "412": 100},
                "latency": {"all": latency(1.0), "get": latency(0.5), "conditional_put": latency(1.5)},
                "conditional_updates": 1900, "conditional_conflicts": 100, "conflict_share": 0.05,
            }
            doc["phases"].append(conditional)
            (run_dir / "run.json").write_text(json.dumps(doc))
            md = report.generate(run_dir)[0].read_text()
        section = md[md.index("### conditional"):]
        self.assertIn("412: 100", section)
        self.assertIn("1 900 made, 100 refused with 412 (5.00%)", section)
        self.assertIn("failed 0.000%", section)
        self.assertIn("conditional_put", section)
        self.assertNotIn("refused with 412", md[:md.index("### conditional")], "only the conditional phase says so")


class WarmUpTest(unittest.TestCase):
    def run_with(self, phases: list[str], warmup_s: int = 60) -> list:
        executor = FakeExecutor()
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(
                targets=["http://127.0.0.1:1"], pids=[], phases=phases, duration_s=30,
                warmup_s=warmup_s, events=[], reports_dir=Path(tmp),
            )
            with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
                phase_scenario.run_phases(cfg, executor)
        return [(label, spec.scenario, spec.tool, spec.duration_s) for label, spec in executor.specs]

    def test_each_scenario_runs_first_unmeasured_once_ending_on_new_connections(self):
        self.assertEqual(
            self.run_with(["put", "get@wrk", "get", "mixed"]),
            [
                ("warm-up put", "put", "k6", 50),
                ("warm-up put on new connections", "put", "k6", 10),
                ("put", "put", "k6", 30),
                ("warm-up get@wrk", "get", "wrk", 50),
                ("warm-up get@wrk on new connections", "get", "wrk", 10),
                ("get@wrk", "get", "wrk", 30),
                ("get", "get", "k6", 30),
                ("mixed", "mixed", "k6", 30),
            ],
        )

    def test_the_fill_warms_put_and_put_then_runs_on_new_connections(self):
        labels = [label for label, *_ in self.run_with(["fill", "put", "fill", "mixed"])]
        self.assertEqual(
            labels,
            [
                "fill", "warm-up put on new connections", "put", "fill",
                "warm-up mixed", "warm-up mixed on new connections", "mixed",
            ],
        )

    def test_a_short_warm_up_gives_its_last_half_to_new_connections(self):
        self.assertEqual(
            [(label, seconds) for label, _, _, seconds in self.run_with(["put"], 7)],
            [("warm-up put", 4), ("warm-up put on new connections", 3), ("put", 30)],
        )
        self.assertEqual([label for label, *_ in self.run_with(["put"], 1)], ["warm-up put", "put"])

    def test_no_warm_up_when_zero(self):
        self.assertEqual([label for label, *_ in self.run_with(["fill", "put", "get"], 0)], ["fill", "put", "get"])


class FlameGraphTest(unittest.TestCase):
    # An async-profiler page in miniature: names share prefixes (first char - 32 = length kept),
    # f(key, level, left, width), u(key, width) = first child, key >>> 3 = the name's index.
    PAGE = """<script>
const cpool = [
'all',
' a/B.run',
'$c',
];
unpack(cpool);
f(0,0,0,10)
u(8,8)
u(16,5)
f(16,1,8,2)
</script>"""

    def test_self_time_of_the_frames(self):
        graph = flamegraph.frames(self.PAGE)
        self.assertEqual([f.name for f in graph], ["all", "a/B.run", "a/B.c", "a/B.c"])
        self.assertEqual(flamegraph.self_time(graph), {"a/B.c": 7, "a/B.run": 3})

    def test_report_lists_the_hottest_frames_of_cpu_graphs_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "n0-cpu.html"
            page.write_text(self.PAGE)
            hot = flames.hot_frames(page, "cpu")
            self.assertEqual(hot["samples"], 10)
            self.assertEqual(hot["frames"], [("B.c", 0.7), ("B.run", 0.3)])
            self.assertIsNone(flames.hot_frames(page, "wall"))
            page.write_text("<html>not a flame graph</html>")
            self.assertIsNone(flames.hot_frames(page, "cpu"))


def write_cost_run(root: Path, name: str, nodes: int, *, search: tuple[str, int | None] | None = None,
                   phases: list[tuple[str, int, float, float]] = ()) -> Path:
    """A minimal run.json: a one-node search (scenario, rate found) or cluster phases (scenario,
    requested rate, achieved rate, p99 ms), after a fill and a warm-up the verdict must skip."""
    d = root / name
    d.mkdir(parents=True)
    doc = {
        "kind": "saturation" if search else "phases",
        "config": {"slo_p99_ms": 10, "max_error_rate": 0.01},
        "nodes": [{"name": f"n{i}", "pid": 100 + i} for i in range(nodes)],
        "phases": [],
    }
    if search:
        doc["saturation"] = {"scenario": search[0], "slo_p99_ms": 10, "tolerance": 0.02,
                            "max_sustainable_rate": search[1], "steps": []}
    else:
        doc["phases"].append({"scenario": "fill", "warmup": False, "result": {}})
    for scenario, rate, achieved, p99 in phases:
        result = {"requested_rate": rate, "achieved_rate": achieved, "error_rate": 0.0, "replicas": "2/3",
                  "latency": {"a": {"percentiles": {"p99": p99}}, "b": {"percentiles": {"p99": p99 / 2}}},
                  # One wrk per node: the slowest node's share is slower than the whole phase.
                  "latency_by_target": {"n0": {"percentiles": {"p99": p99 * 1.2}}, "n1": {"percentiles": {"p99": p99}}}}
        doc["phases"].append({"scenario": scenario, "warmup": True, "result": {**result, "latency": {}}})
        doc["phases"].append({"scenario": scenario, "warmup": False, "result": result})
    (d / "run.json").write_text(json.dumps(doc))
    return d


class ReplicationCostTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.addCleanup(self.tmp.cleanup)

    def test_target_is_the_share_of_one_nodes_rate_rounded_up(self):
        self.assertEqual(replication_cost.target_rate(37968, 40), 15188)
        self.assertEqual(replication_cost.target_rate(25000, 40), 10000)

    def test_a_scenario_is_met_only_when_every_run_met_rate_and_slo(self):
        dirs = [
            write_cost_run(self.root, "put-1node", 1, search=("put", 37968)),
            write_cost_run(self.root, "put-a", 3, phases=[("put", 15188, 15180, 9.0)]),
            write_cost_run(self.root, "put-b", 3, phases=[("put", 15188, 15150, 12.5)]),
            write_cost_run(self.root, "put-c", 3, phases=[("put", 15188, 14000, 8.0)]),
            write_cost_run(self.root, "get-1node", 1, search=("get", 1500)),
            write_cost_run(self.root, "get-a", 3, phases=[("get", 600, 600, 4.0)]),
            write_cost_run(self.root, "get-b", 3, phases=[("get", 600, 599, 9.9)]),
        ]
        summary = replication_cost.summarize(dirs, 40)
        put, get = summary["scenarios"]
        self.assertEqual((put["scenario"], put["target_rate"]), ("put", 15188))
        self.assertEqual([r["met"] for r in put["runs"]], [True, False, False])  # slow; behind
        self.assertEqual((put["met_runs"], put["median_p99_ms"], put["met"]), (1, 9.0, False))
        self.assertEqual((get["target_rate"], get["met_runs"], get["met"]), (600, 2, True))

        out = replication_cost.write(summary, self.root / "verdict")
        md = (out / "summary.md").read_text()
        self.assertIn("| put | 37968/s | 15188/s | 1 of 3 | 9.0 | not met |", md)
        self.assertIn("| get | 1500/s | 600/s | 2 of 2 | 7.0 | **met** |", md)
        self.assertIn("| `put-b` | 3 | 2/3 | 15188/s | 15150/s | 12.50 | 15.00 | 0.00% | no |", md)
        # Met on every request's p99 (9 ms), though one node's own share had 10.8 ms.
        self.assertIn("| `put-a` | 3 | 2/3 | 15188/s | 15180/s | 9.00 | 10.80 | 0.00% | yes |", md)
        self.assertEqual(json.loads((out / "summary.json").read_text())["scenarios"][1]["met"], True)

    def test_runs_that_do_not_belong_to_a_search_are_refused(self):
        search = write_cost_run(self.root, "put-1node", 1, search=("put", 10000))
        elsewhere = write_cost_run(self.root, "put-a", 3, phases=[("put", 5000, 5000, 3.0)])
        orphan = write_cost_run(self.root, "get-a", 3, phases=[("get", 4000, 4000, 3.0)])
        with self.assertRaisesRegex(SystemExit, "not the target 4000/s"):
            replication_cost.summarize([search, elsewhere], 40)
        with self.assertRaisesRegex(SystemExit, "without a one-node search: get"):
            replication_cost.summarize([search, orphan], 40)
        with self.assertRaisesRegex(SystemExit, "not a saturation search on one node"):
            replication_cost.one_node_rate(replication_cost.load(elsewhere))

    def test_target_rate_command_fails_when_one_node_met_the_slo_at_no_step(self):
        found = write_cost_run(self.root, "found", 1, search=("put", 25312))
        none = write_cost_run(self.root, "none", 1, search=("put", None))
        with mock.patch("sys.stdout") as out:
            self.assertEqual(main(["target-rate", str(found), "--share", "40"]), 0)
        self.assertEqual("".join(c.args[0] for c in out.write.call_args_list).strip(), "10125")
        with mock.patch("sys.stderr"):
            self.assertEqual(main(["target-rate", str(none), "--share", "50"]), 1)
        summary = replication_cost.summarize([none], 40)
        self.assertEqual((summary["scenarios"][0]["target_rate"], summary["scenarios"][0]["met"]), (None, False))
