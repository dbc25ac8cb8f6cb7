# `make bench-realdocs` / `python -m bench.realdocs`: WRECK against wget on
# real documentation sites written by others (issue 16), side by side in one
# run. The web is Debian's documentation packages (installed on demand),
# each tree served by nginx on loopback under its own host name and
# address (TREES below: Sphinx, Doxygen, Javadoc, gtk-doc and DocBook,
# AsciiDoc; no MediaWiki tree is packaged). The page cache is warmed, then:
#
#   wget   wget --recursive --level=inf --no-parent from each tree's start
#          page (robots.txt obeyed, one host at a time, as wget does); the
#          names reach nginx through wget's proxy setting pointed at nginx
#          itself (an absolute request URI selects nginx's server block),
#          so no resolver is involved;
#   wreck  wreck-crawl from the same start pages at its defaults but
#          --delay 0 (wget's default: no wait), names from a hosts file,
#          --allow-net for loopback.
#
# WRECK's own modules are compiled to bytecode first, as an installed WRECK
# has them (pip compiles at install): an editable install run with
# PYTHONDONTWRITEBYTECODE=1, as on the session machines, would otherwise
# compile the 120 modules a crawl loads at every start (0.2 CPU-s of
# wreck-crawl's; --no-compile leaves them as they are).
#
#   startup  (--only ...,startup) wreck-crawl of one page without links,
#          --startup-runs times: its fixed costs (wall, CPU of the tree and
#          per component, time from the command to its first request).
#
# Per system: pages, wall time, CPU seconds of its whole process tree
# (reaped children's rusage, and per WRECK component from /proc), and from
# nginx's access log, per host, the gap from the end of one response to
# the next request. Coverage: every HTML page wget saved must be stored by
# WRECK under the same URL with the same body, byte for byte. Results go to
# bench/results/<date>-realdocs.json.
"""Real documentation sites: WRECK vs wget, pages, time, CPU, coverage."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from .crawl import (
    BIN, RESULTS, cpu_figures, ensure_nginx, log, run_bounded, stop_group, wait_listening, wreck_classifier,
)  # fmt: skip

# (host name, Debian package, served directory, start page, what wrote it)
TREES = (
    ("python.docs.test", "python3.11-doc", "/usr/share/doc/python3.11/html", "/index.html", "Sphinx"),
    ("sdl.docs.test", "libsdl2-doc", "/usr/share/doc/libsdl2-doc/html", "/index.html", "Doxygen"),
    ("lmdb.docs.test", "lmdb-doc", "/usr/share/doc/lmdb-doc/html", "/index.html", "Doxygen"),
    ("lang3.docs.test", "libcommons-lang3-java-doc", "/usr/share/doc/libcommons-lang3-java/api", "/index.html",
     "Javadoc"),
    ("glib.docs.test", "libglib2.0-doc", "/usr/share/gtk-doc/html/glib", "/index.html", "gtk-doc (DocBook)"),
    ("debref.docs.test", "debian-reference-en", "/usr/share/debian-reference", "/index.en.html", "DocBook"),
    ("git.docs.test", "git-doc", "/usr/share/doc/git-doc", "/git.html", "AsciiDoc"),
)  # fmt: skip
PORT = 18090  # nginx's port on every address above; --port moves it (two benches at once)
ONE_HOST = "one.docs.test"  # the startup phase's site: one page, no links, no robots.txt
ONE_IP = "127.3.0.99"
PROXY_IP = "127.3.0.100"  # every server block listens here too: wget's "proxy"
WGET_LINE = re.compile(r'URL: ?(\S+) \[[^\]]*\] -> "([^"]+)"')


def ip(i: int) -> str:
    return f"127.3.0.{i + 1}"


def ensure_trees() -> None:
    missing = [pkg for _, pkg, root, _, _ in TREES if not Path(root).is_dir()]
    if missing:
        log(f"installing {missing}")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, env=env)


# WRECK's packages (pyproject.toml), each compiled where it lies
PACKAGES = ("wreck", "wreck.protocol", "wreck.urlserver", "wreck.spider", "wreck.storeserver")


def compile_wreck() -> None:
    """Write the bytecode of WRECK's own modules (only what is missing or
    stale), as pip does when it installs a package."""
    import compileall
    import importlib

    for name in PACKAGES:
        for path in importlib.import_module(name).__path__:
            if not compileall.compile_dir(path, quiet=1):
                raise SystemExit(f"compiling {path} failed")


def warm() -> tuple[int, int]:
    """Read every served file once (the page cache then holds the web); (files, bytes)."""
    files = size = 0
    for _, _, root, _, _ in TREES:
        for dirpath, _dirs, names in os.walk(root, followlinks=True):
            for name in names:
                try:
                    with open(os.path.join(dirpath, name), "rb") as f:
                        size += len(f.read())
                    files += 1
                except OSError:
                    pass
    return files, size


def nginx_conf(run: Path) -> Path:
    for sub in ("tmp", "logs"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    servers = "".join(f"  server {{ listen {ip(i)}:{PORT}; listen {PROXY_IP}:{PORT}; server_name {name}; "
                      f"root {root}; }}\n" for i, (name, _, root, _, _) in enumerate(TREES))  # fmt: skip
    one = run / "one"
    one.mkdir(exist_ok=True)
    (one / "index.html").write_text("<!doctype html><title>one</title><p>One page, no links.\n")
    servers += f"  server {{ listen {ONE_IP}:{PORT}; server_name {ONE_HOST}; root {one}; }}\n"
    tmp = run / "tmp"
    conf = f"""# generated by bench/realdocs.py
