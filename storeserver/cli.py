# `storeserver --data DIR [--listen HOST:PORT]`: parses the command line into
# a frozen StoreSettings (each setting's option is generated from its field
# in settings.py), applies the deployment rule (no listening beyond loopback
# without a shared secret), and runs the server on uvloop until SIGTERM or
# SIGINT, then shuts it down gracefully. Its settings are kept in
# DATA/storeserver.toml (wreck/crawlfile.py): a restart reads them, and a flag
# that would change one is refused unless --reconfigure. One storeserver owns
# a --data directory at a time (wreck/dirlock.py).
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

from wreck import cmdline, crawlfile, datadir, dirlock, oneline, options
from wreck.deploy import SECRET_ENV, DeployError, check_listen, open_warning, secret_from
from wreck.private import private_dir
from wreck.protocol.errors import ProtocolError
from wreck.protocol.settings import split_host_port
from wreck.cannotlisten import CannotListen
from wreck.statusport import StatusPort

from wreck.plugins import PluginError

from . import settings as S
from .server import StoreServer
from .store import StoreError

log = logging.getLogger("storeserver")
KEPT = "storeserver.toml"  # the settings kept in --data
TABLE = "storeserver"  # its table in a settings file
PART = crawlfile.part(TABLE, S.StoreSettings)  # every setting but --data is kept
app = cmdline.app("Store fetch records from spiders: zstd into LMDB, acked once durable.")
EXAMPLES = cmdline.examples(
    ("Store for the urlserver and spiders of this machine (port 7002)", "storeserver --data store"),
    ("Listen on every interface: a shared secret is then required",
     "storeserver --data store --listen 0.0.0.0:7002 --secret-file secret.txt"),
    ("Print the settings a restart would use", "storeserver --data store --print-config"),
)


@cmdline.command(app, EXAMPLES)
@options.command(S.StoreSettings)
@cmdline.logging_options("info")
def serve(
    listen: str = typer.Option(S.DEFAULT_LISTEN, "--listen", metavar="HOST:PORT", rich_help_panel=options.DAEMONS,
                               help="Where to listen (port 0: any free port)"),
    secret_file: Path | None = typer.Option(None, "--secret-file", metavar="FILE", rich_help_panel=options.DAEMONS,
                                            help=cmdline.with_default("Shared secret, first line", f"${SECRET_ENV}")),
    config: Path | None = typer.Option(None, "--config", metavar="FILE", rich_help_panel=options.INPUT,
                                       help=cmdline.with_default("Settings file (TOML, a \\[storeserver] table as "
                                                                 "--print-config shows); flags win over it", "none")),
    reconfigure: bool = typer.Option(False, "--reconfigure", metavar="", rich_help_panel=options.INPUT,
                                     help=cmdline.with_default("Accept flags or --config values that differ from "
                                                               "the settings kept in --data, and keep them", "off")),
    print_config: bool = typer.Option(False, "--print-config", metavar="", rich_help_panel=options.INPUT,
                                      help="Print the effective settings (TOML) and exit"),
    settings_file: Path | None = typer.Option(None, "--settings-file", metavar="FILE", rich_help_panel=options.INPUT,
                                              help=cmdline.with_default("Where the settings are kept (wreck-crawl "
                                                                        "passes its crawl's)", f"DATA/{KEPT}")),
    *,
    chosen: dict[str, Any],
    log_level: int,
) -> None:
    """Store fetch records from spiders: zstd into LMDB, acked once durable."""
    logging.basicConfig(stream=sys.stderr, level=log_level,
                        format="%(asctime)s storeserver %(levelname)s %(message)s")
    data = chosen.pop("data")
    if datadir.problem(data):
        typer.echo(f"storeserver: {datadir.problem(data)}", err=True)
        raise typer.Exit(2)
    try:
        host, port = split_host_port(listen, listen=True)
        text = secret_file.read_text() if secret_file else None
        secret = secret_from(text, os.environ.get(SECRET_ENV))
        check_listen(host, secret)
        settled = crawlfile.settle(settings_file or Path(data) / KEPT, [PART], {TABLE: chosen}, config=config,
                                   reconfigure=reconfigure)
        settings = S.StoreSettings(data=data, **settled.of(TABLE), host=host, port=port, secret=secret)
        if settings.http:
            check_listen(split_host_port(settings.http, listen=True)[0], secret)  # the same rule as --listen
    except (DeployError, ProtocolError, OSError, ValueError) as exc:  # ValueError: SettingsError, ConfigError too
        typer.echo(f"storeserver: {exc}", err=True)
        raise typer.Exit(2) from None
    if print_config:
        typer.echo(settled.text(), nl=False)
        raise typer.Exit(0)
    crawlfile.take_data("storeserver", data, settled, lambda: dirlock.hold(private_dir(data), "storeserver"))
    warning = open_warning(host, secret)
    if warning:
        typer.echo(f"storeserver: warning: {warning}", err=True)
    try:
        code = uvloop.run(run(settings))
    except (StoreError, PluginError, CannotListen) as exc:
        typer.echo(f"storeserver: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


async def run(settings: S.StoreSettings) -> int:
    """Serve until SIGTERM/SIGINT; 0 on a clean stop, 1 if the writer failed."""
    server = StoreServer(settings)
    host, port = await server.start()
    figures = StatusPort({"/status": server.figures})
    if settings.http:
        bound = await figures.start(settings.http)
        print(f"storeserver status on http://{bound[0]}:{bound[1]}/status", flush=True)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.request_stop)
    log.info("listening on %s:%d, data in %s (map %d MiB)", host, port, settings.data, server.store.map_size >> 20)
    print(f"storeserver listening on {host}:{port}", flush=True)  # for wreck-crawl and scripts
    await server.wait_stopped()
    log.info("stopping: committing and acknowledging what is in hand")
    figures.close()
    await server.shutdown()
    log.info("stopped")
    return 1 if server.fatal else 0


def main() -> None:
    oneline.main(app, "storeserver")


if __name__ == "__main__":
    main()
