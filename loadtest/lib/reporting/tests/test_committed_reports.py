"""The reports kept in git (loadtest/benchmarks/) name no directory of the machine they ran on:
environment.sh's shown_path writes a jar or cache as a path in the checkout or a file name alone."""
import pathlib
import re
import unittest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[3] / "benchmarks"
# An absolute path into a home, a temporary or a work directory: the run's machine, not the reader's.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:root|home|tmp|work|Users)/")


class CommittedReportsTest(unittest.TestCase):

    def test_the_benchmarks_folder_holds_reports(self):
        self.assertTrue(list(BENCHMARKS.glob("*.md")), f"no reports in {BENCHMARKS}")

    def test_no_report_names_a_machine_path(self):
        for report in sorted(BENCHMARKS.glob("*.md")):
            for number, line in enumerate(report.read_text(encoding="utf-8").splitlines(), 1):
                with self.subTest(report=report.name, line=number):
                    self.assertIsNone(MACHINE_PATH.search(line), line)

    def test_no_generated_profile_is_kept(self):
        self.assertEqual([], [p.name for p in BENCHMARKS.glob("*.html")],
                         "flame graphs are written into loadtest/results/<run>/profiles/, not kept in git")


if __name__ == "__main__":
    unittest.main()
