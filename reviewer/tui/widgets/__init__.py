"""Widgets of the review TUI, one module per region of the review screen."""
