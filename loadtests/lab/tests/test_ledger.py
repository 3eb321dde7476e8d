"""The ledger (lab.ledger): its rules on synthetic histories with each kind of violation, where a key
lives and how a replica is asked, the record, and the whole of it (workload, read-back, check)
against a stand-in cluster that keeps its writes, and against ones that lose them."""

from __future__ import annotations

import json
import socket
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import faults as lab_faults
from lab import runrecord, settings
from lab.faults import Launch
from lab.ledger import PhaseLedger, check, history, local, record, replicas
from lab.ledger.check import ABSENT, TOMBSTONE, UNREADABLE, VALUE, Held
from lab.ledger.history import DELETE, FAILED, FOREIGN, GET, OK, PUT, UNCERTAIN, Op
from lab.ledger.workload import Client, Plan, Workload
from lab.scenarios import faults as fault_scenario
from lab.tests.fakekvlab import FakeCluster



def op(seq: int, kind: str, invoked: float, completed: float, outcome: str = OK, saw: int | None = None, key: str = "k") -> Op:
    """An operation; an uncertain one timed out (no answer)."""
    return Op(seq, key, kind, invoked, completed, outcome, "timeout" if outcome == UNCERTAIN else "", saw)


def judged(ops: list[Op], *held: Held) -> check.KeyResult:
    return check.judge_key("k", ops, {f"n{i}": h for i, h in enumerate(held)})


class HistoryTest(unittest.TestCase):
    def test_a_value_names_its_write_and_nothing_else_passes_for_one(self):
        v = history.value_of("a1b2", "ledger-a1b2-00007", 41)
        self.assertEqual(41, history.seq_in("a1b2", "ledger-a1b2-00007", v))
        self.assertEqual(FOREIGN, history.seq_in("a1b2", "ledger-a1b2-00008", v), "another key's value")
        self.assertEqual(FOREIGN, history.seq_in("ffff", "ledger-a1b2-00007", v), "another phase's value")
        self.assertEqual(FOREIGN, history.seq_in("a1b2", "ledger-a1b2-00007", b"x" * 1024))

    def test_outcomes_a_write_may_have_been_applied_unless_refused_or_never_sent(self):
        self.assertEqual(OK, history.write_outcome(201, True))
        self.assertEqual(OK, history.write_outcome(202, True))
        for status in (400, 413):
            self.assertEqual(FAILED, history.write_outcome(status, True))
        self.assertEqual(FAILED, history.write_outcome(None, False), "no connection: nothing sent")
        for status in (None, 500, 503, 504, 507):
            self.assertEqual(UNCERTAIN, history.write_outcome(status, True), status)
        self.assertEqual((OK, OK, FAILED), tuple(history.read_outcome(s) for s in (200, 404, 504)))

    def test_operations_survive_their_file(self):
        ops = [op(2, GET, 0.5, 0.6, saw=None), op(1, PUT, 0.1, 0.2), op(3, DELETE, 1, 2, UNCERTAIN)]
        self.assertEqual(sorted(ops, key=lambda o: o.seq), history.load(history.dump(ops)))


