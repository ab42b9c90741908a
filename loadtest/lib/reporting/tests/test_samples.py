import unittest

from reporting import samples


class SamplesTest(unittest.TestCase):
    ticks = [(10, "node-1", 0), (11, "node-1", 50), (12, "node-1", 150), (12, "etcd-1", 500), (30, "node-1", 9999)]

    def test_cpu_percent_of_the_targets_processes_in_the_window(self):
        self.assertEqual(samples.cpu_percent(self.ticks, "cluster", 10, 11, 100), {"node-1": 75.0})

    def test_peaks_only_of_the_target(self):
        rss = [(10, "node-1", 100), (11, "node-1", 300), (11, "etcd-1", 900), (40, "node-1", 999)]
        self.assertEqual(samples.peaks(rss, "cluster", 10, 20), {"node-1": 300})
        self.assertEqual(samples.peaks(rss, "etcd", 10, 20), {"etcd-1": 900})

    def test_machine_busy_and_load(self):
        machine = [(10, 0, 0, 1.0), (11, 50, 100, 2.5), (12, 150, 200, 1.5)]
        self.assertEqual(samples.machine_busy(machine, 10, 11), (75.0, 2.5))
        self.assertEqual(samples.machine_busy(machine, 12, 12), (None, None))


if __name__ == "__main__":
    unittest.main()
