# robots.txt libraries compared: how many of Google's reference cases each
# answers as the suite expects (tests/urlserver/data/google_robotstxt_suite.json,
# 145 allow/disallow cases), then its speed on one core: the parse of a
# generated ~500 KiB robots.txt (RFC 9309 2.5's limit: 30 groups, many rules
# with * and $, comments, Crawl-delay and Sitemap lines) and allowed() per
# URL, on that file and on a typical 3 KiB one. WRECK's urlserver/robotsrules.py
# is measured beside the libraries it was chosen from.
#
# Libraries built on Google's API (gpyrobotstxt, fast-robotstxt,
# jwm.robotstxt) have no parsed form to keep: every allowed() parses the body
# again, so their allowed() is a parse. Candidates not installed are skipped.
# CPU time on one core; the machine's other load still moves the figures by
# 10-30%, so compare within one run.
#
#   make bench-robots      (.venv/bin/python -m bench.robots_bench [--seconds 0.5])
"""Suite cases passed, parse µs and allowed() µs per robots.txt library."""

from __future__ import annotations

import argparse
import datetime
import json
import random
import time
import urllib.robotparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests/urlserver/data/google_robotstxt_suite.json"
TOKEN = "wreck"


# -- candidates: name -> (parse(body, agent) -> state, allowed(state, url) -> bool)


def _wreck():
    from wreck.urlserver.robotsrules import RobotsTxt

    return lambda body, agent: RobotsTxt(body, agent), lambda rules, url: rules.allowed(url)


def _protego():
    from protego import Protego

    return lambda body, agent: (Protego.parse(body), agent), lambda s, url: s[0].can_fetch(url, s[1])


def _robotspy():
    import robots

    return lambda body, agent: (robots.RobotsParser.from_string(body), agent), lambda s, url: s[0].can_fetch(s[1], url)


def _stdlib():
    def parse(body, agent):
        p = urllib.robotparser.RobotFileParser()
        p.parse(body.splitlines())
        return p, agent

    return parse, lambda s, url: s[0].can_fetch(s[1], url)


def _gpyrobotstxt():
    from gpyrobotstxt.robots_cc import RobotsMatcher

    return (lambda body, agent: (body, agent),
            lambda s, url: RobotsMatcher().one_agent_allowed_by_robots(s[0], s[1], url))


def _fast_robotstxt():
    import robotstxt

    matcher = robotstxt.RobotsMatcher()
    return lambda body, agent: (body, agent), lambda s, url: matcher.is_allowed(s[0], s[1], url)


def _jwm_robotstxt():
    from jwm.robotstxt import googlebot

    matcher = googlebot.RobotsMatcher()
    return lambda body, agent: (body, agent), lambda s, url: matcher.OneAgentAllowedByRobots(s[0], s[1], url)


CANDIDATES = {
    "wreck robotsrules": (_wreck, "urlserver/robotsrules.py"),
    "protego": (_protego, "protego"),
    "robotspy": (_robotspy, "robotspy"),
    "gpyrobotstxt": (_gpyrobotstxt, "gpyrobotstxt"),
    "fast-robotstxt": (_fast_robotstxt, "fast-robotstxt"),
    "jwm.robotstxt": (_jwm_robotstxt, "jwm.robotstxt"),
    "urllib.robotparser": (_stdlib, "Python's standard library"),
}
PARSES_PER_CALL = {"gpyrobotstxt", "fast-robotstxt", "jwm.robotstxt"}


# -- inputs


def big_robots(target: int = 500 * 1024, seed: int = 9309) -> str:
    """A robots.txt of about `target` bytes, shaped like the large ones of big sites."""
    rnd = random.Random(seed)
    words = ["search", "cart", "user", "api", "static", "img", "tag", "print", "amp", "wiki", "shop", "news",
             "login", "share", "feed", "archive", "category", "product", "checkout", "ajax", "cgi-bin", "tmp"]
    agents = ["*", "Googlebot", "Bingbot", "Slurp", "DuckDuckBot", "Baiduspider", "YandexBot", "AhrefsBot",
              "SemrushBot", "MJ12bot", "GPTBot", "CCBot", "facebookexternalhit", "Applebot", "PetalBot"]
    lines = ["# robots.txt for a large site", "Sitemap: https://example.com/sitemap.xml"]
    size, group = sum(len(line) + 1 for line in lines), 0
    while size < target:
        agent = agents[group % len(agents)] if group < len(agents) else f"SomeBot{group}"
        group_lines = ["", f"User-agent: {agent}"]
        if rnd.random() < 0.3:
            group_lines.append(f"Crawl-delay: {rnd.randint(1, 10)}")
        for _ in range(rnd.randint(400, 900)):
            path = "/" + "/".join(rnd.choice(words) + (str(rnd.randint(1, 999)) if rnd.random() < 0.5 else "")
                                  for _ in range(rnd.randint(1, 4)))
            shape = rnd.random()
            if shape < 0.15:
                path = "/*" + path + ("$" if rnd.random() < 0.5 else "")
            elif shape < 0.3:
                path += "*.php"
            elif shape < 0.4:
                path += "?*sort="
            group_lines.append(("Allow: " if rnd.random() < 0.2 else "Disallow: ") + path)
            if rnd.random() < 0.05:
                group_lines.append("# " + " ".join(rnd.choices(words, k=6)))
            if size + sum(len(line) + 1 for line in group_lines) >= target:
                break
        lines += group_lines
        size += sum(len(line) + 1 for line in group_lines)
        group += 1
    lines.append(f"Sitemap: https://example.com/sitemap-{group}.xml")
    return "\n".join(lines) + "\n"


