"""wreck-crawl's child processes (wreck/local/children.py)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from wreck.local.children import Child

MANY_FDS = 1100  # past select()'s FD_SETSIZE of 1024


def test_a_child_is_read_even_when_the_parent_holds_over_1024_descriptors(tmp_path):
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < MANY_FDS + 100:
        pytest.skip(f"the descriptor limit ({soft}) is below {MANY_FDS + 100}")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(MANY_FDS)]
    try:
        child = Child("calendar", "calendar", ["2026", "1"], tmp_path / "calendar.log")  # any module that prints
        assert child.proc.stdout.fileno() > 1024
        assert child.read_line("    January ") == "2026"
        child.proc.wait(30)
    finally:
        for fd in held:
            os.close(fd)



# A daemon that writes 300 KiB to stderr in lines of 1 KiB, then exits 0.
NOISY = "import sys\nfor i in range(300):\n    sys.stderr.write(f'{i:08d} ' + 'x' * 1014 + '\\n')\n"
BOUND = 64 << 10


def test_a_child_s_log_rotates_past_its_bound_keeping_a_few_old_files(tmp_path):
    from wreck.local.logfile import RotatingLog

    (tmp_path / "noisy.py").write_text(NOISY)
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "noisy.log"
    child = Child("noisy", "noisy", [], log, {**os.environ, "PYTHONPATH": str(tmp_path)},
                  log_file=RotatingLog(log, max_bytes=BOUND, backups=2))
    assert child.proc.wait(30) == 0
    assert "00000299 " in child.tail()  # the last line is in the live log, once copied
    files = sorted(p.name for p in logs.iterdir())
    assert files == ["noisy.log", "noisy.log.1", "noisy.log.2"]  # two old files kept, older ones dropped
    for name in files:
        assert 0 < (logs / name).stat().st_size <= BOUND
        assert (logs / name).stat().st_mode & 0o777 == 0o600  # logs name URLs and peers
    kept = b"".join((logs / name).read_bytes() for name in reversed(files))
    assert kept.endswith(b"00000299 " + b"x" * 1014 + b"\n")
    first = int(kept[:8])
    # each 1 KiB line is one write, atomic on a pipe (below PIPE_BUF): files start on a line
    assert kept == b"".join(b"%08d " % i + b"x" * 1014 + b"\n" for i in range(first, 300))  # nothing lost within


def test_a_log_write_that_fails_is_dropped_and_the_copy_goes_on(tmp_path):
    """A full disk under the logs must not stop the copy: the child would block on its stderr."""
    from wreck.local.logfile import RotatingLog

    log = RotatingLog(tmp_path / "gone" / "x.log")  # its directory is missing: every write fails
    log.write(b"a line\n")
    log.write(b"another\n")
    assert log.dropped == len(b"a line\nanother\n")
    (tmp_path / "gone").mkdir()  # space is back
    log.write(b"written\n")
    assert (tmp_path / "gone" / "x.log").read_bytes() == b"written\n"


# A daemon that, told to stop, says a last word on stderr after a deal of
# work (its batch drained, its last commit), then exits.
LAST_WORDS = """import os, signal, sys
def stop(*_):
    sys.stderr.write(''.join(f'{i:08d} draining\\n' for i in range(200_000)))  # more than the pipe holds
    sys.stderr.write('stopped cleanly\\n')
    sys.stderr.flush()
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
print('ready', flush=True)
signal.pause()
"""


def test_a_stopped_childs_last_words_are_in_its_log_when_stop_returns(tmp_path):
    # wreck-crawl exits at once after its summary (cli._exit_at_once): what
    # a daemon said while stopping must be in its log by then, not in a pipe
    (tmp_path / "lastwords.py").write_text(LAST_WORDS)
    log = tmp_path / "lastwords.log"
    child = Child("lastwords", "lastwords", [], log, {**os.environ, "PYTHONPATH": str(tmp_path)})
    assert child.read_line("ready") == ""
    assert child.stop() == 0
    assert log.read_bytes().endswith(b"00199999 draining\nstopped cleanly\n")


# What an ordinary exit owes, kept by wreck-crawl's exit at once: output still
# in a buffer, the exit handlers, a thread that is not a daemon, the code.
EXIT_AT_ONCE = """import atexit, sys, threading
from wreck.local.cli import _exit_at_once
atexit.register(lambda: print('exit handler ran'))
worker = threading.Thread(target=lambda: print('thread finished its work'))
sys.stdout.write('summary, still buffered; ')
worker.start()
_exit_at_once(3)
"""


def test_wreck_crawls_exit_at_once_keeps_what_an_ordinary_exit_owes(tmp_path):
    done = subprocess.run([sys.executable, "-c", EXIT_AT_ONCE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "summary, still buffered; " in done.stdout
    assert "thread finished its work" in done.stdout and "exit handler ran" in done.stdout
    assert done.stdout.index("thread finished its work") < done.stdout.index("exit handler ran")  # as Python orders them
