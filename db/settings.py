"""Project settings kept in the database, so every annotator's process sees the same ones."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sqlmodel import Session

from db.audit import record_audit
from db.errors import VetbenchError
from db.json_types import JsonObject, fields_json
from db.models import Setting
from db.visible_text import one_line


@dataclass(frozen=True)
class SettingSpec:
    name: str
    default: str
    help: str
    minimum: int | None = None  # for integer settings
    maximum: int | None = None
    pattern: str | None = None  # for text settings: the whole value must match
    max_length: int | None = None  # for text settings
    choices: tuple[str, ...] = ()  # for settings that name one of a few ways
    fraction: bool = False  # a number from 0 to 1, such as 0.8
    strictly_between: tuple[float, float] | None = None  # a fraction inside these bounds


SETTINGS: dict[str, SettingSpec] = {
    spec.name: spec
    for spec in (
        SettingSpec(
            "overlap", "2", "independent judgments each item needs (k)", minimum=1, maximum=100
        ),
        SettingSpec(
            "duplicate_threshold",
            "90",
            "similarity (0-100) above which an imported item is a suspected duplicate",
            minimum=0,
            maximum=100,
        ),
        SettingSpec(
            "gold_rate",
            "0",
            "percent of the items served that are gold items, for calibration (0: none)",
            minimum=0,
            maximum=50,
        ),
        SettingSpec(
            "license",
            "unknown",
            "the license written into dataset cards of exports (a Hugging Face license "
            "identifier: cc-by-4.0, mit, other, ...)",
            pattern=r"[a-z0-9][a-z0-9.+-]*",
            max_length=64,
        ),
        SettingSpec(
            "calibration_items",
            "0",
            "a new annotator's first N items are gold items, while there are enough",
            minimum=0,
            maximum=500,
        ),
        SettingSpec(
            "routing",
            "fixed",
            "fixed: every item gets `overlap` judgments; adaptive: judgments until the "
            "consensus is confident, up to `max_overlap`",
            choices=("fixed", "adaptive"),
        ),
        SettingSpec(
            "max_overlap",
            "3",
            "adaptive routing: most judgments an item gets before an uncertain one goes to "
            "the lead",
            minimum=1,
            maximum=100,
        ),
        SettingSpec(
            "target_confidence",
            "0.95",
            "adaptive routing: the consensus confidence at which an item needs no more judgments",
            fraction=True,
            strictly_between=(0.5, 1.0),
        ),
        SettingSpec(
            "calibration_pass",
            "0",
            "share of the first calibration_items gold items a person must match before "
            "their judgments count, with a second try on other gold items (0: no gate)",
            fraction=True,
        ),
    )
}


class SettingError(VetbenchError, ValueError):
    pass


def stored_setting(session: Session, name: str) -> str:
    """The value stored for ``name`` as it is, even one that is not valid (for showing and
    replacing it); readers that use a setting call :func:`get_setting`."""
    spec = SETTINGS.get(name)
    if spec is None:
        raise SettingError(f"unknown setting '{name}' (known: {', '.join(SETTINGS)})")
    row = session.get(Setting, name)
    return row.value if row is not None else spec.default


def get_setting(session: Session, name: str) -> str:
    """The value of ``name``, checked as ``config set`` checks it: a value written into the
    database by other means that is not valid is a :class:`SettingError` naming it."""
    value = stored_setting(session, name)
    try:
        return _validated(name, value)
    except SettingError as error:
        raise SettingError(
            f"the stored setting {name} is not valid ({error}); a lead sets it again with "
            f"`vetbench config set {name} VALUE`"
        ) from None


@dataclass(frozen=True)
class SettingListing:
    """One line of ``vetbench config list``: a setting's stored value and what it means."""

    name: str
    value: str
    default: str
    valid: bool  # False: written around vetbench; a lead sets it again
    help: str

    def to_json(self) -> JsonObject:
        return fields_json(self)


def list_settings(session: Session) -> list[SettingListing]:
    """Every setting, in the order of :data:`SETTINGS`, as stored (invalid ones said so)."""
    listed = []
    for name, spec in SETTINGS.items():
        value = stored_setting(session, name)
        try:
            _validated(name, value)
            valid = True
        except SettingError:
            valid = False
        listed.append(SettingListing(name, value, spec.default, valid, spec.help))
    return listed


