"""What an OpenAI-compatible server says about itself, asked without generating anything.

A run records these facts in its parameters, so that it says which weights answered, and
the response cache keys each request by them (``response_cache``), so that other weights
served under the same name (vLLM or SGLang restarted with another checkpoint) are never
answered with these weights' answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import openai

from db.errors import VetbenchError
from evaluator.chat_calls import ServerFacts

_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")  # "[Errno 111] Connection refused"
QUICK_TIMEOUT_S = 10.0  # the longest these questions wait: they are cheap


class ServerUnreachableError(VetbenchError, ValueError):
    """The server cannot be reached at all (refused, unknown host); the message says where."""


def connection_reason(error: BaseException | None) -> str:
    """Why a connection failed, without Python's ``[Errno N]`` prefix."""
    return _ERRNO.sub("", str(error)).strip()


def read_server_facts(
    client: openai.OpenAI,
    *,
    model: str,
    base_url: str,
    timeout: float,
    redact: Callable[[str], str],
) -> ServerFacts:
    """This model's entry in ``/models`` (its id; vLLM adds the weights it serves under an
    alias as ``root``) and the version at ``/version`` (vLLM).  A server that answers
    neither gives empty facts, and one whose list does not come in time gives facts
    marked not ``listed`` (what it serves is unknown); one that cannot be reached at all
    (the connection refused, the host unknown) raises :class:`ServerUnreachableError`: a
    run would only retry every item for nothing.  A slow answer is not that (the run's
    retries may get through)."""
    quick = client.with_options(timeout=min(timeout, QUICK_TIMEOUT_S), max_retries=0)
    model_id = model_root = version = None
    listed = True
    try:
        for entry in quick.models.list():
            if entry.id == model:
                model_id = entry.id
                root = (entry.model_extra or {}).get("root")
                if isinstance(root, str) and root != entry.id:
                    model_root = redact(root)[:300]
                break
    except openai.APITimeoutError:
        listed = False
    except openai.APIConnectionError as error:
        reason = connection_reason(error.__cause__ or error) or "no connection"
        raise ServerUnreachableError(
            f"cannot reach the server at {base_url} ({reason}): check that it is "
            "running and that --base-url names its host, port and path (e.g. "
            "http://127.0.0.1:8000/v1)"
        ) from None
    except (openai.OpenAIError, ValueError):
        pass  # no model list here (or not one in OpenAI's shape)
    if base_url.endswith("/v1"):
        try:
            answer = quick.get(base_url.removesuffix("/v1") + "/version", cast_to=object)
            found = answer.get("version") if isinstance(answer, dict) else None
            version = redact(str(found))[:100] if found is not None else None
        except (openai.OpenAIError, ValueError):
            pass
    return ServerFacts(model_id, model_root, version, listed=listed)
