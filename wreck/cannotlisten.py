# A daemon's --listen or --http address that cannot be bound (taken by
# another program, not an address of this machine, a privileged port) is
# the operator's mistake, so it ends the start in one line naming the flag
# and the address, not in the event loop's traceback. Each bind site wraps
# its create_server in listening(); the commands catch CannotListen.
"""CannotListen and listening(): a bind failure as one line naming the flag."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


class CannotListen(Exception):
    """The address of `flag` cannot be listened on; the message says why."""


@contextlib.contextmanager
def listening(flag: str, host: str | None, port: int) -> Iterator[None]:
    """Turn an OSError of the bind inside into CannotListen."""
    try:
        yield
    except OSError as exc:
        # uvloop's text repeats the address: the errno's own words are enough
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        shown = f"[{host}]" if host and ":" in host else (host or "*")
        raise CannotListen(f"{flag} {shown}:{port}: cannot listen ({why})") from None
