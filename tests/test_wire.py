"""The wire format: plain data round-trips exactly; anything else is refused without pickle."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch

from mha_grader.sandbox.worker import wire

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "array",
    [
        RNG.standard_normal((3, 4)),
        np.asfortranarray(RNG.standard_normal((3, 4))),
        RNG.standard_normal((4, 6))[:, ::2],  # neither C nor Fortran ordered
        np.zeros((0, 5)),
        np.zeros((2, 0, 3), np.float16),
        np.array(3.5),
        np.arange(6, dtype=">i4").reshape(2, 3),  # big-endian stays big-endian
        np.array([True, False]),
        np.array([1 + 2j, -1j], np.complex64),
        np.arange(4, dtype=np.uint8),
    ],
    ids=["c", "fortran", "strided", "empty", "empty-f16", "0-d", "big-endian", "bool", "c64", "u8"],
)
def test_arrays_round_trip_with_dtype_shape_and_values(array):
    out = wire.decode(wire.encode({"x": array}))["x"]
    assert type(out) is np.ndarray
    assert out.dtype == array.dtype and out.shape == array.shape
    assert np.array_equal(out, array)
    assert out.flags.writeable  # a student may legitimately change a copy of an input
    if array.flags.f_contiguous and not array.flags.c_contiguous:
        assert out.flags.f_contiguous  # memory order kept, as np.save/np.load keep it


def test_numpy_scalars_round_trip_as_numpy_scalars():
    for value in (np.float32(2.5), np.int64(-7), np.bool_(True), np.float64(np.nan)):
        out = wire.decode(wire.encode(value))
        assert type(out) is type(value)
        assert out.dtype == value.dtype
        assert out == value or (np.isnan(out) and np.isnan(value))


def test_containers_and_plain_values_round_trip():
    value = {"a": [1, 2.5, None, "s"], (1, 2): (True, float("inf")), 3: {"n": float("-inf")}}
    assert wire.decode(wire.encode(value)) == value


def test_mha_module_round_trips_only_when_modules_are_allowed():
    mha = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64, batch_first=True)
    msg = wire.encode(mha)
    with pytest.raises(wire.WireError):
        wire.decode(msg)
    out = wire.decode(msg, allow_modules=True)
    assert out.batch_first and out.num_heads == 2
    for (k, a), (k2, b) in zip(mha.state_dict().items(), out.state_dict().items(), strict=True):
        assert k == k2 and torch.equal(a, b)


def test_once_items_arrive_as_a_generator_read_once_and_only_from_the_trusted_side():
    msg = wire.encode((8, wire.Once((1, 2, 4))))
    with pytest.raises(wire.WireError):
        wire.decode(msg)  # a worker's reply never holds one
    d_model, heads = wire.decode(msg, allow_modules=True)
    assert d_model == 8 and iter(heads) is heads  # a generator, not a list or tuple
    assert list(heads) == [1, 2, 4] and list(heads) == []


def test_object_and_string_arrays_are_not_sent():
    for bad in (np.array([object()]), np.array(["a"]), np.array([b"a"])):
        with pytest.raises(wire.WireError):
            wire.encode(bad)


def _message(node: dict, blob: bytes) -> bytes:
    header = json.dumps({"tree": node, "blobs": [len(blob)]}).encode()
    return wire.MAGIC + struct.pack("<I", len(header)) + header + blob


@pytest.mark.parametrize(
    "dtype", ["|O8", "|O", "<U1", "|S1", "|V8", "<M8[s]", "<f8 ", "float64", "=f8", "|f8", 7]
)
def test_a_dtype_that_is_not_a_plain_number_type_is_refused(dtype):
    node = {"t": "nd", "i": 0, "dtype": dtype, "shape": [1]}
    with pytest.raises(wire.WireError):
        wire.decode(_message(node, bytes(8)))


@pytest.mark.parametrize(
    "shape", [[2], [1, 1, 2], [-1], [1.0], "1", [2**62, 2**62, 0, 1] * 9, [0, 2**70]]
)
def test_a_shape_that_does_not_match_the_bytes_is_refused(shape):
    node = {"t": "nd", "i": 0, "dtype": "<f8", "shape": shape}
    with pytest.raises(wire.WireError):
        wire.decode(_message(node, bytes(8)))


def test_an_empty_array_with_a_shape_numpy_cannot_hold_is_refused():
    node = {"t": "nd", "i": 0, "dtype": "<f8", "shape": [0, 2**70]}
    with pytest.raises(wire.WireError):
        wire.decode(_message(node, b""))


def test_a_pickle_never_decodes():
    import pickle

    blob = pickle.dumps(np.array([object()], dtype=object))
    node = {"t": "nd", "i": 0, "dtype": "|O8", "shape": [1]}
    with pytest.raises(wire.WireError):
        wire.decode(_message(node, blob))


def test_a_module_in_a_callee_frame_is_read_as_seen_and_never_rebuilt():
    import torch

    mha = torch.nn.MultiheadAttention(4, 2, bias=False)
    frame = wire.encode({"seq": 1, "callee": "weights_from_torch", "args": [mha], "kwargs": {}})
    with pytest.raises(wire.WireError):  # a worker's frame never carries a module otherwise
        wire.decode(frame)
    seen = wire.decode(frame, opaque_modules=True)
    assert type(seen["args"][0]) is wire.ModuleSeen
