"""How a backend is opened: the settings every model spec takes, as one frozen value.

``vetbench eval``, ``vetbench review`` (the evaluation screen) and the tests build a
:class:`BackendSettings` and hand it to ``open_backend(spec, settings)``
(:mod:`evaluator.backends.registry`); each backend takes what concerns it: local
models the device, batch size, prefix cache, chat template choice and threads, API
models the :class:`ApiSettings`.  Standard library only, so the CLI builds these
values without loading a model library.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TypedDict

from evaluator.backends.base import BackendError

__all__ = [
    "DEVICES",
    "DTYPES",
    "RECORDED_API_PARAMS",
    "RESPONSE_CACHE_PARAM",
    "ApiSettings",
    "BackendSettings",
    "ClientOptions",
    "parse_batch_size",
]

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16")
"""``auto``: bfloat16 on a GPU, and on a CPU with bfloat16 matrix units; float32 otherwise."""
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class ClientOptions(TypedDict, total=False):
    """Keyword arguments of ``ChatClient`` (and ``OpenAIBackend``, which passes them on);
    those left out take ``ChatClient``'s defaults."""

    base_url: str | None
    api_key_env: str
    concurrency: int
    timeout: float
    max_retries: int
    backoff_max_s: float
    use_cache: bool


@dataclass(frozen=True)
class ApiSettings:
    """The OpenAI-compatible client's settings (``--base-url`` ... ``--max-wait``)."""

    base_url: str | None = None  # None: api.openai.com (or OPENAI_BASE_URL)
    api_key_env: str = DEFAULT_API_KEY_ENV  # the variable holding the key, never the key
    concurrency: int = 4
    timeout: float = 60.0  # seconds to wait for one answer
    max_retries: int = 5
    max_wait: float = 60.0  # longest wait between attempts (caps Retry-After too)
    no_cache: bool = False  # ask the server for every answer; read and store no cached one

    def client_options(self) -> ClientOptions:
        return ClientOptions(
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            concurrency=self.concurrency,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff_max_s=self.max_wait,
            use_cache=not self.no_cache,
        )


RECORDED_API_PARAMS: Mapping[str, str] = {
    "base_url": "base_url",
    "api_key_env": "api_key_env",  # the variable's name, never the key
    "concurrency": "concurrency",
    "timeout": "timeout_s",
    "max_retries": "max_retries",
    "max_wait": "max_wait_s",
}
"""Each :class:`ApiSettings` field and the key a run's params record it under (the
OpenAI-compatible backend writes them; a resumed run reads them back)."""

RESPONSE_CACHE_PARAM = "response_cache"
"""Recorded False in a run's params when it ran with ``--no-cache``: its resumes do too,
so the answers it has not got yet never come from an older cached answer."""


def _recorded_api_value(name: str, value: object) -> object | None:
    """A recorded API setting of the type its field takes, else None (not recorded)."""
    if name in ("base_url", "api_key_env"):
        return value if isinstance(value, str) and value else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if name in ("concurrency", "max_retries"):
        return value if isinstance(value, int) else None
    return float(value)


def parse_batch_size(value: str | int) -> int | None:
    """``auto`` -> None (chosen per batch), else a positive integer."""
    if isinstance(value, int):
        number = value
    elif str(value).strip().lower() == "auto":
        return None
    else:
        try:
            number = int(str(value))
        except ValueError:
            raise BackendError(
                f"batch size must be 'auto' or a positive integer, not '{value}'"
            ) from None
    if number < 1:
        raise BackendError(f"batch size must be at least 1, not {number}")
    return number


@dataclass(frozen=True)
class BackendSettings:
    """Everything besides the model spec that decides how a model is run.

    A batch size that is neither ``auto`` nor a positive number raises
    :class:`~evaluator.backends.base.BackendError` at once, before any model is loaded.
    """

    device: str = "auto"  # auto: the GPU when there is one, else the CPU
    dtype: str = "auto"  # auto: bfloat16 on a GPU or a CPU with bf16 matrix units, else float32
    batch_size: str | int = "auto"  # sequences per batch (local models)
    prefix_cache: bool = True  # compute the shared few-shot prefix once
    chat_template: bool | None = None  # None: the model's own when it has one; False: plain
    threads: int | None = None  # CPU threads for local models (None: torch's choice)
    api: ApiSettings = field(default_factory=ApiSettings)

    def __post_init__(self) -> None:
        parse_batch_size(self.batch_size)
        if self.dtype not in DTYPES:
            raise BackendError(f"unknown dtype '{self.dtype}' (choose {', '.join(DTYPES)})")

    def resuming(
        self, recorded: Mapping[str, object], *, given: Collection[str] = ()
    ) -> BackendSettings:
        """These settings for resuming a run whose backend recorded ``recorded`` (its params):
        the recorded precision and API settings (server, key variable, concurrency, timeout,
        retries, wait) where none is given, and choices the run turned off (the prefix cache,
        the chat template, the response cache) stay off.
        ``given``: the :class:`ApiSettings` fields given again (on the command line), which
        win even at their defaults; a field set to another value than its default wins too."""
        recorded_dtype = recorded.get("dtype")
        dtype = (
            str(recorded_dtype)
            if self.dtype == "auto" and recorded_dtype in DTYPES[1:]
            else self.dtype
        )
        defaults = ApiSettings()
        kept = {}
        for name, key in RECORDED_API_PARAMS.items():
            value = _recorded_api_value(name, recorded.get(key))
            chosen = name in given or getattr(self.api, name) != getattr(defaults, name)
            if value is not None and not chosen:
                kept[name] = value
        if recorded.get(RESPONSE_CACHE_PARAM) is False:
            kept["no_cache"] = True
        return replace(
            self,
            api=replace(self.api, **kept),  # type: ignore[arg-type]
            dtype=dtype,
            prefix_cache=self.prefix_cache and recorded.get("prefix_cache") is not False,
            chat_template=False if recorded.get("chat_template") is False else self.chat_template,
        )
