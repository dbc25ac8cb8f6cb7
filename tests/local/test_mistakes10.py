"""Session 10's mistakes an operator makes (tests/local/test_mistakes.py has
issue 13's): a seeds file saved as UTF-16 or not text at all, a --data path
whose name is not UTF-8 or that is someone else's directory, a store that
cannot be opened; each is one line on stderr, a non-zero exit, no traceback,
nothing changed. And the stops that could hang: a forked daemon that will
not stop is waited for within its grace, and a stop signal while the
spider starts its workers leaves none running. Run as a user types them (a
subprocess), or, for the stops, on the objects wreck-crawl and the spider use."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wreck.deploy import SECRET_ENV
from wreck.local import fork
from wreck.spider import cli as spider_cli
from wreck.spider import worker

GOOD = "https://example.org/"
CRAWL = "wreck.local.cli"
URLSERVER = "wreck.urlserver.cli"
STORESERVER = "wreck.storeserver.cli"
NOT_UTF8 = os.fsdecode(b"crawl-\xff")  # a name a Latin-1 terminal may well type


def _run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, SECRET_ENV: "m10-" + "s" * 40}  # a daemon run by hand warns without one
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          errors="backslashreplace", timeout=120, stdin=subprocess.DEVNULL, env=env)


def _one_line(result: subprocess.CompletedProcess, *words: str, code: int = 2) -> str:
    lines = result.stderr.splitlines()
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + (result.stdout or "")
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("module", [CRAWL, URLSERVER])
def test_a_seeds_file_saved_as_utf16_is_named_as_such(tmp_path, module):
    (tmp_path / "seeds.txt").write_text(f"{GOOD}\nhttps://example.com/\n", encoding="utf-16")
    _one_line(_run(module, "--seeds", "seeds.txt", "--data", "crawl", "--http", "127.0.0.1:0", cwd=tmp_path),
              "seeds.txt is UTF-16 text", "save it as UTF-8")
    assert not (tmp_path / "crawl").exists()


@pytest.mark.parametrize("module", [CRAWL, URLSERVER])
def test_a_seeds_file_that_is_not_text_is_refused_without_quoting_it(tmp_path, module):
    (tmp_path / "seeds.gz").write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(256)))
    line = _one_line(_run(module, "--seeds", "seeds.gz", "--data", "crawl", "--http", "127.0.0.1:0", cwd=tmp_path),
                     "seeds.gz is not a text file")
    assert "\x00" not in line


@pytest.mark.parametrize("module,more", [(CRAWL, [GOOD]), (URLSERVER, ["--http", "off"]),
                                         (STORESERVER, ["--listen", "127.0.0.1:0"])])
def test_a_data_path_that_is_not_utf8_is_refused_in_one_line(tmp_path, module, more):
    """It used to kill wreck-crawl's forked daemons with a traceback (their
    process title), then the store in LMDB's open."""
    _one_line(_run(module, *more, "--data", NOT_UTF8, cwd=tmp_path), r"crawl-\xff", "not UTF-8")
    assert os.listdir(tmp_path) == []


def test_a_data_directory_holding_someone_elses_files_is_refused_and_left_as_it_was(tmp_path):
    """--data ~ or --data . would fill that directory and make it 0700."""
    mine = tmp_path / "photos"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    (mine / "holiday.jpg").write_bytes(b"\xff\xd8\xff")
    (mine / "notes.txt").write_text("mine\n")
    line = _one_line(_run(CRAWL, GOOD, "--data", "photos", cwd=tmp_path), "--data photos",
                     "holiday.jpg, notes.txt", "not a crawl's")
    assert "new or empty directory" in line
    assert sorted(os.listdir(mine)) == ["holiday.jpg", "notes.txt"]
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o755