class PlacementTest(unittest.TestCase):
    NODES = [f"http://127.0.0.1:{8800 + i}" for i in range(3)]
    PODS = [f"http://kvlab-{i}.kvlab-headless.kvlab.svc.cluster.local:7080" for i in range(4)]

    def test_replicas_are_chosen_as_the_nodes_choose_them(self):
        # Printed by service's RendezvousHashing for the same names and keys.
        self.assertEqual(-6158456069455434942 & replicas.MASK, replicas.hash64(b"ledger-t-00000"))
        expected = {
            "ledger-t-00000": [1, 0, 2],
            "ledger-t-00001": [2, 0, 1],
            "ledger-t-00002": [1, 0, 2],
            "k0000000042": [2, 0, 1],
            "\u00fc": [2, 0, 1],
        }
        for key, order in expected.items():
            self.assertEqual([self.NODES[i] for i in order], replicas.replicas_for(key, self.NODES, 3), key)
        pods = {"ledger-x-0": [2, 3], "ledger-x-1": [3, 0], "ledger-x-2": [0, 3], "ledger-x-3": [2, 1]}
        for key, order in pods.items():
            self.assertEqual([self.PODS[i] for i in order], replicas.replicas_for(key, self.PODS, 2), key)

    def test_ack_and_from_default_to_a_majority_of_all_nodes(self):
        self.assertEqual((2, 3), replicas.ack_from("", 3))
        self.assertEqual((3, 4), replicas.ack_from("", 4))
        self.assertEqual((1, 2), replicas.ack_from("1/2", 3))
        for bad in ("2/4", "0/1", "3/2", "two"):
            with self.assertRaises(ValueError, msg=bad):
                replicas.ack_from(bad, 3)
        self.assertTrue(record.promises_last_write("", 3))
        self.assertTrue(record.promises_last_write("2/3", 3))
        self.assertFalse(record.promises_last_write("1/3", 3))
        self.assertFalse(record.promises_last_write("1/2", 3))

    def test_a_replica_call_is_signed_as_scripts_replica_call_sh_signs_it(self):
        # printf 'kvlab-hmac-sha256\nGET\n<target>\n<node>\n1700000000000\n<nonce>\n\n<sha-256 of nothing, base64>'
        #   | openssl dgst -sha256 -hmac <secret> -binary | base64 (the service's PeerAuthenticationTest checks the same)
        target = replicas.record_target("ledger-a1-00001")
        self.assertEqual("/internal/v1/record?id=ledger-a1-00001", target)
        node = "http://kvlab-0.kvlab-headless.default.svc.cluster.local:7070"
        self.assertEqual(
            "kvlab-hmac-sha256 t=1700000000000,n=0123456789abcdef.1,b=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=,"
            "s=cOkMhM8wFb/vYd1C697zoa2dRvT2/5mfwbSz9UpygBs=",
            replicas.authorization(b"s3cret-of-the-cluster", node, "GET", target, 1700000000000, nonce="0123456789abcdef.1"),
        )

    def test_each_replica_call_has_a_nonce_of_its_own_numbered_per_node(self):
        a1, a2 = replicas.nonce_for("http://a:1"), replicas.nonce_for("http://a:1")
        b1 = replicas.nonce_for("http://b:1")
        session, _, first = a1.partition(".")
        self.assertEqual(16, len(session))
        self.assertEqual(f"{session}.{int(first) + 1}", a2)
        self.assertEqual(session, b1.partition(".")[0])
        signed = replicas.authorization(b"k", "http://a:1", "GET", "/x")
        self.assertNotEqual(signed, replicas.authorization(b"k", "http://a:1", "GET", "/x"), "never the same header twice")

    def test_a_replicas_answer_is_what_it_holds(self):
        v = history.value_of("t", "k", 5)
        self.assertEqual(Held(VALUE, 5, "17.1"), replicas.held(200, {"x-kvlab-version": "17.1"}, v, "t", "k"))
        self.assertEqual(TOMBSTONE, replicas.held(200, {"x-kvlab-tombstone": "true"}, b"", "t", "k").state)
        self.assertEqual(ABSENT, replicas.held(404, {}, b"this replica has no record of the key", "t", "k").state)
        h = replicas.held(401, {}, b"the call's signature does not match", "t", "k")
        self.assertEqual((UNREADABLE, "401: the call's signature does not match"), (h.state, h.detail))

    def test_a_node_that_does_not_answer_is_asked_no_more(self):
        asked = []

        def fetch(key):
            asked.append(key)
            raise ConnectionRefusedError("refused")

        out = replicas.read_each([f"k{i}" for i in range(10)], fetch)
        self.assertEqual(replicas.GIVE_UP, len(asked))
        self.assertTrue(all(h.state == UNREADABLE for h in out.values()))
        self.assertIn("ConnectionRefusedError", out["k9"].detail)


