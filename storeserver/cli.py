# `storeserver --data DIR [--listen HOST:PORT]`: parses the command line into
# a frozen StoreSettings (each setting's option is generated from its field
# in settings.py), applies the deployment rule (no listening beyond loopback
# without a shared secret), and runs the server on uvloop until SIGTERM or
# SIGINT, then shuts it down gracefully.
"""The storeserver command."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import typer
import uvloop

from wreck import options
from wreck.deploy import SECRET_ENV, DeployError, check_listen, secret_from
from wreck.protocol.errors import ProtocolError
from wreck.protocol.settings import split_host_port

from wreck.plugins import PluginError

from . import settings as S
from .server import StoreServer
from .store import StoreError

log = logging.getLogger("storeserver")
app = typer.Typer(add_completion=False, help="Store fetch records from spiders: zstd into LMDB, acked once durable.")


@app.command()
@options.command(S.StoreSettings)
def serve(
    listen: str = typer.Option(S.DEFAULT_LISTEN, "--listen", help="HOST:PORT to listen on (port 0: any free port)."),
    secret_file: Path | None = typer.Option(None, "--secret-file", help=f"Shared secret, first line (else ${SECRET_ENV})."),
    log_level: str = typer.Option("info", "--log-level"),
    *,
    chosen: dict[str, Any],
) -> None:
    """Run the store server."""
    logging.basicConfig(stream=sys.stderr, level=log_level.upper(),
                        format="%(asctime)s storeserver %(levelname)s %(message)s")
    try:
        host, port = split_host_port(listen, listen=True)
        text = secret_file.read_text() if secret_file else None
        secret = secret_from(text, os.environ.get(SECRET_ENV))
        check_listen(host, secret)
        settings = S.StoreSettings(**chosen, host=host, port=port, secret=secret)
    except (DeployError, ProtocolError, OSError, ValueError) as exc:  # ValueError: SettingsError too
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
