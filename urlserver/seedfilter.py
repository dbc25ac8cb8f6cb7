# Which of the operator's filters a seed answers to. The seeds define the
# scope (Heritrix's SeedAcceptDecideRule: --scope host or domain takes their
# hosts), so --include, --max-depth and the trap heuristics, which judge
# what a crawl finds, do not apply to them; but an explicit refusal wins
# over a seed (Heritrix applies its reject rules after the seed rule): a
# seed --exclude matches, or a plugin's url_filter refuses, is FILTERED,
# never fetched (docs/operating.md, "Seeds and the filters"). The external
# --url-filter-cmd is asked about a page's links only (urlfilter.py): a
# seed is kept by it.
"""seed_refusal(scope, url_filter, url, host) -> why a seed is refused, or None."""

from __future__ import annotations

from .scope import Scope
from .urlfilter import UrlFilter

SEED_EXCLUDED = "seed excluded"
"""The FILTERED reason of a seed --exclude refuses (a plugin's: 'seed ' and its own)."""


def seed_refusal(scope: Scope, url_filter: UrlFilter | None, url: str, host: str) -> str | None:
    """Why the seed `url` (normalised, on `host`) is refused, or None."""
    if any(r.search(url) for r in scope.exclude):
        return SEED_EXCLUDED
    if url_filter is not None and url_filter.plugins.has("url_filter"):
        why = url_filter.reason(url, host, 0, None)
        if why is not None:
            return f"seed {why}"
    return None
