"""Reads of agents for the node types: pages of their sessions, learning jobs, entry changes
and memory log."""

from __future__ import annotations

from app.api.graphql.connections import Keyset, Page
from app.api.graphql.context import Context
from app.domain.agents import Agent, AgentChange, AgentMemory, LogEntry
from app.domain.jobs import LearningJob
from app.memory.paging import MAX_OFFSET

AGENT_ENTRIES = Keyset("agentEntries", (str,))
AGENT_CHANGES = Keyset("agentChanges", (str,))
LOG = Keyset("log", (int,), least=0, most=MAX_OFFSET)  # a version, as REST's `after`
AGENTS = Keyset("agents", (int, str))
JOBS = Keyset("learningJobs", (int, str))


async def session_ids(ctx: Context, agent_id: str, page: Page) -> list[str]:
    """A page of the ids of the agent's sessions the caller may reach, oldest first."""
    return await ctx.page("agent_sessions", page.after, page.first).load(agent_id)


async def jobs(ctx: Context, agent_id: str, page: Page) -> list[LearningJob | None]:
    """A page of the agent's learning jobs, newest first."""
    ids = await ctx.page("jobs", page.after, page.first).load(agent_id)
    return await ctx.jobs.load_many(ids)


async def changes(ctx: Context, change_id: str, page: Page) -> list[AgentChange]:
    """A page of an agent entry's changes, newest first, from its latest (`change_id`)."""
    return await ctx.page("agent_changes", page.after_part(), page.first).load(change_id)


async def kept(ctx: Context, change_ids: list[str]) -> list[AgentChange]:
    """The agent memory changes a learning job made, each as it was made."""
    chains = await ctx.agent_histories.load_many(change_ids)
    return [chain[0] for chain in chains if chain]


async def memory(ctx: Context, agent_id: str) -> AgentMemory:
    found = await ctx.agent_memories.load(agent_id)
    assert found is not None  # the agent was found in the caller's org
    return found


async def log(ctx: Context, agent_id: str, page: Page) -> list[LogEntry]:
    """A page of the versions of the agent's memory, oldest first."""
    return await ctx.service.agent_memory.read_log(
        ctx.who, agent_id, page.after_part() or 0, page.first + 1
    )


async def agents(ctx: Context, page: Page) -> list[Agent]:
    """A page of the org's agents, oldest first."""
    return await ctx.service.pages.agents(ctx.who, page.after, page.first)