def test_a_seeds_file_kept_in_the_data_directory_is_the_operators_own_not_someone_elses(tmp_path):
    """mkdir crawl; put seeds.txt in it; --data crawl --seeds crawl/seeds.txt: not refused."""
    data = tmp_path / "crawl"
    data.mkdir()
    (data / "seeds.txt").write_text("http://127.0.0.1:9/\n")
    result = _run(CRAWL, "--data", "crawl", "--seeds", "crawl/seeds.txt", "--allow-net", "127.0.0.0/8",
                  "--print-config", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "not a crawl's" not in result.stderr
    (data / "notes.txt").write_text("mine\n")  # anything else there is still someone else's
    _one_line(_run(CRAWL, "--data", "crawl", "--seeds", "crawl/seeds.txt", "--allow-net", "127.0.0.0/8",
                   cwd=tmp_path), "--data crawl", "notes.txt", "not a crawl's")


def test_a_store_that_cannot_be_opened_is_one_line_from_the_storeserver(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "store").write_text("not a directory\n")  # where the store keeps its LMDB
    _one_line(_run(STORESERVER, "--data", "data", "--listen", "127.0.0.1:0", cwd=tmp_path),
              "storeserver: cannot open the store", "Not a directory")


def test_a_daemon_that_dies_at_start_is_one_line_on_wreck_crawls_stderr_and_nothing_is_left(tmp_path):
    """The store cannot open its LMDB: wreck-crawl names the daemon, its last
    words and its log, exits 1, and stops the others (the spider was still
    starting its workers: none is left behind, and no stop waits for ever)."""
    data = tmp_path / "crawl"
    data.mkdir()
    (data / "store").write_text("not a directory\n")
    result = _run(CRAWL, "http://127.0.0.1:9/", "--allow-net", "127.0.0.0/8", "--data", "crawl", "--procs", "2",
                  cwd=tmp_path)
    line = _one_line(result, "storeserver exited (2) before starting", "cannot open the store", "its log: ",
                     code=1)
    assert "storeserver.log" in line
    assert result.stdout == ""


def _sleeper(tmp_path: Path) -> str:
    """A daemon command that will not stop on SIGTERM."""
    (tmp_path / "m10_sleeper.py").write_text(textwrap.dedent("""
        import signal, time
        def main():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print("sleeper ready", flush=True)
            time.sleep(300)
    """))
    return "m10_sleeper"


def test_a_forked_daemon_that_will_not_stop_is_waited_for_within_the_grace_then_killed(tmp_path, monkeypatch):
    """Forked.join(timeout) is bounded: multiprocessing's own join read the
    child's released sentinel as 'ended' and blocked in waitpid() for ever,
    so a daemon deaf to SIGTERM held wreck-crawl's stop (and its exit)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    child = fork.fork_daemon(_sleeper(tmp_path), [], dict(os.environ))
    try:
        assert child.stdout.readline() == b"sleeper ready\n"
        child.terminate()  # ignored
        child.join(0.2)  # returns: it has not ended
        assert child.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(0.1)
    finally:
        child.kill()
        child.join()
    assert child.returncode == -signal.SIGKILL


class _StopDuringStart(spider_cli.Supervisor):
    """A spider whose stop signal arrives as its first worker starts."""

    def _start(self, index: int) -> None:
        super()._start(index)
        if index == 0:
            self.stop()


def test_a_stop_signal_while_the_spider_starts_its_workers_leaves_none_running():
    options = [worker.WorkerOptions("127.0.0.1:9", b"", f"m10-{i}", 1) for i in range(3)]
    supervisor = _StopDuringStart(options, 40)
    assert supervisor.run() == 0
    assert [p.name for p in supervisor.procs.values() if p.is_alive()] == []
    assert len(supervisor.procs) == 1  # the workers after the signal were never started


DUMP = "wreck.storeserver.dump"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store of 300 documents, 2 KB each."""
    from tests.store_helpers import filled_store, make_record

    return filled_store(tmp_path_factory.mktemp("store"), [make_record(i) for i in range(1, 301)])


def _dump(store: Path, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", DUMP, "--data", str(store), *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def test_wreck_dump_into_a_closed_pipe_exits_quietly(store):
    """`wreck-dump --all --jsonl | head -1`, as Unix tools do."""
    done = subprocess.run(f"{sys.executable} -m {DUMP} --data {store} --all --jsonl | head -1; "
                          "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.startswith('{"doc_id":1,') and done.stdout.count("\n") == 1
    assert done.stderr == "" and done.returncode == 0


@pytest.mark.parametrize("args", [["--all", "--jsonl"], ["--all", "--warc", "-"], ["1", "--json"]])
def test_wreck_dump_to_a_full_disk_says_so_in_one_line(store, args):
    with open("/dev/full", "wb") as full:
        _one_line(_dump(store, *args, stdout=full), "wreck-dump: cannot write standard output",
                  "No space left on device", code=1)


def test_wreck_dump_to_a_file_it_cannot_write_names_it(store, tmp_path):
    for flag, name in (("--warc", "x.warc.gz"), ("--parquet", "x.parquet"), ("--wacz", "x.wacz")):
        target = str(tmp_path / "missing" / name)
        _one_line(_dump(store, "--all", flag, target), f"wreck-dump: cannot write {target}", code=1)
    _one_line(_dump(store, "--all", "--warc", "/dev/full"), "cannot write /dev/full", "No space left", code=1)


@pytest.mark.parametrize("flag", ["--parquet", "--wacz"])
def test_an_export_never_replaces_a_device_a_fifo_or_a_directory(store, tmp_path, flag):
    """--parquet /dev/full wrote /dev/full.part and renamed it over the
    device (a FIFO here: the same kind of file, and no harm if it regresses)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _one_line(_dump(store, "--all", flag, str(fifo)), f"{flag} {fifo} is not a regular file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    (tmp_path / "out").mkdir()
    _one_line(_dump(store, "--all", flag, str(tmp_path / "out")), "is not a regular file")
    assert (tmp_path / "out").is_dir()


@pytest.fixture
def taken_port():
    """A port another program listens on."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


@pytest.mark.parametrize("module,flag,more", [
    (URLSERVER, "--listen", ["--http", "off", GOOD]),
    (URLSERVER, "--http", ["--listen", "127.0.0.1:0", GOOD]),
    (STORESERVER, "--listen", []),
    (STORESERVER, "--http", ["--listen", "127.0.0.1:0"]),
])
def test_a_daemon_told_to_listen_on_a_taken_port_says_which_flag_in_one_line(tmp_path, taken_port, module, flag,
                                                                             more):
    result = _run(module, "--data", "state", flag, f"127.0.0.1:{taken_port}", *more, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    mine = [line for line in result.stderr.splitlines() if not line.startswith("20")]  # its log lines aside
    assert mine == [f"{module.split('.')[1]}: {flag} 127.0.0.1:{taken_port}: cannot listen (Address already in use)"]


def test_a_spider_pointed_at_a_server_that_says_nothing_is_told_it_may_not_be_wrecks(monkeypatch):
    """An HTTP server waits for a request: the handshake times out, and the
    line said "cannot connect ()" (TimeoutError is an OSError)."""
    from wreck.protocol import Role, StoreConnection
    from wreck.spider import peer

    monkeypatch.setattr(peer, "HANDSHAKE_TIMEOUT_S", 0.2)

    async def attempt(port: int) -> str:
        with pytest.raises(peer.PeerError) as failed:
            await peer.open_peer("127.0.0.1", port, StoreConnection(Role.CLIENT, secret=b"", nonce=b"n" * 32),
                                 f"store 127.0.0.1:{port}")
        return str(failed.value)

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        said = asyncio.run(attempt(port))
    assert said.startswith(f"store 127.0.0.1:{port}: no handshake within 0.2 s"), said
    assert "WRECK server" in said


def test_ctrl_c_while_a_command_imports_ends_it_quietly(tmp_path):
    """The installed commands import with SIGINT at its default
    (wreck/entry.py): a Ctrl-C then ends them as it ends any Unix tool, where
    it printed a KeyboardInterrupt traceback from inside some import."""
    (tmp_path / "m10_interrupted.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
                                                 "def main():\n    print('ran')\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from wreck.entry import _main; "
                           f"sys.path.insert(0, {str(tmp_path)!r}); _main('m10_interrupted')"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "", "")


def test_every_installed_command_goes_through_the_quiet_entry_points():
    from importlib.metadata import entry_points

    from wreck import entry

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts") if ep.value.startswith("wreck.")}
    assert set(scripts) >= {"wreck-crawl", "urlserver", "spider", "storeserver", "wreck-dump"}
    for name, value in scripts.items():
        module, _, func = value.partition(":")
        assert module == "wreck.entry" and callable(getattr(entry, func)), (name, value)


@pytest.mark.parametrize("seed,meant", [("http://2001:db8::1/", "http://[2001:db8::1]/"),
                                        ("2001:db8::1", "https://[2001:db8::1]/"),
                                        ("http://::1/page", "http://[::1]/page")])
def test_an_ipv6_seed_without_brackets_gets_the_url_it_means(tmp_path, seed, meant):
    """It was 'not a URL', with no hint."""
    _one_line(_run(CRAWL, seed, "--data", "crawl", cwd=tmp_path), "an IPv6 address goes in brackets",
              f"did you mean {meant}?")


def test_make_demo_never_empties_a_directory_that_is_not_a_crawls(tmp_path):
    """The demo empties its --data first: `--data .` deleted the checkout."""
    (tmp_path / "precious.txt").write_text("mine\n")
    done = subprocess.run([sys.executable, "-m", "tests.web.demo", "--data", str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2 and "not a crawl's directory (precious.txt)" in done.stderr, done.stderr
    assert (tmp_path / "precious.txt").read_text() == "mine\n"


@pytest.mark.parametrize("module,more", [(CRAWL, []), (URLSERVER, ["--http", "off"])])
def test_a_hosts_file_that_is_missing_is_one_line_before_the_start(tmp_path, module, more):
    """The urlserver read it once started: its FileNotFoundError traceback."""
    _one_line(_run(module, GOOD, *more, "--data", "crawl", "--hosts", "gone.txt", cwd=tmp_path), "--hosts gone.txt",
              "o such file")


@pytest.mark.parametrize("module,more", [(CRAWL, []), (URLSERVER, ["--http", "off"])])
@pytest.mark.parametrize("dns", ["nowhere", "127.0.0.1", "ns.example:53"])
def test_a_dns_that_is_not_ip_port_is_one_line_before_the_start(tmp_path, module, more, dns):
    """It was the urlserver's ValueError traceback (int('nowhere'))."""
    _one_line(_run(module, GOOD, *more, "--data", "crawl", "--dns", dns, cwd=tmp_path), f"--dns {dns!r} is not IP:PORT")
