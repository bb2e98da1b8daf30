"""What the service reports about itself: its metrics and its tracer, one pair per app.

Tracing is off (a no-op tracer) unless the standard OpenTelemetry environment asks for it:
`OTEL_TRACES_EXPORTER` (`otlp`, `console`, or both, comma-separated), or an OTLP endpoint
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). `OTEL_SDK_DISABLED=true`
turns it off whatever else is set. The service name and resource come from `OTEL_SERVICE_NAME`
and `OTEL_RESOURCE_ATTRIBUTES`, as the SDK reads them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from app.errors import SetupError
from app.metrics import Metrics

TRACER_NAME = "openbot_memory"


@dataclass
class Telemetry:
    """The app's metrics registry and tracer (a no-op tracer when tracing is off)."""

    metrics: Metrics = field(default_factory=Metrics)
    tracer: trace.Tracer = field(default_factory=trace.NoOpTracer)

    @classmethod
    def with_provider(cls, provider: trace.TracerProvider | None) -> Telemetry:
        if provider is None:
            return cls()
        return cls(tracer=provider.get_tracer(TRACER_NAME))


def exporter_names(env: Mapping[str, str] | None = None) -> list[str]:
    """The span exporters the environment names (`otlp`, `console`; none with
    `OTEL_SDK_DISABLED=true`); a SetupError for a name this service lacks, so that `serve`
    refuses it before it starts anything."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if not names:
        names = "otlp" if endpoint else "none"
    named = [n.strip() for n in names.split(",") if n.strip() not in ("", "none")]
    for name in named:
        if name not in ("otlp", "console"):
            raise SetupError(
                f"OTEL_TRACES_EXPORTER names an exporter this service lacks: {name} "
                "(otlp, console or none)"
            )
    return named


def _exporters(env: Mapping[str, str]) -> list[SpanExporter]:
    exporters: list[SpanExporter] = []
    for name in exporter_names(env):
        if name == "console":
            exporters.append(ConsoleSpanExporter())
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
    return exporters


def tracer_provider_from_environment(
    env: Mapping[str, str] | None = None,
) -> TracerProvider | None:
    """A provider exporting as the `OTEL_*` environment says, or None when tracing is off."""
    env = os.environ if env is None else env
    exporters = _exporters(env)
    if not exporters:
        return None
    named = "OTEL_SERVICE_NAME" in env or "service.name" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({} if named else {"service.name": "openbot-memory"})
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
