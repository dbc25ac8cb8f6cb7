"""wreck.hostsfile, the --hosts reader: every line of an ordinary /etc/hosts
is taken, and the first line that is not 'ADDRESS NAME...' is an error naming
the file and the line (it used to be skipped without a word)."""

from __future__ import annotations

import pytest

from wreck import hostsfile

DEBIAN = """\
127.0.0.1\tlocalhost
127.0.1.1\tbox.example.org\tbox

# The following lines are desirable for IPv6 capable hosts
::1     localhost ip6-localhost ip6-loopback
ff02::1 ip6-allnodes
ff02::2 ip6-allrouters
fe80::1%lo0 link.test
10.0.0.7 under_score.test Trailing.Dot.test.   # a comment after the names
"""


def test_an_ordinary_etc_hosts_is_read_whole():
    table = hostsfile.parse(DEBIAN)
    assert table["localhost"] == "127.0.0.1"  # the first line naming a host wins
    assert table["box"] == table["box.example.org"] == "127.0.1.1"
    assert table["ip6-allrouters"] == "ff02::2"
    assert table["link.test"] == "fe80::1%lo0"
    assert table["under_score.test"] == table["trailing.dot.test"] == "10.0.0.7"


@pytest.mark.parametrize("line,words", [
    ("127.0.0.256 a.test", "'127.0.0.256' is not an IP address"),
    ("127.0.0.2", "127.0.0.2 names no host"),
    ("127.0.0.2 a..test", "'a..test' is not a host name"),
    ("127.0.0.2 " + "a" * 64 + ".test", "is not a host name"),
    ("127.0.0.2 " + "a." * 127 + "test", "is not a host name"),
    ("127.0.0.2 café.test", "'café.test' is not a host name"),
    ("127.0.0.2 a.test:8080", "'a.test:8080' is not a host name"),
])  # fmt: skip
def test_a_line_that_is_not_address_name_is_named_with_its_number(line, words):
    with pytest.raises(hostsfile.HostsFileError) as err:
        hostsfile.parse(DEBIAN + line + "\n", "--hosts h.txt")
    assert str(err.value).startswith("--hosts h.txt line 10: "), err.value
    assert words in str(err.value)


def test_a_file_that_is_not_utf8_is_named_with_the_line_of_its_first_bad_byte(tmp_path):
    path = tmp_path / "h.txt"
    path.write_bytes(b"127.0.0.2 a.test\n127.0.0.3 caf\xe9.test\n")
    with pytest.raises(hostsfile.HostsFileError, match=r"h.txt line 2: not UTF-8 text"):
        hostsfile.read(str(path))
