"""The fault scenario: schedules, the local fault kinds against real processes (a node killed and
started again from its own command line; a node cut off from the network, where this machine
allows it), the recovery figures on synthetic time series, and the scenario's phases with a fake
executor."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import faults, isolation, load, local, profiling, recovery, runrecord, settings
from lab.scenarios import faults as fault_scenario
from lab.tests.test_lab import FakeExecutor


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


class ScheduleTest(unittest.TestCase):
    def test_a_schedule_in_time_order_with_optional_nodes(self):
        self.assertEqual(
            [faults.Planned("pause", 5, 2.5, None), faults.Planned("kill", 20, 15, "n1")],
            faults.parse_schedule(" kill:n1@20+15s, pause@5s+2.5 "),
        )
        self.assertEqual("kill:n1@20+15", faults.Planned("kill", 20, 15, "n1").text())
        self.assertEqual(3, len(faults.parse_schedule(faults.DEFAULT_SCHEDULE)))

    def test_bad_schedules_say_what_is_wrong(self):
        for text, words in [
            ("", "no fault in the schedule"),
            ("kill@20", "write kind@at+for"),
            ("kill+20@15", "write kind@at+for"),
            ("crash@20+15", "unknown kind 'crash': kill, pause, cutoff"),
            ("kill:node2@20+15", "a node is named n0, n1"),
            ("pause@20+0", "lasts no time"),
        ]:
            with self.subTest(text=text), self.assertRaises(ValueError) as e:
                faults.parse_schedule(text)
            self.assertIn(words, str(e.exception))

    def test_faults_go_to_the_last_node_unless_named_one_at_a_time(self):
        nodes = ["n0", "n1", "n2"]
        placed = faults.place(faults.parse_schedule("kill@20+15,pause:n0@25+15,cutoff@40+5"), nodes)
        self.assertEqual([("kill", 2), ("pause", 0), ("cutoff", 2)], [(p.kind, i) for p, i in placed])
        with self.assertRaises(SystemExit) as e:
            faults.place(faults.parse_schedule("kill@20+15,pause:n2@30+5"), nodes)
        self.assertIn("overlap on node n2", str(e.exception))
        with self.assertRaises(SystemExit) as e:
            faults.place(faults.parse_schedule("kill:n3@20+15"), nodes)
        self.assertIn("no node n3", str(e.exception))

    def test_nodes_named_otherwise_are_still_n0_n1_in_order(self):
        pods = ["kvlab-0", "kvlab-1", "kvlab-2"]
        placed = faults.place(faults.parse_schedule("kill:n1@20+15,pause:n0@25+5"), pods)
        self.assertEqual([1, 0], [i for _, i in placed])
        with self.assertRaises(SystemExit):
            faults.place(faults.parse_schedule("kill:n3@20+15"), pods)

    def test_the_phase_lasts_until_the_cluster_had_time_to_recover(self):
        schedule = faults.parse_schedule("kill@20+15,pause@70+15,cutoff@120+15")
        self.assertEqual(135 + faults.RECOVERY_S, faults.phase_seconds(schedule, 30), "a fixed-rate phase's 30 s")
        self.assertEqual(135 + faults.RECOVERY_S, faults.phase_seconds(schedule, 140))
        self.assertEqual(150, faults.phase_seconds(schedule, 150))
        self.assertEqual(90, faults.phase_seconds(faults.parse_schedule("kill@10+10,cutoff@60+10.5"), 90))


# A stand-in for a node: answers GET /v0/status with how it was started; exits at once when the
# file named by REFUSE exists (a node that cannot start again).
NODE = textwrap.dedent(
    """
    import http.server, json, os, sys
    if os.path.exists(os.environ.get("REFUSE", "/nonexistent")):
        sys.exit(3)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"argv": sys.argv, "mark": os.environ.get("MARK"), "cwd": os.getcwd()}).encode()
            self.send_response(200); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a):
            pass
    print("started", os.getpid(), flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


class KillTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        (self.dir / "node.py").write_text(NODE)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.dir / "node.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "node.py", str(self.port)], cwd=self.dir, stdout=out, stderr=subprocess.STDOUT,
                env=os.environ | {"MARK": "as started", "REFUSE": str(self.dir / "refuse")},
            )
        self.assertTrue(wait_for(lambda: faults.answers(self.url)))
        self.started: list[int] = []
        self.fault = None

    def tearDown(self):
        for pid in [self.proc.pid, *self.started]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.fault and self.fault._process:
            self.fault._process.wait()
        self.proc.wait()

    def kill(self, at_s: float, for_s: float) -> faults.Kill:
        self.fault = faults.Kill("n2", at_s, for_s, pid=self.proc.pid, target=self.url, start_timeout_s=10,
                                 restarted=self.started.append)
        return self.fault.start(time.monotonic())

    def status(self) -> dict:
        return json.loads(load_url(self.url + "/v0/status"))

    def test_the_node_is_killed_then_started_again_as_it_was_started(self):
        f = self.kill(0.1, 0.4)
        self.assertTrue(wait_for(lambda: not Path(f"/proc/{self.proc.pid}").exists()), "killed and reaped")
        self.assertFalse(faults.answers(self.url))
        self.assertTrue(wait_for(lambda: f.ended_at_s is not None, 10))
        f.stop()
        rec = f.record()
        self.assertEqual("", rec["error"])
        self.assertEqual([rec["pid_after"]], self.started)
        self.assertNotEqual(self.proc.pid, rec["pid_after"])
        self.assertEqual(self.proc.pid, rec["pid_before"])
        self.assertEqual(
            {"argv": ["node.py", str(self.port)], "mark": "as started", "cwd": str(self.dir)}, self.status()
        )
        self.assertEqual(2, self.log.read_text().count("started"), "the new process appends to the node's log")
        self.assertGreater(rec["ended_at_s"], 0.5)
        self.assertIsNotNone(rec["start_s"])
        self.assertIn(f"started again as pid {rec['pid_after']}", rec["what"])

    def test_stopping_early_starts_the_node_again_at_once(self):
        f = self.kill(0.05, 60)
        self.assertTrue(wait_for(lambda: self.proc.poll() is not None))
        f.stop()
        self.assertTrue(faults.answers(self.url))
        self.assertLess(f.record()["ended_at_s"], 10)

    def test_a_node_that_cannot_start_again_is_an_error_of_the_fault(self):
        (self.dir / "refuse").touch()
        f = self.kill(0.05, 0.1)
        self.assertTrue(wait_for(lambda: f.ended_at_s is not None, 10))
        self.assertIn("could not end: the node exited with 3 before it answered", f.record()["error"])
        self.assertEqual(1, len(self.started), "its new pid is followed all the same")


