"""The review domain and the interfaces of every area.

At the top level (``reviewer/*.py``, ``reviewer/agreement/``): the review domain,
plain Python over ``db`` (queue, judging, adjudication, agreement, report); it
imports neither Textual nor the evaluator nor the interfaces.  ``reviewer/cli``
and ``reviewer/tui`` are the people-facing interfaces for every area.  See
ARCHITECTURE.md; ``tests/test_import_hygiene.py`` enforces it.
"""
