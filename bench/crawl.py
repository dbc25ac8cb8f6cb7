# `make bench` / `python -m bench.crawl [--hosts N] [--pages N]`: WRECK against
# the server's ceiling and against Scrapy, end to end, on one generated web.
#
# The web (bench/webgen.py) is written to disk once and served by nginx on
# 127.1.x.y addresses; names resolve only through a hosts file and the test
# web's own DNS responder on 127.0.0.1 (nothing leaves loopback). Three
# phases run one after the other on the same web, each bounded by
# --max-seconds: a pycurl-multi blaster fetching every allowed URL (the
# ceiling, bench/blaster.py), wreck-crawl from every host's root, and Scrapy
# (bench/scrapy_run.py, in its own venv bench/.venv-scrapy). Rates come
# from nginx's access log (one line per request, timestamped); CPU seconds
# and peak RSS of every process from /proc (bench/procstats.py); py-spy
# profiles each WRECK component mid-run. Results go to
# bench/results/<date>-crawl.json and a plot to <date>-crawl.png.
"""End-to-end crawl benchmark: ceiling, WRECK and Scrapy on one local web."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from . import accesslog, webgen
from .procstats import TreeSampler

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SCRAPY_VENV = HERE / ".venv-scrapy"
BIN = Path(sys.executable).parent
STOP_GRACE_S = 60


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def ensure_nginx() -> str:
    path = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if path:
        return path
    log("nginx missing: apt-get install -y nginx")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nginx"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})  # fmt: skip
    return shutil.which("nginx") or "/usr/sbin/nginx"


def ensure_scrapy_venv() -> Path:
    py = SCRAPY_VENV / "bin" / "python"
    if not py.exists():
        log(f"creating {SCRAPY_VENV} (scrapy, matplotlib, py-spy)")
        subprocess.run([sys.executable, "-m", "venv", str(SCRAPY_VENV)], check=True)
    probe = subprocess.run([str(py), "-c", "import scrapy, matplotlib"], capture_output=True)
    if probe.returncode or not (SCRAPY_VENV / "bin" / "py-spy").exists():
        subprocess.run([str(py), "-m", "pip", "install", "-q", "scrapy", "matplotlib", "py-spy"], check=True)
    return py


class Dns:
    """tests.web's DnsResponder for the web's names, on its own loop in a thread."""

    def __init__(self, table: dict[str, str]) -> None:
        from tests.web.dns import DnsResponder

        self.responder = DnsResponder(table)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> "Dns":
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.responder.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.responder.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    @property
    def address(self) -> str:
        ip, port = self.responder.address
        return f"{ip}:{port}"


def wait_listening(ip: str, port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((ip, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listening on {ip}:{port}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(proc: subprocess.Popen, sig=signal.SIGTERM, grace: float = STOP_GRACE_S) -> None:
    """Stop a child started with start_new_session, and its whole group."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def run_bounded(args, *, log_path: Path, max_seconds: float, stop_sig, sampler_classify=None,
                on_tick=None, env=None) -> dict:  # fmt: skip
    """Run a command in its own session until it exits or max_seconds; rusage of its tree."""
    out = open(log_path, "wb")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    nginx_before = nginx_cpu()
    started = time.time()
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    sampler = TreeSampler(proc.pid, sampler_classify or (lambda *_: "main")).start()
    timed_out = False
    try:
        while proc.poll() is None:
            elapsed = time.time() - started
            if elapsed > max_seconds:
                timed_out = True
                log(f"max seconds reached: stopping {args[0]}")
                sampler.sample()
                os.killpg(proc.pid, stop_sig) if stop_sig != signal.SIGINT else os.kill(proc.pid, stop_sig)
                try:
                    proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                break
            if on_tick:
                on_tick(elapsed, sampler)
            time.sleep(0.25)
    finally:
        if proc.poll() is None:
            stop_group(proc)
        sampler.stop()
        out.close()
        try:  # nothing of the group may outlive the phase
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # Reaped descendants' CPU shows in the children rusage; the sampler's figures are per process.
    return {"start": started, "end": ended, "wall_s": round(ended - started, 2), "returncode": proc.returncode,
            "timed_out": timed_out, "sampler": sampler, "cpu_s_reaped_tree": round(reaped, 2),
            "nginx_cpu_s": round(nginx_cpu() - nginx_before, 2), "output": log_path.read_text(errors="replace")}  # fmt: skip