def load_url(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=2) as r:
        return r.read()


class LocalExecutorFaultsTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.cfg = settings.RunConfig(
            targets=["http://127.0.0.1:8280", "http://127.0.0.1:8281", "http://127.0.0.1:8282"],
            pids=[11, 22, 33],
            pid_files=[self.dir / f"n{i}.pid" for i in range(3)],
        )
        self.executor = local.LocalExecutor(self.cfg)

    def test_a_node_started_again_is_followed_for_the_rest_of_the_run(self):
        kill = self.executor.fault("kill", -1, 20, 15)
        self.assertEqual(("n2", 33, "http://127.0.0.1:8282"), (kill.node, kill.pid, kill.target))
        pause = self.executor.fault("pause", 2, 70, 15)
        kill.restarted(4242)
        self.assertEqual(4242, self.executor.nodes[2].pid)
        self.assertEqual([11, 22, 4242], self.cfg.pids, "CPU accounting reads these")
        self.assertEqual("4242\n", (self.dir / "n2.pid").read_text(), "the cluster's stop finds it")
        self.assertEqual(4242, pause._current_pid(), "a later fault of the node acts on its new pid")

    def test_a_cutoff_takes_the_nodes_ports_or_is_refused_with_what_it_needs(self):
        self.assertEqual((8282, 9282), self.executor.ports(2))
        with mock.patch.object(isolation, "unavailable", return_value="cutting a node off needs root"):
            with self.assertRaises(SystemExit) as e:
                self.executor.fault("cutoff", -1, 1, 1)
        self.assertIn("cannot cut node n2 off: cutting a node off needs root", str(e.exception))
        with mock.patch.object(isolation, "unavailable", return_value=""):
            f = self.executor.fault("cutoff", 0, 1, 1)
        self.assertEqual(("n0", (8280, 9280)), (f.node, f.ports))

    def test_without_root_the_cutoff_is_unavailable_and_says_so(self):
        isolation.unavailable.cache_clear()
        try:
            with mock.patch.object(os, "geteuid", return_value=1000):
                self.assertIn("needs root", isolation.unavailable())
        finally:
            isolation.unavailable.cache_clear()