class FinalStateTest(unittest.TestCase):
    """judge_key: the last acknowledged write, or one the ledger attempted that it cannot rule out,
    at every replica."""

    def test_the_last_acknowledged_write_at_every_replica_is_kept(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 3)]
        self.assertEqual("kept", judged(ops, Held(VALUE, 2), Held(VALUE, 2), Held(VALUE, 2)).status)

    def test_an_older_write_at_one_replica_loses_the_last(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 3)]
        r = judged(ops, Held(VALUE, 2), Held(VALUE, 1), Held(VALUE, 2))
        self.assertEqual(("lost", 2), (r.status, r.op.seq))
        self.assertEqual("n0: put #2; n1: put #1; n2: put #2", r.found)

    def test_nothing_where_a_write_was_acknowledged_is_a_loss(self):
        self.assertEqual("lost", judged([op(1, PUT, 0, 1)], Held(ABSENT), Held(VALUE, 1)).status)
        self.assertEqual("lost", judged([op(1, PUT, 0, 1)], Held(TOMBSTONE), Held(VALUE, 1)).status)

    def test_an_acknowledged_delete_wants_a_tombstone_or_nothing(self):
        ops = [op(1, PUT, 0, 1), op(2, DELETE, 2, 3)]
        self.assertEqual("kept", judged(ops, Held(TOMBSTONE), Held(ABSENT)).status)
        r = judged(ops, Held(TOMBSTONE), Held(VALUE, 1))
        self.assertEqual(("lost", DELETE), (r.status, r.op.kind), "the deleted value came back")

    def test_a_write_that_may_have_landed_later_is_no_loss_present_or_missing(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 3, UNCERTAIN)]
        self.assertEqual("kept", judged(ops, Held(VALUE, 2), Held(VALUE, 2)).status)
        self.assertEqual("kept", judged(ops, Held(VALUE, 1), Held(VALUE, 1)).status)
        ops = [op(1, PUT, 0, 1), op(2, DELETE, 2, 3, UNCERTAIN)]
        self.assertEqual("kept", judged(ops, Held(TOMBSTONE), Held(TOMBSTONE)).status)

    def test_a_timed_out_write_before_the_last_acknowledged_one_may_still_win(self):
        # A paused node takes a PUT, the client gives up, a later PUT elsewhere is acknowledged;
        # the node resumes and applies the first one with a newer version.
        ops = [op(1, PUT, 0, 1, UNCERTAIN), op(2, PUT, 2, 3)]
        self.assertEqual("kept", judged(ops, Held(VALUE, 1), Held(VALUE, 1)).status)

    def test_a_write_answered_5xx_before_the_last_acknowledged_one_cannot_win(self):
        # Its coordinator versioned it before answering: the write acknowledged after is newer.
        answered = Op(1, "k", PUT, 0, 1, UNCERTAIN, "504")
        r = judged([answered, op(2, PUT, 2, 3)], Held(VALUE, 1), Held(VALUE, 2))
        self.assertEqual("lost", r.status)
        silent = Op(1, "k", PUT, 0, 1, UNCERTAIN, "timeout")
        self.assertEqual("kept", judged([silent, op(2, PUT, 2, 3)], Held(VALUE, 1), Held(VALUE, 1)).status)
        self.assertEqual("kept", judged([op(1, PUT, 0, 1), Op(2, "k", PUT, 2, 3, UNCERTAIN, "504")], Held(VALUE, 2)).status)

    def test_an_acknowledged_write_superseded_by_a_later_one_must_not_come_back(self):
        ops = [op(1, PUT, 0, 1), op(2, DELETE, 2, 3), op(3, PUT, 4, 5)]
        self.assertEqual("lost", judged(ops, Held(VALUE, 1), Held(VALUE, 3)).status)

    def test_a_failed_write_or_a_stranger_value_is_no_state_the_ledger_allows(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 3, FAILED)]
        self.assertEqual("lost", judged(ops, Held(VALUE, 2), Held(VALUE, 1)).status)
        self.assertEqual("lost", judged([op(1, PUT, 0, 1)], Held(VALUE, FOREIGN)).status)
        self.assertIn("a value the ledger did not write", judged([op(1, PUT, 0, 1)], Held(VALUE, FOREIGN)).found)

    def test_what_a_key_could_hold_is_said_in_a_few_words(self):
        ops = [op(i, PUT, i, i + 0.5, UNCERTAIN) for i in range(1, 10)] + [op(10, DELETE, 10, 11)]
        writes, _ = check.possible(ops)
        self.assertEqual("4 earlier writes or put #5 or put #6 or put #7 or put #8 or put #9 or delete #10",
                         check.describe(writes, False))
        self.assertEqual("put #1 or nothing", check.describe(writes[:1], True))

    def test_an_unreadable_replica_leaves_the_key_unproven_not_lost(self):
        r = judged([op(1, PUT, 0, 1)], Held(VALUE, 1), Held(UNREADABLE, detail="timeout"))
        self.assertEqual("unreadable", r.status)
        r = judged([op(1, PUT, 0, 1)], Held(VALUE, 7), Held(UNREADABLE, detail="timeout"))
        self.assertEqual("lost", r.status, "a wrong replica is a loss whatever the others say")

    def test_a_key_without_an_acknowledged_write_has_nothing_to_keep(self):
        self.assertIsNone(judged([op(1, PUT, 0, 1, UNCERTAIN), op(2, GET, 2, 3)], Held(ABSENT)))


