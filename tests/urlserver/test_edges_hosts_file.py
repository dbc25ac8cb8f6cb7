# wreck.hostsfile.parse (the --hosts reader) on a hosts file as a Windows editor saves it: a
# UTF-8 byte-order mark made the first entry's address unreadable, and the
# entry was dropped without a word.
from __future__ import annotations

from wreck.hostsfile import parse as parse_hosts


def test_a_hosts_file_with_a_bom_and_crlf_lines_keeps_its_first_entry():
    text = "\ufeff127.0.0.2 a.test\r\n# comment\r\n127.0.0.3 B.test. alias.test\r\n"
    assert parse_hosts(text) == {"a.test": "127.0.0.2", "b.test": "127.0.0.3", "alias.test": "127.0.0.3"}
