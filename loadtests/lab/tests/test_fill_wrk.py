"""The wrk fill (loadtests/wrk2/fill.lua): its order is a permutation, and run by the lab against a
small HTTP server it PUTs every key of its range exactly once, with values that differ, and ends
once every thread has marked its end."""

from __future__ import annotations

import collections
import http.server
import os
import shutil
import tempfile
import threading
import unittest
from pathlib import Path

from lab import fillorder, load


class FillOrderTest(unittest.TestCase):
    def test_the_threads_together_send_every_index_exactly_once(self):
        for n in (1, 2, 3, 7, 97, 1000, 1024, 4096, 65_537, 100_000):
            for threads, parts in ((1, 1), (2, 1), (3, 2), (8, 1)):
                sent = [k for p in range(parts) for t in range(threads) for k in fillorder.keys_of(n, t, threads, p, parts)]
                self.assertEqual(len(sent), n, (n, threads, parts))
                self.assertEqual(set(sent), set(range(n)), (n, threads, parts))

    def test_the_order_is_scattered_not_sequential(self):
        sent = fillorder.keys_of(100_000, 0, 1)
        ascending = sum(1 for x, y in zip(sent, sent[1:]) if y == x + 1)
        self.assertLess(ascending, 10)

    def test_the_multiplier_is_coprime_with_n(self):
        import math

        for n in (2, 4, 6, 30, 1 << 20, 1_000_000, 10_000_000):
            a, c = fillorder.order(n)
            self.assertEqual(math.gcd(a, n), 1, n)
            self.assertTrue(0 <= c < n)


class _Store(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    puts: collections.Counter
    bodies: set
    lock = threading.Lock()
    fail_key = None

    def log_message(self, *args):
        pass

    def do_PUT(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        key = self.path.split("id=")[1].split("&")[0]
        with self.lock:
            self.puts[key] += 1
            self.bodies.add(body)
        status = 500 if key == self.fail_key else 201
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # wrk drops its connections when it is stopped: no traceback for that


@unittest.skipUnless(shutil.which("wrk") or shutil.which("wrk2"), "no wrk on PATH")
class WrkFillTest(unittest.TestCase):
    def fill(self, keys: int, start: int, fail_key: str | None = None) -> tuple[dict, collections.Counter, set]:
        handler = type("Store", (_Store,), {"puts": collections.Counter(), "bodies": set(), "fail_key": fail_key})
        server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                spec = load.LoadSpec(
                    "fill", [f"http://127.0.0.1:{server.server_port}"], None, 60, keys=keys, value_size=64,
                    tool="wrk", connections=4, threads=2, key_start=start,
                )
                pr = load.run(spec, Path(tmp), [os.getpid()], "fill")
                return pr.result, handler.puts, handler.bodies
        finally:
            server.shutdown()
            server.server_close()

    def test_every_key_of_the_range_is_put_exactly_once(self):
        for keys in (1, 131, 1024):
            result, puts, bodies = self.fill(keys, 500)
            self.assertEqual(set(puts), {f"k{i:010d}" for i in range(500, 500 + keys)}, keys)
            self.assertEqual(set(puts.values()), {1}, keys)
            self.assertEqual(result["keys_stored"], keys)
            self.assertEqual(result["puts_failed"], 0)
            self.assertEqual(result["threads_done"], result["threads"])
            self.assertLess(result["duration_s"], 30, "the fill waited for -d instead of ending")
            if keys >= 64:
                self.assertGreater(len(bodies), 32, "the values should differ between keys")

    def test_a_put_that_fails_is_counted(self):
        result, puts, _ = self.fill(200, 0, fail_key="k0000000007")
        self.assertEqual(result["keys_stored"], 199)
        self.assertEqual(result["puts_failed"], 1)


if __name__ == "__main__":
    unittest.main()
