"""Self-tests of scripts/cluster-status.py (`make status`, `make repair`): what it prints for a node's
/actuator/kvlab and Prometheus counters, served by a fake node on loopback, and for a node that is
down. Run: make lab-selftest."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
import tempfile
import threading
import unittest
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lab import tools

SCRIPT = tools.ROOT / "scripts" / "cluster-status.py"
_spec = importlib.util.spec_from_file_location("cluster_status", SCRIPT)
status = importlib.util.module_from_spec(_spec)
sys.modules["cluster_status"] = status
_spec.loader.exec_module(status)

NOW = datetime(2026, 1, 2, 12, 0, 0, tzinfo=timezone.utc).timestamp()
N0, N1, N2 = "http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1:8082"


def iso(seconds_before: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_before, timezone.utc).isoformat().replace("+00:00", "Z")


def kvlab_status(self_url: str = N0) -> dict:
    """A node's /actuator/kvlab as the service writes it: n2 was away, n0 kept hints for it."""
    return {
        "self": self_url,
        "nodes": [N0, N1, N2],
        "topology": {"changedAt": iso(600), "previousNodes": [N0, N1]},
        "hints": {N2: {"pending": 1234, "bytes": 56_789, "oldest": iso(95)}},
        "repair": {
            "enabled": True,
            "interval": "PT10M",
            "peers": {
                N1: {
                    "running": False,
                    "lastCompleteRoundStarted": iso(30),
                    "lastRound": {
                        "started": iso(30),
                        "finished": iso(29),
                        "complete": True,
                        "outcome": "complete",
                        "bucketsDiffering": 3,
                        "keysCompared": 41,
                        "recordsSent": 2,
                        "recordsReceived": 5,
                    },
                },
                N2: {
                    "running": False,
                    "lastCompleteRoundStarted": iso(900),
                    "lastRound": {
                        "started": iso(4),
                        "finished": iso(4),
                        "complete": False,
                        "outcome": "failed: Connection refused: /127.0.0.1:8082",
                        "bucketsDiffering": 0,
                        "keysCompared": 0,
                        "recordsSent": 0,
                        "recordsReceived": 0,
                    },
                },
            },
        },
        "handoff": {
            "running": None,
            "lastSweep": {
                "started": iso(500),
                "finished": iso(499),
                "scanned": 3000,
                "sent": 120,
                "movedAway": 118,
                "purged": 7,
                "failed": 2,
            },
            "leaving": None,
            "recordsMovedAway": 118,
            "tombstonesPurged": 7,
        },
    }


PROMETHEUS = """# HELP kvlab_hints_written_total Hints kept
# TYPE kvlab_hints_written_total counter
kvlab_hints_written_total{application="kvlab"} 1300.0
kvlab_hints_replayed_total{application="kvlab"} 66.0
kvlab_hints_dropped_total{application="kvlab"} 0.0
kvlab_hints_pending{application="kvlab"} 1234.0
kvlab_repair_records_total{application="kvlab",direction="sent"} 2.0
"""


# A complete backup's answer, as POST /actuator/kvlab/backup gives it.
BACKUP_ANSWER = {
    "backup": "kvlab-20260102-115500",
    "target": "/work/kvlab/backups",
    "startedAt": "2026-01-02T11:55:00Z",
    "finishedAt": "2026-01-02T11:55:03.5Z",
    "durationMillis": 3500,
    "keys": 3000,
    "bytes": 3_145_728,
    "uploadedBytes": 1_048_576,
    "nodes": [
        {"index": 0, "node": N0, "keys": 1500, "bytes": 2_097_152, "uploadedBytes": 1_048_576, "files": 7, "durationMillis": 3100},
        {"index": 1, "node": N1, "keys": 1500, "bytes": 1_048_576, "uploadedBytes": 0, "files": 5, "durationMillis": 2900},
    ],
    "guarantee": "every write acknowledged before 2026-01-02T11:55:00Z is in this backup",
}


