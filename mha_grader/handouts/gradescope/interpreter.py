"""Which Python a Gradescope image grades with, and what apt must install to get it.

``setup.sh`` runs this file as a script with the image's own ``python3`` before anything else
is installed, so it keeps to the standard library and to syntax that Python 3.7 still parses:
on an image whose Python is too old it must fail with a reason, not with a SyntaxError.

Why 3.11 to 3.14: the packages grading installs, at the versions ``requirements.lock`` pins,
require Python >= 3.11 (numpy 2.4.6, networkx 3.6.1, filelock 4.3.1), and numpy 2.4.6 and torch
2.13.0 publish Linux wheels for 3.11 to 3.14 (checked against the package index when the lock
was made). networkx 3.6.1 excludes 3.14.1 alone. ``tests/test_gradescope_image.py`` checks the
lower bound and the exclusion against the installed packages' own ``Requires-Python``.

Gradescope's base images: Ubuntu 22.04 ships Python 3.10, too old, but Ubuntu's own archive
(universe) has ``python3.11`` for 22.04, so that is installed beside it; Ubuntu 24.04 ships 3.12,
which is used as it is.

Usage: ``python3 interpreter.py [--os-release FILE] [--python CMD] [--image-python CMD=X.Y.Z]``
prints ``python=CMD`` and ``apt=PACKAGES`` lines, or one line of reason on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

MIN_PYTHON = (3, 11, 0)
MAX_MINOR = (3, 14)
EXCLUDED = ((3, 14, 1),)
SUPPORTED_TEXT = "Python 3.11 to 3.14 (not 3.14.1)"
WHY = "the pinned numpy 2.4.6 needs Python 3.11 or newer; torch 2.13.0 has wheels up to 3.14"
CANDIDATES = ("python3", "python3.11", "python3.12", "python3.13", "python3.14")
# Images whose archive has a supported Python that the image does not ship by default.
APT_PYTHON = {("ubuntu", "22.04"): "python3.11"}
PROBE = (
    "import sys; v = sys.version_info; print(v[0], v[1], v[2])\n"
    "try:\n import ensurepip, venv; print('venv')\n"
    "except ImportError:\n print('no-venv')"
)


class Python:
    """An interpreter of the image: its command, version, and whether it can make a venv."""

    def __init__(self, command: str, version: tuple, has_venv: bool = True) -> None:
        self.command = command
        self.version = tuple(version)
        self.has_venv = has_venv

    def __repr__(self) -> str:
        return f"Python({self.command!r}, {self.version!r}, {self.has_venv!r})"

    @property
    def dotted(self) -> str:
        return ".".join(str(n) for n in self.version)

    @property
    def venv_package(self) -> str:
        """Debian and Ubuntu ship ``venv``'s pip bootstrap in a package of its own."""
        return "python{}.{}-venv".format(*self.version[:2])


def supported(version: tuple) -> bool:
    version = tuple(version)
    return MIN_PYTHON <= version and version[:2] <= MAX_MINOR and version not in EXCLUDED


class Plan:
    """What setup.sh does: install ``apt`` packages, then grade with ``python``."""

    def __init__(self, python: str, apt: list) -> None:
        self.python = python
        self.apt = apt

    def lines(self) -> list:
        return [f"python={self.python}", "apt=" + " ".join(self.apt)]


class Unsupported(Exception):
    """This image cannot grade; the message says why and what to do instead."""


def parse_os_release(text: str) -> dict:
    """The KEY=value lines of /etc/os-release (values may be quoted)."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            fields[key] = value.strip().strip("\"'")
    return fields


def describe(os_release: dict) -> str:
    return os_release.get("PRETTY_NAME") or " ".join(
        filter(None, (os_release.get("ID"), os_release.get("VERSION_ID")))
    )


def choose(os_release: dict, pythons: list, requested: str | None = None) -> Plan:
    """The interpreter to grade with and the apt packages to install first.

    ``pythons`` are the image's interpreters (``Python``), ``requested`` an instructor's choice
    (``MHA_PYTHON``), which is then the only one considered. Raises ``Unsupported``.
    """
    has_apt = os_release.get("ID") in ("ubuntu", "debian") or "debian" in os_release.get(
        "ID_LIKE", ""
    )
    # bubblewrap: the namespaces layer, where the kernel allows it; libseccomp2: the filters of
    # the layers without namespaces (what Gradescope's Docker containers leave)
    extra = ["bubblewrap", "libseccomp2"] if has_apt else []
    image = describe(os_release) or "this image"
    if requested is not None:
        found = [p for p in pythons if p.command == requested]
        if not found:
            raise Unsupported(f"MHA_PYTHON={requested} does not run here")
        python = found[0]
        if not supported(python.version):
            raise Unsupported(
                f"MHA_PYTHON={requested} is Python {python.dotted}; grading needs "
                f"{SUPPORTED_TEXT}: {WHY}"
            )
        return Plan(requested, extra)
    for python in pythons:
        if not supported(python.version):
            continue
        if python.has_venv:
            return Plan(python.command, extra)
        if has_apt:
            return Plan(python.command, [python.venv_package, *extra])
    key = (os_release.get("ID", ""), os_release.get("VERSION_ID", ""))
    if key in APT_PYTHON and has_apt:
        command = APT_PYTHON[key]
        return Plan(command, [command, command + "-venv", *extra])
    found = ", ".join(f"{p.command} {p.dotted}" for p in pythons) or "no python3"
    raise Unsupported(
        f"{image} has {found}; grading needs {SUPPORTED_TEXT}: {WHY}. Choose Gradescope's "
        "Ubuntu 22.04 or 24.04 base image, or install a supported Python in the image and "
        "name it in MHA_PYTHON"
    )


def probe(command: str) -> Python | None:
    """The interpreter ``command`` as it runs here, or None when there is no such command."""
    if shutil.which(command) is None:
        return None
    try:
        out = subprocess.run(
            [command, "-c", PROBE], capture_output=True, text=True, timeout=60
        ).stdout.split()
        return Python(command, tuple(int(n) for n in out[:3]), out[3:4] == ["venv"])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def parse_fake(spec: str) -> Python:
    """``python3=3.10.12`` (or ``python3=3.12.3:no-venv``): an interpreter described, not run."""
    command, _, rest = spec.partition("=")
    version, _, flag = rest.partition(":")
    return Python(command, tuple(int(n) for n in version.split(".")), flag != "no-venv")


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--os-release", default="/etc/os-release")
    parser.add_argument("--python", help="the interpreter the instructor asked for (MHA_PYTHON)")
    parser.add_argument(
        "--image-python",
        action="append",
        default=[],
        metavar="CMD=X.Y.Z",
        help="describe the image's interpreters instead of running them (for tests)",
    )
    args = parser.parse_args(argv)
    try:
        with open(args.os_release) as f:
            os_release = parse_os_release(f.read())
    except OSError:
        os_release = {}
    if args.image_python:
        pythons = [parse_fake(spec) for spec in args.image_python]
    else:
        commands = [args.python] if args.python else list(CANDIDATES)
        pythons = [p for p in map(probe, commands) if p is not None]
    try:
        plan = choose(os_release, pythons, args.python)
    except Unsupported as e:
        print(f"setup.sh: cannot grade on this image: {e}.", file=sys.stderr)
        return 1
    print("\n".join(plan.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
