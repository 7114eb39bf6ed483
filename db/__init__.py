"""Storage for vetbench: tables, the engine factory, migrations, import and export.

Nothing here imports Textual, torch or transformers.
"""
