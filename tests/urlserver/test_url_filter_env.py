"""--url-filter-cmd runs without the crawl's secret in its environment
(issue 14, finding 10): the command judges URLs, it never needs it."""

from __future__ import annotations

import asyncio

from wreck.urlserver.urlfilter import ExternalFilter


def test_the_url_filter_command_does_not_inherit_wreck_secret(monkeypatch):
    monkeypatch.setenv("WRECK_SECRET", "s3cret-value")
    # The command drops a URL holding the secret's value, if it can see it.
    command = 'exec grep --line-buffered -v -e "${WRECK_SECRET:-no secret in this environment}"'

    async def main():
        f = await ExternalFilter.start(command, timeout=30.0)
        try:
            return await f.keep(["http://a.test/s3cret-value", "http://a.test/other"])
        finally:
            await f.close()

    assert asyncio.run(main()) == {"http://a.test/s3cret-value", "http://a.test/other"}
