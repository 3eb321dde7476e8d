"""Self-tests of the disaster scenario (make lab SCENARIO=disaster) on synthetic data: the check of
every acknowledged key after the restore (lab.disaster.judge), the load's windows around the backup,
the verdict's first rows and answer, and a whole report that `lab check` accepts."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import tempfile
import unittest
from pathlib import Path

from lab import __main__ as cli
from lab import disaster
from lab.ledger.check import ABSENT, UNREADABLE, VALUE, Held
from lab.ledger.history import DELETE, FAILED, GET, OK, PUT, UNCERTAIN, Op
from lab.report import verdicts
from lab.tests.test_lab import phase, write_run

CUT = 10.0


def op(seq: int, key: str, kind: str, invoked: float, completed: float, outcome: str = OK, saw=None) -> Op:
    return Op(seq, key, kind, invoked, completed, outcome, "201" if outcome == OK else "timeout", saw)


class JudgeTest(unittest.TestCase):
    def test_a_key_acknowledged_before_the_backup_must_come_back_at_that_write_or_a_later_one(self):
        ops = [op(1, "a", PUT, 1, 1.1), op(2, "a", PUT, 5, 5.1), op(3, "a", PUT, 12, 12.1)]
        for held, missing in ((Held(VALUE, 2), 0), (Held(VALUE, 3), 0), (Held(VALUE, 1), 1), (Held(ABSENT), 1)):
            c = disaster.judge(ops, CUT, {"a": held})
            self.assertEqual((1, 2, missing), (c["before_keys"], c["before_writes"], c["missing"]), held)
        c = disaster.judge(ops, CUT, {"a": Held(VALUE, 1)})
        self.assertEqual([{"key": "a", "acknowledged_before_backup": "put #2 at 5.00 s (201)", "found": "put #1"}],
                         c["missing_examples"])

    def test_a_delete_acknowledged_before_the_backup_comes_back_as_nothing(self):
        ops = [op(1, "d", PUT, 1, 1.1), op(2, "d", DELETE, 3, 3.1)]
        self.assertEqual(0, disaster.judge(ops, CUT, {"d": Held(ABSENT)})["missing"])
        self.assertEqual(1, disaster.judge(ops, CUT, {"d": Held(VALUE, 1)})["missing"])

    def test_a_write_answered_after_the_lab_asked_for_the_backup_is_not_held_to_it(self):
        # Sent before the cut, answered after it: the coordinator's cut may come before it.
        ops = [op(1, "b", PUT, 9.9, 10.2)]
        c = disaster.judge(ops, CUT, {"b": Held(ABSENT)})
        self.assertEqual((0, 1, 0, 1, 0, 1), (c["before_keys"], c["after_keys"], c["missing"], c["after_writes"],
                                              c["after_present"], c["after_lost"]))
        c = disaster.judge(ops, CUT, {"b": Held(VALUE, 1)})
        self.assertEqual((1, 0), (c["after_present"], c["after_lost"]))

    def test_failed_and_unanswered_writes_and_reads_are_not_counted_and_an_unreadable_key_is(self):
        ops = [op(1, "u", PUT, 1, 1.1), op(2, "u", PUT, 4, 6, UNCERTAIN), op(3, "f", PUT, 2, 2.1, FAILED),
               op(4, "u", GET, 7, 7.1, OK, 1)]
        c = disaster.judge(ops, CUT, {"u": Held(VALUE, 2)})
        self.assertEqual((1, 1, 0), (c["before_keys"], c["before_writes"], c["missing"]),
                         "an unanswered write may be the one the backup holds")
        c = disaster.judge(ops, CUT, {})
        self.assertEqual((0, 1), (c["missing"], c["unreadable"]))
        self.assertEqual([{"key": "u", "found": "unreadable (not read)"}], c["unreadable_examples"])

    def test_what_a_client_read_answered(self):
        self.assertEqual(Held(VALUE, 7), disaster.held_of(200, 7))
        self.assertEqual(Held(ABSENT), disaster.held_of(404, None))
        self.assertEqual(UNREADABLE, disaster.held_of(503, None).state)
        self.assertEqual("unreadable (no answer)", disaster.held_of(None, None).describe())


def series(p99s: list[float], requests: int = 500) -> dict:
    rows = [{"t": float(i), "requests": requests, "errors": 0, "p99_ms": p} for i, p in enumerate(p99s)]
    rows[0]["partial"] = True
    return {"interval_s": 1.0, "load": {"latency": True, "seconds": rows}}


class WindowsTest(unittest.TestCase):
    def test_the_seconds_before_during_and_after_the_backup(self):
        s = series([9, 2, 2, 2, 2, 3, 3, 4, 2, 2], requests=500)
        s["load"]["seconds"][6]["errors"] = 5
        w = disaster.windows(s, 4.5, 7.2)
        self.assertEqual((3.0, 2.0, 2.0), (w["before"]["seconds"], w["before"]["p99_ms"], w["before"]["p99_worst_ms"]),
                         "the partial first second is left out")
        self.assertEqual((4.0, 3.0, 4.0, 5), (w["during"]["seconds"], w["during"]["p99_ms"], w["during"]["p99_worst_ms"],
                                              w["during"]["errors"]))
        self.assertEqual(498.8, w["during"]["rate"])
        self.assertEqual(2.0, w["after"]["seconds"])
        self.assertEqual(0.5, disaster.p99_cost(w))
        self.assertEqual(0.0024, disaster.rate_cost(w))

    def test_a_backup_that_outlasted_the_load_has_no_after(self):
        w = disaster.windows(series([1, 1, 1, 1]), 2.0, None)
        self.assertEqual((0.0, None), (w["after"]["seconds"], w["after"]["rate"]))
        self.assertIsNone(disaster.p99_cost({"before": {"p99_ms": None}, "during": {"p99_ms": 3}}))


def disaster_run(missing: int = 0, p99_during: float = 2.2) -> dict:
    """A disaster run as lab.scenarios.disaster records it."""
    fill = {"label": "fill", "scenario": "fill", "dir": "phases/01-fill",
            "result": {"tool": "k6", "keys_filled": [0, 3000], "keys": 3000, "status_counts": {"201": 3000}, "latency": {}}}
    mixed = phase("backup", 0.4, 300, False) | {"dir": "phases/03-backup", "scenario": "mixed"}
    mixed["backup"] = {
        "asked_at_s": 10.0, "answered_at_s": 13.5, "timeout_s": 600,
        "answer": {"backup": "kvlab-20260102-115500", "target": "/lab/backups", "durationMillis": 3500, "keys": 3200,
                   "bytes": 5_242_880, "uploadedBytes": 5_242_880, "nodes": [{"index": i} for i in range(3)]},
        "windows": {"before": {"seconds": 9, "rate": 299.0, "p99_ms": 2.0, "p99_worst_ms": 2.5, "errors": 0},
                    "during": {"seconds": 4, "rate": 297.0, "p99_ms": p99_during, "p99_worst_ms": 3.1, "errors": 0},
                    "after": {"seconds": 16, "rate": 300.0, "p99_ms": 2.0, "p99_worst_ms": 2.4, "errors": 0}},
    }
    check = {"cut_s": 10.0, "before_keys": 180, "before_writes": 240, "missing": missing, "unreadable": 0,
             "missing_examples": [{"key": "ledger-a-00007", "acknowledged_before_backup": "put #41 at 8.00 s (201)",
                                   "found": "nothing"}] if missing else [],
             "unreadable_examples": [], "after_keys": 15, "after_writes": 520, "after_present": 12, "after_lost": 3}
    return {
        "kind": "disaster", "executor": "local", "nodes": [{"name": f"n{i}", "pid": i} for i in range(3)],
        "config": {"slo_p99_ms": 10, "max_error_rate": 0.01, "replicas": "2/3", "rate": 300, "tool": "k6"},
        "phases": [fill, mixed],
        "disaster": {
            "target": "/lab/backups", "read_replicas": "from/from",
            "destroy": {"seconds": 2.0, "removed": [{"node": f"n{i}", "dir": f"data/lab/n{i}", "bytes": 2_000_000} for i in range(3)]},
            "restore": {"backup": "kvlab-20260102-115500", "seconds": 6.3, "bytes": 5_300_000,
                        "nodes": [{"node": f"n{i}", "exit_code": 0, "seconds": 2.1, "bytes": 1_700_000} for i in range(3)]},
            "start": {"seconds": 7.5},
            "check": check,
        },
    }


class VerdictTest(unittest.TestCase):
    def test_the_first_row_is_the_missing_count_and_gates_data(self):
        v = verdicts.build(disaster_run())
        first = v["rows"][0]
        self.assertEqual("writes acknowledged before the backup began, missing after the restore", first["check"])
        self.assertEqual(("pass", "data"), (first["status"], first["gate"]))
        self.assertTrue(first["observed"].startswith("0 of 180 keys"), first["observed"])
        self.assertTrue(v["passed"])
        self.assertTrue(v["answer"].startswith("Every write acknowledged before the backup began came back (180 keys checked)"), v["answer"])
        self.assertIn("The backup took 3.5 s, the restore 6.3 s; p99 during the backup was +10 % against before it.", v["answer"])
        self.assertEqual(
            "kvlab disaster scenario: 3 nodes, replicas 2/3, k6 at 300/s; backup to /lab/backups, every node's data "
            "destroyed, restored", v["title"])

        lost = verdicts.build(disaster_run(missing=2))
        self.assertFalse(lost["passed"])
        self.assertEqual(("fail", "data"), (lost["rows"][0]["status"], lost["rows"][0]["gate"]))
        self.assertIn("e.g. ledger-a-00007: put #41 at 8.00 s (201) acknowledged, found nothing", lost["rows"][0]["observed"])
        self.assertTrue(lost["answer"].startswith("2 keys acknowledged before the backup did not come back (missing or older)"))

    def test_the_backup_costs_p99_within_its_target_or_fails_performance(self):
        rows = {r["check"]: r for r in verdicts.build(disaster_run(p99_during=2.6))["rows"]}
        cost = rows["p99 during the backup against before it (median of per-second p99)"]
        self.assertEqual(("fail", "performance"), (cost["status"], cost["gate"]))
        self.assertIn("2.60 ms during (4 s) against 2.00 ms before (9 s): +30 %", cost["observed"])
        after = rows["written after the backup began"]
        self.assertIn("12 back at their last write, 3 at an earlier state (lost by design)", after["observed"])
        self.assertIn("6.3 s for 3 nodes (n0 2.1 s, n1 2.1 s, n2 2.1 s)", rows["restore took"]["observed"])

    def test_a_run_that_stopped_before_the_check_fails_data_and_says_where(self):
        run = disaster_run()
        del run["disaster"]["check"], run["disaster"]["start"]
        run["disaster"]["failed"] = "start: node n1 exited with 1 after the restore"
        v = verdicts.build(run)
        self.assertFalse(v["passed"])
        self.assertIn("not checked: start: node n1 exited with 1", v["rows"][0]["observed"])
        self.assertIn("did not reach the check", v["answer"])
        run = disaster_run()
        run["phases"][1]["backup"] = {"asked_at_s": 10.0, "answered_at_s": 10.1, "error": "HTTP 503: node n2 unreachable"}
        del run["disaster"]["check"]
        rows = verdicts.build(run)["rows"]
        self.assertEqual(("backup under load", "failed: HTTP 503: node n2 unreachable", "fail"),
                         (rows[1]["check"], rows[1]["observed"], rows[1]["status"]))


class ReportTest(unittest.TestCase):
    def test_a_disaster_report_opens_with_its_answer_and_passes_the_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260102-000000-disaster", 1.0)
            run = json.loads((d / "run.json").read_text())
            synthetic = disaster_run()
            run |= {k: copy.deepcopy(synthetic[k]) for k in ("kind", "disaster")}
            run["config"] |= synthetic["config"] | {"targets": [f"http://127.0.0.1:{8080 + i}" for i in range(3)]}
            run["nodes"] = [{"name": f"n{i}", "pid": 123 + i, "target": f"http://127.0.0.1:{8080 + i}"} for i in range(3)]
            fill = phase("fill", 0.4, 1000, False) | {"dir": "phases/01-fill"}
            fill["result"] |= synthetic["phases"][0]["result"]
            run["phases"] = [fill, copy.deepcopy(synthetic["phases"][1])]
            (d / "run.json").write_text(json.dumps(run))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(0, cli.main(["report", str(d)]))
                code = cli.main(["check", str(d)])
            self.assertEqual(0, code, out.getvalue())
            md = (d / "report.md").read_text()
            self.assertTrue(md.startswith("# kvlab disaster scenario: 3 nodes, replicas 2/3"), md[:200])
            box = md.split("</div>", 1)[0]
            self.assertIn("writes acknowledged before the backup began, missing after the restore | 0 of 180 keys", box)
            self.assertLess(box.index("missing after the restore"), box.index("backup under load took"))


if __name__ == "__main__":
    unittest.main()
