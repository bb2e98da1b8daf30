"""Which adapter serves a model name, each call timed, counted and traced."""

from __future__ import annotations

import asyncio
import time

import openai
from opentelemetry.trace import SpanKind, Status, StatusCode

from app.config import Settings
from app.models.base import Model, ModelError, ModelRequest
from app.models.builtin import BuiltinModel
from app.models.openai_chat import OpenAIChatModel
from app.telemetry import Telemetry


def error_class(exc: BaseException) -> str:
    """What a failure is, as a metric label: the SDK's error class a ModelError wraps."""
    if isinstance(exc, asyncio.CancelledError):
        return "Cancelled"  # the caller's deadline ran out (or the service stopped)
    cause = exc.__cause__
    return type(cause).__name__ if isinstance(exc, ModelError) and cause else type(exc).__name__


class Observed:
    """A model whose every call has a span (model name; token counts, set by the adapter when
    the server reports them), a latency sample and, when it fails, a failure by error class."""

    def __init__(self, model: Model, telemetry: Telemetry) -> None:
        self.name = model.name
        self.model = model
        self.telemetry = telemetry

    async def complete(self, request: ModelRequest) -> str:
        metrics = self.telemetry.metrics
        attributes = {"gen_ai.request.model": self.name, "openbot.schema": request.schema_name}
        with self.telemetry.tracer.start_as_current_span(
            f"model {self.name}", kind=SpanKind.CLIENT, attributes=attributes,
            record_exception=False,
        ) as span:
            started = time.perf_counter()
            try:
                return await self.model.complete(request)
            except (Exception, asyncio.CancelledError) as exc:
                error = error_class(exc)
                metrics.model_failures.labels(metrics.model_name(self.name), error).inc()
                span.set_status(Status(StatusCode.ERROR, error))
                raise
            finally:
                metrics.model_seconds.labels(metrics.model_name(self.name)).observe(
                    time.perf_counter() - started
                )


class Models:
    """Model adapters by name, sharing one OpenAI client per process."""

    def __init__(self, settings: Settings, telemetry: Telemetry | None = None) -> None:
        self.settings = settings
        self.telemetry = telemetry or Telemetry()
        self._client: openai.AsyncOpenAI | None = None

    def _openai(self) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self.settings.openai_api_key
            self._client = openai.AsyncOpenAI(
                base_url=self.settings.openai_base_url or None,
                api_key=key.get_secret_value() if key else "not-set",
                timeout=self.settings.model_timeout_seconds,
                max_retries=self.settings.model_retries,
            )
        return self._client

    def get(self, name: str) -> Model:
        model: Model
        if name == "builtin":
            model = BuiltinModel()
        elif name.startswith("openai:"):
            model = OpenAIChatModel(name.removeprefix("openai:"), self._openai())
        else:
            raise ValueError(f"unknown model {name!r}")
        return Observed(model, self.telemetry)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
