"""Length-prefixed frames over a stream socket, shared by the trusted side and the worker.

A frame is ``u32 little-endian length | payload``; payloads are ``wire`` messages. Both readers
refuse frames larger than ``MAX_FRAME``, so a hostile peer cannot make the other side allocate
without bound. The worker reads with blocking ``recv_frame``; the trusted side, which must also
drain the worker's output and respect deadlines, feeds bytes to a ``FrameParser``.
"""

from __future__ import annotations

import socket
import struct

from .wire import MAX_BYTES

MAX_FRAME = MAX_BYTES + 4096


class ChannelClosed(EOFError):
    """The peer closed the channel (for the trusted side: the worker died)."""


class FrameTooLarge(ValueError):
    """The peer announced a frame larger than MAX_FRAME."""


def send_frame(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack("<I", len(payload)) + payload)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ChannelClosed("channel closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> bytes:
    """Block until one whole frame has arrived."""
    (n,) = struct.unpack("<I", _recv_exact(sock, 4))
    if n > MAX_FRAME:
        raise FrameTooLarge(f"frame of {n} bytes")
    return _recv_exact(sock, n)


class FrameParser:
    """Incremental parser: ``feed`` bytes as they arrive, ``pop`` a frame once it is whole."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data
        if len(self._buf) >= 4:
            (n,) = struct.unpack("<I", self._buf[:4])
            if n > MAX_FRAME:
                raise FrameTooLarge(f"frame of {n} bytes")

    def pop(self) -> bytes | None:
        if len(self._buf) < 4:
            return None
        (n,) = struct.unpack("<I", self._buf[:4])
        if len(self._buf) < 4 + n:
            return None
        frame = bytes(self._buf[4 : 4 + n])
        del self._buf[: 4 + n]
        return frame