class IsolationTest(unittest.TestCase):
    def test_a_process_connections_with_mapped_addresses_as_ipv4_and_no_listening_socket(self):
        with contextlib.ExitStack() as stack:
            v4 = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
            dual = stack.enter_context(socket.create_server(("::", 0), family=socket.AF_INET6, dualstack_ipv6=True))
            client = stack.enter_context(socket.create_connection(v4.getsockname()[:2]))
            mapped = stack.enter_context(socket.create_connection(("127.0.0.1", dual.getsockname()[1])))
            accepted = stack.enter_context(dual.accept()[0])
            stack.enter_context(v4.accept()[0])
            flows = isolation.flows_of(os.getpid())
            port, dual_port = v4.getsockname()[1], dual.getsockname()[1]
            client_port, mapped_port, accepted_at = client.getsockname()[1], mapped.getsockname()[1], accepted.getsockname()[0]
        self.assertIn(("127.0.0.1", client_port, "127.0.0.1", port), flows)
        self.assertIn(("127.0.0.1", port, "127.0.0.1", client_port), flows)
        # The dual-stack server's end of the connection is ::ffff:127.0.0.1 in the kernel's table.
        self.assertEqual("::ffff:127.0.0.1", accepted_at)
        self.assertIn(("127.0.0.1", dual_port, "127.0.0.1", mapped_port), flows)
        self.assertFalse([f for f in flows if f[1] in (port, dual_port) and f[3] == 0], "no listening socket")

    def test_the_rules_drop_the_ports_both_directions_of_each_connection_and_the_cgroup(self):
        rules = isolation.ruleset(
            "8282", (8282, 9282), [("127.0.0.1", 50000, "127.0.0.1", 8280), ("::1", 50001, "::1", 8281)],
            Path("/sys/fs/cgroup/unified/kvlab-cutoff-8282"),
        )
        self.assertIn("table inet kvlab_cutoff_8282 {", rules)
        self.assertIn("tcp dport { 8282, 9282 } drop", rules)
        self.assertIn("tcp sport { 8282, 9282 } drop", rules)
        self.assertIn(
            "ip saddr . tcp sport . ip daddr . tcp dport { 127.0.0.1 . 50000 . 127.0.0.1 . 8280, "
            "127.0.0.1 . 8280 . 127.0.0.1 . 50000 } drop",
            rules,
        )
        self.assertIn("ip6 saddr . tcp sport . ip6 daddr . tcp dport { ::1 . 50001 . ::1 . 8281, ::1 . 8281 . ::1 . 50001 }", rules)
        self.assertIn('socket cgroupv2 level 1 "unified/kvlab-cutoff-8282" drop', rules)

    def test_the_cgroup2_mount_under_sys_fs_cgroup(self):
        hybrid = (
            "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
            "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        )
        self.assertEqual(Path("/sys/fs/cgroup/unified"), isolation.cgroup2_mount(hybrid))
        self.assertEqual(Path("/sys/fs/cgroup"), isolation.cgroup2_mount("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"))
        self.assertIsNone(isolation.cgroup2_mount("30 1 0:26 / /mnt/cg rw - cgroup2 cgroup2 rw\n"))


# A node stand-in for the cut-off: an echo server on sys.argv[1] that holds a connection to a peer
# (sys.argv[2]) made before the cut; on stdin "old" it sends on that connection, "new" it opens
# another, and prints ok or what failed.
CUT_NODE = textwrap.dedent(
    """
    import socket, sys, threading
    def echo(c):
        while (data := c.recv(64)):
            c.sendall(data)
    srv = socket.create_server(("127.0.0.1", int(sys.argv[1])))
    threading.Thread(target=lambda: [threading.Thread(target=echo, args=(srv.accept()[0],), daemon=True).start()
                                     for _ in iter(int, 1)], daemon=True).start()
    peer = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            s = peer if line.strip() == "old" else socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=0.7)
            s.settimeout(0.7)
            s.sendall(b"x")
            print("ok" if s.recv(1) == b"x" else "closed", flush=True)
        except OSError as e:
            print(type(e).__name__, flush=True)
    """
)


@unittest.skipIf(isolation.unavailable(), f"a cut-off cannot be made here: {isolation.unavailable()}")
class CutOffTest(unittest.TestCase):
    def setUp(self):
        self.peer = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self.serve_peer, daemon=True).start()
        self.port = free_port()
        self.node = subprocess.Popen(
            [sys.executable, "-c", CUT_NODE, str(self.port), str(self.peer.getsockname()[1])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.assertEqual("ready", self.node.stdout.readline().strip())
        self.key = str(self.port)

    def serve_peer(self):
        def echo(c):
            with c:
                while data := c.recv(64):
                    c.sendall(data)

        while True:
            try:
                c, _ = self.peer.accept()
            except OSError:
                return
            threading.Thread(target=echo, args=(c,), daemon=True).start()

    def tearDown(self):
        isolation.release(self.key, self.node.pid)
        self.node.kill()
        self.node.wait()
        self.peer.close()

    def node_says(self, what: str) -> str:
        self.node.stdin.write(what + "\n")
        self.node.stdin.flush()
        return self.node.stdout.readline().strip()

    def client_reaches_node(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.7) as s:
                s.settimeout(0.7)
                s.sendall(b"y")
                return s.recv(1) == b"y"
        except OSError:
            return False

    def test_nothing_reaches_the_node_or_leaves_it_until_it_is_reconnected(self):
        own = isolation.cgroup_of(self.node.pid)
        self.assertTrue(self.client_reaches_node())
        self.assertEqual("ok", self.node_says("old"))
        f = faults.CutOff("n2", 0, 60, pid=self.node.pid, ports=(self.port, self.port + 1)).start(time.monotonic())
        self.assertTrue(wait_for(lambda: f.began_at_s is not None or f.error))
        self.assertEqual("", f.error)
        self.assertFalse(self.client_reaches_node(), "a client cannot reach it")
        self.assertEqual("TimeoutError", self.node_says("old"), "its connection to a peer is silent")
        self.assertEqual("TimeoutError", self.node_says("new"), "nor can it connect anew")
        f.stop()
        self.assertEqual("", f.record()["error"])
        self.assertFalse(isolation.leftover(self.key), "no table, no cgroup left")
        self.assertEqual(own, isolation.cgroup_of(self.node.pid))
        self.assertTrue(self.client_reaches_node())
        self.assertEqual("ok", self.node_says("new"))

    def test_what_a_killed_run_left_is_removed(self):
        isolation.cut(self.key, self.node.pid, (self.port,))
        self.assertTrue(isolation.leftover(self.key))
        self.assertEqual([], isolation.release(self.key, None))
        self.assertFalse(isolation.leftover(self.key))
        self.assertTrue(self.client_reaches_node())


def series(rows: list[tuple[int, int, float | None]], nodes: dict | None = None, latency: bool = True) -> dict:
    """A time series of (requests, errors, p99) per second."""
    return {
        "interval_s": 1.0,
        "t0_epoch": 1764100000.0,
        "load": {
            "source": "k6",
            "latency": latency,
            "seconds": [
                {"t": t, "requests": r, "errors": e, "p50_ms": None, "p99_ms": p, "max_ms": None}
                for t, (r, e, p) in enumerate(rows)
            ],
        },
        "nodes": nodes or {},
        "events": [],
    }


class SteadySamples:
    """What a load tool hands back after a steady phase: its seconds, as the time series reads them."""

    def __init__(self, seconds: int):
        self.load = series([STEADY] * seconds)["load"]
        self.histograms = {}

    def series(self, t0_epoch):
        return self

    def part(self):
        return self.load

    def discard(self):
        pass


# 100/s asked for: 10 s steady (p99 2 ms), a fault from 10.0 to 15.0 (errors, slow), then 3 s
# behind at 60/s, p99 back under 2 x 2 ms from second 20, steady to 30.
STEADY = (100, 0, 2.0)
FAULTY = [STEADY] * 10 + [(100, 40, 900.0)] * 5 + [(60, 0, 50.0)] * 3 + [(100, 0, 30.0)] * 2 + [STEADY] * 10


class RecoveryTest(unittest.TestCase):
    def test_errors_p99_and_the_time_until_rate_and_p99_were_back(self):
        hints = {
            "n0": [{"t": float(t), "hints_replayed": 10 if t in (16, 17) else 0, "records_repaired": 0} for t in range(30)],
            "n1": [{"t": float(t), "hints_replayed": None, "records_repaired": 3 if t == 25 else 0} for t in range(30)],
        }
        fault = {"began_at_s": 10.0, "ended_at_s": 15.0}
        [figures] = recovery.of_phase(series(FAULTY, hints), [fault], 100)
        self.assertEqual(
            {
                "errors_during": 200,
                "p99_before_ms": 2.0,
                "p99_during_ms": 900.0,
                "p99_after_ms": 2.0,
                "rate_recovered_s": 3.0,
                "p99_recovered_s": 5.0,
                "hints_replayed": 20,
                "records_repaired": 3,
            },
            figures,
        )

    def test_a_fault_ends_within_a_second_the_recovery_counts_from_its_end(self):
        [figures] = recovery.of_phase(series(FAULTY), [{"began_at_s": 10.2, "ended_at_s": 14.6}], 100)
        self.assertEqual(3.4, figures["rate_recovered_s"])
        self.assertEqual(200, figures["errors_during"])

    def test_never_back_before_the_next_fault_or_the_end_is_none(self):
        rows = [STEADY] * 10 + [(100, 40, 900.0)] * 5 + [(50, 0, 900.0)] * 15
        first, second = {"began_at_s": 10.0, "ended_at_s": 15.0}, {"began_at_s": 17.0, "ended_at_s": 19.0}
        a, b = recovery.of_phase(series(rows), [second, first], 100)
        self.assertIsNone(b["rate_recovered_s"])
        self.assertIsNone(b["p99_recovered_s"])
        self.assertEqual(900.0, a["p99_before_ms"], "the baseline of a fault begins where the previous one ended")
        self.assertIsNone(a["hints_replayed"], "no node samples: none")

    def test_without_latency_over_time_the_p99_figures_are_none(self):
        [figures] = recovery.of_phase(series(FAULTY, latency=False), [{"began_at_s": 10.0, "ended_at_s": 15.0}], 100)
        self.assertEqual((None, None, None, None), (figures["p99_before_ms"], figures["p99_during_ms"],
                                                    figures["p99_after_ms"], figures["p99_recovered_s"]))
        self.assertEqual(3.0, figures["rate_recovered_s"])

    def test_a_fault_that_never_began_has_no_figures(self):
        self.assertEqual([None], recovery.of_phase(series(FAULTY), [{"began_at_s": None, "ended_at_s": None}], 100))

    def test_the_last_fault_counts_what_was_replayed_and_repaired_after_the_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "ts.json").write_text(json.dumps(series(FAULTY)))
            faults_ = [{"began_at_s": 10.0, "ended_at_s": 15.0}, {"began_at_s": 20.0, "ended_at_s": 25.0}]
            healing_ = {"total": {"hints_replayed": 300.0, "repair_sent": 5.0, "repair_received": 7.0}}
            record = {"dir": "x", "timeseries": "ts.json", "spec": {"rate": 100}, "faults": faults_, "healing": healing_}
            recovery.add_to(Path(tmp), record)
            first, last = (f["recovery"] for f in record["faults"])
        self.assertIsNone(first["hints_replayed"], "no node samples: the series gives the first fault none")
        self.assertEqual((300.0, 12.0), (last["hints_replayed"], last["records_repaired"]),
                         "the hints replayed while the cluster healed after the load belong to the last fault")

    def test_a_phase_without_a_time_series_gets_null_and_why(self):
        with tempfile.TemporaryDirectory() as tmp:
            record = {"dir": "phases/04-faults", "spec": {"rate": 100}, "faults": [{"began_at_s": 1.0, "ended_at_s": 2.0}]}
            recovery.add_to(Path(tmp), record)
            self.assertIsNone(record["faults"][0]["recovery"])
            self.assertIn("no time series", record["faults"][0]["recovery_why"])


class FaultsExecutor(FakeExecutor):
    """Three nodes; faults that only record their schedule; a cut-off refused as without root; a
    phase's time series written where the phase's sampler writes it."""

    def __init__(self, cutoff_why: str = "cutting a node off needs root"):
        super().__init__()
        self.nodes = [profiling.Node(f"n{i}", 100 + i, f"http://127.0.0.1:{8280 + i}") for i in range(3)]
        self.cutoff_why = cutoff_why
        self.made = []
        self.cleaned = False

    def clean_faults(self):
        self.cleaned = True

    def fault(self, kind, index, at_s, for_s):
        if kind == "cutoff" and self.cutoff_why:
            raise SystemExit(f"cannot cut node {self.nodes[index].name} off: {self.cutoff_why}")
        self.made.append((kind, index, at_s, for_s))

        class Fake(faults.ScheduledFault):
            def begin(self):
                pass

            def end(self):
                pass

            def start(self, t0):
                self.began_at_s, self.ended_at_s = self.at_s, self.at_s + self.for_s
                return self

        return Fake(self.nodes[index].name, at_s, for_s, kind=kind)

    def run(self, prepared, status=None):
        pr = super().run(prepared, status)
        if prepared.label == "faults":
            pr.samples = SteadySamples(prepared.spec.duration_s)
        return pr

    def await_healed(self, timeout_s):
        return {"healed": True, "hints_replayed_s": 1.0, "repaired_s": 2.0, "timeout_s": timeout_s, "why": ""}


class FaultsCommandTest(unittest.TestCase):
    def plan_of(self, *argv: str) -> settings.FaultPlan:
        from lab import __main__ as cli

        seen = {}

        def run_faults(cfg, plan, executor=None):
            seen["plan"] = plan
            raise SystemExit(0)

        with mock.patch.object(fault_scenario, "run_faults", run_faults), self.assertRaises(SystemExit):
            cli.main(["faults", "--targets", "http://127.0.0.1:1", *argv])
        return seen["plan"]

    def test_the_default_schedule_may_leave_a_fault_out_another_may_not(self):
        plan = self.plan_of()
        self.assertFalse(plan.given)
        self.assertEqual(faults.parse_schedule(faults.DEFAULT_SCHEDULE), plan.schedule)
        plan = self.plan_of("--faults", "kill:n1@10+10,pause@35+10", "--duration", "90s")
        self.assertTrue(plan.given)
        self.assertEqual((["kill", "pause"], 90), ([p.kind for p in plan.schedule], plan.duration_s))

    def test_a_bad_schedule_stops_the_command_with_how_to_write_it(self):
        from lab import __main__ as cli

        err = io.StringIO()
        with mock.patch("sys.stderr", err), mock.patch.object(fault_scenario, "run_faults") as run, self.assertRaises(SystemExit) as e:
            cli.main(["faults", "--targets", "http://127.0.0.1:1", "--faults", "kill@20"])
        self.assertEqual(2, e.exception.code)
        run.assert_not_called()
        self.assertIn("--faults: fault 'kill@20': write kind@at+for", err.getvalue())


class FaultScenarioTest(unittest.TestCase):
    def run_with(self, executor, plan) -> dict:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(
                targets=["http://127.0.0.1:8280"], pids=[], rate=100, warmup_s=20, events=["cpu"], reports_dir=Path(tmp)
            )
            with mock.patch.object(runrecord.Run, "finish", lambda run: json.loads((run.dir / "run.json").read_text())):
                return fault_scenario.run_faults(cfg, plan, executor)

    def test_fill_warm_up_then_one_mixed_phase_with_the_faults_and_their_recovery(self):
        executor = FaultsExecutor(cutoff_why="")
        doc = self.run_with(executor, settings.FaultPlan(faults.parse_schedule("kill@20+15,pause:n0@70+15,cutoff@120+15"), True, 30))
        self.assertTrue(executor.cleaned, "what an earlier run left is removed first")
        self.assertEqual(
            [("fill", "fill", 900), ("warm-up mixed", "mixed", 10), ("warm-up mixed on new connections", "mixed", 10),
             ("faults", "mixed", 165)],
            [(label, spec.scenario, spec.duration_s) for label, spec in executor.specs],
        )
        self.assertEqual([("kill", 2, 20, 15), ("pause", 0, 70, 15), ("cutoff", 2, 120, 15)], executor.made)
        self.assertEqual("faults", doc["kind"])
        self.assertEqual("kill@20+15,pause:n0@70+15,cutoff@120+15", doc["config"]["faults"])
        self.assertEqual([], doc["config"]["faults_left_out"])
        phase = doc["phases"][-1]
        self.assertEqual(["kill", "pause", "cutoff"], [f["kind"] for f in phase["faults"]])
        self.assertEqual([], phase["profiles"], "faulty nodes are not profiled")
        self.assertTrue(phase["heal"]["healed"])
        self.assertEqual(0, phase["faults"][0]["recovery"]["errors_during"])
        self.assertEqual(0.0, phase["faults"][0]["recovery"]["rate_recovered_s"])

    def test_the_default_schedule_leaves_out_what_this_machine_cannot_do_and_says_why(self):
        executor = FaultsExecutor()
        doc = self.run_with(executor, settings.FaultPlan(faults.parse_schedule("kill@20+15,pause@70+15,cutoff@120+15"), given=False))
        self.assertEqual("kill@20+15,pause@70+15", doc["config"]["faults"])
        self.assertEqual(
            [{"fault": "cutoff@120+15", "why": "cannot cut node n2 off: cutting a node off needs root"}],
            doc["config"]["faults_left_out"],
        )
        self.assertEqual(85 + faults.RECOVERY_S, doc["phases"][-1]["spec"]["duration_s"])

    def test_a_fault_asked_for_that_cannot_be_made_stops_the_run_before_any_phase(self):
        executor = FaultsExecutor()
        with self.assertRaises(SystemExit) as e:
            self.run_with(executor, settings.FaultPlan(faults.parse_schedule("kill@5+5,cutoff@20+5")))
        self.assertIn("needs root", str(e.exception))
        self.assertEqual([], executor.specs)

    def test_an_executor_without_faults_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            self.run_with(FakeExecutor(), settings.FaultPlan(faults.parse_schedule("pause@5+5")))
        self.assertIn("cannot make faults", str(e.exception))

    def test_a_killed_node_is_recorded_with_every_pid_it_had(self):
        executor = FaultsExecutor(cutoff_why="")
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(targets=["http://127.0.0.1:8280"], pids=[], reports_dir=Path(tmp))
            run = runrecord.Run(cfg, "faults", executor=executor)
            executor.nodes[2].pid = 555
            run.save()
            nodes = json.loads((run.dir / "run.json").read_text())["nodes"]
        self.assertEqual({"name": "n2", "pid": 555, "target": "http://127.0.0.1:8282", "pids": [102, 555]}, nodes[2])
        self.assertNotIn("pids", nodes[0])


if __name__ == "__main__":
    unittest.main()
