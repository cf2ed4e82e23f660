"""What the Gradescope image installs for grading, pinned as ``requirements.lock`` pins it (the
build writes the lists into the zip; ``run --check`` checks the installed versions)."""

from __future__ import annotations

import re
from pathlib import Path

from ...paths import ROOT

# What grading imports, installed with their dependencies at the versions the lock pins.
# Not the notebook's packages (ipykernel, jupyter) nor matplotlib (only summary plots use it).
GRADING_PACKAGES = ("numpy", "torch", "snowballstemmer", "markdown-it-py")
# Installed without dependencies: grading uses only otter's test-file format, two modules of
# the standard library alone (see mha_check/otter_format.py); its other dependencies (nbconvert,
# pandas, ...) are large and some need a newer Python than Ubuntu 22.04's python3.11 (3.11.0).
NO_DEPS_PACKAGES = ("otter-grader",)


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(lock: Path | None = None) -> dict[str, str]:
    """Canonical package name -> its ``name==version`` line in ``requirements.lock``."""
    pins = {}
    for line in (lock or ROOT / "requirements.lock").read_text().splitlines():
        name, sep, _ = line.partition("==")
        if sep and not line.lstrip().startswith("#"):
            pins[canonical_name(name.strip())] = line.strip()
    return pins


def requirements_text(names: tuple[str, ...]) -> str:
    """``names`` pinned as the lock pins them (a name the lock lacks is a build error)."""
    pins = lock_pins()
    missing = [n for n in names if canonical_name(n) not in pins]
    if missing:
        raise RuntimeError(f"requirements.lock pins no version of {', '.join(missing)}")
    return "".join(pins[canonical_name(n)] + "\n" for n in names)
