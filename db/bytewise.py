"""Text ordered bytewise on every database: what ``ORDER BY`` on an id means.

SQLite compares text bytewise (its ``BINARY`` collation); PostgreSQL in the database's
collation, which on an ``en_US.UTF-8`` server ignores case and punctuation at first
(``x:10`` before ``x:2`` bytewise, after it there; ``X:1`` after ``x:2`` bytewise, before
it there).  An order that picks items (``--limit``) must not depend on the database, so
such an ``ORDER BY`` names :func:`bytewise`: ``COLLATE "C"`` on PostgreSQL (bytewise in
UTF-8, which is also Python's ``sorted`` over code points), the column itself elsewhere.
The query stays one ordered query, sorted by the database.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import String
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class bytewise(FunctionElement[str]):  # noqa: N801 (an SQL construct, named like func.*)
    """``bytewise(column)``: the text column compared byte by byte (see the module)."""

    type = String()
    inherit_cache = True


@compiles(bytewise)
def _as_is(element: bytewise, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)  # SQLite's BINARY: already bytewise


@compiles(bytewise, "postgresql")
def _collate_c(element: bytewise, compiler: SQLCompiler, **kw: Any) -> str:
    return f'{compiler.process(element.clauses, **kw)} COLLATE "C"'
