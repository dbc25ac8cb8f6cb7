"""A full disk at a clean stop: the urlserver of a completed crawl cannot
write its seen-set file (seen.bloom, only a start-up speed-up), says so in
one line and still exits 0 with its final figures, no traceback; the next
start on the same --data rebuilds the seen-set from the committed state.

The full disk is injected (SeenSet.save raises ENOSPC in the daemon, which
runs as a subprocess the way wreck-crawl starts it), so no real disk fills;
then, as root, on a real full disk (a small tmpfs this test mounts)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from tests.urlserver_helpers import FakeSpider, fetched, not_found
from tests.web import write_hosts_file
from wreck.urlserver import seen
from wreck.urlserver.cli import FINISHED_LINE
from wreck.urlserver.frontier import SEEN_FILE

HOSTS = {"h0.test": "127.0.9.1"}
# The daemon with its seen-set write failing as on a full disk.
FULL_DISK_URLSERVER = """
import errno, sys
from wreck.urlserver import seen, cli
def full(self, path, stamp):
    open(path + ".tmp", "wb").close()  # a partial file, as a write cut short leaves
    raise OSError(errno.ENOSPC, "No space left on device")
seen.SeenSet.save = full
sys.argv[0] = "urlserver"
cli.main()
"""


def _command(tmp_path, *code: str) -> list[str]:
    hosts = write_hosts_file(HOSTS, tmp_path / "hosts")
    return [sys.executable, *code, "http://h0.test/", "--data", str(tmp_path / "data"),
            "--listen", "127.0.0.1:0", "--http", "off", "--hosts", str(hosts), "--allow-net", "127.0.0.0/8",
            "--delay", "0", "--scope", "any", "--exit-when-done"]


async def _crawl(cmd: list[str]) -> tuple[int, str, str]:
    """Run the urlserver with a fake spider until the crawl ends: exit code, stdout, stderr."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
    host, _, port = line.split()[-1].rpartition(":")

    def respond(a):
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        return fetched(a, "http://h0.test/a") if a.url == "http://h0.test/" else fetched(a)

    spider = FakeSpider((host, int(port)), respond=respond)
    await spider.start()
    out, err = await asyncio.get_running_loop().run_in_executor(None, lambda: proc.communicate(timeout=60))
    await spider.close()
    return proc.returncode, out, err


def test_a_full_disk_at_a_clean_stop_ends_a_completed_crawl_with_exit_0_and_one_line(tmp_path):
    code, out, err = asyncio.run(_crawl(_command(tmp_path, "-c", FULL_DISK_URLSERVER)))
    assert code == 0, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "seen-set not saved" in line]
    assert len(lines) == 1 and "No space left on device" in lines[0]
    assert FINISHED_LINE in out  # the final figures, after the last commit
    data = tmp_path / "data"
    assert not (data / SEEN_FILE).exists() and not (data / f"{SEEN_FILE}.tmp").exists()

    # Space is back: the next run starts from the committed state, rebuilding the seen-set
    # (both pages are fetched: it is done at once, no spider needed, and this time the file is written).
    done = subprocess.run(_command(tmp_path, "-m", "wreck.urlserver.cli"), capture_output=True, text=True,
                          timeout=60)
    code, out, err = done.returncode, done.stdout, done.stderr
    assert code == 0, err
    assert '"FETCHED":2' in out.replace(" ", "")
    assert (data / SEEN_FILE).exists()


def test_a_really_full_disk_at_a_clean_stop(tmp_path):
    """The same on a real full disk (a small tmpfs filled with ballast once
    the crawl is committed and idle), stopped with SIGTERM as wreck-crawl does:
    the seen-set's file took its blocks when the crawl began (seen.py), so
    the stop marks it clean without a line and the next start loads it."""
    import signal


    from tests.e2e_helpers import url_states
    from tests.disk_helpers import SMALL_DISK, fill as _fill, small_tmpfs
    from wreck.urlserver.urlstate import UrlState

    with small_tmpfs(tmp_path / "small", SMALL_DISK) as mnt:
        cmd = _command(tmp_path, "-m", "wreck.urlserver.cli")
        cmd[cmd.index("--data") + 1] = str(mnt / "data")
        cmd.remove("--exit-when-done")  # runs until stopped, as a continuous crawl does

        async def main():
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
            host, _, port = line.split()[-1].rpartition(":")
            spider = FakeSpider((host, int(port)), respond=lambda a: not_found(a) if a.url.endswith(
                "/robots.txt") else fetched(a))
            await spider.start()
            async with asyncio.timeout(30):
                while url_states(mnt / "data").get("http://h0.test/") is None or \
                        url_states(mnt / "data")["http://h0.test/"].state != UrlState.FETCHED:
                    await asyncio.sleep(0.05)
            await spider.close()
            _fill(mnt)
            proc.send_signal(signal.SIGTERM)
            out, err = await asyncio.get_running_loop().run_in_executor(None, lambda: proc.communicate(timeout=60))
            return proc.returncode, out, err

        code, out, err = asyncio.run(main())
        assert "Traceback" not in err
        assert code == 0, err
        assert not any("seen-set not saved" in line for line in err.splitlines())
        assert FINISHED_LINE in out
        with open(mnt / "data" / SEEN_FILE, "rb") as fh:
            assert seen.HEADER.unpack(fh.read(seen.HEADER.size))[3] == seen.CLEAN  # whole, as of the stop
