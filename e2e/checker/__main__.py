"""`python3 e2e/checker MODE ...` (or `python3 -m checker MODE ...` in e2e/)."""

import os
import sys

if not __package__:
    # Run as a directory, this file is a top-level script and sys.path[0] is the package itself:
    # put its parent there instead, so that the package (and its relative imports) can load.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from checker.cli import main  # noqa: E402

main()