class StaleReadTest(unittest.TestCase):
    """stale_reads: a read that began after a write was acknowledged returns it or a later attempt."""

    def stale(self, ops: list[Op]) -> list[int]:
        checked, bad = check.stale_reads(ops)
        self.assertEqual(sum(o.kind == GET and o.outcome == OK for o in ops), checked)
        return [r.seq for r, _ in bad]

    def test_a_read_after_an_acknowledged_write_that_returns_an_older_one_is_stale(self):
        self.assertEqual([3], self.stale([op(1, PUT, 0, 1), op(2, PUT, 2, 3), op(3, GET, 4, 5, saw=1)]))

    def test_a_read_that_misses_an_acknowledged_write_or_delete_is_stale(self):
        self.assertEqual([2], self.stale([op(1, PUT, 0, 1), op(2, GET, 2, 3, saw=None)]))
        self.assertEqual([3], self.stale([op(1, PUT, 0, 1), op(2, DELETE, 2, 3), op(3, GET, 4, 5, saw=1)]))

    def test_a_read_of_a_key_never_written_finds_nothing(self):
        self.assertEqual([], self.stale([op(1, GET, 0, 1, saw=None), op(2, PUT, 2, 3)]))

    def test_a_read_overlapping_a_write_may_see_either(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 4), op(3, GET, 3, 5, saw=1), op(4, GET, 3, 5, saw=2)]
        self.assertEqual([], self.stale(ops))

    def test_a_read_may_see_a_write_whose_outcome_is_unknown_or_not(self):
        ops = [op(1, PUT, 0, 1), op(2, PUT, 2, 3, UNCERTAIN), op(3, GET, 4, 5, saw=2), op(4, GET, 6, 7, saw=1)]
        self.assertEqual([], self.stale(ops))

    def test_a_read_cannot_see_a_write_sent_after_it_ended_or_one_that_failed(self):
        self.assertEqual([1], self.stale([op(1, GET, 0, 1, saw=2), op(2, PUT, 2, 3)]))
        self.assertEqual([3], self.stale([op(1, PUT, 0, 1), op(2, PUT, 2, 3, FAILED), op(3, GET, 4, 5, saw=2)]))
        self.assertEqual([2], self.stale([op(1, PUT, 0, 1), op(2, GET, 2, 3, saw=FOREIGN)]))

    def test_reads_that_failed_are_not_checked(self):
        self.assertEqual([], self.stale([op(1, PUT, 0, 1), op(2, GET, 2, 3, FAILED)]))


