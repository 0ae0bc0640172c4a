"""OpenAI-compatible chat client that returns pydantic-validated JSON.

Settings come from arguments first, then ``MEMFLOW_LLM_*`` environment variables (read when
:meth:`LlmSettings.from_env` is called, never at import). A malformed or invalid reply is retried
once with the validation error shown to the model; a timeout, connection failure, rate limit or
5xx is retried once too; then :class:`~memflow.errors.ExtractionError` is raised.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Any, TypeVar, cast

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memflow.errors import ConfigurationError, ExtractionError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

T = TypeVar("T", bound=BaseModel)

# OpenAI's structured outputs reject these JSON-schema keywords; pydantic still enforces them.
_UNSUPPORTED_KEYWORDS = frozenset(
    {"default", "title", "minLength", "maxLength", "minItems", "maxItems", "pattern", "format"}
)


class Usage(BaseModel):
    """Calls made to the LLM endpoint and the tokens it reported."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class LlmSettings(BaseModel):
    """Where and how to call the chat model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=4, ge=1)
    # Extra attempts after a malformed reply or a transient failure (so 1 = two attempts at most).
    max_retries: int = Field(default=1, ge=0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_output_tokens: int | None = Field(default=None, ge=1)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LlmSettings:
        """Build settings from arguments, then MEMFLOW_LLM_BASE_URL / _MODEL / _API_KEY."""
        source = os.environ if env is None else env
        values = {k: v for k, v in overrides.items() if v is not None}
        values.setdefault("base_url", source.get("MEMFLOW_LLM_BASE_URL") or None)
        if "model" not in values:
            model = source.get("MEMFLOW_LLM_MODEL")
            if not model:
                raise ConfigurationError(
                    "no LLM model configured: pass model=... or set MEMFLOW_LLM_MODEL "
                    "(and MEMFLOW_LLM_BASE_URL for a non-OpenAI endpoint)"
                )
            values["model"] = model
        values.setdefault(
            "api_key", source.get("MEMFLOW_LLM_API_KEY") or source.get("OPENAI_API_KEY") or None
        )
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ConfigurationError(f"invalid LLM settings: {exc}") from exc

    @staticmethod
    def configured(env: Mapping[str, str] | None = None) -> bool:
        """True when the environment names an LLM model (so the ``llm`` path can be used)."""
        return bool((os.environ if env is None else env).get("MEMFLOW_LLM_MODEL"))


def load_prompt(name: str, **values: str) -> str:
    """Read ``memflow/prompts/<name>.md`` and substitute ``$placeholders`` with ``values``."""
    path = resources.files("memflow").joinpath("prompts", f"{name}.md")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigurationError(f"prompt {name!r} is missing from memflow/prompts") from exc
    try:
        return Template(text).substitute(values) if values else text
    except KeyError as exc:
        raise ConfigurationError(f"prompt {name!r} needs a value for {exc}") from exc


def _strip_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            # Keys here are field/definition names, not keywords: keep them all.
            out[key] = {name: _strip_schema(sub) for name, sub in value.items()}
        elif key not in _UNSUPPORTED_KEYWORDS:
            out[key] = _strip_schema(value)
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form OpenAI's strict structured outputs accept."""
    schema: dict[str, Any] = _strip_schema(model.model_json_schema())
    return schema


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        lines = [
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()[:8]
        ]
        return "; ".join(lines)
    return str(exc) or exc.__class__.__name__


