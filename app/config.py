"""Settings: one pydantic-settings class, read from the environment when asked for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic import ValidationError as SettingsRefused
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.model_names import MODEL_RULE, is_model_name
from app.errors import SetupError

PREFIX = "OPENBOT_MEMORY_"


class Settings(BaseSettings):
    """Everything the service reads from its environment (prefix `OPENBOT_MEMORY_`). A
    variable set empty (`NAME=` in a .env or compose file) leaves its setting at its default;
    no number is infinite or NaN."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="ignore", env_ignore_empty=True, allow_inf_nan=False
    )

    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI"))
    neo4j_user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER"))
    neo4j_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD")
    )
    neo4j_database: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE"))

    # The folder that holds the local Neo4j's data, logs and state file.
    state_dir: Path = Path(".openbot-memory")
    # Where the Neo4j jars resolved from Maven Central are cached, shared by every checkout.
    jar_cache: Path = Path.home() / ".cache" / "openbot-memory"
    # The local Neo4j starts with the APOC core plugin (fetched once from Maven Central) when
    # set: the benchmark's @neo4j/graphql peer needs it; the service itself never does.
    neo4j_apoc: bool = False

    max_length: int = Field(default=8000, ge=0)
    # The largest request body accepted, and the largest WebSocket message: a larger body is
    # 413 before it is read, a larger message closes its socket (1009, message too big).
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    # GraphQL: the most lexical tokens a document may have, and the highest estimated cost of
    # an operation (fields, with lists multiplied by their page size; app/api/graphql/limits.py).
    graphql_max_tokens: int = Field(default=20_000, ge=100)
    graphql_max_cost: int = Field(default=500_000, ge=100)
    # GraphQL fields that read what is already loaded are completed in place, not through
    # graphql-core's per-field round (app/api/graphql/execution.py); off, every field runs
    # as graphql-core runs it.
    graphql_fast_path: bool = True
    # The model and helper model of an org that a token creates (`builtin` or `openai:<name>`).
    default_model: str | None = "builtin"
    model_timeout_seconds: float = Field(default=30.0, gt=0)
    model_retries: int = Field(default=2, ge=0)

    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )

    # Consolidation workers in this process (each runs one session at a time).
    workers: int = Field(default=2, ge=1, le=32)
    # How long a running consolidation holds its claim unless its worker renews it: after a
    # crash, its run goes back to the queue once this has passed.
    run_lease_seconds: float = Field(default=15.0, ge=1)
    # How often an idle worker looks for queued jobs it was not told of (those another process
    # queued): a read, so idle workers open no write transaction.
    worker_poll_seconds: float = Field(default=0.5, gt=0)
    # The most item text (characters) one consolidation run sends the model: a larger backlog
    # becomes several runs, oldest items first.
    prompt_budget_chars: int = Field(default=24_000, ge=100)
    # Live views: how often a process with subscribers reads what other processes changed
    # (its own writes are heard at once).
    live_poll_seconds: float = Field(default=0.25, gt=0)

    # Logs: `text` for a terminal, `json` for one JSON object per line; and the level.
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # Python's young-generation GC threshold once the service has started (objects allocated
    # between two collections; Python's default is 700), and the objects alive at startup are
    # frozen out of every collection: the nested session view allocates tens of thousands of
    # short-lived objects per request, and young-generation collections would otherwise take a
    # large share of a busy process. 0 leaves the collector as Python set it.
    gc_threshold: int = Field(default=10_000, ge=0)
    # At start, warm up before `/readyz` says ready: plan every statement, rehearse the common
    # requests `warmup_rounds` times for an org of the warm-up's own, then delete that org
    # (app/api/warmup.py).
    warmup: bool = True
    warmup_rounds: int = Field(default=3, ge=0)
    # How long a token's lookup is cached: a revocation made elsewhere is honoured within it.
    token_cache_seconds: float = Field(default=2.0, ge=0, le=60)
    # The most entries that the session views this process keeps may have in all (about 1 KB
    # each): the last view answered of each session, so that a Configure at its revision, or a
    # nested view of a session that did not move, reads no view
    # (app/memory/sessions/kept.py). 0 keeps none.
    kept_view_entries: int = Field(default=20_000, ge=0)
    # Items older than this many days have their content erased by a background job (their
    # entries and provenance stay); unset, items are kept forever.
    item_retention_days: float | None = Field(default=None, gt=0)
    # How often the retention job looks for items past the retention period.
    retention_poll_seconds: float = Field(default=3600.0, gt=0)
    # With a token, `GET /metrics` needs `Authorization: Bearer <it>`; without, loopback only.
    metrics_token: SecretStr | None = None

    @field_validator("default_model")
    @classmethod
    def _a_model(cls, name: str | None) -> str | None:
        if name is not None and not is_model_name(name):
            raise ValueError(MODEL_RULE)
        return name

    @classmethod
    def from_environment(cls) -> Settings:
        """The settings the environment gives; a bad one is a SetupError of one line that
        names its variable, its value and what it takes."""
        for name, field in cls.model_fields.items():  # NEO4J_URI and the like, prefixed
            alias = field.validation_alias
            prefixed = f"{PREFIX}{name}".upper()
            if isinstance(alias, AliasChoices) and os.environ.get(prefixed):
                raise SetupError(
                    f"{prefixed} is not read: the setting is {alias.choices[0]}, without the "
                    f"{PREFIX} prefix"
                )
        try:
            return cls()
        except SettingsRefused as exc:
            raise SetupError("; ".join(
                f"{_variable(str(error['loc'][0]))} is {error['input']!r}: "
                + error["msg"].removeprefix("Value error, ")
                for error in exc.errors()
            )) from None


def _variable(name: str) -> str:
    """The environment variable of a setting (or of an alias, which is its own name)."""
    return f"{PREFIX}{name}".upper() if name in Settings.model_fields else name.upper()
