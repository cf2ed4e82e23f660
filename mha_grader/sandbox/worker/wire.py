"""Plain-data wire format between the trusted grader and the sandboxed worker.

A message is ``MAGIC | u32 header length | JSON header | raw array bytes``. The JSON tree holds
None, bools, ints, floats, strings and typed nodes for lists, tuples, dicts, arrays (dtype
string, shape and memory order in the tree; the bytes are read with ``np.frombuffer`` only for
a numeric dtype whose size matches the shape), NumPy scalars and, trusted-to-worker only,
``torch.nn.MultiheadAttention`` modules as constructor arguments plus weights, and ``Once``
items, which arrive as a generator (an iterable that can be read only once). Nothing is ever
unpickled or executed when decoding: whatever does not fit this grammar is a ``WireError``.
"""

from __future__ import annotations

import json
import math
import re
import struct
from typing import Any

import numpy as np

MAGIC = b"MHA2"
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32
MAX_NODES = 100_000
# What the trusted side accepts as the JSON header of a reply: replies are small trees (arrays
# travel as raw bytes beside the header), and json.loads may build objects some 25 times the
# size of their text, so the header is bounded before it is parsed, by size and by how many
# values it can hold (each needs a bracket, brace, comma or colon beside it).
MAX_REPLY_HEADER = 1 << 20
MAX_HEADER_TOKENS = 4 * MAX_NODES
MAX_DIMS = 32  # NumPy's own limit is 64
ALLOWED_KINDS = "biufc"  # bool, int, uint, float, complex: no objects, strings or records


class WireError(ValueError):
    """A value that is not plain data, or a message that breaks the grammar or its limits."""


class Once(tuple):
    """Items the trusted side sends as a generator: the worker's function gets a generator over
    them, which can be read only once (``head_counts`` may be any iterable, docs/contract.md §1)."""


_DTYPE_STR = re.compile(r"[<>|][biufc][0-9]{1,2}")
_dtypes: dict[str, np.dtype] = {}


def _dtype(text: Any) -> np.dtype:
    """A numeric dtype from its ``dtype.str`` (e.g. "<f8"); anything else is a WireError, so
    no string from the peer ever reaches np.dtype unless it names a plain number type."""
    if type(text) is not str or not _DTYPE_STR.fullmatch(text):
        raise WireError("malformed array dtype")
    dtype = _dtypes.get(text)
    if dtype is None:
        try:
            dtype = np.dtype(text)
        except TypeError:
            raise WireError(f"unknown array dtype {text!r}") from None
        if dtype.kind not in ALLOWED_KINDS or dtype.str != text:
            raise WireError(f"array dtype {text!r} is not numeric data")
        _dtypes[text] = dtype
    return dtype


def _describe(obj: Any) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _mha_to_node(mha: Any, blobs: list[bytes]) -> dict:
    config = {
        "embed_dim": mha.embed_dim,
        "num_heads": mha.num_heads,
        "dropout": float(mha.dropout),
        "bias": mha.in_proj_bias is not None,
        "add_bias_kv": mha.bias_k is not None,
        "add_zero_attn": bool(mha.add_zero_attn),
        "kdim": mha.kdim,
        "vdim": mha.vdim,
        "batch_first": bool(mha.batch_first),
    }
    state = {k: _array_node(v.detach().cpu().numpy(), blobs) for k, v in mha.state_dict().items()}
    dtype = str(next(mha.parameters()).dtype).removeprefix("torch.")
    return {"t": "mha", "config": config, "dtype": dtype, "state": state}


def _array_node(a: np.ndarray, blobs: list[bytes]) -> dict:
    if a.dtype.kind not in ALLOWED_KINDS:
        raise WireError(f"an array of dtype {a.dtype} is not numeric data")
    # Raw bytes described in the JSON tree (what np.save would write, without its header that
    # np.load parses with literal_eval): a Fortran-ordered array travels as its transpose.
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    blobs.append((a.T if fortran else a).tobytes())
    node = {"t": "nd", "i": len(blobs) - 1, "dtype": a.dtype.str, "shape": list(a.shape)}
    if fortran:
        node["fortran"] = True
    return node


NOT_PLAIN = " is not plain data"


def _to_node(obj: Any, blobs: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    # Exact type checks: a subclass could override __eq__ or __float__ and lie later.
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is Once:
        return {"t": "once", "v": [_to_node(x, blobs, depth + 1) for x in obj]}
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"t": "float", "v": repr(obj)}
    if type(obj) in (list, tuple):
        return {"t": type(obj).__name__, "v": [_to_node(x, blobs, depth + 1) for x in obj]}
    if type(obj) is dict:
        items = []
        for k, v in obj.items():
            key = _to_node(k, blobs, depth + 1)
            try:
                items.append([key, _to_node(v, blobs, depth + 1)])
            except WireError as e:
                # the innermost key of a value that is not plain data, where it is a short
                # string (the trusted side names it only when it is one of the contract's)
                text = str(e)
                if type(k) is str and len(k) <= 40 and text.endswith(NOT_PLAIN):
                    raise WireError(f"{text} at key {k!r}") from None
                raise
        return {"t": "dict", "v": items}
    if type(obj) is np.ndarray:
        return _array_node(obj, blobs)
    if isinstance(obj, np.generic) and type(obj).__module__ == "numpy":
        return {**_array_node(np.asarray(obj), blobs), "t": "scalar"}
    if _describe(obj) == "torch.nn.modules.activation.MultiheadAttention":
        return _mha_to_node(obj, blobs)
    raise WireError(f"a value of type {_describe(obj)}{NOT_PLAIN}")


