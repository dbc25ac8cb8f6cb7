# robots.txt to the reference: every allow/disallow case of Google's
# robots.txt test suite (tests/urlserver/data/google_robotstxt_suite.json,
# 145 cases, one test each, named by the Google test it comes from) and its
# byte-order-mark bodies, run through urlserver/robotsrules.py; then the cases
# the crawler meets on the web: a BOM'd robots.txt, `User-agent: wreck/1.0`,
# a Crawl-delay line between User-agent lines, Crawl-delay and Sitemap.
"""Google's robots.txt reference cases and WRECK's own, through robotsrules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import robots
from wreck.urlserver.robotsrules import MAX_LINE, MAX_PARSED, RobotsTxt

SUITE = json.loads((Path(__file__).parent / "data/google_robotstxt_suite.json").read_text(encoding="utf-8"))
CASES = SUITE["cases"]


def _case_id(index_case: tuple[int, dict]) -> str:
    index, case = index_case
    return f"{case['test']}-{index}"


def test_the_suite_holds_every_case_of_google_robots_test():
    assert SUITE["count"] == len(CASES) == 145
    assert len(SUITE["bom_cases"]) == 5


@pytest.mark.parametrize("index_case", list(enumerate(CASES)), ids=list(map(_case_id, enumerate(CASES))))
def test_google_reference_case(index_case):
    """Through the urlserver's own path: the robots.txt fetch's DONE, the
    cached record it becomes, and the rules the frontier asks."""
    _, case = index_case
    body = case["robots"].encode("utf-8")
    done = Done(1, Status.FETCHED, 200, Specific.OK, 1, body=body)
    record = robots.record_for(robots.outcome(done, 0), 0.0, ttl=3600.0, retry=60.0, tries=0)
    rules = robots.RobotsRules(robots.unpack(robots.pack(record)), case["agent"])
    assert rules.allowed(case["url"]) is case["allowed"], (case["agent"], case["url"][:200])


@pytest.mark.parametrize("prefix", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"], ids=["whole", "two", "one"])
def test_a_fetched_robots_txt_with_a_whole_or_partial_bom_keeps_its_first_line(prefix):
    done = Done(1, Status.FETCHED, 200, Specific.OK, 1, body=prefix + DISALLOW_ALL.encode())
    record = robots.record_for(robots.outcome(done, 0), 0.0, ttl=3600.0, retry=60.0, tries=0)
    assert not robots.RobotsRules(record, "wreck").allowed("https://example.com/page")


@pytest.mark.parametrize("case", SUITE["bom_cases"], ids=lambda c: c["robots_hex"][:16])
def test_google_byte_order_mark_case_reads_the_lines_google_reads(case):
    rules = RobotsTxt(bytes.fromhex(case["robots_hex"]), "foo")
    assert (rules.directives, rules.unknown) == (case["valid_directives"], case["unknown_directives"])


# -- the web as WRECK meets it

DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


@pytest.mark.parametrize("body", [b"\xef\xbb\xbf" + DISALLOW_ALL.encode(), "\ufeff" + DISALLOW_ALL],
                         ids=["bytes", "decoded"])
def test_a_robots_txt_starting_with_a_byte_order_mark_keeps_its_first_line(body):
    assert not RobotsTxt(body, "wreck").allowed("https://example.com/page")


@pytest.mark.parametrize("agent_line", ["wreck", "wreck/1.0", "WRECK bot", "Wreck/2.0 (+https://example.com/bot)"])
def test_a_group_naming_wreck_by_its_product_token_is_wrecks(agent_line):
    body = f"User-agent: *\nAllow: /\n\nUser-agent: {agent_line}\nDisallow: /private/\n"
    rules = RobotsTxt(body, "wreck")
    assert not rules.allowed("https://example.com/private/x")
    assert rules.allowed("https://example.com/public/x")


def test_a_longer_product_token_is_another_crawler():
    body = "User-agent: wreckage\nDisallow: /\n"
    assert RobotsTxt(body, "wreck").allowed("https://example.com/x")


def test_a_crawl_delay_line_between_user_agent_lines_does_not_end_the_group():
    rules = RobotsTxt("User-agent: wreck\nCrawl-delay: 5\nUser-agent: *\nDisallow: /\n", "wreck")
    assert not rules.allowed("https://example.com/")
    assert not rules.allowed("https://example.com/any/page.html")
    assert rules.crawl_delay() == 5.0


def test_an_unknown_line_between_user_agent_lines_does_not_end_the_group():
    rules = RobotsTxt("User-agent: wreck\nNoindex: /x\nUser-agent: other\nDisallow: /\n", "wreck")
    assert not rules.allowed("https://example.com/page")


def test_crawl_delay_is_the_one_of_wrecks_group_else_of_the_star_group():
    both = "User-agent: *\nCrawl-delay: 10\n\nUser-agent: wreck\nCrawl-delay: 2.5\nDisallow: /x\n"
    assert RobotsTxt(both, "wreck").crawl_delay() == 2.5
    assert RobotsTxt(both, "otherbot").crawl_delay() == 10.0
    assert RobotsTxt("User-agent: *\nDisallow: /x\n", "wreck").crawl_delay() == 0.0


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", ""])
def test_a_crawl_delay_that_is_not_a_number_of_seconds_is_ignored(value):
    assert RobotsTxt(f"User-agent: *\nCrawl-delay: {value}\n", "wreck").crawl_delay() == 0.0


def test_sitemaps_are_read_from_anywhere_in_order_as_written():
    body = ("Sitemap: https://example.com/a.xml\nUser-agent: other\nSitemap: https://example.com/b.xml\n"
            "Disallow: /\nsite-map: https://example.com/c.xml # the last\n")
    assert RobotsTxt(body, "wreck").sitemaps() == [
        "https://example.com/a.xml", "https://example.com/b.xml", "https://example.com/c.xml"]
    assert RobotsTxt("", "wreck").sitemaps() == []


def _disallow_all_after(size: int) -> str:
    """`User-agent: *`, comments up to `size` bytes, then `Disallow: /`."""
    head = "User-agent: *\n"
    return head + "#" * (size - len(head) - 1) + "\nDisallow: /\n"


def test_rules_after_the_first_500_kib_are_not_read():
    assert not RobotsTxt(_disallow_all_after(MAX_PARSED - 20), "wreck").allowed("https://example.com/page")
    assert RobotsTxt(_disallow_all_after(MAX_PARSED), "wreck").allowed("https://example.com/page")


def test_a_line_longer_than_the_reference_limit_is_cut_and_the_next_lines_still_read():
    rules = RobotsTxt("User-agent: wreck\nDisallow: /" + "a" * MAX_LINE + "\nDisallow: /private\n", "wreck")
    cut = "a" * (MAX_LINE - len("Disallow: /"))
    assert not rules.allowed(f"https://example.com/{cut}zzz")
    assert rules.allowed(f"https://example.com/{cut[:-1]}zzz")
    assert not rules.allowed("https://example.com/private")
    assert rules.allowed("https://example.com/public")


def test_a_pattern_with_many_stars_answers_without_backtracking():
    rules = RobotsTxt("User-agent: *\nDisallow: /" + "*a" * 200 + "b\n", "wreck")
    assert rules.allowed("https://example.com/" + "a" * 2000)
    assert not rules.allowed("https://example.com/" + "a" * 2000 + "b")


def test_a_non_ascii_rule_matches_the_percent_encoded_url_wreck_fetches():
    rules = RobotsTxt("User-agent: *\nDisallow: /café\nDisallow: /%e6%97%a5\n", "wreck")
    assert not rules.allowed("https://example.com/caf%C3%A9/menu")
    assert not rules.allowed("https://example.com/%E6%97%A5")
    assert rules.allowed("https://example.com/cafe")


@pytest.mark.parametrize(("body", "path", "allowed"), [
    ("Disallow: /*.php\nAllow: /shop/\n", "/shop/cart.php", True),  # equal length: Allow
    ("Allow: /s\nDisallow: /shop/*.php\n", "/shop/cart.php", False),  # the longer rule
    ("Allow: /*.php$\nDisallow: /shop\n", "/shop/cart.php", True),
    ("Allow: /*.php$\nDisallow: /shop\n", "/shop/cart.php?x=1", False),
    ("Disallow: /shop/cart\nAllow: /shop/cart\n", "/shop/cart", True),
])
def test_the_longest_matching_rule_decides_and_allow_wins_a_tie(body, path, allowed):
    assert RobotsTxt("User-agent: *\n" + body, "wreck").allowed("https://example.com" + path) is allowed


def test_a_group_for_wreck_with_no_rule_leaves_the_star_group_aside():
    rules = RobotsTxt("User-agent: *\nDisallow: /\n\nUser-agent: wreck\nCrawl-delay: 1\n", "wreck")
    assert rules.allowed("https://example.com/page")
