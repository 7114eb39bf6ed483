"""What people do: the review TUI, the CLI, agreement statistics and adjudication.

Nothing here imports torch or transformers at import time.
"""
