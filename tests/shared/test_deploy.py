"""The listen rule and where secrets come from."""

import pytest

from wreck.deploy import DeployError, check_listen, is_loopback, secret_from


@pytest.mark.parametrize("host", ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_secret(host):
    assert is_loopback(host)
    check_listen(host, b"")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.org"])
def test_beyond_loopback_a_secret_is_required(host):
    with pytest.raises(DeployError, match="without a shared secret"):
        check_listen(host, b"")
    check_listen(host, b"x" * 16)


def test_secret_file_wins_over_environment_and_short_secrets_are_refused():
    assert secret_from("file-secret-0123456\nignored\n", "env-secret-0123456789") == b"file-secret-0123456"
    assert secret_from(None, "env-secret-0123456789") == b"env-secret-0123456789"
    assert secret_from(None, None) == b""
    with pytest.raises(DeployError, match="at least 16"):
        secret_from("short", None)
