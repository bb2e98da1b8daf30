"""Traces of a served app: a server that records its spans in memory, and what they say."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.store.database import Target
from tests import conftest
from tests.conftest import Graph, RunningServer
from tests.openai_stub import OpenAIStub


@pytest.fixture
def traced(
    neo4j_target: Target, openai_stub: OpenAIStub, graph: Graph
) -> Iterator[tuple[RunningServer, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = RunningServer(
        conftest.test_settings(openai_stub, neo4j_target), neo4j_target, tracer_provider=provider
    )
    yield running, exporter
    running.stop()


def finished_spans(
    exporter: InMemorySpanExporter, *names: str, count: int = 1
) -> list[ReadableSpan]:
    """The spans finished so far, once each of `names` is among them `count` times or more (a
    span ends just after what it wraps answers, so a client can be a moment ahead of it)."""
    deadline = time.monotonic() + 20
    while True:
        spans = list(exporter.get_finished_spans())
        seen = [span.name for span in spans]
        missing = {name for name in names if seen.count(name) < count}
        if not missing:
            return spans
        if time.monotonic() > deadline:
            raise AssertionError(f"no span {sorted(missing)} in {[s.name for s in spans]}")
        time.sleep(0.05)


SIGN_IN = ("find_principal", "touch_token")


def statements_of(spans: list[ReadableSpan], route: str) -> list[list[str]]:
    """Per request to `route`, oldest first, the names of the statements it ran (its child
    spans, but for authentication's: the token's lookup, cached for seconds, and its use)."""
    posts = sorted((s for s in spans if s.name == route), key=lambda s: s.start_time or 0)
    return [
        [c.name for c in sorted(spans, key=lambda c: c.start_time or 0)
         if c.parent and c.parent.span_id == post.context.span_id and c.name not in SIGN_IN]
        for post in posts
    ]