def encode(obj: Any) -> bytes:
    """Serialise plain data; raises WireError naming the first value that is not."""
    blobs: list[bytes] = []
    tree = _to_node(obj, blobs, 0)
    header = json.dumps({"tree": tree, "blobs": [len(b) for b in blobs]}).encode()
    msg = b"".join([MAGIC, struct.pack("<I", len(header)), header, *blobs])
    if len(msg) > MAX_BYTES:
        raise WireError(f"value too large to send ({len(msg)} bytes)")
    return msg


class ModuleSeen:
    """A torch module the student's code passed to a callee the trusted side answers: seen,
    never rebuilt (the trusted side builds no module from what a worker sends)."""

    __slots__ = ()


class _Decoder:
    def __init__(self, blobs: list[bytes], allow_modules: bool, opaque_modules: bool = False):
        self.blobs = blobs
        self.allow_modules = allow_modules
        self.opaque_modules = opaque_modules
        self.nodes = 0

    def array(self, n: dict) -> np.ndarray:
        i, shape, fortran = n.get("i"), n.get("shape"), n.get("fortran", False)
        if type(i) is not int or not 0 <= i < len(self.blobs):
            raise WireError("bad array reference")
        if type(shape) is not list or len(shape) > MAX_DIMS or type(fortran) is not bool:
            raise WireError("malformed array")
        count = 1
        for d in shape:
            if type(d) is not int or d < 0:
                raise WireError("malformed array shape")
            count *= d
        dtype = _dtype(n.get("dtype"))
        blob = self.blobs[i]
        if count * dtype.itemsize != len(blob):
            raise WireError("array data does not match its shape")
        try:  # copies: writable and owning their data, as np.load's arrays are
            flat = np.frombuffer(blob, dtype=dtype, count=count)
            if fortran:
                return flat.reshape(shape[::-1]).T.copy(order="K")
            return flat.reshape(shape).copy()
        except (ValueError, TypeError) as e:  # e.g. a shape NumPy cannot represent
            raise WireError(f"unreadable array: {e}") from None

    def node(self, n: Any, depth: int) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise WireError("value nested too deeply or too large")
        if n is None or type(n) in (bool, int, float, str):
            return n
        if type(n) is not dict or type(n.get("t")) is not str:
            raise WireError("malformed message")
        t = n["t"]
        if t == "float" and n.get("v") in ("nan", "inf", "-inf"):
            return float(n["v"])
        if t in ("list", "tuple") and type(n.get("v")) is list:
            items = [self.node(x, depth + 1) for x in n["v"]]
            return items if t == "list" else tuple(items)
        if t == "dict" and type(n.get("v")) is list:
            out = {}
            for pair in n["v"]:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("malformed dict")
                key = self.node(pair[0], depth + 1)
                try:
                    out[key] = self.node(pair[1], depth + 1)
                except TypeError:
                    raise WireError("unhashable dict key") from None
            return out
        if t == "nd":
            return self.array(n)
        if t == "scalar":
            a = self.array(n)
            if a.ndim != 0:
                raise WireError("malformed scalar")
            return a[()]
        if t == "mha" and self.allow_modules:
            return self.mha(n)
        if t == "mha" and self.opaque_modules:
            return ModuleSeen()
        if t == "once" and self.allow_modules and type(n.get("v")) is list:
            return (x for x in [self.node(x, depth + 1) for x in n["v"]])
        raise WireError(f"unexpected value kind {t!r}")

    def mha(self, n: dict) -> Any:
        import torch

        dtype = {"float32": torch.float32, "float64": torch.float64}[n["dtype"]]
        mha = torch.nn.MultiheadAttention(**n["config"], dtype=dtype)
        state = {k: torch.from_numpy(self.array(v)) for k, v in n["state"].items()}
        mha.load_state_dict(state)
        return mha.eval()


def _check_header(header: bytes, limit: int) -> None:
    """Refuse a JSON header that could build more objects than a message may hold, before any
    object is built: a linear count in C (``bytes.count``), no parsing."""
    if len(header) > limit:
        raise WireError(f"header of {len(header)} bytes (limit {limit})")
    tokens = sum(header.count(c) for c in (b",", b":", b"[", b"{"))
    if tokens > MAX_HEADER_TOKENS:
        raise WireError("header holds too many values")


def decode(
    msg: bytes | memoryview,
    *,
    allow_modules: bool = False,
    opaque_modules: bool = False,
    max_header: int = MAX_BYTES,
) -> Any:
    """Parse a message made by ``encode``. The trusted side never passes allow_modules (modules
    and ``Once`` items: what only the trusted side sends), and passes
    ``max_header=MAX_REPLY_HEADER`` for a worker's reply; ``opaque_modules`` (for a callee
    frame only) reads a module as ``ModuleSeen``."""
    if len(msg) > MAX_BYTES or len(msg) < 8 or bytes(msg[:4]) != MAGIC:
        raise WireError("not a message of this grader, or too large")
    (hlen,) = struct.unpack("<I", msg[4:8])
    if 8 + hlen > len(msg):
        raise WireError("message shorter than its header")
    _check_header(bytes(msg[8 : 8 + hlen]), max_header)
    try:
        header = json.loads(bytes(msg[8 : 8 + hlen]))
        sizes = header["blobs"]
        tree = header["tree"]
    except Exception:
        raise WireError("malformed header") from None
    if type(sizes) is not list or not all(type(s) is int and s >= 0 for s in sizes):
        raise WireError("malformed header")
    if len(sizes) > MAX_NODES:
        raise WireError("malformed header")
    blobs, pos = [], 8 + hlen
    for s in sizes:
        blobs.append(msg[pos : pos + s])
        pos += s
    if pos != len(msg):
        raise WireError("message length does not match its header")
    return _Decoder(blobs, allow_modules, opaque_modules).node(tree, 0)