def get_int_setting(session: Session, name: str) -> int:
    return int(get_setting(session, name))


def get_fraction_setting(session: Session, name: str) -> float:
    return float(get_setting(session, name))


def _validated(name: str, value: str) -> str:
    """``value`` as ``name`` stores it (a number without sign or leading zeros), or a
    :class:`SettingError` that says why it cannot be."""
    spec = SETTINGS.get(name)
    if spec is None:
        raise SettingError(f"unknown setting '{name}' (known: {', '.join(SETTINGS)})")
    if spec.minimum is not None:
        try:
            number = int(value)
        except ValueError:
            raise SettingError(f"{name} must be a whole number, got {_quoted(value)}") from None
        if number < spec.minimum:
            raise SettingError(f"{name} must be at least {spec.minimum}, got {number}")
        if spec.maximum is not None and number > spec.maximum:
            raise SettingError(f"{name} must be at most {spec.maximum}, got {one_line(value, 40)}")
        value = str(number)
    if spec.choices and value not in spec.choices:
        raise SettingError(f"{name} must be one of {', '.join(spec.choices)}, got {_quoted(value)}")
    if spec.fraction:
        try:
            share = float(value)
        except ValueError:
            share = math.nan
        if not 0 <= share <= 1:  # NaN fails too
            raise SettingError(
                f"{name} must be a number from 0 to 1 (such as 0.8), got {_quoted(value)}"
            )
        bounds = spec.strictly_between
        if bounds is not None and not bounds[0] < share < bounds[1]:
            raise SettingError(
                f"{name} must be above {bounds[0]:g} and below {bounds[1]:g}, got {_quoted(value)}"
            )
        value = f"{share:g}"
    if spec.max_length is not None and len(value) > spec.max_length:
        raise SettingError(
            f"{name} is {len(value):,} characters long (limit {spec.max_length}): {_quoted(value)}"
        )
    if spec.pattern is not None and not re.fullmatch(spec.pattern, value):
        raise SettingError(
            f"{name} must be an identifier such as cc-by-4.0 or mit "
            f"(lower case letters, digits, '.', '+', '-'), got {_quoted(value)}"
        )
    return value


def _quoted(value: str) -> str:
    """A refused value as the error quotes it: on one line, cut at 40 characters."""
    return f"'{one_line(value, 40)}'"


def set_setting(session: Session, name: str, value: str) -> None:
    """Validate and store a setting (the caller commits)."""
    value = _validated(name, value)
    row = session.get(Setting, name)
    if row is None:
        session.add(Setting(key=name, value=value))
    else:
        row.value = value
        session.add(row)


@dataclass(frozen=True)
class SettingChange:
    name: str
    old: str
    new: str

    @property
    def changed(self) -> bool:
        return self.new != self.old


def change_setting(session: Session, name: str, value: str, *, actor: str) -> SettingChange:
    """Validate, store and audit a setting a person changes (the caller commits).

    Setting the value it already has stores nothing and leaves no audit event: nothing
    changed.  ``SettingChange.changed`` says which it was."""
    old = stored_setting(session, name)  # a value that is not valid can be replaced
    new = _validated(name, value)
    if new != old:
        set_setting(session, name, new)
        record_audit(session, actor, "config", name, old=old, new=new)
    return SettingChange(name=name, old=old, new=new)


# The settings each routing reads (db.routing): the others wait until routing changes.
_ROUTING_READS = {"fixed": ("overlap",), "adaptive": ("max_overlap", "target_confidence")}


def idle_under_routing(session: Session, name: str) -> str | None:
    """A note when ``name`` is read by the routing that is not in force (``max_overlap``
    while routing is fixed): the change is kept, and takes effect when routing changes."""
    routing = get_setting(session, "routing")
    for other, names in _ROUTING_READS.items():
        if name in names and other != routing:
            return (
                f"{name} is read by {other} routing; routing is {routing}, so it takes "
                f"effect after `vetbench config set routing {other}`"
            )
    return None
