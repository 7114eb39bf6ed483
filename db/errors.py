"""The one base of every expected, user-facing error.

An error a person can act on (bad input, a refused action, a missing run, a fault
of the database or the model cache) derives from :class:`VetbenchError`, and its
message is the one line to show: the command line prints it without a traceback and
the app shows it as a notice.  Anything else is a bug and is never caught broadly.
Standard library only, so every layer can import it.
"""

from __future__ import annotations


class VetbenchError(Exception):
    """An expected error; ``str(error)`` is the one line a person reads."""
