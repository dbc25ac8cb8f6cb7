# Deployment rules both servers apply before they listen, as pure functions:
# a server reachable beyond loopback must hold a shared secret, and the
# secret comes from a file or the WRECK_SECRET environment variable. The
# daemons read the file; this module only decides.
"""Secrets and the listen rule (docs/protocol.txt 3.3)."""

from __future__ import annotations

import ipaddress

SECRET_ENV = "WRECK_SECRET"
MIN_SECRET_LEN = 16  # shorter secrets are guessable offline from one handshake


class DeployError(Exception):
    """A deployment mistake that must stop the daemon with a clear message."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and 'localhost'; False for anything else."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def secret_from(file_text: str | None, env_value: str | None) -> bytes:
    """The shared secret: the file's first line wins over the environment."""
    text = file_text.splitlines()[0].strip() if file_text and file_text.strip() else (env_value or "").strip()
    if text and len(text) < MIN_SECRET_LEN:
        raise DeployError(f"the shared secret must be at least {MIN_SECRET_LEN} characters")
    return text.encode("utf-8")


def check_listen(host: str, secret: bytes) -> None:
    """Refuse to serve beyond loopback without a secret."""
    if not secret and not is_loopback(host):
        raise DeployError(
            f"refusing to listen on {host} without a shared secret: "
            f"give --secret-file FILE or set {SECRET_ENV} (every spider needs the same one)"
        )


def open_warning(host: str, secret: bytes) -> str | None:
    """What to tell the operator of a server on loopback without a secret
    (any local user can then connect as a peer), or None."""
    if secret:
        return None
    return (f"listening on {host} without a shared secret: any local user can connect as a peer "
            f"(give --secret-file FILE or set {SECRET_ENV}; wreck-crawl makes one per run)")
