"""The sandbox: where student code runs, and the trusted code that starts it.

``layers`` names the containment layers and limits; ``zygote`` starts the strongest layer the
machine allows and asks it for workers; ``closure`` closes the trusted files to student code.
``worker/`` is the only code mounted into the sandbox: it imports nothing from the rest of the
grader (tests/test_layout.py checks it).
"""

from .layers import (
    LAYERS,
    REQUIRE_ENV,
    LayerInfo,
    LayerUnavailable,
    Limits,
    SandboxError,
    candidate_layers,
    required_layer,
)
from .zygote import Zygote, probe_layer, start_zygote

__all__ = [
    "LAYERS",
    "REQUIRE_ENV",
    "LayerInfo",
    "LayerUnavailable",
    "Limits",
    "SandboxError",
    "Zygote",
    "candidate_layers",
    "probe_layer",
    "required_layer",
    "start_zygote",
]
