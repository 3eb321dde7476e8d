"""The conditional phase on wrk (loadtests/wrk2/conditional.lua), run by the lab against a small
HTTP server that keeps ETags as a node does: each PUT carries the tag the server gave for its own
key (If-Match), or If-None-Match: * for a key found absent; a 412 is a refused update, not a failure."""

from __future__ import annotations

import http.server
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

from lab import load, tools


class _TaggedStore(http.server.BaseHTTPRequestHandler):
    """GET answers a key's value with its tag (a header named in lower case, as Netty writes it),
    or 404; PUT honours If-Match and If-None-Match: * and answers 201 with a new tag, or 412. Every
    seventh GET of a key that exists is followed by another writer's update of it, so the PUT after
    it is refused."""

    protocol_version = "HTTP/1.1"
    lock = threading.Lock()
    tags: dict  # key -> its current tag
    owner: dict  # tag -> the key it was given for
    log: list  # (key, If-Match, If-None-Match, status) of every PUT
    gets: itertools.count
    versions: itertools.count

    def log_message(self, *args):
        pass

    def answer(self, status: int, headers: dict | None = None, body: bytes = b"") -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def key(self) -> str:
        return self.path.split("id=")[1].split("&")[0]

    def new_tag(self, key: str) -> str:
        tag = f'"{next(self.versions)}"'
        self.tags[key], self.owner[tag] = tag, key
        return tag

    def do_GET(self):  # noqa: N802 - http.server's name
        key = self.key()
        with self.lock:
            tag = self.tags.get(key)
            if tag is not None and next(self.gets) % 7 == 6:
                self.new_tag(key)  # another writer, right after this read
        if tag is None:
            return self.answer(404, body=b"no value for this id")
        self.answer(200, {"etag": tag}, b"value")

    def do_PUT(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        key, if_match, if_none_match = self.key(), self.headers.get("If-Match"), self.headers.get("If-None-Match")
        with self.lock:
            current = self.tags.get(key)
            made = (if_match is not None and if_match == current) or (if_none_match == "*" and current is None)
            tag = self.new_tag(key) if made else None
            self.log.append((key, if_match, if_none_match, 201 if made else 412))
        self.answer(201, {"etag": tag}) if made else self.answer(412, body=b"the condition failed")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # wrk drops its connections when it is stopped: no traceback for that


@unittest.skipUnless(shutil.which("wrk") or shutil.which("wrk2"), "no wrk on PATH")
class WrkConditionalTest(unittest.TestCase):
    KEYS = 40
    ABSENT = 5  # keys 0..4 have no value at first

    def serve(self) -> tuple[_Server, type]:
        handler = type("Store", (_TaggedStore,), {"tags": {}, "owner": {}, "log": [], "gets": itertools.count(),
                                                  "versions": itertools.count(1)})
        server = _Server(("127.0.0.1", 0), handler)
        for i in range(self.ABSENT, self.KEYS):
            handler.new_tag(handler, f"c{i:010d}")
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server, handler

    def test_each_put_carries_the_tag_its_own_key_was_read_with_and_412s_are_not_failures(self):
        server, store = self.serve()
        spec = load.LoadSpec("conditional", [f"http://127.0.0.1:{server.server_port}"], 100, 3, keys=self.KEYS,
                             key_prefix="c", value_size=32, tool="wrk", connections=6, threads=2)
        with tempfile.TemporaryDirectory() as tmp:
            pr = load.run(spec, Path(tmp), [os.getpid()], "conditional")
        result, log = pr.result, list(store.log)

        self.assertGreater(len(log), 50)
        for key, if_match, if_none_match, _ in log:
            self.assertTrue((if_match is None) != (if_none_match is None), f"one condition on every PUT: {key}")
            if if_match is not None:
                self.assertEqual(key, store.owner[if_match], "the tag of another key: a GET's answer paired with the wrong PUT")
            else:
                self.assertEqual("*", if_none_match)
                self.assertLess(int(key[1:]), self.ABSENT, "a create only for a key read as absent")
        made = sum(1 for entry in log if entry[3] == 201)
        refused = len(log) - made
        self.assertGreater(refused, 0, "the other writer's updates make some conditions fail")
        self.assertEqual(("conditional", "wrk"), (result["scenario"], spec.tool))
        self.assertTrue(0 < result["conditional_updates"] <= made, (result["conditional_updates"], made))
        self.assertTrue(0 < result["conditional_conflicts"] <= refused, (result["conditional_conflicts"], refused))
        self.assertEqual(2, result["requests_per_update"])
        statuses = result["status_counts"]
        self.assertEqual(set(statuses) - {"200", "201", "404", "412"}, set(), statuses)
        self.assertAlmostEqual(statuses.get("404", 0) / result["requests"], result["error_rate"], msg="a 412 is no failure")
        (part,) = pr.samples.wrk_parts
        self.assertEqual(statuses.get("404", 0), sum(part["per_second"]["errors"]), "nor is it one in the per-second counts")
        self.assertAlmostEqual(result["requests"] / result["duration_s"] / 2, result["achieved_rate"], msg="updates per second")
        self.assertIn("-t6 -c6", pr.commands[0], "one connection per thread")

    def test_the_script_refuses_a_thread_with_more_than_one_connection(self):
        server, _ = self.serve()
        wrk = tools.wrk()
        env = {"PATH": os.environ["PATH"], "KEYS": str(self.KEYS), "KEY_PREFIX": "c", "VALUE_SIZE": "8",
               "KVLAB_DEFAULTS": str(tools.LOADTESTS / "lab" / "defaults.env")}
        argv = [wrk.path, "-t1", "-c3", "-d2s", *(["-R100"] if wrk.is_wrk2 else []),
                "-s", str(load.WRK_SCRIPTS / "conditional.lua"), f"http://127.0.0.1:{server.server_port}"]
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        self.assertNotEqual(0, p.returncode)
        self.assertIn("run wrk with -c equal to -t", p.stderr + p.stdout)


if __name__ == "__main__":
    unittest.main()