class RecordTest(unittest.TestCase):
    def test_counts_losses_and_examples(self):
        ops = [op(1, PUT, 0, 1, key="a"), op(2, DELETE, 2, 3, key="a"), op(3, PUT, 0, 1, key="b"),
               op(4, GET, 4, 5, saw=1, key="a"), op(5, PUT, 6, 7, UNCERTAIN, key="b")]
        results = [judged_of("a", ops, Held(VALUE, 1)), judged_of("b", ops, Held(VALUE, 3))]
        rec = record.build(ops, results, True, None, {"replicas": "2/3"})
        self.assertEqual((2, 1, True, None, 2, 1), (rec["acknowledged_writes"], rec["acknowledged_deletes"], rec["checked"],
                                                    rec["why_not_checked"], rec["keys_checked"], rec["lost"]))
        self.assertEqual({"key": "a", "op": DELETE, "acknowledged": "delete #2 at 2.00 s (ok)", "expected": "delete #2",
                          "found": "n0: put #1"}, rec["lost_examples"][0])
        self.assertEqual((1, 1), (rec["reads_checked"], rec["stale_reads"]))
        self.assertEqual({"ok": 2, "failed": 0, "uncertain": 1}, rec["operations"][PUT])

    def test_no_history_check_without_the_promise_and_unread_keys_leave_it_unchecked(self):
        ops = [op(1, PUT, 0, 1), op(2, GET, 2, 3, saw=None)]
        rec = record.build(ops, [check.judge_key("k", ops, {"n0": Held(UNREADABLE, detail="timeout")})], False, None, {})
        self.assertEqual((None, 0, False, 0), (rec["stale_reads"], rec["reads_checked"], rec["checked"], rec["keys_checked"]))
        self.assertIn("1 of 1 keys could not be read", rec["why_not_checked"])

    def test_at_most_twenty_examples(self):
        ops = [op(i, PUT, 0, 1, key=f"k{i}") for i in range(30)]
        results = [judged_of(f"k{i}", ops, Held(ABSENT)) for i in range(30)]
        rec = record.build(ops, results, True, None, {})
        self.assertEqual((30, record.MAX_EXAMPLES), (rec["lost"], len(rec["lost_examples"])))


def judged_of(key: str, ops: list[Op], *held: Held) -> check.KeyResult:
    return check.judge_key(key, [o for o in ops if o.key == key], {f"n{i}": h for i, h in enumerate(held)})


class WorkloadTest(unittest.TestCase):
    def test_an_operation_still_unanswered_when_the_ledger_stops_is_uncertain(self):
        # A node that accepts the request and answers one byte at a time, never finishing.
        server = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(server.close)

        def trickle():
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                for _ in range(200):
                    conn.sendall(b"H")
                    time.sleep(0.05)

        threading.Thread(target=trickle, daemon=True).start()
        target = f"http://127.0.0.1:{server.getsockname()[1]}"
        w = Workload(Plan("w", 1, 100, "", 0.3, 1.0), [target]).start(time.monotonic())
        time.sleep(0.3)
        ops = w.stop()
        self.assertEqual(1, len(ops))
        self.assertEqual((UNCERTAIN, "no answer when the ledger stopped"), (ops[0].outcome, ops[0].status))
        self.assertGreater(ops[0].completed, ops[0].invoked)

    def test_a_refused_connection_fails_a_timeout_leaves_it_uncertain(self):
        server = socket.create_server(("127.0.0.1", 0))  # listens, never answers
        self.addCleanup(server.close)
        silent = f"http://127.0.0.1:{server.getsockname()[1]}"
        with socket.create_server(("127.0.0.1", 0)) as closed:
            refused = f"http://127.0.0.1:{closed.getsockname()[1]}"
        w = Workload(Plan("w", 1, 100, "", 0.3, 1.0), [silent])
        timed_out = w.one(Client(0.3), silent, "ledger-w-00000", PUT, time.monotonic())
        self.assertEqual((UNCERTAIN, "timeout"), (timed_out.outcome, timed_out.status))
        failed = w.one(Client(0.3), refused, "ledger-w-00000", DELETE, time.monotonic())
        self.assertEqual((FAILED, "ConnectionRefusedError"), (failed.outcome, failed.status))
        read = w.one(Client(0.3), silent, "ledger-w-00000", GET, time.monotonic())
        self.assertEqual(FAILED, read.outcome, "a read that got no answer tells nothing")


    def test_a_request_tried_again_on_a_new_connection_counts_as_sent(self):
        # The node answers once on a kept-alive connection, then closes it and is gone: the second
        # request fails on the old connection (it may have been read), then on a refused new one.
        server = socket.create_server(("127.0.0.1", 0))
        target = f"http://127.0.0.1:{server.getsockname()[1]}"

        def once():
            conn, _ = server.accept()
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
            time.sleep(0.2)
            conn.close()
            server.close()

        t = threading.Thread(target=once, daemon=True)
        t.start()
        client = Client(1.0)
        self.assertEqual((201, b"", True, ""), client.send(target, "PUT", "/v0/entity?id=a", b"v"))
        t.join()
        status, _, sent, error = client.send(target, "PUT", "/v0/entity?id=a", b"v")
        self.assertEqual((None, True, "ConnectionRefusedError"), (status, sent, error))
        self.assertEqual(UNCERTAIN, history.write_outcome(status, sent))


