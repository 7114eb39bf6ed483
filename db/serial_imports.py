"""Lazy imports of libraries that two threads must not import at once.

scikit-learn's modules import each other in a circle: two threads importing it for the
first time together get "cannot import name '_MetadataRequester' from partially
initialized module" (or Python's ``_DeadlockError``).  The review app computes in worker
threads, and its screens' workers import these libraries on first use (they take a
second or more): a lead who opened F3 (the consensus: crowd-kit, whose package imports
scikit-learn) and then F2 at once (Cohen's kappa: scikit-learn) saw the app end with
that error.  So every lazy import of scikit-learn, of crowd-kit (``db.dawid_skene``
imports only its Dawid–Skene module now, but a whole package may follow) and of the
other statistics libraries (scipy, statsmodels, krippendorff) is made inside
:func:`one_thread_importing`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_IMPORTING = threading.RLock()  # re-entrant: one such import may come inside another


@contextmanager
def one_thread_importing() -> Iterator[None]:
    """Hold the lock of these imports while the ``with`` block imports them."""
    with _IMPORTING:
        yield
