# Everything that moves a connection's state lives in this file.
#
# Rule: both ends run the same machine. Each event sent or received is
# looked up as (who sent it, state now, event type) in the protocol's table;
# the entry is the next state, and a missing entry is a protocol error that
# names the event, the sender and the state. An Error event may be sent by
# either side in any state but CLOSED, and closes the connection.
"""Connection states and the transition tables of both protocols."""

from __future__ import annotations

import enum

from .codes import ErrorCode, Role
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import (
    Ack, Assignment, Auth, Bye, Cancel, Committed, Dictionary, Done, Error, Get, Hello, Idle,
    Links, LinksAck, Notice, Ready, Record, Working,
)  # fmt: skip
from .iptokens import IpGrant, IpRecall, IpReturn, IpWant


class State(enum.Enum):
    GREETING = "GREETING"  # server is to send Hello
    AUTHENTICATING = "AUTHENTICATING"  # client is to send Auth
    WELCOMING = "WELCOMING"  # server is to send Ready (WELCOME/SET/READY)
    OPEN = "OPEN"  # the protocol's own messages flow
    CLOSED = "CLOSED"  # after Error, Bye or end of stream
    ERROR = "ERROR"  # a protocol error happened; only Error may be sent


C, S = Role.CLIENT, Role.SERVER

_HANDSHAKE = {
    (S, State.GREETING, Hello): State.AUTHENTICATING,
    (C, State.AUTHENTICATING, Auth): State.WELCOMING,
    (S, State.WELCOMING, Ready): State.OPEN,
}

CONTROL_TABLE = _HANDSHAKE | {
    (C, State.OPEN, Get): State.OPEN,
    (C, State.OPEN, Working): State.OPEN,
    (C, State.OPEN, Done): State.OPEN,
    (S, State.OPEN, Assignment): State.OPEN,
    (S, State.OPEN, Idle): State.OPEN,
    (S, State.OPEN, Cancel): State.OPEN,
    (S, State.OPEN, Committed): State.OPEN,
    (S, State.OPEN, Bye): State.CLOSED,
}

# A urlserver partition's link to another (docs/protocol.txt 5.10): the
# control handshake with role "partition", then the dialler's batches and
# the receiver's acknowledgements. Messages added here (a new first word in
# protocol/peer.py) leave room for more than links.
PEER_TABLE = _HANDSHAKE | {
    (C, State.OPEN, Links): State.OPEN,
    (S, State.OPEN, LinksAck): State.OPEN,
    # IP tokens (5.11): the dialler is the holder, the receiver the owner
    (C, State.OPEN, IpWant): State.OPEN,
    (C, State.OPEN, IpReturn): State.OPEN,
    (S, State.OPEN, IpGrant): State.OPEN,
    (S, State.OPEN, IpRecall): State.OPEN,
}

STORE_TABLE = _HANDSHAKE | {
    (C, State.OPEN, Record): State.OPEN,
    (S, State.OPEN, Ack): State.OPEN,
    (S, State.OPEN, Notice): State.OPEN,
    (S, State.OPEN, Dictionary): State.OPEN,
}

Table = dict[tuple[Role, State, type], State]


def transition(table: Table, sender: Role, state: State, event: object, *, local: bool) -> State:
    """The state after `sender` sends `event` in `state`, or a typed error."""
    if type(event) is Error and state is not State.CLOSED:
        return State.CLOSED
    new = table.get((sender, state, type(event)))
    if new is not None:
        return new
    cls: type[ProtocolError] = LocalProtocolError if local else RemoteProtocolError
    raise cls(
        f"{type(event).__name__} from the {sender.value} is not allowed in state {state.value}",
        ErrorCode.STATE,
    )
