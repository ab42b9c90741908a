"""The command line helm/verify.sh calls, in helm/checks:

  python3 -m contract render FILE EXPECT_JSON          contract checks of one render
  python3 -m contract np-teeth FILE EXPECT_JSON        the NetworkPolicy checks fail on broken copies of a render
  python3 -m contract rbac-teeth FILE EXPECT_JSON      the RBAC checks fail on broken copies of a render
  python3 -m contract rbac-namespace FILE NAMESPACE SECRET_FILE
                                                       k8s/'s Role/RoleBinding under an overlay with its own secret
  python3 -m contract k8s-no-secret DIR                no Secret, secretGenerator or secret literal in DIR
  python3 -m contract schema-coverage VALUES.yaml SCHEMA.json
  python3 -m contract image-heap DOCKERFILE VALUES.yaml    the image sizes its heap as jvm.heapPercent says
  python3 -m contract loadtest FILE EXPECT_JSON LOADTEST_DIR   the loadtest Job/ConfigMap of one render
  python3 -m contract jobname FILE                     prints the loadtest Job's name (or nothing)
  python3 -m contract hook-script FILE                 prints the helm test hook's shell script
  python3 -m contract report-part FILE env|script DIR  prints the loadtest report's k6 settings or script,
                                                       its directory moved to DIR
  python3 -m contract report-html FILE                 the fetched loadtest report is k6's, with charts
  python3 -m contract backup FILE EXPECT_JSON          the backup CronJob, restore Job and nodes' backup settings
  python3 -m contract backup-teeth FILE EXPECT_JSON    the backup checks fail on broken copies of a render
  python3 -m contract backup-scripts FILE COMPONENT DIR
                                                       writes the files of the ConfigMap of COMPONENT (backup,
                                                       restore) into DIR, as its pod has them in /scripts
  python3 -m contract restore-jobname FILE             prints the restore Job's name (or nothing)

EXPECT_JSON holds what differs from the default render's expectation (expect.py; backup.py's DEFAULT for
backup and backup-teeth). The checks print
"PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines.
"""
import sys
import traceback

from . import backup, expect, hooktest, loadtest, memory, rbac, secret, teeth, values_schema
from .manifests import load
from .render import render_checks
from .report import check, printed


def _render(check_docs, defaults):
    return lambda path, overrides, *rest: check_docs(load(path), expect.expectation(defaults, overrides), *rest)


CHECKS = {
    "render": _render(render_checks, expect.RENDER),
    "np-teeth": _render(teeth.np_teeth, expect.RENDER),
    "rbac-teeth": _render(teeth.rbac_teeth, expect.RENDER),
    "loadtest": _render(loadtest.loadtest_checks, expect.LOADTEST),
    "rbac-namespace": rbac.rbac_namespace,
    "k8s-no-secret": secret.k8s_no_secret,
    "schema-coverage": values_schema.schema_coverage,
    "image-heap": memory.image_heap,
    "report-html": loadtest.report_html,
    "backup": _render(backup.backup_checks, backup.DEFAULT),
    "backup-teeth": _render(backup.backup_teeth, backup.DEFAULT),
}
# Modes that print what verify.sh asked for instead of checks.
PRINTS = {"jobname": loadtest.job_name, "hook-script": hooktest.hook_script, "report-part": loadtest.report_part,
          "backup-scripts": backup.scripts, "restore-jobname": backup.job_name}


def main(argv):
    mode, args = argv[1], argv[2:]
    if mode in PRINTS:
        PRINTS[mode](*args)
        return
    try:
        CHECKS[mode](*args)
    except Exception:  # a crash is a failed check, not a silent pass
        check("checker ran without error", False, traceback.format_exc())
    for line in printed():
        print(line)


if __name__ == "__main__":
    main(sys.argv)
