"""The service's Prometheus metrics, in a registry of their own (one per app, so several apps
in one process keep separate counts)."""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from app.domain.jobs import PENDING, JobKind

JOB_KINDS: tuple[JobKind, ...] = typing.get_args(JobKind)
# How many GraphQL operation names and model names a process counts under their own label: a
# client names both, so each set is open; the names past these count as `other`.
OPERATION_NAMES = 200
MODEL_NAMES = 100
_REASON_END = re.compile(r"""[:('"]""")  # where a reason starts to quote (repr: ' or ")


def reason_label(reason: str) -> str:
    """A dropped change's reason without what it quotes: a label of a small, fixed set."""
    return _REASON_END.split(reason, maxsplit=1)[0].strip() or "other"


class OpenLabel:
    """A label whose values clients choose: the first `limit` values a process sees count under
    their own name, later ones under `other`, so a client naming each anew cannot grow the
    series without end."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value not in self.seen:
            if len(self.seen) >= self.limit:
                return "other"
            self.seen.add(value)
        return value


class Metrics:
    """Every counter, histogram and gauge the service exports."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.http_requests = Counter(
            "openbot_memory_http_requests", "HTTP requests answered, by route template",
            ["route", "method", "status"], registry=r,
        )
        self.http_seconds = Histogram(
            "openbot_memory_http_request_duration_seconds", "HTTP request latency",
            ["route", "method"], registry=r,
        )
        self.graphql_operations = Counter(
            "openbot_memory_graphql_operations", "GraphQL operations by name and outcome",
            ["operation", "outcome"], registry=r,
        )
        self.operation_name = OpenLabel(OPERATION_NAMES)
        self.model_name = OpenLabel(MODEL_NAMES)
        self.jobs = Gauge(
            "openbot_memory_jobs", "Consolidation runs and learning jobs queued or running, "
            "read from the graph at scrape time (all processes)", ["kind", "status"], registry=r,
        )
        self.job_seconds = Histogram(
            "openbot_memory_job_duration_seconds", "How long a run or learning job took here",
            ["kind", "model"], registry=r, buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.jobs_finished = Counter(
            "openbot_memory_jobs_finished", "Runs and learning jobs ended here, by outcome",
            ["kind", "model", "outcome"], registry=r,
        )
        self.model_seconds = Histogram(
            "openbot_memory_model_call_duration_seconds", "Model call latency", ["model"],
            registry=r, buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.model_failures = Counter(
            "openbot_memory_model_call_failures", "Failed model calls by error class",
            ["model", "error"], registry=r,
        )
        self.dropped_changes = Counter(
            "openbot_memory_dropped_changes", "Proposed memory changes dropped, by reason",
            ["kind", "reason"], registry=r,
        )
        self.conflicts = Counter(
            "openbot_memory_conflicts", "Optimistic-concurrency conflicts (409) by route",
            ["route", "error"], registry=r,
        )
        self.neo4j_retries = Counter(
            "openbot_memory_neo4j_transaction_retries", "Neo4j transactions run again by the "
            "driver after a transient error", ["access"], registry=r,
        )

        self.retention_erased = Counter(
            "openbot_memory_retention_erased_items", "Items whose content the retention job "
            "erased here", registry=r,
        )
        self.retention_passes = Counter(
            "openbot_memory_retention_passes", "Passes of the retention job here that ended",
            registry=r,
        )
        self.retention_cutoff = Gauge(
            "openbot_memory_retention_cutoff_milliseconds", "The time (epoch ms) before which "
            "the retention job's last pass erased every item's content", registry=r,
        )
        self.request_statements = Gauge(
            "openbot_memory_request_statements",
            "Neo4j statements this process ran for requests since it started (a token's cached "
            "lookup is not one), read at scrape time",
            registry=r,
        )

    def job_ended(
        self, kind: str, model: str, outcome: str, seconds: float | None, dropped: Sequence[str]
    ) -> None:
        """Count a job that ended here; `seconds` is None for one that ended without running
        (a run ended by the run that read its items): counted, with no duration to observe."""
        model = self.model_name(model)
        if seconds is not None:
            self.job_seconds.labels(kind, model).observe(seconds)
        self.jobs_finished.labels(kind, model, outcome).inc()
        for reason in dropped:
            self.dropped_changes.labels(kind, reason_label(reason)).inc()

    def graphql_operation(self, name: str, outcome: str) -> None:
        """Count a GraphQL operation, under its name (`operation_name`) or `other`."""
        self.graphql_operations.labels(self.operation_name(name), outcome).inc()

    def set_jobs(self, counts: dict[tuple[str, str], int]) -> None:
        """The gauges of pending work, every (kind, status) pair shown even when zero."""
        for kind in JOB_KINDS:
            for status in PENDING:
                self.jobs.labels(kind, status).set(counts.get((kind, status), 0))

    def text(self) -> bytes:
        return generate_latest(self.registry)
