"""wreck-crawl starts each store with a Unix-domain socket in its data
directory (docs/protocol.txt 6.6), where the spider's records go."""

from __future__ import annotations

from wreck.local.layout import Layout


def test_wreck_crawl_gives_each_store_a_socket_in_its_data_directory_unless_the_path_is_too_long(tmp_path):
    where = Layout(tmp_path, shards=2)
    assert [Layout.store_socket(d) for d in where.store_dirs] == [
        ["--unix", str(tmp_path / "store.sock")], ["--unix", str(tmp_path / "shard1" / "store.sock")]]
    assert Layout.store_socket(tmp_path / ("d" * 120)) == []  # no socket: its records go by TCP
