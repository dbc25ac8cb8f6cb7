# `make demo`: the local test web on 127.x addresses, one wreck-crawl of it
# into ./demo-data, then a look at what was stored with wreck-dump. Names
# resolve through the test web's own DNS responder and hosts file, so the
# demo never sends a packet beyond loopback.
"""python -m tests.web.demo [--data DIR]: crawl the local test web and show it."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from wreck.local.layout import Layout

from .crawlhint import QUICK_DELAY, crawl_command
from .server import RunningWeb
from .spec import SiteSpec

BIN = Path(sys.executable).parent


def _run(args: list[str], title: str) -> str:
    print(f"\n$ {' '.join(args)}    # {title}", flush=True)
    out = subprocess.run(args, capture_output=True, text=True)
    text = out.stdout if out.returncode == 0 else out.stderr
    print(text.rstrip()[:1500], flush=True)
    return out.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="demo-data", help="where the crawl goes (emptied first)")
    parser.add_argument("--hosts", type=int, default=8, help="hosts in the test web")
    parser.add_argument("--pages", type=int, default=25, help="pages per host")
    opts = parser.parse_args()
    data = Path(opts.data)
    foreign = Layout(data).foreign()
    if foreign or data.exists() and not data.is_dir():  # emptied first: only a crawl's directory (--data . or ~)
        print(f"demo: --data {data} is not a crawl's directory ({', '.join(foreign[:3]) or 'a file'}): "
              f"not emptying it; give another", file=sys.stderr)
        return 2
    shutil.rmtree(data, ignore_errors=True)
    with RunningWeb(SiteSpec(hosts=opts.hosts, pages_per_host=opts.pages), log_path=None) as web:
        hosts_file = web.write_hosts_file(data.parent / f".{data.name}-hosts")
        seeds = [web.url(name) for name in sorted(web.site.hosts) if name.startswith("h")][:2]
        dns_ip, dns_port = web.dns_address
        print(f"Local test web: {len(web.site.hosts)} hosts on 127.x addresses, port {web.port}; "
              f"seeds {' '.join(seeds)}", flush=True)  # fmt: skip
        crawl = [  # what `python -m tests.web` tells a newcomer to run, and quick retries
            *crawl_command(seeds, str(hosts_file), f"{dns_ip}:{dns_port}", data=str(data),
                           program=str(BIN / "wreck-crawl"), delay=QUICK_DELAY),
            "--scope", "any", "--robots-retry", "1", "--retry-delay", "1", "--max-retries", "2",
        ]  # fmt: skip
        print(f"\n$ {' '.join(crawl)}", flush=True)
        code = subprocess.call(crawl)
        if code != 0:
            return code
    dump = str(BIN / "wreck-dump")
    lines = _run([dump, "--data", str(data), "--all", "--jsonl"], "every document's metadata, first lines")
    docs = [json.loads(line) for line in lines.splitlines()]
    page = next((d for d in docs if d.get("success") and d["url"].endswith(".html")), docs[0] if docs else None)
    if page:
        _run([dump, str(page["doc_id"]), "--data", str(data), "--json", "--no-body"], "one document's record")
        _run([dump, str(page["doc_id"]), "--data", str(data), "--text"], "its main text")
    print(f"\nThe crawl is in {data}/. Try: {dump} --data {data} --all --warc demo.warc.gz", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