class SecretTest(unittest.TestCase):
    def test_the_secret_the_node_was_started_with(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "cluster-secret").write_text(" abc123 \n")
            argv = ["java", "-jar", "kvlab.jar", "--kvlab.cluster.secret-file=cluster-secret"]
            self.assertEqual(b"abc123", local.secret_of(Launch(argv, {}, tmp, None)))
            self.assertEqual(b"xyz", local.secret_of(Launch(["java"], {"KVLAB_CLUSTER_SECRET": "xyz"}, tmp, None)))
            with self.assertRaisesRegex(RuntimeError, "without a cluster secret"):
                local.secret_of(Launch(["java"], {}, tmp, None))
            with self.assertRaisesRegex(RuntimeError, "cannot be read"):
                local.secret_of(Launch(["java", "--kvlab.cluster.secret-file=gone"], {}, tmp, None))


class FakeLocalCluster(local.LocalCluster):
    """The nodes of a FakeCluster, their secret given as a node's environment would give it."""

    def __init__(self, fake: FakeCluster):
        super().__init__(fake.targets, [])
        self.secret = fake.secret.decode()

    def _launch(self) -> Launch:
        return Launch(["java"], {"KVLAB_CLUSTER_SECRET": self.secret}, "/", None)


class WholeLedgerTest(unittest.TestCase):
    """The workload, the read-back and the checks against a stand-in cluster: one that keeps what it
    acknowledges passes; one that loses acknowledged writes, or serves stale reads, is caught."""

    def setUp(self):
        self.fake = FakeCluster(3)
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)

    def tearDown(self):
        self.fake.close()
        self.tmp.cleanup()

    def ledger(self, replicas_: str = "", after=lambda: None, cluster=None) -> dict:
        """The ledger at 300 operations/s on 24 keys until it sent 240 (however busy the machine),
        each given up on after 10 s: no answer is uncertain, so the keys lost are exactly those
        computed here; after() runs before the read-back."""
        cluster = cluster or FakeLocalCluster(self.fake)
        executor = mock.Mock(nodes=self.fake.nodes, ledger=lambda: cluster)
        led = PhaseLedger(executor, Plan("t1", 24, 300, replicas_, 10.0, 1.0), self.out, len(self.fake.nodes))
        led.start(time.monotonic())
        deadline = time.monotonic() + 30
        while len(led.workload.ops) < 240 and time.monotonic() < deadline:
            time.sleep(0.1)
        led.stop()
        after()
        return led.check()

    def only_at(self, node: int, replicas_: str) -> int:
        """The keys whose last acknowledged write is a put and whose replicas include node."""
        url = self.fake.nodes[node].url
        count = replicas.ack_from(replicas_, 3)[1]
        ops = history.by_key(history.load((self.out / "ledger.jsonl").read_text()))
        return sum(
            1
            for key, key_ops in ops.items()
            if url in replicas.replicas_for(key, self.fake.targets, count)
            and getattr(check.last_acknowledged(key_ops), "kind", None) == PUT
        )

    def test_a_cluster_that_keeps_what_it_acknowledges_loses_nothing(self):
        rec = self.ledger()
        self.assertTrue(rec["checked"], rec["why_not_checked"])
        self.assertGreater(rec["acknowledged_writes"], 60)
        self.assertGreater(rec["acknowledged_deletes"], 10)
        self.assertEqual((0, 0), (rec["lost"], rec["stale_reads"]))
        self.assertGreater(rec["reads_checked"], 30)
        self.assertEqual("2/3", rec["replicas"])
        ops = history.load((self.out / "ledger.jsonl").read_text())
        written = {o.key for o in ops if o.is_write() and o.outcome == OK}
        self.assertEqual(len(written), rec["keys_checked"], "every key with an acknowledged write")
        self.assertEqual(sum(sum(v.values()) for v in rec["operations"].values()), len(ops))
        self.assertTrue(all(o.key.startswith("ledger-t1-") for o in ops))

    def test_a_node_that_acknowledges_writes_it_does_not_keep_loses_them(self):
        self.fake.nodes[2].liar = True
        rec = self.ledger("1/1")
        self.assertGreater(rec["lost"], 0)
        self.assertEqual(self.only_at(2, "1/1"), rec["lost"])
        self.assertTrue(all("nothing" in e["found"] for e in rec["lost_examples"]))
        self.assertGreater(rec["stale_reads"], 0, "a 1/1 read must see the 1/1 write it follows")

    def test_a_node_whose_data_is_wiped_while_down_loses_what_only_it_held(self):
        rec = self.ledger("1/1", after=lambda: self.fake.nodes[1].store.clear())
        self.assertTrue(rec["checked"], rec["why_not_checked"])
        self.assertGreater(rec["lost"], 0)
        self.assertEqual(self.only_at(1, "1/1"), rec["lost"])

    def test_reads_that_miss_acknowledged_writes_are_counted_stale(self):
        for n in self.fake.nodes:
            n.reads_own_copy = True
        self.fake.nodes[0].liar = True  # its own copy is always empty
        rec = self.ledger("2/3")
        self.assertGreater(rec["stale_reads"], 0)
        self.assertLessEqual(len(rec["stale_examples"]), record.MAX_EXAMPLES)
        self.assertEqual(self.only_at(0, "2/3"), rec["lost"], "and n0 keeps none of the acknowledged writes")

    def test_a_ledger_that_cannot_read_back_says_why(self):
        cluster = FakeLocalCluster(self.fake)
        cluster.secret = "an old secret"  # the nodes refuse the ledger's signature
        rec = self.ledger(cluster=cluster)
        self.assertFalse(rec["checked"])
        self.assertIn("401", rec["why_not_checked"])
        self.assertEqual(0, rec["lost"])

    def test_a_ledger_that_is_off_or_has_no_way_in_says_so(self):
        executor = mock.Mock(spec=["name", "nodes"], nodes=[1, 2, 3])
        executor.name = "fake"
        rec = PhaseLedger(executor, Plan("t", 10, 50, "", 1, 1), self.out, 3).check()
        self.assertEqual((False, "the fake executor cannot run the ledger"), (rec["checked"], rec["why_not_checked"]))
        rec = PhaseLedger(executor, Plan("t", 10, 0, "", 1, 1), self.out, 3).check()
        self.assertIn("LEDGER_RATE", rec["why_not_checked"])


