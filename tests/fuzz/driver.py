# The engine every fuzz target here runs under. With atheris installed (and
# not --plain) it hands the target to libFuzzer, coverage-guided; without it,
# a plain-Python driver mutates the target's seed inputs at random (bit
# flips, inserted tokens, deleted and repeated ranges, splices of two seeds)
# and calls the target on each. Either way a crash is an exception other
# than the one the target declares acceptable; the plain driver saves each
# crashing input under the crash directory and keeps going, libFuzzer stops
# at the first one (see README.md).
"""Run a fuzz target: atheris when available, else a mutation driver."""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

Target = Callable[[bytes], None]

# Tokens a mutation may insert: the words, separators and boundary numbers
# of both protocols, where decoders branch.
TOKENS = (
    b" ", b"\n", b"\r", b"\x00", b"=", b"%", b"%0A", b"%ZZ", b"0", b"00", b"1", b"-1",
    b"4294967295", b"4294967296", b"9223372036854775807", b"9223372036854775808",
    b"99999999999999999999", b"GET ", b"DONE ", b"WORKING ", b"IDLE ", b"CANCEL ",
    b"BYE ", b"ERROR ", b"ERROR auth ", b"SET ", b"READY\n", b"WELCOME ", b"WRECK/1 ",
    b"WRECK/2 ", b"HELLO ", b"AUTH ", b"body=", b"new=", b"retry=", b"reason=",
    b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x7f\xff\xff\xff", b"\xc3\xbc", b"\xed\xa0\x80",
    b"\xc2\x85", b"[::1]", b"::ffff:127.0.0.1", b"http://", b"A\x00\x00\x00", b"N", b"E",
)
MAX_INPUT = 64 * 1024  # the plain driver never builds a longer input


def mutate(data: bytes, seeds: Sequence[bytes], rng: random.Random) -> bytes:
    """One to eight random edits of `data`."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:  # set a byte
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 2:  # insert a token
            buf[pos:pos] = rng.choice(TOKENS)
        elif op == 3 and buf:  # delete a range
            end = min(len(buf), pos + rng.randint(1, 16))
            del buf[pos:end]
        elif op == 4 and buf:  # repeat a range
            start = rng.randrange(len(buf))
            piece = buf[start : start + rng.randint(1, 64)]
            buf[pos:pos] = piece * rng.randint(1, 8)
        elif op == 5:  # splice in part of another seed
            other = rng.choice(seeds)
            start = rng.randint(0, len(other))
            buf[pos:pos] = other[start : start + rng.randint(1, 256)]
        elif op == 6:  # random bytes
            buf[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif op == 7 and buf:  # cut
            del buf[pos:]
    return bytes(buf[:MAX_INPUT])


def plain(target: Target, seeds: Sequence[bytes], *, seconds: float, runs: int, crashes: Path, seed: int) -> int:
    """Mutation driver; returns the number of distinct crashes found."""
    rng = random.Random(seed)
    pool = list(seeds)
    found: dict[str, Path] = {}
    start = time.monotonic()
    n = 0
    for data in seeds:  # the seeds themselves must pass
        _run_one(target, data, found, crashes)
    while (runs and n < runs) or (not runs and time.monotonic() - start < seconds):
        data = mutate(rng.choice(pool), seeds, rng)
        n += 1
        _run_one(target, data, found, crashes)
        if len(pool) < 256 and rng.random() < 0.01:  # keep a few mutants to stack edits
            pool.append(data)
    elapsed = time.monotonic() - start
    print(f"plain driver: {n} executions in {elapsed:.0f} s ({n / max(elapsed, 1e-9):.0f}/s), "
          f"{len(found)} distinct crashes", flush=True)
    for where, path in found.items():
        print(f"  crash at {where}: input saved as {path}")
    return len(found)


def _run_one(target: Target, data: bytes, found: dict[str, Path], crashes: Path) -> None:
    try:
        target(data)
    except Exception as exc:  # noqa: BLE001 - any exception escaping a target is a crash
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{type(exc).__name__} {Path(frame.filename).name}:{frame.lineno}"
        if where not in found:
            crashes.mkdir(parents=True, exist_ok=True)
            path = crashes / f"crash-{hashlib.sha1(data).hexdigest()}"
            path.write_bytes(data)
            found[where] = path
            print(f"CRASH {where}: {exc!r}\n{traceback.format_exc()}", file=sys.stderr, flush=True)


def main(name: str, target: Target, seeds: Sequence[bytes], argv: list[str] | None = None) -> int:
    """Command line of every target: `python -m tests.fuzz.NAME [--plain] [--seconds N]`."""
    ap = argparse.ArgumentParser(prog=f"python -m tests.fuzz.{name}", description=f"Fuzz the {name} decoder.")
    ap.add_argument("--plain", action="store_true", help="use the mutation driver even if atheris is installed")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to run (default 60)")
    ap.add_argument("--runs", type=int, default=0, help="stop after this many executions instead")
    ap.add_argument("--workdir", type=Path, default=Path(".fuzz"), help="corpus and crashes go under WORKDIR/NAME/")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the plain driver")
    args, extra = ap.parse_known_args(argv)
    work = args.workdir / name
    crashes = work / "crashes"
    if not args.plain:
        try:
            import atheris
        except ImportError:
            print("atheris is not installed: using the plain mutation driver", file=sys.stderr)
        else:
            corpus = work / "corpus"
            corpus.mkdir(parents=True, exist_ok=True)
            crashes.mkdir(parents=True, exist_ok=True)
            for data in seeds:
                (corpus / f"seed-{hashlib.sha1(data).hexdigest()}").write_bytes(data)
            limit = [f"-runs={args.runs}"] if args.runs else [f"-max_total_time={int(args.seconds)}"]
            atheris.instrument_all()
            atheris.Setup([sys.argv[0], *limit, f"-artifact_prefix={crashes}/", f"-max_len={MAX_INPUT}",
                           "-print_final_stats=1", *extra, str(corpus)], target)
            atheris.Fuzz()
            return 0
    return 1 if plain(target, seeds, seconds=args.seconds, runs=args.runs, crashes=crashes, seed=args.seed) else 0