class LlmClient:
    """Thread-safe wrapper around ``openai.OpenAI`` for JSON-schema replies."""

    def __init__(self, settings: LlmSettings | None = None, **overrides: Any) -> None:
        self.settings = settings if settings is not None else LlmSettings.from_env(**overrides)
        api_key = self.settings.api_key
        if not api_key:
            if self.settings.base_url is None:
                raise ConfigurationError(
                    "no API key for the OpenAI endpoint: set MEMFLOW_LLM_API_KEY or OPENAI_API_KEY"
                    " (or MEMFLOW_LLM_BASE_URL for a local OpenAI-compatible server)"
                )
            api_key = "unused"  # local servers (Ollama, vLLM) accept any key
        try:
            self._openai = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=api_key,
                timeout=self.settings.timeout_s,
                max_retries=0,
            )
        except openai.OpenAIError as exc:
            raise ConfigurationError(f"cannot create the OpenAI client: {exc}") from exc
        self._slots = threading.BoundedSemaphore(self.settings.max_concurrency)
        self._lock = threading.Lock()
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        """Everything this client has used since it was created."""
        with self._lock:
            return self._usage.model_copy()

    @property
    def endpoint(self) -> str:
        return f"{self.settings.model} at {self.settings.base_url or 'api.openai.com'}"

    def close(self) -> None:
        self._openai.close()

    def __enter__(self) -> LlmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete_json(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        schema_name: str | None = None,
    ) -> tuple[T, Usage]:
        """Ask for a reply matching ``schema``; return it validated, with this call's usage."""
        response_format = {
            "type": "json_schema",
            "json_schema": {
                "name": schema_name or schema.__name__,
                "schema": strict_json_schema(schema),
                "strict": True,
            },
        }
        conversation = list(messages)
        used = Usage()
        failure = _Failure("no attempt was made", usage=Usage())
        with self._slots:
            for _attempt in range(self.settings.max_retries + 1):
                try:
                    reply = self._call(conversation, response_format)
                except _Failure as exc:
                    failure = exc
                else:
                    used = used + reply.usage
                    try:
                        return self._parse(reply.text, schema), self._record(used)
                    except _Failure as exc:
                        exc.usage = Usage()  # already counted with the reply
                        failure = exc
                used = used + failure.usage
                if failure.fatal:
                    break
                if failure.malformed:
                    conversation = _ask_again(messages, failure)
        self._record(used)
        cause = failure.__cause__ if isinstance(failure.__cause__, Exception) else failure
        if failure.fatal:
            raise ExtractionError(f"LLM {self.endpoint} failed: {failure}") from cause
        attempts = self.settings.max_retries + 1
        raise ExtractionError(
            f"LLM {self.endpoint} gave no valid reply after {attempts} attempt(s): {failure}; "
            "nothing was written (check the endpoint, or use extractor='rules')"
        ) from cause

    def _record(self, used: Usage) -> Usage:
        with self._lock:
            self._usage = self._usage + used
        return used

    def _call(
        self, conversation: list[dict[str, str]], response_format: dict[str, Any]
    ) -> _Content:
        max_tokens = self.settings.max_output_tokens
        try:
            response = self._openai.chat.completions.create(
                model=self.settings.model,
                messages=cast("list[ChatCompletionMessageParam]", conversation),
                response_format=cast("ResponseFormatJSONSchema", response_format),
                temperature=self.settings.temperature,
                max_tokens=openai.omit if max_tokens is None else max_tokens,
            )
        except openai.APITimeoutError as exc:
            raise _Failure(f"no reply within {self.settings.timeout_s:g} s") from exc
        except openai.APIConnectionError as exc:
            raise _Failure(f"cannot connect: {exc}") from exc
        except openai.APIStatusError as exc:
            transient = exc.status_code >= 500 or exc.status_code in (408, 409, 429)
            raise _Failure(f"HTTP {exc.status_code}: {exc.message}", fatal=not transient) from exc
        except openai.OpenAIError as exc:
            raise _Failure(str(exc), fatal=True) from exc
        usage = Usage(calls=1)
        if response.usage is not None:
            usage = Usage(
                calls=1,
                prompt_tokens=response.usage.prompt_tokens or 0,
                completion_tokens=response.usage.completion_tokens or 0,
            )
        if not response.choices:
            raise _Failure("the reply has no choices", usage=usage, malformed=True)
        choice = response.choices[0]
        content = choice.message.content
        if choice.finish_reason == "length":
            raise _Failure(
                "the reply was cut off by the output token limit",
                usage=usage,
                malformed=True,
                content=content,
            )
        if not content:
            refusal = getattr(choice.message, "refusal", None)
            reason = f"the model refused: {refusal}" if refusal else "the reply is empty"
            raise _Failure(reason, usage=usage, malformed=True)
        return _Content(content, usage)

    @staticmethod
    def _parse(content: str, schema: type[T]) -> T:
        text = content.strip()
        if text.startswith("```"):
            # Some servers wrap JSON in a Markdown fence despite response_format.
            text = text.strip("`").removeprefix("json").strip()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _Failure(
                f"not JSON ({exc.msg} at char {exc.pos})", malformed=True, content=content
            ) from exc
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            raise _Failure(
                f"does not match the schema: {_describe(exc)}", malformed=True, content=content
            ) from exc


class _Content:
    def __init__(self, text: str, usage: Usage) -> None:
        self.text = text
        self.usage = usage


class _Failure(Exception):
    """One failed attempt: transient (retry), malformed (retry with feedback) or fatal."""

    def __init__(
        self,
        message: str,
        *,
        usage: Usage | None = None,
        malformed: bool = False,
        fatal: bool = False,
        content: str | None = None,
    ) -> None:
        super().__init__(message)
        self.usage = usage if usage is not None else Usage(calls=1)
        self.malformed = malformed
        self.fatal = fatal
        self.content = content


def _ask_again(messages: list[dict[str, str]], failure: _Failure) -> list[dict[str, str]]:
    retry = [*messages]
    if failure.content:
        retry.append({"role": "assistant", "content": failure.content[:4000]})
    retry.append(
        {
            "role": "user",
            "content": f"That reply was not valid: {failure}. Reply again with only one JSON "
            "object that matches the schema.",
        }
    )
    return retry


__all__ = ["LlmClient", "LlmSettings", "Usage", "load_prompt", "strict_json_schema"]
