# Running a command line so that a usage mistake (an unknown flag, a count
# that is not a number, a value below a typer bound) is one line on stderr
# and exit 2, like every other refusal before a start (issue 13), instead of
# click's framed usage box. Click's own non-standalone mode raises the
# UsageError here; --help, typer.Exit and Ctrl-C keep their meaning.
"""One-line usage errors for the WRECK commands."""

from __future__ import annotations

import sys

import typer

try:  # typer vendors click from 0.2x on: its exceptions are its own classes
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - an older typer on plain click
    from click import ClickException, UsageError

EXIT_USAGE = 2  # click's own code for a usage error
EXIT_INTERRUPTED = 130  # 128 + SIGINT


def main(app: typer.Typer, name: str) -> None:
    """Run `app` as the `name` command; exits with its code."""
    try:
        code = app(standalone_mode=False, prog_name=name)
    except UsageError as exc:
        hint = f" (see {name} --help)"
        print(f"{name}: {exc.format_message()}{hint}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(EXIT_INTERRUPTED)
    except ClickException as exc:
        print(f"{name}: {exc.format_message()}", file=sys.stderr)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
