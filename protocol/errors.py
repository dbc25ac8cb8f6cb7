# Typed protocol errors, after h11: who broke the rules decides the class.
# A RemoteProtocolError puts that one connection into an error state; the
# caller sends the peer an error message with `code` and closes it.
"""Errors raised by the sans-I/O protocol objects."""

from __future__ import annotations

from .codes import ErrorCode


def shown(value: bytes | str, limit: int = 40) -> str:
    """A peer's token for an error text: in double quotes, at most `limit`
    characters, anything but printable ASCII as \\xNN (or \\uNNNN): never a
    Python repr such as b'FOO', which means nothing to another language."""
    text = value[:limit].decode("latin-1") if isinstance(value, (bytes, bytearray)) else value[:limit]
    out = []
    for c in text:
        if " " <= c <= "~" and c not in '"\\':
            out.append(c)
        elif c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x100:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(f"\\u{ord(c):04x}")
    return '"' + "".join(out) + '"'


class ProtocolError(Exception):
    """Base class. `code` says which kind of rule was broken."""

    def __init__(self, msg: str, code: ErrorCode = ErrorCode.SYNTAX) -> None:
        super().__init__(msg)
        self.code = code


class LocalProtocolError(ProtocolError):
    """We tried to send something the protocol does not allow here."""


class RemoteProtocolError(ProtocolError):
    """The peer sent bytes the protocol does not allow."""
