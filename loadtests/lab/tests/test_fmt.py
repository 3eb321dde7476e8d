import unittest

from lab.report import fmt


class FormatTest(unittest.TestCase):
    def test_a_duration_in_minutes_and_seconds_leaves_out_what_is_zero(self):
        self.assertEqual("40 s", fmt.duration(40))
        self.assertEqual("4 min 51 s", fmt.duration(291))
        self.assertEqual("30 min", fmt.duration(1800))

    def test_a_listing_joins_with_commas_and_its_conjunction(self):
        self.assertEqual("", fmt.listing([]))
        self.assertEqual("put", fmt.listing(["put"]))
        self.assertEqual("put, get and mixed", fmt.listing(["put", "get", "mixed"]))
        self.assertEqual("killed or paused", fmt.listing(["killed", "paused"], "or"))


if __name__ == "__main__":
    unittest.main()
