"""The scripts' shared library (scripts/uintr): the command lines it builds, the records it
writes, and a followed run (its log, its points, its timeout)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from uintr import bench, qemu, records, results, sim, watch  # noqa: E402


class CommandLines(unittest.TestCase):
    def test_simulator_arguments_in_the_harness_order(self):
        self.assertEqual(sim.command("SIM", "img.bin", 100), ["SIM", "+image=img.bin", "+max-cycles=100"])
        self.assertEqual(sim.command("SIM", "i", 5, hostfwd="1:2", progress=7, extra=["+x"], nice=sim.NICE, lock="L"),
                         ["flock", "L", "nice", "-n", "5", "SIM", "+image=i", "+hostfwd=1:2", "+max-cycles=5",
                          "+progress=7", "+x"])

    def test_wall_limit_is_the_cycles_at_the_slowest_speed(self):
        self.assertEqual(sim.wall_limit(120_000_000, 12_000), 10_000)

    def test_latest_progress_line(self):
        self.assertIsNone(sim.latest_progress("boot\n"))
        text = "[sim] 1000000 cycles, 30.5 kHz\nx\n[sim] 2000000 cycles, 31.0 kHz\n"
        self.assertEqual(sim.latest_progress(text), (2_000_000, 31.0))

    def test_qemu_through_qemu_sh(self):
        cmd = qemu.command("img.bin", ["-s"])
        self.assertTrue(cmd[0].endswith("scripts/qemu.sh") and os.path.exists(cmd[0]))
        self.assertEqual(cmd[1:], ["img.bin", "-s"])
        self.assertEqual(qemu.user_net(4000, 5555), ["-netdev", "user,id=n0,hostfwd=tcp:127.0.0.1:4000-:5555"])


class Records(unittest.TestCase):
    def test_written_then_appended_one_object_per_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.jsonl")
            records.write(path, [{"a": 1}])
            records.write(path, [{"a": 2}, {"b": "x"}], append=True)
            with open(path) as f:
                self.assertEqual([json.loads(l) for l in f], [{"a": 1}, {"a": 2}, {"b": "x"}])
            records.write(path, [{"c": 3}])
            with open(path) as f:
                self.assertEqual(f.read(), '{"c": 3}\n')

    def test_revision_names_a_commit(self):
        self.assertRegex(records.revision(), r"^([0-9a-f]{4,}(-dirty)?|unknown)$")

    def test_result_lines(self):
        text = "x\nresult variant=a concurrency=8 work=none\nresults no\nresult k=v=w\n"
        self.assertEqual(results.all_fields(text), [{"variant": "a", "concurrency": "8", "work": "none"}, {"k": "v=w"}])


# A benchmark's console: a point, an echoed line, a line not shown, then (with a count) a hang.
PROGRAM = r'''
import sys, time
print("[ipc-bench] started", flush=True)
print("result variant=x concurrency=1", flush=True)
print("noise", flush=True)
time.sleep({hang})
print("[ipc-bench] verdict: ok", flush=True)
'''


class Follow(unittest.TestCase):
    def follow(self, hang, timeout):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "run.log")
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                text = bench.follow([sys.executable, "-c", PROGRAM.format(hang=hang)], log, timeout, "t",
                                    lambda f: f"variant {f['variant']}", ("[ipc-bench]",))
            with open(log) as f:
                return text, f.read(), printed.getvalue().splitlines()

    def test_points_described_chosen_lines_echoed_the_whole_console_kept(self):
        text, log, lines = self.follow(0, 30)
        self.assertEqual(text, "[ipc-bench] started\nresult variant=x concurrency=1\nnoise\n[ipc-bench] verdict: ok")
        self.assertEqual(log, text + "\n")
        self.assertEqual([l.split(" min  ", 1)[1] for l in lines],
                         ["[ipc-bench] started", "point  1: variant x", "[ipc-bench] verdict: ok"])

    def test_a_silent_hang_is_killed_at_the_timeout(self):
        text, _, lines = self.follow(60, 2)
        self.assertNotIn("verdict", text)
        self.assertRegex(lines[-1], r"^\[t\] timed out after \d+ s$")

    def test_watch_ticks_while_it_runs(self):
        ticks = []
        out, status = watch.run_watched([sys.executable, "-c", "import time; time.sleep(2.5); print('done')"], 30,
                                        tick_s=1, on_tick=ticks.append)
        self.assertEqual((out, status), ("done\n", 0))
        self.assertGreaterEqual(len(ticks), 2)


if __name__ == "__main__":
    unittest.main()
