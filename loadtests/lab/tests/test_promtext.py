import unittest

from prometheus_client.parser import text_string_to_metric_families

from lab import promtext

PAGE = """# HELP kvlab_requests_seconds requests
# TYPE kvlab_requests_seconds histogram
kvlab_requests_seconds_bucket{method="GET",le="0.001"} 5.0
kvlab_requests_seconds_bucket{method="GET",le="+Inf"} 7.0
kvlab_requests_seconds_count{method="GET"} 7.0
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5 1700000000000
odd_label{path="a\\"b}c",note="x\\ny"} 3
not a sample line
nan_gauge NaN
"""


class ParseTest(unittest.TestCase):
    def test_every_sample_named_as_the_library_names_it(self):
        expected = {
            promtext.series(s.name, s.labels): s.value
            for family in text_string_to_metric_families(PAGE.replace("not a sample line\n", ""))
            for s in family.samples
        }
        got = promtext.parse(PAGE)
        self.assertEqual(set(got), set(expected))
        for key, value in expected.items():
            if value == value:  # NaN is no equal of itself
                self.assertEqual(got[key], value, key)

    def test_escaped_labels_and_timestamps(self):
        got = promtext.parse(PAGE)
        self.assertEqual(got["process_cpu_seconds_total"], 12.5)  # the timestamp is not the value
        (odd,) = (k for k in got if k.startswith("odd_label"))
        self.assertEqual(promtext.labels(odd), ("odd_label", {"path": 'a"b}c', "note": "x\ny"}))
        self.assertEqual(promtext.total(got, "kvlab_requests_seconds_count", method="GET"), 7.0)

    def test_lines_that_are_no_sample_are_left_out(self):
        self.assertEqual(promtext.parse("not a sample line\n# comment\n\nx{broken 1\n"), {})


if __name__ == "__main__":
    unittest.main()
