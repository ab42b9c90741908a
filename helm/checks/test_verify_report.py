"""Unit tests of verify/report.sh, the counting of helm/verify.sh's checks: python3 -m unittest discover
-s helm/checks (helm/verify.sh runs them). Each test sources it in bash with a stand-in checker."""
import os
import subprocess
import sys
import tempfile
import unittest

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verify", "report.sh")


class Report(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        # A stand-in for the contract package: prints its first argument's lines, exits with the second.
        os.mkdir(os.path.join(self.dir.name, "contract"))
        with open(os.path.join(self.dir.name, "contract", "__main__.py"), "w") as f:
            f.write("import sys\nprint(sys.argv[1].replace('|', '\\n').replace('>', '\\t'))\nsys.exit(int(sys.argv[2]))\n")

    def bash(self, script):
        env = dict(os.environ, WORK=self.dir.name, CHECKS=self.dir.name, PYTHON=sys.executable,
                   PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run(["bash", "-c", 'set -euo pipefail; source "$0"; ' + script, REPORT],
                              env=env, capture_output=True, text=True)

    def counted(self, script):
        """What script prints, then the passed/failed counts."""
        return self.bash(script + '; echo "$PASSED/$FAILED"').stdout

    def test_must_fail_wants_a_failure_for_the_right_reason(self):
        self.assertEqual(self.counted('must_fail "refused" "schema" sh -c "echo bad schema; exit 1"; '
                                      'must_fail "accepted" "schema" true; '
                                      'must_fail "other reason" "schema" sh -c "echo no space; exit 1"'),
                         "  PASS  refused\n  FAIL  accepted (command succeeded)\n"
                         "  FAIL  other reason (failed, but not with /schema/)\n          | no space\n1/2\n")

    def test_the_checkers_lines_become_checks_with_their_detail(self):
        self.assertEqual(self.counted('run_checker "PASS>a|FAIL>b>why" 0'),
                         "  PASS  a\n  FAIL  b\n          | why\n1/1\n")

    def test_a_checker_that_crashes_is_a_failure(self):
        self.assertEqual(self.counted('run_checker "PASS>a" 1'),
                         "  FAIL  checker exited with an error\n          | PASS\ta\n0/1\n")

    def test_must_find_nothing_shows_what_it_found(self):
        self.assertEqual(self.counted('must_find_nothing "clean" false; must_find_nothing "dirty" echo found'),
                         "  PASS  clean\n  FAIL  dirty\n          | found\n1/1\n")

    def test_the_summary_fails_the_run_and_names_what_failed(self):
        failed = self.bash('pass a; fail b; skip c; summary')
        self.assertEqual(failed.returncode, 1)
        self.assertIn("1 passed, 1 failed, 1 skipped\nfailed checks:\n  - b\n", failed.stdout)
        passed = self.bash('pass a; summary')
        self.assertEqual(passed.returncode, 0)
        self.assertTrue(passed.stdout.endswith("all checks passed\n"), passed.stdout)


if __name__ == "__main__":
    unittest.main()
