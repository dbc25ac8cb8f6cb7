# The part both protocols share: one object per connection end, after h11.
# receive_data(bytes) feeds it (b"" means the peer closed), next_event()
# returns the next event or NEED_DATA, send(event) returns the bytes to
# write. It runs the handshake (handshake.py) itself; subclasses decode and
# encode the messages of the OPEN state. No sockets, no clock, no randomness:
# the caller passes its nonce in.
"""Base class of ControlConnection and StoreConnection."""

from __future__ import annotations

from . import handshake, limits
from .buffer import ReceiveBuffer
from .codes import ErrorCode, Role
from .errors import LocalProtocolError, RemoteProtocolError
from .events import NEED_DATA, Auth, ConnectionClosed, Error, Hello, Ready
from .state import State, Table, transition


class Connection:
    """One end of a WRECK connection. Subclasses set `_table` and OPEN codecs."""

    _table: Table
    _auth_role = "spider"  # the role a client of this class gives in AUTH (3.1)

    def __init__(self, role: Role, *, service: str, secret: bytes, nonce: bytes, name: str = "spider",
                 crawl_id: str = "", caps: tuple[str, ...] = ()) -> None:
        if len(nonce) != handshake.NONCE_BYTES:
            raise LocalProtocolError(f"nonce must be {handshake.NONCE_BYTES} random bytes")
        if crawl_id and not handshake.is_crawl_id(crawl_id):
            raise LocalProtocolError(f"bad crawl id {crawl_id!r}")
        self.our_role = role
        self.their_role = Role.SERVER if role is Role.CLIENT else Role.CLIENT
        self.service = service
        self.state = State.GREETING
        self.name = name  # the client's name (ours, or the peer's once known)
        self.crawl_id = crawl_id  # the client's crawl id, sent in AUTH (ours, or the peer's once known; 6.1)
        if caps and (problem := handshake.caps_problem(caps)) is not None:
            raise LocalProtocolError(f"caps {caps!r} cannot be sent: it {problem}")
        self._our_caps = caps  # sent in AUTH by a client (3.1)
        # The client's capabilities (ours, or the peer's once its AUTH is
        # proven): what the urlserver may send this spider (3.1, 5.3).
        self.caps: frozenset[str] = frozenset(caps)
        self.settings: dict[str, str] = {}
        self.auth_role = self._auth_role if role is Role.CLIENT else ""  # the role in AUTH (ours, or the peer's once known)
        self._secret = secret
        self._our_nonce = nonce.hex()
        self._server_nonce = self._our_nonce if role is Role.SERVER else ""
        self._client_nonce = self._our_nonce if role is Role.CLIENT else ""
        self._buf = ReceiveBuffer()
        self._eof = False
        self._welcome_mac: str | None = None  # a WELCOME line seen, READY pending
        self.opened = False  # the handshake completed (OPEN framing applies)
        self._use_table(self._table)

    def _use_table(self, table: Table) -> None:
        """Run the state machine of `table` (a server learns from AUTH's
        role which protocol its client speaks: docs/protocol.txt 5.10)."""
        self._table = table
        # Message types the peer may send that leave an OPEN connection OPEN.
        self._open_from_peer = frozenset(
            kind for (sender, state, kind), new in table.items()
            if sender is self.their_role and state is State.OPEN and new is State.OPEN
        )

    # -- receiving -----------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes from the peer; b"" when it has closed its side."""
        if data:
            if self._eof:
                raise LocalProtocolError("data received after end of stream")
            self._buf.feed(data)
        else:
            self._eof = True

    def next_event(self) -> object:
        """The next event, NEED_DATA, or RemoteProtocolError (then ERROR)."""
        state = self.state
        if state is State.ERROR:
            raise RemoteProtocolError("connection is in the error state", ErrorCode.STATE)
        if state is State.CLOSED:
            # After ERROR or BYE nothing more is decoded; report end of stream.
            return ConnectionClosed() if self._eof else NEED_DATA
        try:
            event = self._decode_open() if state is State.OPEN else self._decode()
            if event is NEED_DATA:
                if self._eof:
                    if len(self._buf) or self._mid_message():
                        raise RemoteProtocolError("connection closed in the middle of a message")
                    self.state = State.CLOSED
                    return ConnectionClosed()
                return NEED_DATA
            if state is State.OPEN and type(event) in self._open_from_peer:
                return event  # the hot path: an OPEN -> OPEN message
            self.state = transition(self._table, self.their_role, state, event, local=False)
            self._received(event)
            self.opened = self.opened or self.state is State.OPEN
        except RemoteProtocolError:
            self.state = State.ERROR
            raise
        return event

    def _decode(self) -> object:
        state = self.state
        if state is State.OPEN:
            return self._decode_open()
        if self._is_our_turn(state):
            # Nothing is expected from the peer now but an ERROR (e.g. its
            # handshake timeout); keep what it pipelined, at most a line's worth.
            if self._buf.startswith(b"ERROR "):
                line = self._buf.take_line(limits.MAX_HANDSHAKE_LINE, "ERROR line")
                return NEED_DATA if line is None else handshake.parse_error(handshake.decode_text(line, "ERROR line"))
            if len(self._buf) > limits.MAX_LINE:
                raise RemoteProtocolError("peer sent too much before its turn", ErrorCode.LIMIT)
            return NEED_DATA
        while (line := self._buf.take_line(self._line_limit(), "handshake line")) is not None:
            if state is State.GREETING:
                return handshake.parse_hello(line)
            if state is State.AUTHENTICATING:
                return handshake.parse_auth(line)
            event = self._decode_welcome(line)
            if event is not None:
                return event
        return NEED_DATA

    def _line_limit(self) -> int:
        # Once WELCOME is in, SET lines may be as long as a setting allows.
        return limits.MAX_HANDSHAKE_LINE if self._welcome_mac is None else limits.MAX_SETTING_LINE

    def _mid_message(self) -> bool:
        """True while a message's first line is in but the rest is not."""
        return self._welcome_mac is not None and self.state is State.WELCOMING

    def _is_our_turn(self, state: State) -> bool:
        speaker = Role.CLIENT if state is State.AUTHENTICATING else Role.SERVER
        return speaker is self.our_role

    def _decode_welcome(self, line: bytes) -> object | None:
        """One line of WELCOME / SET ... / READY; an event once READY arrives."""
        text = handshake.decode_text(line, "handshake line")
        if self._welcome_mac is None:
            if text.startswith("ERROR "):
                return handshake.parse_error(text)
            word, _, mac = text.partition(" ")
            if word != "WELCOME" or not handshake.is_hex64(mac):
                raise RemoteProtocolError("expected 'WELCOME <mac>'")
            self._welcome_mac = mac
            return None
        if text == "READY":
            return Ready(self.settings, self._welcome_mac)
        if not text.startswith("SET "):
            raise RemoteProtocolError("expected 'SET <key> <value>' or 'READY'")
        if len(self.settings) >= limits.MAX_SETTINGS:
            raise RemoteProtocolError(f"more than {limits.MAX_SETTINGS} settings", ErrorCode.LIMIT)
        key, value = handshake.parse_setting(text)
        self.settings[key] = value
        return None

    def _received(self, event: object) -> None:
        """Checks that need the connection's secret and nonces."""
        if isinstance(event, Hello):
            if event.service != self.service:
                raise RemoteProtocolError(
                    f"expected a {self.service}, but this is a {event.service}", ErrorCode.STATE
                )
            self._server_nonce = event.nonce
        elif isinstance(event, Auth):
            self._client_nonce = event.nonce
            expected = self._proof("client")
            if not handshake.proofs_match(expected, event.mac):
                raise RemoteProtocolError(
                    f"client {event.name} failed authentication (wrong or missing shared secret)",
                    ErrorCode.AUTH,
                )
            self.name = event.name
            self.crawl_id = event.crawl
            self.auth_role = event.role
            self.caps = frozenset(event.caps)
        elif isinstance(event, Ready):
            self.opened = True  # the peer is OPEN now, whatever we decide
            if not handshake.proofs_match(self._proof("server"), event.mac):
                raise RemoteProtocolError(
                    f"{self.service} failed authentication (wrong or missing shared secret)",
                    ErrorCode.AUTH,
                )

    def _proof(self, direction: str) -> str:
        return handshake.proof(
            self._secret, direction, self.service, self._server_nonce, self._client_nonce
        )

    def _decode_open(self) -> object:
        raise NotImplementedError

    # -- sending -------------------------------------------------------------

    def hello(self) -> bytes:
        """Server: the greeting, sent as soon as the connection is accepted."""
        return self.send(Hello(self.service, self._our_nonce))

    def authenticate(self) -> bytes:
        """Client: answer the greeting with our proof of the secret."""
        return self.send(Auth(self._auth_role, self.name, self._our_nonce, self._proof("client"), crawl=self.crawl_id,
                              caps=self._our_caps))

    def welcome(self, settings: dict[str, str]) -> bytes:
        """Server: prove the secret, announce settings, open the connection."""
        self.settings = dict(settings)
        return self.send(Ready(self.settings, self._proof("server")))

    def send(self, event: object) -> bytes:
        """The bytes for `event`; LocalProtocolError if not allowed now."""
        if self.state is State.ERROR and type(event) is not Error:
            raise LocalProtocolError("connection is in the error state: only an Error may be sent")
        new_state = transition(self._table, self.our_role, self.state, event, local=True)
        data = self._encode(event)
        self.state = new_state
        self.opened = self.opened or new_state is State.OPEN
        return data

    def _encode(self, event: object) -> bytes:
        if type(event) is Hello:
            return handshake.encode_hello(event)
        if type(event) is Auth:
            return handshake.encode_auth(event)
        if type(event) is Ready:
            return handshake.encode_ready(event.settings, event.mac)
        if type(event) is Error and not self.opened:
            return handshake.encode_error(event, limits.MAX_HANDSHAKE_LINE)
        return self._encode_open(event)

    def _encode_open(self, event: object) -> bytes:
        raise NotImplementedError
