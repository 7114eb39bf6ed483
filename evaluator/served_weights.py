"""Whether a resumed API run talks to the weights it started with.

An OpenAI-compatible backend records what its server said it serves when a run started
(``server_model_root``: vLLM's ``root``, the weights behind the name; ``server_version``:
its ``/version``).  A resume opens the backend again, and the server says it again: where
both the record and the server say a fact and they differ, the resume is refused (its
answers would come from other weights than the run's first ones, one run mixing two
models); where either says nothing (a run from before servers were asked, a server that
does not say), the resume goes on, and a note says what could not be checked.  A fact
the server says and the run never recorded is recorded by the resume that meets it
(:func:`facts_to_record`), so the next resume is checked against it; the answers the run
holds from before are not known to come from those weights, and the note says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from db.json_types import JsonValue
from evaluator.backends.base import BackendInfo
from evaluator.run_create import RunSetupError

__all__ = ["SERVED_FACTS", "check_served_weights", "facts_to_record"]

SERVED_FACTS: Mapping[str, str] = {
    "server_model_root": "weights",
    "server_version": "server version",
}
"""The facts of a run's params that say which weights answer, and their names in text."""


def check_served_weights(
    run_id: int, recorded: Mapping[str, JsonValue], current: BackendInfo
) -> str | None:
    """Refuse (a :class:`RunSetupError`, one line naming both) to resume run ``run_id``,
    whose backend params are ``recorded``, with a server that says it serves other weights
    (or runs another version) than it said when the run started.  Returns a note when
    some fact could not be compared (one side does not say it), None when all were, or
    for backends that are not served (a local model names its own weights)."""
    if current.backend != "openai":
        return None
    where = current.params.get("base_url") or "the server"
    changed = []
    unchecked = []
    for key, name in SERVED_FACTS.items():
        before, now = recorded.get(key), current.params.get(key)
        if before is not None and now is not None:
            if before != now:
                changed.append(f"{name}: {before!s} then, {now!s} now")
        elif before is not None:
            unchecked.append(f"run {run_id} recorded {name} {before!s}, the server says none now")
        elif now is not None:
            unchecked.append(f"the server says {name} {now!s}, run {run_id} recorded none")
    if changed:
        raise RunSetupError(
            f"run {run_id} cannot resume: {where} does not serve {current.model} as it did "
            f"when the run started ({'; '.join(changed)}), and one run must not mix two "
            f"models' answers: start a new run (vetbench eval --model openai:{current.model})"
        )
    if unchecked:
        note = (
            f"{'; '.join(unchecked)}: that the server serves the weights run {run_id} "
            "started with is not checked"
        )
        recording = facts_to_record(recorded, current)
        if recording:
            names = " and ".join(SERVED_FACTS[key] for key in recording)
            note += (
                f"; run {run_id} now records the {names} the server says, and a later "
                f"resume is checked against them (its answers from before this resume "
                "are not known to come from them)"
            )
        return note
    if not any(key in recorded for key in SERVED_FACTS):
        return (
            f"neither run {run_id}'s record nor the server says which weights it serves: "
            f"that the server serves the weights run {run_id} started with is not checked"
        )
    return None


def facts_to_record(
    recorded: Mapping[str, JsonValue], current: BackendInfo
) -> dict[str, JsonValue]:
    """The served facts the server says now and the run's record (``recorded``) lacks:
    the session that meets them records them, so that from then on a resume is checked
    (a run started before servers were asked, or against one that did not say, is
    otherwise never checked at all).  A fact the record has is never replaced here."""
    if current.backend != "openai":
        return {}
    return {
        key: current.params[key]
        for key in SERVED_FACTS
        if recorded.get(key) is None and current.params.get(key) is not None
    }