class FakeNode(BaseHTTPRequestHandler):
    """/v0/status on the client port and the actuator on the management port, one server for both."""

    document: dict = {}
    repairs: list = []
    # The credential the node takes for a state-changing call, as a real node's management port does.
    token = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/v0/status":
            self._send(200, b"OK\n", "text/plain")
        elif self.path == "/actuator/kvlab":
            self._send(200, json.dumps(self.document).encode(), "application/json")
        elif self.path == "/actuator/prometheus":
            self._send(200, PROMETHEUS.encode(), "text/plain")
        else:
            self._send(404, b"", "text/plain")

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        FakeNode.repairs.append((self.path, self.headers.get("Content-Type"), body))
        if self.headers.get("Authorization") != f"Bearer {FakeNode.token}":
            self._send(401, b"a state-changing management call needs a credential\n", "text/plain")
            return
        if self.path == "/actuator/kvlab/backup":
            self._send(200, json.dumps(BACKUP_ANSWER).encode(), "application/json")
            return
        self._send(200, b'{"repair":"a round with every peer starts within a second"}', "application/json")

    def _send(self, code: int, body: bytes, kind: str):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def fake_node(document: dict):
    FakeNode.document = document
    FakeNode.repairs = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeNode)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


class StatusLines(unittest.TestCase):
    names = {N0: "n0", N1: "n1", N2: "n2"}

    def node(self, document: dict | None, serving: bool = True) -> status.Node:
        return status.Node("n0", N0, "http://127.0.0.1:9080", 4242, True, serving, document, status.counters(PROMETHEUS))

    def test_a_serving_node_shows_hints_repair_and_handoff_in_a_few_lines(self):
        out = status.lines(self.node(kvlab_status()), self.names, NOW)
        text = "\n".join(out)
        self.assertLessEqual(len(out), 7, text)
        self.assertRegex(out[0], r"^n0  serving  http://127.0.0.1:8080  pid 4242  topology 3 nodes \(changed .*10 min ago\), from 2\)$")
        self.assertIn("pending: 1 234 for n2 (55.5 KiB, oldest", text)
        self.assertIn("(95 s ago)", text)
        self.assertIn("since start 1 300 written, 66 replayed", text)
        self.assertIn("n1: ", text)
        self.assertIn("(30 s ago) complete: 3 buckets differed, 41 keys compared, 2 sent, 5 received", text)
        self.assertIn("(4 s ago) failed: Connection refused: /127.0.0.1:8082; last complete one began", text)
        self.assertIn("3 000 records read, 120 sent, 118 moved away, 7 tombstones purged, 2 not sent", text)
        self.assertIn("handoff  118 records moved away, 7 tombstones purged since start", text)
        self.assertTrue(all(len(line) <= 140 for line in out), text)

    def test_peers_appear_by_the_names_given_and_in_their_order(self):
        text = "\n".join(status.lines(self.node(kvlab_status()), self.names, NOW))
        self.assertLess(text.index(" n1: "), text.index(" n2: "))
        self.assertNotIn("127.0.0.1:8081", text)

    def test_a_node_with_nothing_pending_and_no_round_yet(self):
        doc = kvlab_status()
        doc["hints"] = {}
        doc["topology"]["previousNodes"] = []
        doc["repair"]["peers"][N1] = {"running": True, "lastCompleteRoundStarted": None, "lastRound": None}
        doc["handoff"]["lastSweep"] = None
        text = "\n".join(status.lines(self.node(doc), self.names, NOW))
        self.assertIn("topology 3 nodes\n", text + "\n")
        self.assertIn("hints    none pending", text)
        self.assertIn("n1: running now", text)
        self.assertIn("no sweep yet", text)

    def test_an_idle_handoff_takes_one_short_line(self):
        doc = kvlab_status()
        doc["handoff"]["lastSweep"] |= {"sent": 0, "movedAway": 0, "purged": 0, "failed": 0}
        handoff = [line for line in status.lines(self.node(doc), self.names, NOW) if "sweep" in line]
        self.assertEqual(1, len(handoff))
        self.assertRegex(handoff[0], r"^    handoff  118 records moved away, 7 tombstones purged since start; last sweep .*: nothing to move$")

    def test_a_leaving_node_says_so_on_a_line_of_its_own(self):
        doc = kvlab_status()
        doc["handoff"]["leaving"] = {
            "remaining": [N1, N2],
            "started": iso(20),
            "passes": 3,
            "lastPass": {"started": iso(2), "finished": iso(1), "scanned": 500, "sent": 500, "movedAway": 0, "purged": 0, "failed": 0},
        }
        doc["handoff"]["running"] = {"started": iso(1), "finished": None, "scanned": 10, "sent": 9, "movedAway": 0, "purged": 0, "failed": 0}
        out = status.lines(self.node(doc), self.names, NOW)
        leaving = [line for line in out if "LEAVING" in line]
        self.assertEqual(1, len(leaving), out)
        self.assertIn("handing its records to n1, n2: 3 passes, the last 500 records read, 500 sent", leaving[0])
        self.assertIn("sweep running since", "\n".join(out))
        self.assertIn("a node is leaving", status.summary([self.node(doc)]))

    def backup_line(self, backup: dict) -> str:
        doc = {**kvlab_status(), "backup": backup}
        found = [line for line in status.lines(self.node(doc), self.names, NOW) if line.startswith("    backup ")]
        self.assertEqual(1, len(found))
        return found[0]

    def test_the_last_backup_shows_when_how_big_how_long_and_where(self):
        line = self.backup_line(
            {
                "target": "/work/kvlab/backups",
                "running": None,
                "last": {
                    "backup": "kvlab-20260102-115500",
                    "startedAt": iso(300),
                    "finishedAt": iso(296),
                    "durationMillis": 4200,
                    "bytes": 52_428_800,
                    "uploadedBytes": 1_048_576,
                    "keys": 123_456,
                    "where": "/work/kvlab/backups",
                    "outcome": "ok",
                    "error": None,
                },
            }
        )
        self.assertRegex(
            line,
            r"^    backup   \S+ \(5 min ago\) kvlab-20260102-115500 ok: 50.0 MiB \(1.0 MiB uploaded\), "
            r"123 456 keys, took 4.2 s; in /work/kvlab/backups$",
        )

    def test_a_failed_backup_says_why(self):
        line = self.backup_line(
            {
                "target": "s3://kvlab/lab",
                "running": None,
                "last": {"backup": "kvlab-20260102-115500", "startedAt": iso(60), "outcome": "failed",
                         "error": "node http://127.0.0.1:8082 unreachable: Connection refused", "where": "s3://kvlab/lab"},
            }
        )
        self.assertIn("kvlab-20260102-115500 FAILED: node http://127.0.0.1:8082 unreachable: Connection refused; in s3://kvlab/lab", line)

    def test_a_node_without_a_target_or_a_backup_yet_says_so(self):
        self.assertEqual("    backup   no target (kvlab.backup.target unset)", self.backup_line({"target": "", "last": None}))
        self.assertEqual("    backup   none yet; target /b", self.backup_line({"target": "/b", "running": None, "last": None}))
        running = self.backup_line({"target": "/b", "running": {"backup": "x", "startedAt": iso(5)}, "last": None})
        self.assertRegex(running, r"running since .*\(5 s ago\) \(x\)$")

    def test_a_node_that_knows_nothing_of_backups_shows_no_backup_line(self):
        out = status.lines(self.node(kvlab_status()), self.names, NOW)
        self.assertFalse([line for line in out if "backup" in line])

    def test_a_node_whose_process_exited_is_down_in_one_line(self):
        node = status.Node("n2", N2, "http://127.0.0.1:9082", 99999, False)
        self.assertEqual(["n2  down     http://127.0.0.1:8082  pid 99999 (not running)"], status.lines(node, self.names, NOW))

    def test_the_summary_counts_serving_nodes_and_hints_and_sees_disagreement(self):
        a = self.node(kvlab_status())
        b = self.node({**kvlab_status(), "nodes": [N0, N1], "hints": {}})
        down = status.Node("n2", N2, "", 1, False)
        self.assertEqual(
            "2 of 3 nodes serving; they disagree on the topology (2, 3 nodes); 1 234 hints pending", status.summary([a, b, down])
        )

    def test_prometheus_counters_are_summed_over_their_series(self):
        page = PROMETHEUS + 'kvlab_hints_written_total{application="kvlab",pod="x"} 5.0\n'
        self.assertEqual(
            {"kvlab_hints_written_total": 1305.0, "kvlab_hints_replayed_total": 66.0, "kvlab_hints_dropped_total": 0.0},
            status.counters(page),
        )


