"""ring: watching each pod's view of the ring against the expected members."""

import contextlib
import io
import os
import threading
import time
import unittest

from checker import cli, ring
from checker.tests.fakes import FakeClusterView, member, scratch_dir


class RingTest(unittest.TestCase):
    FIVE = [member(i) for i in range(5)]

    def test_difference(self):
        self.assertEqual(([member(4)], []), ring.ring_difference(self.FIVE, self.FIVE[:4]))
        self.assertEqual(([], [member(5)]), ring.ring_difference(self.FIVE[:5], self.FIVE + [member(5)]))
        self.assertEqual("ringkv-4", ring.short_member(member(4)))
        self.assertEqual("4 members, without ringkv-4", ring.describe_view(self.FIVE, self.FIVE[:4]))
        self.assertEqual("the 5 expected members", ring.describe_view(self.FIVE, list(reversed(self.FIVE))))
        self.assertEqual("no answer", ring.describe_view(self.FIVE, None))

    def watch(self, pods, seconds):
        """Runs ring over the fake pods for `seconds`: (exit code, output)."""
        args = ["ring", "--interval", "0.02", "--duration", str(seconds), "--timeout", "1"]
        for i, pod in enumerate(pods):
            args += ["--pod", "ringkv-%d=%s" % (i, pod.url)]
        for name in self.FIVE:
            args += ["--expect", name]
        out, code = io.StringIO(), 0
        with contextlib.redirect_stdout(out):
            try:
                cli.main(args)
            except SystemExit as e:
                code = e.code
        return code, out.getvalue()

    def pods(self, n):
        pods = [FakeClusterView(list(self.FIVE)) for _ in range(n)]
        for pod in pods:
            self.addCleanup(pod.close)
        return pods

    def test_an_unchanged_ring_passes(self):
        code, text = self.watch(self.pods(3), 0.3)
        self.assertEqual(0, code, text)
        self.assertRegex(text, r"ring: \d+ rounds in .* over 3 pods .*: \d+ answers, 0 of them not the 5 expected members")
        self.assertEqual(3, text.count("sees the 5 expected members"))

    def test_a_member_dropped_for_a_while_fails(self):
        pods = self.pods(3)
        # pod 1's 2nd and 3rd answers lack ringkv-4, its later ones have all five again.
        pods[1].answers = [list(self.FIVE), self.FIVE[:4], self.FIVE[:4]]
        code, text = self.watch(pods, 0.5)
        self.assertEqual(1, code, text)
        self.assertRegex(text, r"ring \+[0-9.]+s: ringkv-1 sees 4 members, without ringkv-4\n")
        self.assertRegex(text, r"ring: CHANGED: first at \+[0-9.]+ s \(ringkv-1 saw 4 members, without ringkv-4\)")
        self.assertRegex(text, r"\d+ answers, 2 of them not the 5 expected members")
        # Back to all five: printed as a change too.
        self.assertEqual(4, text.count("sees the 5 expected members"), text)

    def test_a_pod_that_does_not_answer_is_not_watched(self):
        pods = self.pods(2)
        pods[1].members = None
        code, text = self.watch(pods, 0.2)
        self.assertEqual(1, code, text)
        self.assertIn("ringkv-1 sees no answer", text)
        self.assertIn("ring: NOT WATCHED: ringkv-1 answered fewer than half of the rounds", text)
        self.assertNotIn("CHANGED", text)

    def test_the_stop_file_ends_the_watch(self):
        work = scratch_dir(self)
        stop = os.path.join(work, "stop")
        pods = self.pods(1)
        started = time.monotonic()
        threading.Timer(0.2, lambda: open(stop, "w").close()).start()
        with contextlib.redirect_stdout(io.StringIO()):
            cli.main(["ring", "--pod", "ringkv-0=%s" % pods[0].url, "--interval", "0.02",
                          "--stop-file", stop, "--duration", "30"] + [a for n in self.FIVE for a in ("--expect", n)])
        self.assertLess(time.monotonic() - started, 5)