user root;
worker_processes 1;
pid {run}/nginx.pid;
error_log {run}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
  log_format gaps '$msec $request_time $host $status $body_bytes_sent "$request_uri" "$http_user_agent"';
  access_log {run}/logs/access.log gaps buffer=256k flush=1s;
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  sendfile on; tcp_nodelay on;
  keepalive_requests 1000000; keepalive_timeout 120s;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
{servers}}}
"""
    path = run / "nginx.conf"
    path.write_text(conf)
    return path


def access_log(path: Path) -> list[tuple[float, float, str, int, str, str]]:
    """(end time, request time, host, status, uri, user agent) per request."""
    out = []
    for line in path.read_text(errors="replace").splitlines():
        head, _, rest = line.partition(' "')
        parts = head.split()
        if len(parts) < 5:
            continue
        uri, _, agent = rest.partition('" "')
        out.append((float(parts[0]), float(parts[1]), parts[2].split(":")[0], int(parts[3]), uri, agent.rstrip('"')))
    return out


def gaps(rows) -> dict:
    """Per host, ms from a response's end to the next request's start (nginx's
    $msec and $request_time: millisecond resolution), summarised over all hosts."""
    by_host: dict[str, list] = {}
    for end, took, host, *_ in rows:
        by_host.setdefault(host, []).append((end - took, end))
    values = []
    for spans in by_host.values():
        spans.sort()
        values += [1000 * (b[0] - a[1]) for a, b in zip(spans, spans[1:])]
    values.sort()
    if not values:
        return {"n": 0}
    pick = lambda q: round(values[min(len(values) - 1, int(q * len(values)))], 2)  # noqa: E731
    return {"n": len(values), "median_ms": pick(0.5), "p10_ms": pick(0.1), "p90_ms": pick(0.9),
            "mean_ms": round(sum(values) / len(values), 2)}


def phase_figures(rows, start: float, end: float, r: dict) -> dict:
    mine = [row for row in rows if start <= row[0] <= end]
    pages = len(mine)
    statuses = Counter(row[3] for row in mine)
    dupes = sum(n - 1 for n in Counter((row[2], row[4]) for row in mine).values() if n > 1)
    cpu = r["cpu_s_reaped_tree"]
    return {"requests": pages, "status": {str(k): v for k, v in sorted(statuses.items())},
            "duplicate_requests": dupes, "wall_s": r["wall_s"], "cpu_s_reaped_tree": cpu,
            "pages_per_s_wall": round(pages / r["wall_s"], 1) if r["wall_s"] else None,
            "pages_per_cpu_s": round(pages / cpu, 1) if cpu else None, "nginx_cpu_s": r["nginx_cpu_s"],
            "gap_response_to_next_request": gaps(mine), "returncode": r["returncode"], "timed_out": r["timed_out"]}


def wget_saved(output: str) -> list[tuple[str, Path]]:
    """(URL, file) of every file wget saved, from its -nv log."""
    return [(m.group(1), Path(m.group(2))) for m in map(WGET_LINE.search, output.splitlines()) if m]


def coverage(saved: list[tuple[str, Path]], store_dir: Path) -> dict:
    """Every HTML page wget saved, stored by WRECK with the same body?"""
    from wreck.storeserver.reader import NotFound, open_store

    reader = open_store(store_dir)
    html = [(u, p) for u, p in saved if p.suffix in (".html", ".htm") or "index.html?" in p.name]
    missing, differ = [], []
    try:
        for url, path in html:
            doc_id = reader.current_doc_for_url(url)
            if doc_id is None:
                missing.append(url)
                continue
            try:
                meta, document = reader.get(doc_id)
            except NotFound:
                missing.append(url)
                continue
            if document[meta.head_len :] != path.read_bytes():
                differ.append(url)
        stored = sum(1 for _ in reader.iter_docs(with_documents=False))
    finally:
        reader.close()
    return {"wget_files": len(saved), "wget_html_pages": len(html), "wreck_documents": stored,
            "html_missing_in_wreck": len(missing), "missing_sample": missing[:10],
            "html_bodies_differing": len(differ), "differing_sample": differ[:10],
            "full_coverage": not missing and not differ}


def startup_run(run: Path, k: int, opts) -> dict:
    """One wreck-crawl of the one-page site: its fixed costs."""
    data = run / f"startup-data-{k}"
    args = [str(BIN / "wreck-crawl"), f"http://{ONE_HOST}:{PORT}/index.html", "--data", str(data), "--hosts",
            str(run / "hosts"), "--allow-net", "127.0.0.0/8", "--delay", "0", *opts.wreck_args.split()]  # fmt: skip
    log("phase startup: " + " ".join(args))
    r = run_bounded(args, log_path=run / f"startup-{k}.out", max_seconds=opts.max_seconds, stop_sig=signal.SIGINT,
                    sampler_classify=wreck_classifier())
    shutil.rmtree(data, ignore_errors=True)
    return r


def startup_figures(rows, runs: list[dict]) -> dict:
    """Per one-page crawl: wall, CPU (tree, per component), seconds to its first request."""
    out = []
    for r in runs:
        firsts = [end - took for end, took, host, *_ in rows if host == ONE_HOST and r["start"] <= end <= r["end"]]
        comps = r["sampler"].totals()
        out.append({"wall_s": r["wall_s"], "cpu_s_reaped_tree": r["cpu_s_reaped_tree"], "returncode": r["returncode"],
                    "first_request_after_s": round(min(firsts) - r["start"], 2) if firsts else None,
                    "cpu_s": {k: c["cpu_s"] for k, c in comps.items()},
                    "procs": {k: c["procs"] for k, c in comps.items()}})  # fmt: skip

    def median(key: str):
        values = sorted(x[key] for x in out if x[key] is not None)
        return values[len(values) // 2] if values else None

    return {"runs": out, "median_wall_s": median("wall_s"), "median_cpu_s": median("cpu_s_reaped_tree"),
            "median_first_request_after_s": median("first_request_after_s")}


def main() -> int:
    global PORT
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("/tmp/wreck-realdocs"))
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--only", default="wget,wreck", help="phases, comma-separated, in this order "
                        "(wget, wreck, startup)")
    parser.add_argument("--startup-runs", type=int, default=3, help="one-page crawls of the startup phase")
    parser.add_argument("--wreck-args", default="", help="more wreck-crawl flags (results get a suffix)")
    parser.add_argument("--tag", default="", help="suffix of the results file")
    parser.add_argument("--keep", action="store_true", help="keep WRECK's data (logs, store) in the run dir")
    parser.add_argument("--profile-at", type=float, default=None,
                        help="py-spy each WRECK component this many seconds into its crawl (bench/crawl.py Profiler)")
    parser.add_argument("--profile-seconds", type=int, default=3)
    parser.add_argument("--no-compile", action="store_true",
                        help="leave WRECK's bytecode as it is (with PYTHONDONTWRITEBYTECODE: none, each start "
                        "compiles)")
    parser.add_argument("--port", type=int, default=PORT, help="nginx's port (another bench may hold the usual)")
    opts = parser.parse_args()
    PORT = opts.port
    nginx = ensure_nginx()
    ensure_trees()
    wget = shutil.which("wget")
    run = opts.work / f"run-{os.getpid()}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    if not opts.no_compile:
        compile_wreck()
    files, size = warm()
    log(f"web: {len(TREES)} trees, {files} files, {size >> 20} MiB (page cache warmed)")
    seeds = [f"http://{name}:{PORT}{start}" for name, _, _, start, _ in TREES]
    (run / "hosts").write_text("".join(f"{ip(i)} {t[0]}\n" for i, t in enumerate(TREES)) + f"{ONE_IP} {ONE_HOST}\n")
    results: dict = {"date": datetime.date.today().isoformat(), "machine": {"cpus": os.cpu_count()},
                     "trees": [{"host": n, "package": p, "root": r, "start": s, "generator": g}
                               for n, p, r, s, g in TREES], "served_files": files, "served_bytes": size,
                     "wreck_bytecode_compiled": not opts.no_compile}  # fmt: skip
    from . import crawl as bench_crawl

    proc = subprocess.Popen([nginx, "-c", str(nginx_conf(run)), "-p", str(run), "-g", "daemon off;"],
                            start_new_session=True, stderr=open(run / "nginx.stderr", "wb"))
    bench_crawl.NGINX_PIDS.append(proc.pid)
    windows: dict[str, tuple[float, float, dict]] = {}
    try:
        wait_listening(PROXY_IP, PORT)
        for phase in opts.only.split(","):
            if phase == "wget":
                out = run / "wget-out"
                args = [wget, "--recursive", "--level=inf", "--no-parent", "-nv", "-e", "robots=on",
                        "-e", "use_proxy=on", "-e", f"http_proxy=http://{PROXY_IP}:{PORT}/", "-P", str(out), *seeds]
                log("phase wget: " + " ".join(args))
                r = run_bounded(args, log_path=run / "wget.out", max_seconds=opts.max_seconds, stop_sig=signal.SIGTERM)
                r["saved"] = wget_saved(r["output"])
                windows["wget"] = (r["start"], r["end"], r)
            elif phase == "wreck":
                data = run / "wreck-data"
                args = [str(BIN / "wreck-crawl"), *seeds, "--data", str(data), "--hosts", str(run / "hosts"),
                        "--allow-net", "127.0.0.0/8", "--delay", "0", *opts.wreck_args.split()]  # fmt: skip
                log("phase wreck: " + " ".join(args))
                profiler = (bench_crawl.Profiler(run, at=opts.profile_at, duration=opts.profile_seconds)
                            if opts.profile_at is not None else None)
                r = run_bounded(args, log_path=run / "wreck.out", max_seconds=opts.max_seconds,
                                stop_sig=signal.SIGINT, sampler_classify=wreck_classifier(),
                                on_tick=profiler.tick if profiler else None)
                if profiler:
                    results["profile"] = profiler.findings()
                r["data"] = data
                windows["wreck"] = (r["start"], r["end"], r)
            elif phase == "startup":
                startups = [startup_run(run, k, opts) for k in range(opts.startup_runs)]
            time.sleep(1.5)  # the access log flushes every second
    finally:
        stop_group(proc, signal.SIGQUIT, grace=10)
    rows = access_log(run / "logs" / "access.log")
    if "startup" in opts.only.split(","):
        results["startup"] = startup_figures(rows, startups)
    for name, (start, end, r) in windows.items():
        results[name] = phase_figures(rows, start, end, r)
        if name == "wreck":
            results[name].update(cpu_figures(r["sampler"].totals(), results[name]["requests"]))
            results[name]["summary"] = r["output"].strip().splitlines()[-10:]
    if "wget" in windows and "wreck" in windows:
        results["coverage"] = coverage(windows["wget"][2]["saved"], windows["wreck"][2]["data"])
        w, g = results["wreck"], results["wget"]
        results["ratios"] = {
            "wreck_over_wget_pages_per_cpu_s": round(w["pages_per_cpu_s"] / g["pages_per_cpu_s"], 2)
            if w.get("pages_per_cpu_s") and g.get("pages_per_cpu_s") else None,
            "wreck_over_wget_wall_time": round(w["wall_s"] / g["wall_s"], 2) if g["wall_s"] else None}
        results["aims"] = {"pages_per_cpu_s_at_least_wgets": (results["ratios"]["wreck_over_wget_pages_per_cpu_s"] or 0) >= 1,
                           "wall_time_at_most_wgets": (results["ratios"]["wreck_over_wget_wall_time"] or 99) <= 1,
                           "full_coverage": results["coverage"]["full_coverage"]}  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    suffix = "".join("-" + a.lstrip("-") for a in opts.wreck_args.split()) + (f"-{opts.tag}" if opts.tag else "")
    out = RESULTS / f"{results['date']}-realdocs{suffix}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    for name in ("wget", "wreck"):
        if name in results:
            r = results[name]
            log(f"{name}: {r['requests']} requests in {r['wall_s']} s, {r['cpu_s_reaped_tree']} CPU-s "
                f"({r['pages_per_cpu_s']} pages/CPU-s), gap {r['gap_response_to_next_request']}")
    for key in ("startup", "coverage", "ratios", "aims"):
        if key in results:
            log(f"{key}: {results[key]}")
    log(f"wrote {out}; run dir {run}")
    if "wreck" in windows and not opts.keep:
        shutil.rmtree(run / "wreck-data", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