class ReportTest(unittest.TestCase):
    """The report's "nothing lost" section and finding, from the records alone."""

    def records(self) -> tuple[dict, dict]:
        ops = [op(1, PUT, 0, 1, key="a"), op(2, PUT, 2, 3, key="a"), op(3, GET, 4, 5, saw=1, key="a"),
               op(4, DELETE, 0, 1, key="b"), op(5, PUT, 2, 3, UNCERTAIN, key="b")]
        about = {"rate": 50, "keys": 200, "replicas": "2/3", "file": "ledger.jsonl"}
        kept = record.build(ops, [judged_of("a", ops, Held(VALUE, 2)), judged_of("b", ops, Held(TOMBSTONE))], True, None, about)
        lost = record.build(ops, [judged_of("a", ops, Held(VALUE, 1)), judged_of("b", ops, Held(TOMBSTONE))], True, None, about)
        return kept, lost

    def test_the_sentence_says_what_was_lost_of_what_was_acknowledged(self):
        from lab.report import ledgerview

        kept, lost = self.records()
        self.assertEqual(
            "faults: the ledger sent 5 operations (50/s on 200 keys of its own, replicas 2/3), 3 writes and deletes "
            "acknowledged; read back at their replicas after the cluster healed, 0 of them were lost; 1 of 1 reads "
            "stale (key a: expected put #2, found put #1).",
            ledgerview.sentence("faults", kept),
        )
        self.assertIn("1 of them was lost (key a: expected put #2, found n0: put #1)", ledgerview.sentence("faults", lost))
        weak = record.build([op(1, PUT, 0, 1)], [judged_of("k", [op(1, PUT, 0, 1)], Held(VALUE, 1))], False, None,
                            {"rate": 50, "keys": 200, "replicas": "1/3"})
        self.assertTrue(ledgerview.sentence("faults", weak).endswith(
            "0 of them were lost; its reads were not checked for staleness: replicas 1/3 do not promise the last write."))
        off = record.build([], None, None, "the ledger was off (LEDGER_RATE or LEDGER_KEYS 0)", {"rate": 0, "keys": 200})
        self.assertTrue(ledgerview.sentence("outage", off).endswith("not proven: the ledger was off (LEDGER_RATE or LEDGER_KEYS 0)."))

    def test_the_report_shows_each_phases_ledger_and_its_losses(self):
        from lab import report
        from lab.tests.test_lab import write_run

        _, lost = self.records()
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-test", 1.0)
            doc = json.loads((d / "run.json").read_text())
            doc["phases"][1]["ledger"] = lost
            (d / "run.json").write_text(json.dumps(doc))
            report.generate(d)
            md = (d / "report.md").read_text()
        section = md[md.index("## Nothing lost") : md.index("## Phases")]
        self.assertIn("| get | 4 / 0 / 1 | 3 | 2 | **1** | 1 | 1 | [ledger.jsonl](", section)
        self.assertIn("**get**, lost:", section)
        self.assertIn("| a | put #2 at 2.00 s (ok) | put #2 | n0: put #1 |", section)
        self.assertIn("**get**, stale reads:", section)
        self.assertIn("get: the ledger sent 5 operations", md[: md.index("## Nothing lost")], "a finding")


    def test_lab_check_wants_a_ledger_that_proved_nothing_was_lost(self):
        from lab.report import ledgerview

        _, lost = self.records()
        ops = [op(1, PUT, 0, 1), op(2, GET, 2, 3, saw=1)]
        clean = record.build(ops, [check.judge_key("k", ops, {"n0": Held(VALUE, 1)})], True, None, {})
        row = "\n## Nothing lost\n| faults | 2 / 0 / 0 |"
        run = {"phases": [{"label": "fill"}, {"label": "faults", "faults": [{}], "ledger": clean}]}
        self.assertEqual([], ledgerview.problems(run, row))
        self.assertEqual(["report.md has no row of phase faults's ledger"], ledgerview.problems(run, "## Nothing lost"))
        run["phases"][1]["ledger"] = lost
        self.assertEqual(
            ["phase faults: the ledger lost 1 acknowledged writes or deletes", "phase faults: the ledger saw 1 stale reads"],
            ledgerview.problems(run, row),
        )
        run["phases"][1]["ledger"] = record.build([], None, True, "the read-back failed: refused", {})
        self.assertEqual(["phase faults: the ledger proved nothing: the read-back failed: refused"], ledgerview.problems(run, row))
        del run["phases"][1]["ledger"]
        self.assertEqual(["phase faults broke something but has no ledger record"], ledgerview.problems(run, row))


