"""Seeds and the operator's explicit filters, as Heritrix decides them: the
seeds define the scope (--scope host or domain takes their hosts; --include,
the depth and the trap heuristics do not apply to them), but an explicit
--exclude wins over a seed. A seed --exclude refuses is never asked, is
FILTERED with the reason 'seed excluded', and the summary says so in one
line; the crawl goes on with the other seeds, and exits 3 (nothing to
crawl) only when no seed is left. It was crawled."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_by_host, crawl_logged
from tests.web import SiteSpec

pytestmark = pytest.mark.e2e
EXIT_NOTHING_FETCHED = 3  # wreck/local/nothingfetched.py, docs/operating.md
SPEC = SiteSpec(hosts=2, pages_per_host=3, hostile=False)
# h1's pages are all excluded; the second crawl's seed too
EXCLUDE = ["--exclude", r"//h1\.wreck\.test:", "--linger", "1", "--delay", "0"]


def _seeds(port: int) -> list[str]:
    return [f"http://h0.wreck.test:{port}/", f"http://h1.wreck.test:{port}/"]


def test_a_seed_the_exclude_regex_refuses_is_never_asked_and_the_summary_says_so(tmp_path):
    run, records, _ = crawl_logged(tmp_path, SPEC, _seeds, EXCLUDE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    asked = asked_by_host(records)
    assert "h1.wreck.test" not in asked, asked["h1.wreck.test"]
    assert "/" in asked["h0.wreck.test"]
    assert "  seeds refused: 1 (--exclude or a URL filter refuses them: they are FILTERED, not crawled)" in (
        run.stdout.splitlines()), run.stdout[-3000:]
    assert "seed excluded 1" in run.stdout, run.stdout[-3000:]


def test_a_crawl_whose_every_seed_is_excluded_says_nothing_was_admitted_and_exits_3(tmp_path):
    run, records, _ = crawl_logged(tmp_path, SPEC, lambda port: _seeds(port)[1:], EXCLUDE)
    assert run.returncode == EXIT_NOTHING_FETCHED, run.stdout[-3000:] + run.stderr[-3000:]
    assert not records, records
    assert run.stderr.splitlines()[-1].startswith(
        "wreck-crawl: no seed was admitted: 1 URL(s) refused (seed excluded 1): nothing to crawl"), run.stderr
