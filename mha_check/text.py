"""Text a student's code or file produced, made safe to display (standard library only).

Shared by ``mha-check`` (which may show a student their own messages and output) and the
grader's one door for what students see (``mha_grader/shown.py``): terminal escape sequences,
carriage returns, other control characters and the invisible direction overrides that make
text display in another order than it reads are removed; newlines and tabs stay.
"""

from __future__ import annotations

import re

# ESC [ ... final byte (CSI: colours, cursor moves, screen clears); ESC ] ... BEL or ESC \ (OSC:
# window titles, hyperlinks); ESC P/X/^/_ ... ESC \ (DCS, SOS, PM, APC); any other ESC + one
# byte (so an unterminated string loses only its introducer). Each alternative is linear.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b.?",
    re.DOTALL,
)
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides/isolates.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """``text`` without terminal escapes, carriage returns and other control characters."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
