import unittest

from ipc_jsonl import records

LOG = """[ipc-bench] started: client on hart 1, server-near on hart 1, server-far on hart 2
result target=rtl variant=async-cross concurrency=8 work=matmul4 cycles_per_ipc=2290 notifications_per_ipc=0.00 kernel_entries_per_ipc=0.02 fastpath_per_ipc=0.00 calls=64
result target=rtl variant=async-same concurrency=1 work=matmul4 cycles_per_ipc=15817 notifications_per_ipc=2.00 kernel_entries_per_ipc=2.00 fastpath_per_ipc=0.00 calls=64
[ipc-bench] verdict: ok
"""


class Records(unittest.TestCase):
    def test_one_record_per_result_line_with_placement(self):
        rs = list(records(LOG, "abc1234", "2026-11-28"))
        self.assertEqual(len(rs), 2)
        cross, same = rs
        self.assertEqual((cross["target"], cross["variant"], cross["concurrency"]), ("rtl-4core", "async-cross", 8))
        self.assertEqual(cross["cycles_per_ipc"], 2290)
        self.assertEqual(cross["kernel_entries_per_call"], 0.02)
        self.assertIn("hart 2", cross["placement"])
        self.assertIn("hart 1", same["placement"])
        self.assertTrue(same["placement"].startswith("client and server on hart 1"))
        self.assertEqual(same["notifications_per_call"], 2.0)
        self.assertEqual(same["revision"], "abc1234")


if __name__ == "__main__":
    unittest.main()
