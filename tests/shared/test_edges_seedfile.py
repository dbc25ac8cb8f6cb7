# wreck.seedfile on seed files as editors write them: a UTF-8 byte-order mark
# (Windows Notepad's default) cost the first seed ("\ufeffhttp://...: not a
# URL (skipped)"); CRLF lines, blanks and comments around the seeds.
from __future__ import annotations

from wreck.seedfile import read_lines, survey


def test_a_seed_file_with_a_bom_and_crlf_lines_keeps_every_seed(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes(b"\xef\xbb\xbfhttp://a.test/\r\n\r\n# comment\r\n  http://b.test/x  \r\nhttp://b\xc3\xbccher.test/\r\n")
    assert [text for _, _, text in read_lines(str(seeds), ())] == [
        "http://a.test/", "http://b.test/x", "http://bücher.test/"]
    found = survey(str(seeds), ())
    assert (len(found.good), found.problems) == (3, [])
