"""boot_test's watcher of a long case: the latest "[sim] N cycles, X kHz" line of the harness is
echoed every PROGRESS_S seconds while the case runs, the whole output is kept, and a case past
its timeout is killed. The program watched prints the harness's progress lines (its format,
hw/sim/harness.cc) on a timer, since an RTL simulation is minutes long."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boot_test  # noqa: E402

# Progress lines the way the harness prints them (stderr, merged), then the guest's last line.
HARNESS = r'''
import sys, time
for k in range(1, {n} + 1):
    time.sleep(0.4)
    sys.stderr.write("[sim] %d cycles, %.1f kHz\n" % (k * 1000000, 30.0 + k))
    sys.stderr.flush()
print("[kernel] DebugHalt(0) from the root task", flush=True)
'''


class WatcherTest(unittest.TestCase):
    def watch(self, n, timeout, progress=True):
        saved = boot_test.PROGRESS_S
        boot_test.PROGRESS_S = 1
        try:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                out, status = boot_test.run_watched([sys.executable, "-c", HARNESS.format(n=n)], dict(os.environ),
                                                    timeout, "rtl-case", progress)
            return out, status, printed.getvalue().splitlines()
        finally:
            boot_test.PROGRESS_S = saved

    def test_progress_while_running_and_the_output_kept(self):
        out, status, lines = self.watch(n=8, timeout=30)
        self.assertEqual(status, 0)
        self.assertIn("[kernel] DebugHalt(0) from the root task", out)
        self.assertEqual(out.count("[sim] "), 8)
        # ~3 s of run: a line a second, each naming the case and the latest count seen.
        self.assertGreaterEqual(len(lines), 2, lines)
        counts = []
        for line in lines:
            self.assertRegex(line, r"^boot-test rtl-case +\d+s  running: ([\d,]+ cycles, [\d.]+ kHz|no cycle count yet)$")
            if "cycles" in line:
                counts.append(int(line.split("running: ")[1].split(" cycles")[0].replace(",", "")))
        self.assertTrue(counts and counts == sorted(counts) and counts[-1] <= 8_000_000, lines)

    def test_quiet_when_not_asked_and_killed_at_the_timeout(self):
        out, status, lines = self.watch(n=50, timeout=2, progress=False)
        self.assertEqual((status, lines), ("timeout", []))
        self.assertIn("[sim] 1000000 cycles", out)
        self.assertNotIn("DebugHalt", out)

    def test_the_line_before_any_count(self):
        self.assertRegex(boot_test.progress_line("x", 30.4, None), r"^boot-test x +30s  running: no cycle count yet$")
        self.assertTrue(boot_test.progress_line("x", 61, (12_000_000, 31.25)).endswith("running: 12,000,000 cycles, 31.2 kHz"))


if __name__ == "__main__":
    unittest.main()
