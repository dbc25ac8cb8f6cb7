# `storeserver --data DIR [--listen HOST:PORT]`: parses the command line into
# a frozen StoreSettings, applies the deployment rule (no listening beyond
# loopback without a shared secret), and runs the server on uvloop until
# SIGTERM or SIGINT, then shuts it down gracefully.
"""The storeserver command."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import typer
import uvloop

from wreck.protocol import limits
from wreck.deploy import SECRET_ENV, DeployError, check_listen, secret_from
from wreck.protocol.errors import ProtocolError
from wreck.protocol.settings import split_host_port

from wreck.plugins import PluginError

from . import dedup
from . import settings as S
from .server import StoreServer
from .store import StoreError

log = logging.getLogger("storeserver")
app = typer.Typer(add_completion=False, help="Store fetch records from spiders: zstd into LMDB, acked once durable.")


def _parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    mult = units.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in units else t) * mult)


@app.command()
def serve(
    data: Path = typer.Option(..., "--data", help="Directory of the store (created if missing); LMDB lives in DIR/store/."),
    listen: str = typer.Option(S.DEFAULT_LISTEN, "--listen", help="HOST:PORT to listen on (port 0: any free port)."),
    secret_file: Path | None = typer.Option(None, "--secret-file", help=f"Shared secret, first line (else ${SECRET_ENV})."),
    map_size: str = typer.Option("1GiB", "--map-size", help="Initial LMDB map size; doubled whenever full."),
    max_doc_len: int = typer.Option(S.StoreSettings.__dataclass_fields__["max_doc_len"].default, "--max-doc-len",
                                    help="Largest document (headers + body) accepted, in bytes."),
    max_connections: int = typer.Option(S.DEFAULT_MAX_CONNECTIONS, "--max-connections", min=1,
                                        help="Spider connections at once; more are told 'busy'."),
    max_unauthenticated: int = typer.Option(S.DEFAULT_MAX_UNAUTHENTICATED, "--max-unauthenticated", min=1,
                                            help="Connections still in their handshake at once."),
    handshake_timeout: float = typer.Option(S.DEFAULT_HANDSHAKE_TIMEOUT_S, "--handshake-timeout", min=0.001,
                                            help="Seconds a connection has to complete its handshake."),
    commit_window_ms: float = typer.Option(S.DEFAULT_COMMIT_WINDOW_MS, "--commit-window-ms",
                                           help="How long a batch waits for more records before its commit."),
    dict_train_docs: int = typer.Option(S.DICT_TRAIN_DOCS, "--dict-train-docs",
                                        help="Train the zstd dictionary from this many first documents (0: never)."),
    dedup: bool = typer.Option(True, "--dedup/--no-dedup", help="Hash page bodies and mark exact duplicates."),
    near_dups: bool = typer.Option(False, "--near-dups/--no-near-dups",
                                   help="Also mark near duplicates (simhash of the page text; about doubles the store's CPU per page)."),
    near_dup_distance: int = typer.Option(dedup.DEFAULT_DISTANCE, "--near-dup-distance", min=0, max=dedup.MAX_DISTANCE,
                                          help="A page whose text simhash is this many bits (of 64) or fewer "
                                               "from a stored page's is marked its near duplicate."),
    plugin: list[str] = typer.Option(None, "--plugin", help="Enable plugin NAME or NAME=ARG; its document hook "
                                                            "runs here (repeatable; docs/plugins.md)."),
    log_level: str = typer.Option("info", "--log-level"),
) -> None:
    """Run the store server."""
    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="%(asctime)s storeserver %(levelname)s %(message)s")
    try:
        host, port = split_host_port(listen, listen=True)
        text = secret_file.read_text() if secret_file else None
        secret = secret_from(text, os.environ.get(SECRET_ENV))
        check_listen(host, secret)
        settings = S.StoreSettings(
            max_unauthenticated=max_unauthenticated, handshake_timeout_s=handshake_timeout,
            data=data, host=host, port=port, secret=secret, map_size=_parse_size(map_size),
            max_doc_len=min(max_doc_len, limits.MAX_DOC_LEN), max_connections=max_connections,
            commit_window_ms=commit_window_ms, dict_train_docs=dict_train_docs,
            dedup=dedup, near_dups=near_dups, near_dup_distance=near_dup_distance, plugins=tuple(plugin or ()),
        )  # fmt: skip
    except (DeployError, ProtocolError, OSError, ValueError) as exc:
        typer.echo(f"storeserver: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        code = uvloop.run(run(settings))
    except (StoreError, PluginError) as exc:
        typer.echo(f"storeserver: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


async def run(settings: S.StoreSettings) -> int:
    """Serve until SIGTERM/SIGINT; 0 on a clean stop, 1 if the writer failed."""
    server = StoreServer(settings)
    host, port = await server.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.request_stop)
    log.info("listening on %s:%d, data in %s (map %d MiB)", host, port, settings.data, server.store.map_size >> 20)
    print(f"storeserver listening on {host}:{port}", flush=True)  # for wreck-crawl and scripts
    await server.wait_stopped()
    log.info("stopping: committing and acknowledging what is in hand")
    await server.shutdown()
    log.info("stopped")
    return 1 if server.fatal else 0


def main() -> None:
    app()


if __name__ == "__main__":
    main()
