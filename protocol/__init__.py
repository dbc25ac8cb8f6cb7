# protocol/ is the one place that knows WRECK's wire formats. It does no I/O:
# callers own the sockets, feed bytes in and write the bytes it returns
# (docs/protocol.txt is the normative description).
"""WRECK's two wire protocols, sans-I/O."""

from .codes import (
    AckResult, ErrorCode, NoticeCode, Role, Specific, Status, http_code, http_enum,
)  # fmt: skip
from .control import ControlConnection
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import (
    NEED_DATA, Ack, Assignment, Auth, Bye, Cancel, Committed, ConnectionClosed, Dictionary, Done, Error,
    Get, Hello, Idle, Links, LinksAck, Notice, Packed, PeerLink, Ready, Record, Working,
)  # fmt: skip
from .handshake import NONCE_BYTES
from .peer import PeerConnection
from .state import State
from .store import StoreConnection

__all__ = [
    "NEED_DATA", "NONCE_BYTES", "Ack", "AckResult", "Assignment", "Auth", "Bye",
    "Cancel", "Committed", "ConnectionClosed", "ControlConnection", "Dictionary", "Done", "Error", "ErrorCode",
    "Get", "Hello", "Idle", "Links", "LinksAck", "LocalProtocolError", "Notice", "NoticeCode", "Packed",
    "PeerConnection", "PeerLink", "ProtocolError", "Ready", "Record", "RemoteProtocolError", "Role", "Specific",
    "State", "Status", "StoreConnection", "Working", "http_code", "http_enum",
]  # fmt: skip
