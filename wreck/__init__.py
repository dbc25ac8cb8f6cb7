"""WRECK's extension points (see docs/plugins.md)."""
