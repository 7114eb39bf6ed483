"""What models do: prompts, backends, answer extraction, metrics, the run loop, item generation.

Nothing here imports Textual; torch and transformers are imported inside the
functions that need them.
"""
