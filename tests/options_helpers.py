# A value unlike each setting's default, for tests that check every setting
# travels unchanged (wreck-crawl's options, the kept settings file).
"""unlike_default(declared) -> a valid non-default value."""

from __future__ import annotations

from pathlib import Path

from wreck import options

# Values unlike the defaults for the fields a number rule cannot make up.
SAMPLES = {
    "user_agent": "test-bot/1 (+mailto:ops@example.test)", "robots_token": "test-bot", "scope": "any",
    "include": ("/a/",), "exclude": ("/b/", "/c/"), "accept_type": ("text/html", "image/*"),
    "dns": "127.0.0.1:5353", "hosts_file": "/etc/hosts", "allow_net": ("127.0.0.0/8", "::1/128"),
    "plugins": ("pattern=deny.txt",), "url_filter_cmd": "grep -v x", "recrawl": 7200.0, "recrawl_min": 60.0,
    "recrawl_max": 5e6, "feed_max_interval": 86400.0, "dns_max_ttl": 7200.0, "map_size": 1 << 30,
    "max_doc_size": 1 << 20, "robots_ttl": 600.0, "max_url_len": 4000, "sitemap_max_urls": 100,
    "retry_only": r"/p-\d+\.html$", "api_token_file": str(Path(__file__).parent / "urlserver" / "data" / "api-token"),
    "store_data": ("/srv/store0",), "peers": ("127.0.0.1:7001", "127.0.0.1:7011"),
    "crawl_id": "0123456789abcdef0123456789abcdef",
    "warc_dir": "/tmp/warcs", "warc_prefix": "MYCRAWL", "operator": "ops@example.test", "crawl_name": "test-crawl",
}


def unlike_default(d: options.Declared):
    """A valid value of setting `d` other than its default."""
    if d.name in SAMPLES:
        return SAMPLES[d.name]
    if d.is_bool:
        return not d.default
    return d.default + 1 if isinstance(d.default, int) else d.default + 0.5
