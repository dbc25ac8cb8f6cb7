"""The plugin API and the external URL filter, without sockets: plugins are
found through entry points, their hooks called with what docs/plugins.md
promises, a failing one disabled and counted; the filter command's batch
protocol holds with real Unix tools, and a command that dies, hangs or
rewrites lines is disabled without losing the crawl."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import msgspec
import pytest

from tests.plugin_helpers import install_test_plugins
from wreck.urlserver.urlfilter import EXTERNAL, ExternalFilter, FilterFailed, UrlFilter
from wreck.plugins import DOCUMENT, STATS, URL_FILTER, PluginError, Plugins, UrlContext

URLS = [f"http://h{i % 3}.test/{'private/' if i % 4 == 0 else ''}page-{i}.html" for i in range(40)]


@pytest.fixture
def test_plugins(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_test_plugins(tmp_path / "site")))
    import importlib

    importlib.invalidate_caches()
    yield
    sys.modules.pop("wreck_test_plugins", None)


def test_the_shipped_plugins_are_listed_with_their_hooks():
    out = subprocess.run([sys.executable, "-m", "wreck.urlserver.cli", "--list-plugins"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "pattern" in out and "url_filter" in out
    assert "jsonl-report" in out and "stats" in out


@pytest.mark.parametrize("daemon", ["wreck.urlserver.cli", "wreck.storeserver.cli"])
def test_a_daemon_given_an_unknown_plugin_stops_at_once_with_a_clear_message(daemon, tmp_path):
    run = subprocess.run([sys.executable, "-m", daemon, "--data", str(tmp_path), "--listen", "127.0.0.1:0",
                          "--plugin", "nope"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "no plugin named 'nope'" in run.stderr and "pattern" in run.stderr


def test_an_unknown_plugin_is_a_clear_error_naming_the_installed_ones():
    with pytest.raises(PluginError, match="no plugin named 'nope'.*pattern"):
        Plugins(["nope"], hooks=(URL_FILTER,))


def test_a_process_loads_only_plugins_with_a_hook_it_runs(tmp_path):
    report = tmp_path / "report.jsonl"
    store_side = Plugins([f"jsonl-report={report}"], hooks=(DOCUMENT,))
    assert store_side.status()["enabled"] == []
    url_side = Plugins([f"jsonl-report={report}"], hooks=(URL_FILTER, STATS))
    url_side.stats({"urls": {"FETCHED": 3}})
    url_side.stats({"urls": {"FETCHED": 5}})
    url_side.close()
    lines = [msgspec.json.decode(line) for line in report.read_bytes().splitlines()]
    assert [line["urls"]["FETCHED"] for line in lines] == [3, 5]


def test_the_pattern_plugin_drops_what_its_file_matches(tmp_path):
    patterns = tmp_path / "deny.txt"
    patterns.write_text("# private pages\n/private/\n\n\\.pdf$\n")
    plugins = Plugins([f"pattern={patterns}"], hooks=(URL_FILTER,))
    ctx = UrlContext("h0.test", 1, "http://h0.test/")
    assert plugins.url_reason("http://h0.test/private/x.html", ctx) == "plugin pattern"
    assert plugins.url_reason("http://h0.test/paper.pdf", ctx) == "plugin pattern"
    assert plugins.url_reason("http://h0.test/public.html", ctx) is None


def test_the_pattern_plugin_names_a_bad_line(tmp_path):
    patterns = tmp_path / "deny.txt"
    patterns.write_text("ok\n(unclosed\n")
    with pytest.raises(PluginError, match="line 2"):
        Plugins([f"pattern={patterns}"], hooks=(URL_FILTER,))


def test_a_url_filter_gets_the_host_depth_and_source(test_plugins):
    plugins = Plugins(["recorder=private"], hooks=(URL_FILTER,))
    ctx = UrlContext("h0.test", 2, "http://h0.test/a.html")
    assert plugins.url_reason("http://h0.test/private/1", ctx) == "plugin recorder"
    assert plugins.url_reason("http://h0.test/public/1", ctx) is None
    import wreck_test_plugins

    assert wreck_test_plugins.Recorder.seen[-1] == ("http://h0.test/public/1", ctx)


def test_a_raising_plugin_is_disabled_and_counted_and_the_others_go_on(test_plugins, caplog):
    plugins = Plugins(["raising", "wordcount"], hooks=(URL_FILTER, DOCUMENT, STATS))
    meta = {"content_type": "text/html", "http_code": 200}
    assert plugins.url_reason("http://h0.test/", UrlContext("h0.test", 0, None)) is None
    extra = msgspec.json.decode(plugins.document(meta, b"<p>three words here</p>"))
    assert extra == {"wordcount": {"words": 3, "status": 200}}
    plugins.stats({})
    assert plugins.status()["enabled"] == ["wordcount"]
    assert "raising" in plugins.status()["disabled"] and plugins.status()["errors"] == {"raising": 1}
    assert "plugin=raising" in caplog.text


def test_document_metadata_that_cannot_be_stored_disables_its_plugin(test_plugins):
    plugins = Plugins(["unstorable", "wordcount"], hooks=(DOCUMENT,))
    extra = plugins.document({"content_type": "text/html", "http_code": 200}, b"a b")
    assert msgspec.json.decode(extra) == {"wordcount": {"words": 2, "status": 200}}
    assert "unstorable" in plugins.status()["disabled"]


def test_grep_as_an_external_filter_keeps_what_it_prints():
    async def main():
        flt = await ExternalFilter.start("grep --line-buffered -v /private/", timeout=10)
        try:
            for _ in range(3):  # one long-lived process, batch after batch
                assert await flt.keep(URLS) == {u for u in URLS if "/private/" not in u}
            assert await flt.keep([]) == set()
            assert await flt.keep(["http://h0.test/private/only"]) == set()
        finally:
            await flt.close()

    asyncio.run(main())


def test_a_batch_larger_than_a_pipe_buffer_does_not_deadlock():
    many = [f"http://h.test/{'x' * 80}/{i}" for i in range(20_000)]  # about 2 MB each way

    async def main():
        flt = await ExternalFilter.start("cat", timeout=30)
        try:
            assert await flt.keep(many) == set(many)
        finally:
            await flt.close()

    asyncio.run(main())


# Only the hanging command meets its timeout; the others get one no loaded
# machine reaches, so their verdict never depends on how fast they start.
@pytest.mark.parametrize(("command", "why", "timeout"), [
    ("exit 3", "exit status 3", 30),
    ("sleep 30", "within 0.3 s", 0.3),
    ("sed -u s/h0/h9/", "not given", 30),
])  # fmt: skip
def test_a_command_that_dies_hangs_or_rewrites_lines_fails_clearly(command, why, timeout):
    async def main():
        flt = await ExternalFilter.start(command, timeout=timeout)
        try:
            with pytest.raises(FilterFailed, match=why):
                await flt.keep(URLS)
        finally:
            await flt.close()
        assert flt.proc.returncode is not None  # ended, even the one that hung

    asyncio.run(main())


def test_a_failed_command_is_disabled_reported_and_the_urls_kept(caplog):
    plugins = Plugins([], hooks=(URL_FILTER,))
    flt = UrlFilter(plugins, command="exit 3", timeout=5)

    async def main():
        await flt.start()
        return await flt.ask(URLS)

    answers = asyncio.run(main())
    assert answers == {}
    with flt.answering(answers):
        assert flt.reason(URLS[0], "h0.test", 1, None) is None
    assert flt.external is None
    assert plugins.status()["disabled"][EXTERNAL].startswith("closed its")
    assert plugins.status()["errors"] == {EXTERNAL: 1}
    assert "url_filter_cmd_disabled" in caplog.text


def test_the_answers_drop_what_the_command_did_not_print():
    plugins = Plugins([], hooks=(URL_FILTER,))
    flt = UrlFilter(plugins, command="grep --line-buffered -v /private/", timeout=10)

    async def main():
        await flt.start()
        try:
            return await flt.ask(URLS)
        finally:
            await flt.aclose()

    answers = asyncio.run(main())
    with flt.answering(answers):
        reasons = {u: flt.reason(u, "h", 1, None) for u in URLS}
    assert reasons == {u: EXTERNAL if "/private/" in u else None for u in URLS}
    assert flt.reason(URLS[0], "h", 1, None) is None  # outside answering(): no command, nothing to say


def test_one_round_trip_answers_a_whole_page_and_a_url_not_asked_is_kept_and_counted(tmp_path, caplog):
    counter = tmp_path / "batches"
    # counts the end-of-batch markers it sees, passes everything through
    command = f"while read -r line; do case $line in '#'*) echo x >> {counter};; esac; echo \"$line\"; done"
    plugins = Plugins([], hooks=(URL_FILTER,))
    flt = UrlFilter(plugins, command=command, timeout=10)
    caplog.set_level(logging.INFO, "urlserver")

    async def main():
        await flt.start()
        answers = await flt.ask(URLS)
        with flt.answering(answers):
            assert all(flt.reason(u, "h", 1, None) is None for u in URLS)
            assert flt.reason("http://elsewhere.test/redirect-target", "h", 1, None) is None
        await flt.aclose()

    asyncio.run(main())
    assert counter.read_text().count("x") == 1  # the page's batch; the stray URL was not sent
    assert flt.unasked == 1 and "event=url_filter_unasked url=http://elsewhere.test/redirect-target" in caplog.text
