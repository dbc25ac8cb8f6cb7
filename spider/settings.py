# The spider's settings, declared once (wreck/options.py): the spider's
# command line is generated from these fields, and wreck-crawl's --procs
# and --concurrency from the same two (it starts the spider with them). A
# crawl's other settings come from the urlserver's handshake (docs/
# protocol.txt 5.1), so a spider box is told only where to connect and how
# hard to work. Light on purpose: wreck-crawl imports it.
"""SpiderSettings: the spider command's options, frozen and validated."""

from __future__ import annotations

import dataclasses

from wreck.options import DAEMONS, INPUT, REQUIRED, setting, validate

DEFAULT_CONCURRENCY = 200  # transfers in flight per worker: libcurl multi handles hundreds on one loop
# The spider's bound since its first command line: a count beyond it is
# more likely a typo than a plan.
MAX_CONCURRENCY = 10_000


@dataclasses.dataclass(frozen=True, kw_only=True)
class SpiderSettings:
    """What one spider command runs with (its secret comes apart: --secret-file)."""

    connect: str = setting(REQUIRED, help="The urlserver; everything else comes from its handshake",
                           metavar="HOST:PORT", panel=INPUT)
    procs: int | None = setting(None, help="Spider worker processes", min=1, default_help="CPUs", panel=DAEMONS)
    concurrency: int = setting(DEFAULT_CONCURRENCY, help="Transfers in flight per spider worker", min=1,
                               max=MAX_CONCURRENCY, panel=DAEMONS)
    name: str | None = setting(None, help="Name shown to the urlserver", default_help="HOST-PID", metavar="TEXT",
                               panel=DAEMONS)

    def __post_init__(self) -> None:
        """Refuse impossible values; SettingsError names the flag."""
        validate(self)
