"""is_normal() (wreck/urlnorm.py's one test of "already normal", the fast path
of normalize() in the spider and the urlserver): every URL it accepts is its
own normal form by ada-url's parse (normalize_parsed), so both may skip the
parse for it; and the usual shapes of links are accepted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wreck.urlnorm import is_normal, normal_absolute, normalize, normalize_parsed

_HOST_CHARS = "abcxyz019-_.XN"
_PATH_CHARS = "aZ09-._~!$&'()*+,;=:@/?%#\\ \"<>`{}|^[]\téAEF2"
_hosts = st.one_of(
    st.text(_HOST_CHARS, min_size=1, max_size=12),
    st.sampled_from(["xn--bcher-kva.example", "xn--zz.example", "127.0.0.1", "127.1", "0x7f.0.0.1",
                     "1.2.3.04", "256.1.1.1", "a.b.123", "a.0x1f", "localhost", "example.com."]),
)
_ports = st.one_of(st.just(""), st.sampled_from([":80", ":443", ":8080", ":0", ":080", ":65535", ":65536", ":"]))
_SESSIONS = [";jsessionid=A1", "?PHPSESSID=1", "&sid=", "&SID=" + "a" * 32, ";sid=1", "?cfid=2&cftoken=3",
             "&aspsessionidXY=1", "&ASPSESSIONID12=1", "?session_id=", "&Sessionid=x", "?jsessionidx=1"]
_paths = st.lists(st.one_of(st.text(_PATH_CHARS, max_size=8), st.sampled_from(_SESSIONS)),
                  max_size=5).map("".join)


@settings(max_examples=3000)
@given(st.sampled_from(["http://", "https://", "HTTP://", "ftp://"]), _hosts, _ports, _paths)
def test_every_accepted_url_is_its_own_normal_form(scheme, host, port, path):
    url = f"{scheme}{host}{port}/{path}"
    if is_normal(url):
        assert normalize_parsed(url) == url
        assert normalize_parsed(url, "http://other.example/a/b") == url


@settings(max_examples=2000)
@given(st.sampled_from(["http://", "https://", "HTTP://"]), _hosts, _ports, st.sampled_from(["", "?", "?x=1/2"]), _paths)
def test_a_url_without_a_path_is_taken_only_with_the_path_the_standard_adds(scheme, host, port, mark, query):
    url = f"{scheme}{host}{port}{mark}{query if mark else ''}"
    fast = normal_absolute(url)
    if fast is not None:
        assert fast == normalize_parsed(url) == normalize(url)


@given(st.text(max_size=60))
def test_arbitrary_text_accepted_only_if_normal(text):
    for url in (text, "http://a.example/" + text):
        if is_normal(url):
            assert normalize_parsed(url) == url


def test_common_links_take_the_fast_path():
    for url in ["http://h1.example.com/p/3?x=1", "https://www.example.org/", "http://127.0.0.1:8080/a/b.html",
                "https://example.com/wiki/Caf%C3%A9", "http://a-b_c.example/x;y=1,2?q=a+b&r=%2F",
                "https://example.com:8443/x/y/"]:
        assert is_normal(url), url
        assert normalize_parsed(url) == url


def test_urls_not_in_normal_form_are_normalised():
    cases = {
        "HTTP://Example.COM/a": "http://example.com/a",
        "http://example.com": "http://example.com/",
        "http://example.com:80/a": "http://example.com/a",
        "http://example.com/a/../b": "http://example.com/b",
        "http://example.com/%7Euser": "http://example.com/~user",
        "http://example.com/a%2fb": "http://example.com/a%2Fb",
        "http://example.com/a#frag": "http://example.com/a",
        "http://user:pw@example.com/": "http://example.com/",
        "http://127.1/": "http://127.0.0.1/",
        "http://example.com/s;jsessionid=A1/p": "http://example.com/s/p",
        "http://example.com/x?a=1&PHPSESSID=z": "http://example.com/x?a=1",
    }
    for raw, want in cases.items():
        assert not is_normal(raw), raw
        assert normalize(raw) == want == normalize_parsed(raw)
    assert normalize("b/c", "http://example.com/a/") == "http://example.com/a/b/c"
    assert normalize("javascript:alert(1)") is None