NGINX_PIDS: list[int] = []


def nginx_cpu() -> float:
    """CPU seconds so far of nginx's master and workers."""
    from .procstats import _stat, descendants

    total = 0.0
    for root in NGINX_PIDS:
        for pid in descendants(root):
            st = _stat(pid)
            total += st[1] if st else 0.0
    return total


def du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def wreck_component(pid: int, cmd: str, ppid: int, *, root: int, spider_pids: set) -> str:
    if pid == root:
        return "wreck-crawl"
    for mod in ("storeserver", "urlserver"):
        if f"{mod}.cli" in cmd:
            return mod
    if ppid in spider_pids:  # spawned workers (and multiprocessing's resource tracker)
        return "spider-supervisor" if "resource_tracker" in cmd else "spider-worker"
    if "wreck.spider.cli" in cmd:
        spider_pids.add(pid)
        return "spider-supervisor"
    return "other"


def wreck_classifier():
    """A TreeSampler classify function for a wreck-crawl tree (the first pid it sees is the root)."""
    root_box: dict = {}
    spider_pids: set = set()

    def classify(pid, cmd, ppid):
        root_box.setdefault("root", pid)
        return wreck_component(pid, cmd, ppid, root=root_box["root"], spider_pids=spider_pids)

    return classify


class Profiler:
    """py-spy record of each WRECK component once, at `at` seconds into the run."""

    def __init__(self, out: Path, *, at: float, duration: int) -> None:
        self.out, self.at, self.duration = out, at, duration
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []
        self.started = False
        # Scrapy's venv installs it; a py-spy beside this Python does as well.
        self.pyspy = next((p for p in (SCRAPY_VENV / "bin" / "py-spy", BIN / "py-spy") if p.exists()),
                          SCRAPY_VENV / "bin" / "py-spy")

    def tick(self, elapsed: float, sampler: TreeSampler) -> None:
        if self.started or elapsed < self.at or not self.pyspy.exists():
            return
        self.started = True
        for comp in ("urlserver", "storeserver", "spider-worker"):
            pids = sampler.pids(comp)
            if not pids:
                continue
            raw = self.out / f"pyspy-{comp}.txt"
            proc = subprocess.Popen([str(self.pyspy), "record", "--pid", str(pids[0]), "--duration",
                                     str(self.duration), "--rate", "100", "--nonblocking", "--format", "raw",
                                     "-o", str(raw)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            self.procs.append((comp, proc, raw))
        log(f"py-spy recording {[c for c, _, _ in self.procs]} for {self.duration}s")

    def findings(self, top: int = 12) -> dict:
        out = {}
        for comp, proc, raw in self.procs:
            try:
                proc.wait(self.duration + 30)
            except subprocess.TimeoutExpired:
                proc.kill()
            if not raw.exists():
                continue
            self_time: Counter = Counter()
            incl: Counter = Counter()
            total = 0
            for line in raw.read_text(errors="replace").splitlines():
                stack, _, count = line.rpartition(" ")
                if not count.isdigit():
                    continue
                n = int(count)
                total += n
                frames = stack.split(";")
                self_time[frames[-1]] += n
                for f in set(frames):
                    incl[f] += n
            out[comp] = {
                "samples": total,
                "self_top": [[f, round(100 * n / total, 1)] for f, n in self_time.most_common(top)] if total else [],
                "inclusive_top": [[f, round(100 * n / total, 1)] for f, n in incl.most_common(top + 8)
                                  if not f.startswith("<module>") and "run_forever" not in f][:top] if total else [],
            }  # fmt: skip
        return out


def cpu_figures(totals: dict, pages: int) -> dict:
    cpu = sum(c["cpu_s"] for c in totals.values())
    return {
        "cpu_s_total": round(cpu, 2),
        "cpu_s_per_1000_pages": {k: round(1000 * c["cpu_s"] / pages, 3) for k, c in totals.items()} if pages else {},
        "cpu_s_per_1000_pages_total": round(1000 * cpu / pages, 3) if pages else None,
        "pages_per_cpu_s": round(pages / cpu, 1) if cpu else None,
        "peak_rss_mb": {k: c["peak_rss_mb_max"] for k, c in totals.items()},
        "peak_rss_mb_sum": {k: c["peak_rss_mb_sum"] for k, c in totals.items()},
        "components": totals,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=100_000, help="pages in all, over every host")
    parser.add_argument("--max-seconds", type=float, default=900, help="bound on each system's crawl")
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="WRECK spider workers")
    parser.add_argument("--concurrency", type=int, default=200, help="transfers per WRECK spider worker")
    parser.add_argument("--host-concurrency", type=int, default=8)
    parser.add_argument("--tag", default="", help="a suffix for the results' file name")
    parser.add_argument("--port", type=int, default=18080,
                        help="nginx's port on every web address (another bench running at once needs another)")
    parser.add_argument("--nginx-workers", default="1", help="1 leaves a core to the crawler (default)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/wreck-bench"), help="web cache and crawl dirs")
    parser.add_argument("--only", default="ceiling,wreck,scrapy", help="phases to run, comma-separated")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--wreck-args", default="", help="more wreck-crawl flags, e.g. '--no-dedup' (results get a suffix)")
    parser.add_argument("--keep", action="store_true", help="keep the crawls' data (else removed at the end)")
    parser.add_argument("--profile-at", type=float, default=3.0, help="seconds into the WRECK crawl")
    parser.add_argument("--profile-seconds", type=int, default=10)
    opts = parser.parse_args()
    phases = set(opts.only.split(","))
    total_conc = opts.procs * opts.concurrency
    port = opts.port
    web = webgen.Web(opts.work / f"web-{opts.hosts}x{opts.pages}", hosts=opts.hosts, pages=opts.pages, port=port)
    run = opts.work / f"run-{os.getpid()}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    nginx = ensure_nginx()
    # Scrapy's venv also holds py-spy: made only when one of them is wanted.
    py_scrapy = (ensure_scrapy_venv() if "scrapy" in phases or not (opts.no_profile or (BIN / "py-spy").exists())
                 else None)
    t0 = time.time()
    summary = webgen.generate(web)
    log(f"web: {summary} ({time.time() - t0:.1f}s, under {web.root})")
    log(f"page cache warmed in {webgen.warm(web):.1f}s")
    hosts_file = webgen.write_hosts_file(web, run / "hosts")
    seeds_file = webgen.write_seeds(web, run / "seeds.txt")
    urls = [(web.ip(i), web.base(i) + p) for i in range(web.hosts) for p in web.allowed_paths(i)]
    random.Random(1).shuffle(urls)
    (run / "urls.txt").write_text("".join(f"{ip} {u}\n" for ip, u in urls))
    by_name = {web.name(i): i for i in range(web.hosts)}

    def disallowed(host: str, uri: str) -> bool:
        i = by_name.get(host)
        return uri.startswith("/cgi-bin/") or (i is not None and web.disallows_p9(i) and uri.startswith("/p/9"))

    conf = webgen.nginx_conf(web, run, workers=opts.nginx_workers)
    results: dict = {"date": datetime.date.today().isoformat(), "web": {**summary, "allowed_urls": len(urls),
                     "port": port, "hosts_per_ip": webgen.HOSTS_PER_IP},
                     "machine": {"cpus": os.cpu_count(), "nginx_workers": opts.nginx_workers},
                     "settings": {"max_seconds": opts.max_seconds, "wreck_procs": opts.procs,
                                  "wreck_concurrency_per_proc": opts.concurrency, "total_concurrency": total_conc,
                                  "host_concurrency": opts.host_concurrency}}  # fmt: skip
    windows: dict[str, tuple[float, float]] = {}
    nginx_proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(run), "-g", "daemon off;"],
                                  start_new_session=True, stderr=open(run / "nginx.stderr", "wb"))  # fmt: skip
    NGINX_PIDS.append(nginx_proc.pid)
    try:
        wait_listening(web.ip(0), port)
        wait_listening(web.ip(web.hosts - 1), port)
        with Dns({web.name(i): web.ip(i) for i in range(web.hosts)}) as dns:
            log(f"nginx up on {len(web.ips())} addresses :{port}; DNS responder {dns.address}")
            if "ceiling" in phases:
                log(f"phase ceiling: {len(urls)} URLs, concurrency {total_conc}")
                r = run_bounded([sys.executable, "-m", "bench.blaster", str(run / "urls.txt"), "--concurrency",
                                 str(total_conc), "--max-seconds", str(opts.max_seconds)],
                                log_path=run / "blaster.out", max_seconds=opts.max_seconds + 30,
                                stop_sig=signal.SIGTERM)  # fmt: skip
                windows["ceiling"] = (r["start"], r["end"])
                last = r["output"].strip().splitlines()[-1] if r["output"].strip() else "{}"
                results["ceiling"] = {"blaster": json.loads(last) if last.startswith("{") else last,
                                      "wall_s": r["wall_s"], "cpu_s_reaped_tree": r["cpu_s_reaped_tree"],
                                      "nginx_cpu_s": r["nginx_cpu_s"]}
                log(f"ceiling: {results['ceiling']['blaster']}")
                time.sleep(1.5)  # the access log flushes every second
            if "wreck" in phases:
                data = run / "wreck-data"
                args = [str(BIN / "wreck-crawl"), "--seeds", str(seeds_file), "--data", str(data),
                        "--hosts", str(hosts_file), "--dns", dns.address, "--allow-net", "127.0.0.0/8",
                        "--scope", "any", "--delay", "0", "--ip-delay", "0",
                        "--host-concurrency", str(opts.host_concurrency),
                        "--ip-concurrency", str(opts.host_concurrency * webgen.HOSTS_PER_IP),
                        "--procs", str(opts.procs), "--concurrency", str(opts.concurrency),
                        *opts.wreck_args.split()]  # fmt: skip
                log("phase wreck: " + " ".join(args))
                classify = wreck_classifier()
                prof = Profiler(run, at=opts.profile_at, duration=opts.profile_seconds)
                r = run_bounded(args, log_path=run / "wreck.out", max_seconds=opts.max_seconds,
                                stop_sig=signal.SIGINT, sampler_classify=classify,
                                on_tick=None if opts.no_profile else prof.tick)  # fmt: skip
                windows["wreck"] = (r["start"], r["end"])
                results["wreck"] = {"wall_s": r["wall_s"], "timed_out": r["timed_out"],
                                    "returncode": r["returncode"], "summary": r["output"].strip().splitlines()[-12:],
                                    "cpu_s_reaped_tree": r["cpu_s_reaped_tree"], "nginx_cpu_s": r["nginx_cpu_s"],
                                    "data_bytes_on_disk": du(data), "_totals": r["sampler"].totals(),
                                    "profile": prof.findings(), "profiled_during_run": bool(prof.procs)}  # fmt: skip
                time.sleep(1.5)
            if "scrapy" in phases:
                out = run / "scrapy-out"
                args = [str(py_scrapy), str(HERE / "scrapy_run.py"), "--seeds", str(seeds_file), "--hosts",
                        str(hosts_file), "--out", str(out), "--concurrency", str(total_conc),
                        "--max-seconds", str(opts.max_seconds)]  # fmt: skip
                log("phase scrapy: " + " ".join(args))
                r = run_bounded(args, log_path=run / "scrapy.out", max_seconds=opts.max_seconds + 60,
                                stop_sig=signal.SIGINT)  # fmt: skip
                windows["scrapy"] = (r["start"], r["end"])
                lines = [ln for ln in r["output"].splitlines() if ln.startswith("{")]
                results["scrapy"] = {"wall_s": r["wall_s"], "timed_out": r["timed_out"],
                                     "returncode": r["returncode"], "summary": json.loads(lines[-1]) if lines else None,
                                     "cpu_s_reaped_tree": r["cpu_s_reaped_tree"], "nginx_cpu_s": r["nginx_cpu_s"],
                                     "data_bytes_on_disk": du(out), "_totals": r["sampler"].totals()}  # fmt: skip
                time.sleep(1.5)
            results["dns_queries_answered"] = len(dns.responder.queries())
    finally:
        stop_group(nginx_proc, signal.SIGQUIT, grace=10)
    errors = (run / "logs" / "error.log").read_text(errors="replace").splitlines()
    results["nginx_error_log"] = {"lines": len(errors), "sample": errors[:3]}
    entries = accesslog.read(run / "logs" / "access.log")
    for name, (start, end) in windows.items():
        figures = accesslog.phase(entries, start, end, disallowed)
        results[name]["access_log"] = figures
        pages = figures["requests"]
        results[name]["pages"] = pages
        results[name]["pages_per_s_wall"] = round(pages / (end - start), 1)
        if name == "ceiling":  # too short-lived for the sampler: the reaped process's rusage
            cpu = results[name]["cpu_s_reaped_tree"]
            results[name].update({"cpu_s_total": cpu, "pages_per_cpu_s": round(pages / cpu, 1) if cpu else None,
                                  "cpu_s_per_1000_pages_total": round(1000 * cpu / pages, 3) if pages else None})
        if "_totals" in results[name]:
            results[name].update(cpu_figures(results[name].pop("_totals"), pages))
    ratios = {}
    w, s, c = (results.get(k) for k in ("wreck", "scrapy", "ceiling"))
    if w and s:
        ratios["wreck_over_scrapy_pages_per_s"] = round(w["pages_per_s_wall"] / s["pages_per_s_wall"], 2)
        if w.get("pages_per_cpu_s") and s.get("pages_per_cpu_s"):
            ratios["wreck_over_scrapy_pages_per_cpu_s"] = round(w["pages_per_cpu_s"] / s["pages_per_cpu_s"], 2)
    if w and c:
        ratios["wreck_over_ceiling_pages_per_s"] = round(w["pages_per_s_wall"] / c["pages_per_s_wall"], 3)
    results["ratios"] = ratios
    # issue 16's aims: 4,000 pages/s on these 2 cores, 2,500 pages per CPU-second, 10x Scrapy per CPU-second
    results["aims"] = {"wreck_pages_per_s>=4000": bool(w and w["pages_per_s_wall"] >= 4000),
                       "wreck_pages_per_cpu_s>=2500": bool(w and (w.get("pages_per_cpu_s") or 0) >= 2500),
                       "wreck_over_scrapy_pages_per_cpu_s>=10": (ratios.get("wreck_over_scrapy_pages_per_cpu_s") or 0) >= 10}
    RESULTS.mkdir(exist_ok=True)
    scale = "" if (opts.hosts, opts.pages) == (1000, 100_000) else f"-{opts.hosts}x{opts.pages}"
    scale += "".join("-" + a.lstrip("-") for a in opts.wreck_args.split())
    scale += f"-{opts.tag}" if opts.tag else ""
    stem = RESULTS / f"{results['date']}-crawl{scale}"
    stem.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    if py_scrapy is not None:  # its venv has matplotlib
        subprocess.run([str(py_scrapy), str(HERE / "plot.py"), str(stem.with_suffix(".json")),
                        str(stem.with_suffix(".png"))], check=False)  # fmt: skip
    for name in ("ceiling", "wreck", "scrapy"):
        if name in results:
            r = results[name]
            log(f"{name}: {r['pages']} pages, {r['pages_per_s_wall']} pages/s (wall), "
                f"{r['access_log']['pages_per_s_active']} (first to last request), "
                f"{r.get('cpu_s_per_1000_pages_total')} CPU-s/1000 pages, {r.get('pages_per_cpu_s')} pages/CPU-s, "
                f"peak RSS MB {r.get('peak_rss_mb')}")  # fmt: skip
    log(f"ratios: {ratios}")
    log(f"aims: {results['aims']}")
    if not opts.keep:
        for sub in ("wreck-data", "scrapy-out"):
            shutil.rmtree(run / sub, ignore_errors=True)
    log(f"wrote {stem.with_suffix('.json')} and .png; run dir {run} (logs, nginx access log)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
