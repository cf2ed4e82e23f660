"""`python -m mha_check`: the same as the mha-check command."""

from .cli import main

raise SystemExit(main())
