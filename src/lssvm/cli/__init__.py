"""Command line (top layer)."""
