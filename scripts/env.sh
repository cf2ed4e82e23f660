# Sourced by the other scripts: make .venv with the pinned packages, and bubblewrap for the
# sandbox, unless they are already there. Safe to run again; it only installs what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
stamp=.venv/.installed-$(cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
    echo "== setting up .venv (pinned packages from requirements.lock) =="
    [ -x .venv/bin/python ] || "$PY" -m venv .venv
    # pip's output goes to a log, shown only when the install fails.
    if ! { .venv/bin/python -m pip install --disable-pip-version-check -r requirements.lock &&
        .venv/bin/python -m pip install --disable-pip-version-check --no-deps -e .; } \
        >.venv/install.log 2>&1; then
        tail -40 .venv/install.log >&2
        exit 1
    fi
    rm -f .venv/.installed-* && touch "$stamp"
fi
# Debian packages, as root where apt-get is: the package index is updated once per run.
apt_updated=no
apt_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    if [ "$apt_updated" = no ]; then
        apt-get update -qq >/dev/null || return 1
        apt_updated=yes
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if ! command -v bwrap >/dev/null 2>&1; then
    echo "== installing bubblewrap (the grader's sandbox) =="
    if ! apt_install bubblewrap; then
        echo "warning: bubblewrap (bwrap) is not installed; the grader will use weaker limits" >&2
    fi
fi
export PATH="$PWD/.venv/bin:$PATH"