SMALL_ROBOTS = big_robots(3 * 1024, seed=1)  # about 3 KiB: one group, the common size


def urls(n: int = 200, seed: int = 2) -> list[str]:
    rnd = random.Random(seed)
    words = ["search", "cart", "user", "api", "static", "img", "tag", "news", "about", "blog", "post", "shop"]
    out = []
    for _ in range(n):
        path = "/".join(rnd.choice(words) + (str(rnd.randint(1, 999)) if rnd.random() < 0.5 else "")
                        for _ in range(rnd.randint(1, 4)))
        tail = rnd.choice(["", ".html", ".php", "?sort=asc&page=2", "/"])
        out.append(f"https://example.com/{path}{tail}")
    return out


# -- measures


def suite_passed(parse, allowed) -> tuple[int, list[str]]:
    cases = json.loads(SUITE.read_text(encoding="utf-8"))["cases"]
    failed = []
    for i, case in enumerate(cases):
        try:
            ok = allowed(parse(case["robots"], case["agent"]), case["url"]) is case["allowed"]
        except Exception:  # a candidate that raises on a case fails it
            ok = False
        if not ok:
            failed.append(f"{i} {case['test']}")
    return len(cases) - len(failed), failed


def _per_call(fn, seconds: float) -> float:
    """CPU µs per call of fn(), repeated for about `seconds` (at least twice)."""
    fn()
    calls, start = 0, time.process_time()
    while True:
        fn()
        calls += 1
        spent = time.process_time() - start
        if spent >= seconds and calls >= 2:
            return spent / calls * 1e6


def speed(parse, allowed, body: str, probes: list[str], seconds: float) -> tuple[float, float]:
    parse_us = _per_call(lambda: parse(body, TOKEN), seconds)
    state = parse(body, TOKEN)
    it = iter(range(1 << 62))
    allowed_us = _per_call(lambda: allowed(state, probes[next(it) % len(probes)]), seconds)
    return parse_us, allowed_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=0.5, help="CPU seconds per measure")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    big, probes = big_robots(), urls()
    results = []
    print(f"robots.txt: {len(big.encode()) / 1024:.0f} KiB ({big.count(chr(10))} lines) and "
          f"{len(SMALL_ROBOTS.encode()) / 1024:.1f} KiB; {len(probes)} URLs; one core, CPU time")
    print(f"{'library':20} {'suite':>8} {'parse 500K µs':>14} {'allowed µs':>11} {'parse 3K µs':>12} {'allowed µs':>11}")
    for name, (load, package) in CANDIDATES.items():
        try:
            parse, allowed = load()
        except ImportError:
            print(f"{name:20} not installed: skipped")
            continue
        passed, failed = suite_passed(parse, allowed)
        big_parse, big_allowed = speed(parse, allowed, big, probes, args.seconds)
        small_parse, small_allowed = speed(parse, allowed, SMALL_ROBOTS, probes, args.seconds)
        if name in PARSES_PER_CALL:  # "parse" only keeps the body; allowed() is the parse
            big_parse, small_parse = big_allowed, small_allowed
        results.append({"library": name, "package": package, "suite_passed": passed, "suite_cases": 145,
                        "suite_failed": failed, "parse_500k_us": round(big_parse, 1),
                        "allowed_500k_us": round(big_allowed, 2), "parse_3k_us": round(small_parse, 1),
                        "allowed_3k_us": round(small_allowed, 2), "parses_per_allowed": name in PARSES_PER_CALL})
        print(f"{name:20} {passed:>4}/145 {big_parse:>14,.0f} {big_allowed:>11,.1f} "
              f"{small_parse:>12,.0f} {small_allowed:>11,.1f}")
    out = args.out or ROOT / "bench/results" / f"{datetime.date.today():%Y-%m-%d}-robots.json"
    out.write_text(json.dumps({"robots_500k_bytes": len(big.encode()), "robots_3k_bytes": len(SMALL_ROBOTS.encode()),
                               "urls": len(probes), "seconds_per_measure": args.seconds, "results": results},
                              indent=2) + "\n")
    print(f"written: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