class AgainstAFakeNode(unittest.TestCase):
    def run_script(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), "--timeout", "2", *args], capture_output=True, text=True, timeout=60)

    def test_status_asks_both_ports_and_prints_every_node(self):
        with fake_node(kvlab_status(N0)) as url:
            down = closed_port()
            p = self.run_script("--node", "n0", url, url, "-", "--node", "n1", down, down, "-")
        self.assertEqual(0, p.returncode, p.stderr)
        self.assertIn("n0  serving", p.stdout)
        self.assertIn("since start 1 300 written, 66 replayed", p.stdout)
        self.assertRegex(p.stdout, r"n1  down .*\n    no status: .*(refused|Errno)")
        self.assertTrue(p.stdout.rstrip().endswith("1 of 2 nodes serving; 1 234 hints pending"), p.stdout)

    def token_file(self, token: str) -> str:
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = Path(d.name) / "cluster-secret"
        path.write_text(token + "\n")
        return str(path)

    def test_repair_posts_json_with_the_credential_to_every_node(self):
        token = self.token_file(FakeNode.token)
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--repair", "--token-file", token, "--node", "n0", url, url, "-", "--node", "n1", url, url, "-")
            repairs = list(FakeNode.repairs)
        self.assertEqual(0, p.returncode, p.stdout + p.stderr)
        self.assertEqual([("/actuator/kvlab/repair", "application/json", b"{}")] * 2, repairs)
        self.assertIn("n0: a repair round with every peer starts within a second", p.stdout)

    def test_a_repair_the_node_refuses_says_why(self):
        token = self.token_file("not-the-token-of-this-cluster")
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--repair", "--token-file", token, "--node", "n0", url, url, "-")
        self.assertEqual(1, p.returncode)
        self.assertIn("HTTP 401: a state-changing management call needs a credential", p.stdout)

    def test_a_repair_without_a_credential_asks_no_node(self):
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--repair", "--node", "n0", url, url, "-")
            repairs = list(FakeNode.repairs)
        self.assertEqual(2, p.returncode)
        self.assertEqual([], repairs)
        self.assertIn("--token-file", p.stderr)

    def test_repair_fails_when_a_node_does_not_answer(self):
        down = closed_port()
        p = self.run_script("--repair", "--token-file", self.token_file(FakeNode.token), "--node", "n0", down, down, "-")
        self.assertEqual(1, p.returncode)
        self.assertIn("n0: http://127.0.0.1:", p.stdout)

    def test_a_backup_asks_the_first_serving_node_with_the_credential_and_ends_with_its_name_and_where(self):
        token = self.token_file(FakeNode.token)
        down = closed_port()
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--backup", "--token-file", token, "--node", "n0", down, down, "-", "--node", "n1", url, url, "-")
            posts = list(FakeNode.repairs)
        self.assertEqual(0, p.returncode, p.stdout + p.stderr)
        self.assertEqual([("/actuator/kvlab/backup", "application/json", b"{}")], posts)
        last = p.stdout.rstrip().splitlines()[-1]
        self.assertEqual("backup kvlab-20260102-115500 in /work/kvlab/backups", last)
        self.assertIn("took 3.5 s: 3 000 keys, 3.0 MiB, of which 1.0 MiB uploaded", p.stdout)
        self.assertIn("every write acknowledged before", p.stdout)

    def test_a_backup_passes_its_name(self):
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--backup", "nightly-1", "--token-file", self.token_file(FakeNode.token), "--node", "n0", url, url, "-")
            posts = list(FakeNode.repairs)
        self.assertEqual(0, p.returncode, p.stderr)
        self.assertEqual(b'{"name": "nightly-1"}', posts[0][2])

    def test_a_backup_refused_says_why_and_fails(self):
        with fake_node(kvlab_status(N0)) as url:
            p = self.run_script("--backup", "--token-file", self.token_file("wrong"), "--node", "n0", url, url, "-")
        self.assertEqual(1, p.returncode)
        self.assertIn("the backup failed", p.stderr)
        self.assertIn("HTTP 401", p.stderr)
        self.assertNotIn("backup kvlab-", p.stdout)

    def test_a_backup_without_a_serving_node_or_a_credential_fails(self):
        down = closed_port()
        p = self.run_script("--backup", "--token-file", self.token_file(FakeNode.token), "--node", "n0", down, down, "-")
        self.assertEqual(1, p.returncode)
        self.assertIn("no node serves", p.stderr)
        p = self.run_script("--backup", "--node", "n0", down, down, "-")
        self.assertEqual(2, p.returncode)
        self.assertIn("a backup needs", p.stderr)


if __name__ == "__main__":
    unittest.main()
