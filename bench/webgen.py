# The benchmark's web: HOSTS hosts of PAGES/HOSTS static pages each, written
# once to disk (cached by its parameters, so a second run reuses it) and
# served by nginx from a generated nginx.conf.
#
# Host i is w<i>.bench.test on 127.1.x.y (HOSTS_PER_IP names share an
# address, so per-IP politeness and name-based vhosts both matter). Each
# page is 10-60 KB of HTML: a per-host template (head, menu, footer) around
# paragraphs drawn from a pool of English-like text, with 30-100 links: most
# to pages of the same host, about one in ten to a page of another host, and
# one to /cgi-bin/ which robots.txt disallows. One host in ten also
# disallows /p/9 (a tenth of its pages). Page k links to page k+1 as well,
# so every page is reachable from the host's root.
"""Generate the benchmark web on disk and its nginx configuration."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

DOMAIN = "bench.test"
HOSTS_PER_IP = 4
FIRST_IP = (127, 1)  # hosts live in 127.1.0.0/16
MIN_PAGE, MAX_PAGE = 10 * 1024, 60 * 1024
MIN_LINKS, MAX_LINKS = 30, 100
CROSS_HOST_SHARE = 0.1
DISALLOW_EVERY = 10  # one host in ten disallows /p/9
STAMP = "web.json"


@dataclass(frozen=True)
class Web:
    """Where a generated web lives and how to name its hosts."""

    root: Path
    hosts: int
    pages: int  # in all, over every host
    port: int
    seed: int = 7

    @property
    def per_host(self) -> int:
        return max(1, self.pages // self.hosts)

    def name(self, i: int) -> str:
        return f"w{i:04d}.{DOMAIN}"

    def ip(self, i: int) -> str:
        j = i // HOSTS_PER_IP
        return f"{FIRST_IP[0]}.{FIRST_IP[1]}.{j // 250}.{j % 250 + 1}"

    def base(self, i: int) -> str:
        return f"http://{self.name(i)}:{self.port}"

    def ips(self) -> list[str]:
        return sorted({self.ip(i) for i in range(self.hosts)})

    def disallows_p9(self, i: int) -> bool:
        return i % DISALLOW_EVERY == DISALLOW_EVERY - 1

    def allowed_paths(self, i: int) -> list[str]:
        """Every path of host i a polite crawler fetches (robots.txt first)."""
        paths = ["/robots.txt", "/"]
        for k in range(self.per_host):
            path = f"/p/{k}.html"
            if not (self.disallows_p9(i) and path.startswith("/p/9")):
                paths.append(path)
        return paths


_WORDS: list[str] = []
_PARAS: list[str] = []


def _pool(seed: int) -> None:
    rng = random.Random(seed)
    syll = "ka ther in ro ment al de tion ver ing for pro con ex com per sta ble mis ri an ow el la ne".split()
    common = "the of and to a in is that for it as was with be by on not he this are or his from at".split()
    words = common + ["".join(rng.choices(syll, k=rng.randint(1, 4))) for _ in range(3000)]
    weights = [1.0 / (r + 1) for r in range(len(words))]
    _WORDS[:] = words
    _PARAS[:] = ["<p>" + " ".join(rng.choices(words, weights, k=rng.randint(80, 220))) + ".</p>\n"
                 for _ in range(400)]  # fmt: skip


def _page(web: Web, i: int, k: int | None, rng: random.Random) -> str:
    """Page k of host i (None: the root)."""
    n_links = rng.randint(MIN_LINKS, MAX_LINKS)
    links = []
    if k is None:
        targets = list(range(min(n_links, web.per_host)))
        links = [f'<li><a href="/p/{t}.html">page {t}</a></li>' for t in targets]
    else:
        links.append(f'<li><a href="/p/{(k + 1) % web.per_host}.html">next</a></li>')
        links.append('<li><a href="/cgi-bin/search?q=x">search</a></li>')
        for _ in range(n_links - 2):
            if rng.random() < CROSS_HOST_SHARE and web.hosts > 1:
                h = rng.randrange(web.hosts)
                links.append(f'<li><a href="{web.base(h)}/p/{rng.randrange(web.per_host)}.html">elsewhere</a></li>')
            else:
                links.append(f'<li><a href="/p/{rng.randrange(web.per_host)}.html" class="x">more</a></li>')
    target = rng.randint(MIN_PAGE, MAX_PAGE)
    head = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{web.name(i)} {k}</title>"
            f"<link rel=\"stylesheet\" href=\"/static/site{i % 7}.css\"><meta name=\"description\" "
            f"content=\"page {k} of host {i}\"></head>\n<body><nav class=\"menu-{i}\"><ul>\n")  # fmt: skip
    parts = [head, "\n".join(links[: n_links // 2]), "</ul></nav>\n<article>\n"]
    size = sum(map(len, parts)) + 400
    while size < target:
        para = _PARAS[rng.randrange(len(_PARAS))]
        parts.append(para)
        size += len(para)
    parts += ["</article>\n<aside><ul>\n", "\n".join(links[n_links // 2 :]),
              f"</ul></aside><footer>&copy; host {i}</footer></body></html>\n"]  # fmt: skip
    return "".join(parts)


def _write_host(args: tuple[Web, int]) -> int:
    web, i = args
    if not _PARAS:
        _pool(web.seed)
    rng = random.Random(web.seed * 1_000_003 + i)
    top = web.root / "www" / web.name(i)
    (top / "p").mkdir(parents=True, exist_ok=True)
    robots = "User-agent: *\nDisallow: /cgi-bin/\n"
    if web.disallows_p9(i):
        robots += "Disallow: /p/9\n"
    (top / "robots.txt").write_text(robots)
    total = 0
    for k in [None, *range(web.per_host)]:
        body = _page(web, i, k, rng).encode()
        (top / ("index.html" if k is None else f"p/{k}.html")).write_bytes(body)
        total += len(body)
    return total


def generate(web: Web, *, procs: int = 2) -> dict:
    """Write the web under web.root unless a finished copy is there; its summary."""
    stamp = web.root / STAMP
    if stamp.exists():
        return json.loads(stamp.read_text())
    web.root.mkdir(parents=True, exist_ok=True)
    with Pool(procs) as pool:
        sizes = pool.map(_write_host, [(web, i) for i in range(web.hosts)], chunksize=4)
    summary = {"hosts": web.hosts, "pages": web.hosts * (web.per_host + 1), "bytes": sum(sizes),
               "ips": len(web.ips()), "seed": web.seed}  # fmt: skip
    stamp.write_text(json.dumps(summary))
    return summary


def warm(web: Web) -> float:
    """Read every file once so the page cache holds the web; seconds it took."""
    import time

    t0 = time.monotonic()
    for top, _dirs, files in os.walk(web.root / "www"):
        for name in files:
            with open(os.path.join(top, name), "rb") as f:
                while f.read(1 << 20):
                    pass
    return time.monotonic() - t0


def write_hosts_file(web: Web, path: Path) -> Path:
    path.write_text("".join(f"{web.ip(i)} {web.name(i)}\n" for i in range(web.hosts)))
    return path


def write_seeds(web: Web, path: Path) -> Path:
    path.write_text("".join(f"{web.base(i)}/\n" for i in range(web.hosts)))
    return path


def nginx_conf(web: Web, run: Path, *, workers: str = "1") -> Path:
    """nginx.conf under `run`: one server block per host, on its own address."""
    for sub in ("tmp", "logs"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    servers = "".join(
        f"  server {{ listen {web.ip(i)}:{web.port}; server_name {web.name(i)}; "
        f"root {web.root / 'www' / web.name(i)}; }}\n" for i in range(web.hosts))  # fmt: skip
    tmp = run / "tmp"
    conf = f"""# generated by bench/webgen.py
user root;
worker_processes {workers};
pid {run}/nginx.pid;
error_log {run}/logs/error.log warn;
worker_rlimit_nofile 20000;  # the hard limit here; open_file_cache stays well below it
events {{ worker_connections 16384; multi_accept on; }}
http {{
  log_format bench '$msec $server_addr $host $status $body_bytes_sent "$request_uri" "$http_user_agent"';
  access_log {run}/logs/access.log bench buffer=256k flush=1s;
  types {{ text/html html; text/plain txt; }}
  default_type application/octet-stream;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000; keepalive_timeout 120s;
  open_file_cache max=8000 inactive=120s;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server_names_hash_bucket_size 128; server_names_hash_max_size 65536;
{servers}}}
"""
    path = run / "nginx.conf"
    path.write_text(conf)
    return path
