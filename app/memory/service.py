"""The service's parts, wired once per process."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from app.config import Settings
from app.memory.access.orgs import Orgs
from app.memory.access.tokens import Tokens
from app.memory.agents.agents import Agents
from app.memory.agents.memory import AgentMemories
from app.memory.agents.promotion import Promotion
from app.memory.changes.credentials import credential_reason
from app.memory.erasure import Erasures, keep_missing_marks
from app.memory.jobs.consolidation import Consolidation
from app.memory.jobs.learning import Learning
from app.memory.retention import Retention
from app.memory.sessions.history import History, keep_missing_states
from app.memory.sessions.kept import Kept
from app.memory.sessions.sessions import Sessions
from app.memory.turns.turns import Turns
from app.memory.views.live import Live
from app.memory.views.pages import Pages
from app.memory.views.provenance import Provenance
from app.memory.views.search import Search
from app.models.registry import Models
from app.store.database import Database


@dataclass
class Service:
    """Everything a request handler needs, built from one database and one settings object."""

    settings: Settings
    db: Database
    sessions: Sessions
    agents: Agents
    agent_memory: AgentMemories
    orgs: Orgs
    tokens: Tokens
    turns: Turns
    consolidation: Consolidation
    learning: Learning
    promotion: Promotion
    history: History
    models: Models
    search: Search
    provenance: Provenance
    live: Live
    pages: Pages
    erasures: Erasures
    retention: Retention

    @classmethod
    def build(cls, settings: Settings, db: Database) -> Service:
        models = Models(settings, db.telemetry)
        learning = Learning(db, models, settings)
        consolidation = Consolidation(
            db, models, settings, workers=settings.workers, on_run_end=learning.nudge
        )

        agent_memory = AgentMemories(db)
        kept = Kept(settings.kept_view_entries)
        live = Live(db, agent_memory, settings.live_poll_seconds)
        db.on_commit = live.wake
        tokens = Tokens(db, settings.default_model, settings.token_cache_seconds)

        return cls(
            settings=settings,
            db=db,
            sessions=Sessions(db, kept, consolidation.refresh),
            agents=Agents(db),
            agent_memory=agent_memory,
            orgs=Orgs(db),
            tokens=tokens,
            turns=Turns(db, settings.max_length, consolidation.wake, learning.wake, kept),
            consolidation=consolidation,
            learning=learning,
            promotion=Promotion(db),
            history=History(db),
            models=models,
            search=Search(db),
            provenance=Provenance(db),
            live=live,
            pages=Pages(db),
            erasures=Erasures(db, tokens.forget_cached),
            retention=Retention(
                db, settings.item_retention_days, settings.retention_poll_seconds
            ),
        )

    async def start(self) -> None:
        await self.db.apply_schema()
        await keep_missing_states(self.db)  # graphs made before the head's state was kept
        await keep_missing_marks(self.db)  # and before the erasure kept its marks
        # Load the credential detectors now, off the event loop: loading them on the first
        # check would stall every request in flight for as long.
        await asyncio.to_thread(credential_reason, "warm up")
        await self.consolidation.start()
        await self.learning.start()
        await self.retention.start()

    async def stop(self) -> None:
        """Stop background work; the caller closes the database."""
        await self.retention.stop()
        await self.consolidation.stop()
        await self.learning.stop()
        await self.live.stop()
        await self.models.close()
