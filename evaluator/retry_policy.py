"""When to retry an API call and how long to wait: ``Retry-After`` first, else jittered backoff.

Rate limits (429), lock and request timeouts (408, 409), server errors (5xx),
timeouts, dropped connections and unreadable bodies are worth another try; any
other 4xx is not.  A server's ``Retry-After`` (seconds or an HTTP date) or
``retry-after-ms`` wins over the exponential schedule; every wait is capped.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from datetime import UTC, datetime

import openai
from tenacity import RetryCallState
from tenacity.wait import wait_base, wait_random_exponential

RETRYABLE_STATUS = frozenset({408, 409, 429})


class MalformedResponseError(Exception):
    """The server answered, but not with a chat completion we can read (worth a retry)."""


def is_retryable(error: BaseException) -> bool:
    """True for transport failures and server-side errors that another attempt may fix."""
    if isinstance(error, openai.APIConnectionError | MalformedResponseError):
        return True  # includes APITimeoutError
    if isinstance(error, openai.APIStatusError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds a server asks us to wait, from ``retry-after-ms`` or ``Retry-After``; None if absent.

    ``Retry-After`` is either a number of seconds or an HTTP date (RFC 9110).
    Unreadable values count as absent; dates in the past mean "now" (0).
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        seconds = _finite_number(milliseconds)
        if seconds is not None:
            return max(0.0, seconds / 1000)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _finite_number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _finite_number(text: str) -> float | None:
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def retry_after_of(error: BaseException | None) -> float | None:
    """The server-requested wait carried by an HTTP error, if any."""
    if isinstance(error, openai.APIStatusError):
        return parse_retry_after(error.response.headers)
    return None


class wait_retry_after_or_backoff(wait_base):  # noqa: N801 - tenacity's naming style
    """Wait what the server asked for (``Retry-After``), else exponential backoff with full
    jitter; never more than ``maximum`` seconds."""

    def __init__(self, *, initial: float, maximum: float) -> None:
        self.maximum = maximum
        self.backoff = wait_random_exponential(multiplier=initial, max=maximum)

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None and outcome.failed else None
        requested = retry_after_of(error)
        if requested is not None:
            return min(requested, self.maximum)
        return min(self.backoff(retry_state), self.maximum)
