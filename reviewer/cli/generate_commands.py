"""CLI commands: generate (filled in by its feature)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the `vetbench` group."""
