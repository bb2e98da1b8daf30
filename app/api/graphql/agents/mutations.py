"""The agent mutations: promotion (A12) and agent memory commands (A10)."""

from __future__ import annotations

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import Kind, Visibility
from app.api.graphql.nodes import Agent, AgentMemory
from app.memory.changes import commands


@strawberry.type
class Promoted:
    """A12: the agent a subagent became, and its memory."""

    agent: Agent
    memory: AgentMemory


@strawberry.type
class AgentMutation:
    @strawberry.mutation(
        description="A12: make a subagent session's lasting entries the memory of a new agent."
    )
    async def promote(
        self, info: GraphInfo, session_id: strawberry.ID, name: str | None = None
    ) -> Promoted:
        ctx = info.context
        agent, memory = await ctx.service.promotion.promote(ctx.who, str(session_id), name)
        return Promoted(
            agent=Agent.from_domain(agent), memory=AgentMemory.from_domain(agent.id, memory)
        )

    @strawberry.mutation(
        description="A10: add or replace an agent entry and make it active (A6: the only way "
        "back for a retracted one)."
    )
    async def remember_for_agent(
        self, info: GraphInfo, agent_id: strawberry.ID, expected: int, key: str, content: str,
        kind: Kind, about: str | None = None, visibility: Visibility = Visibility.SHARED,
    ) -> AgentMemory:
        ctx = info.context
        command = commands.AgentRemember(key, content, kind.value, about, visibility.value)
        memory = await ctx.service.agent_memory.command(ctx.who, str(agent_id), expected, command)
        return AgentMemory.from_domain(str(agent_id), memory)

    @strawberry.mutation(
        description="A10: retract an agent entry: the shared one of the key, or with `about` "
        "that person's private one. Retracting a retracted entry changes nothing."
    )
    async def forget_for_agent(
        self, info: GraphInfo, agent_id: strawberry.ID, expected: int, key: str,
        about: str | None = None,
    ) -> AgentMemory:
        ctx = info.context
        command = commands.AgentForget(key, about)
        memory = await ctx.service.agent_memory.command(ctx.who, str(agent_id), expected, command)
        return AgentMemory.from_domain(str(agent_id), memory)
