# Typed protocol errors, after h11: who broke the rules decides the class.
# A RemoteProtocolError puts that one connection into an error state; the
# caller sends the peer an error message with `code` and closes it.
"""Errors raised by the sans-I/O protocol objects."""

from __future__ import annotations

from .codes import ErrorCode


class ProtocolError(Exception):
    """Base class. `code` says which kind of rule was broken."""

    def __init__(self, msg: str, code: ErrorCode = ErrorCode.SYNTAX) -> None:
        super().__init__(msg)
        self.code = code


class LocalProtocolError(ProtocolError):
    """We tried to send something the protocol does not allow here."""


class RemoteProtocolError(ProtocolError):
    """The peer sent bytes the protocol does not allow."""