class RunnerHookTest(unittest.TestCase):
    def test_a_phase_with_faults_carries_its_ledger_record_and_file(self):
        from lab.tests.test_faults import FaultsExecutor

        fake = FakeCluster(3)
        self.addCleanup(fake.close)

        class Executor(FaultsExecutor):
            def ledger(self):
                return FakeLocalCluster(fake)

            def run(self, prepared, status=None):
                time.sleep(0.5)  # the load's phase: the ledger runs meanwhile
                return super().run(prepared, status)

        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(targets=fake.targets, pids=[], rate=100, warmup_s=0, events=[], reports_dir=Path(tmp),
                                     ledger_rate=200, ledger_keys=10)
            plan = settings.FaultPlan([lab_faults.Planned("pause", 0.1, 0.1)], True, 1)
            with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
                run_dir = fault_scenario.run_faults(cfg, plan, Executor(cutoff_why=""))
            doc = json.loads((run_dir / "run.json").read_text())
            phases = {p["label"]: p for p in doc["phases"]}
            ops = history.load((run_dir / phases["faults"]["dir"] / "ledger.jsonl").read_text())
        self.assertNotIn("ledger", phases["fill"])
        led = phases["faults"]["ledger"]
        self.assertTrue(led["checked"], led["why_not_checked"])
        self.assertEqual("ledger.jsonl", led["file"])
        written = {o.key for o in ops if o.is_write() and o.outcome == OK}
        self.assertEqual((0, len(written)), (led["lost"], led["keys_checked"]))
        self.assertEqual(len(ops), sum(sum(v.values()) for v in led["operations"].values()))


if __name__ == "__main__":
    unittest.main()
