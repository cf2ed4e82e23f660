"""``python -m mha_grader.cli``: the same as ``mha-grade``."""

import sys

from . import main

sys.exit(main())
