"""The asyncio client against the real service: its surface, `update` under a racing writer,
`watch` hearing a change made through another server, and the agent log paged."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

import httpx
import pytest
from openbot_memory_client import (
    AsyncOpenBotMemory,
    Forget,
    OpenBotMemory,
    Remember,
    SessionConflict,
    SessionView,
    TurnItem,
)
from openbot_memory_client.core import BOOKMARK

from tests.conftest import Graph, RunningServer


def test_the_async_client_has_the_same_surface(
    server: RunningServer, ana_token: str, graph: Graph
) -> None:
    async def run() -> None:
        async with AsyncOpenBotMemory(server.url, ana_token) as client:
            agent = await client.create_agent("trip planner")
            assert await client.get_agent(agent.id) == agent
            assert [a.id async for a in client.list_agents(page_size=1)] == [agent.id]
            view = await client.create_session(agent.id)
            sid = view.session.id
            assert await client.get_session(sid) == view
            assert [v.session.id async for v in client.list_sessions(agent=agent.id)] == [sid]

            turn = await client.record_turn(
                sid, [TurnItem(id="a-1", role="user", content="Our budget is 1500 EUR.")],
                wait=30)
            assert turn.run is not None
            assert (await client.get_run(sid, turn.run.id)).status == "succeeded"
            assert [run.id for run in await client.runs(sid)] == [turn.run.id]
            assert (await client.get_turn(sid, turn.turn.id)).turn.items == ["a-1"]
            assert "budget" in (await client.instructions(sid)).included.session
            assert "budget" in (await client.memory(sid)).entries

            await client.get_session(sid)
            view = await client.remember(sid, "seat", "Ana prefers window seats.", "preference")
            view = await client.forget(sid, "seat")
            assert view.memory.entries["seat"].status == "retracted"
            view = await client.configure(sid, use=False)
            assert view.memory.overrides.use is False
            view = await client.refresh(sid)

            async def later(now: SessionView) -> Remember:
                return Remember(key="car", content="No rental car.")

            view = await client.update(sid, later)
            assert view.memory.entries["car"].status == "active"
            versions = await client.versions(sid)
            assert (await client.version(sid, versions[0].id)).version.id == versions[0].id
            forked = await client.fork(sid)
            assert forked.session.forked_from == sid
            view = await client.revert(sid, versions[-2].id)
            assert "car" not in view.memory.entries

            assert (await client.org_settings()).agent_memory
            assert not (await client.update_org_settings(use=False)).memory.use
            await client.update_org_settings(use=None)

            memory = await client.remember_for_agent(agent.id, "meals", "No meals.", "decision")
            memory = await client.forget_for_agent(agent.id, "meals")
            assert (await client.agent_memory(agent.id)).version == memory.version == 2
            assert [e.version async for e in client.agent_log(agent.id)] == [1, 2]
            assert isinstance(await client.learning_jobs(agent.id), list)
            hits = await client.search("budget", session=sid)
            assert [hit.entry.key for hit in hits] == ["budget"]
            data = await client.graphql("query($id: ID!) { session(id: $id) { revision } }",
                                        {"id": sid})
            assert data["session"]["revision"] == view.session.revision

            parent = await client.create_session(agent.id)
            child = await client.create_session(agent.id, kind="subagent",
                                                parent=parent.session.id)
            await client.remember(child.session.id, "checkin", "Check in online.", "procedure")
            promoted = await client.promote(child.session.id)
            assert sorted(promoted.memory.entries) == ["checkin"]

    asyncio.run(run())


class HeldAnswers(httpx.AsyncBaseTransport):
    """Hands on the answer to a request whose path ends with `held` only once `release` is set
    (its write is done: the service answered it)."""

    def __init__(self, held: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.held = held
        self.arrived, self.release = asyncio.Event(), asyncio.Event()
        self.sent: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request.headers.get(BOOKMARK))
        response = await self.inner.handle_async_request(request)
        if request.url.path.endswith(self.held):
            await response.aread()
            self.arrived.set()
            await self.release.wait()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_writes_sent_at_once_each_leave_their_bookmark_for_the_next_request(
    server: RunningServer, ana_token: str
) -> None:
    # Read-your-writes across replicas: two writes sent at once whose answers come back out of
    # order (the earlier write's last) each leave their bookmark for the next request, so it
    # reads at least both writes' state, not only the one answered last
    async def run() -> list[str | None]:
        transport = HeldAnswers("/memory")
        async with httpx.AsyncClient(transport=transport, timeout=60) as http, \
                AsyncOpenBotMemory(server.url, ana_token, http_client=http) as client:
            agent = await client.create_agent("trip planner")
            first = (await client.create_session(agent.id)).session.id
            second = (await client.create_session(agent.id)).session.id
            earlier = asyncio.create_task(client.remember(first, "seat", "Window."))
            await transport.arrived.wait()  # the first write is done; its answer is held
            transport.held = "/never"
            await client.remember(second, "car", "No rental car.")
            transport.release.set()
            await earlier
            await client.get_session(first)
        return transport.sent

    *_, first_write, second_write, read = asyncio.run(run())
    assert first_write is not None
    assert first_write == second_write  # both sent the bookmark the second session's start left
    assert read is not None
    assert len(set(read.split(","))) == 2  # the bookmarks of both writes
    assert first_write not in read.split(",")  # each answer stands for what its request sent


def test_agent_memory_answers_out_of_order_leave_the_newest_version_for_the_next_command(
    server: RunningServer, ana_token: str,
) -> None:
    # A10: two agent memory commands sent at once whose answers come back out of order (the
    # earlier command's last): the next command is sent at the newer version, not refused
    async def run() -> tuple[list[int], list[str]]:
        transport = HeldAnswers("/never")
        async with httpx.AsyncClient(transport=transport, timeout=60) as http, \
                AsyncOpenBotMemory(server.url, ana_token, http_client=http) as client:
            agent = (await client.create_agent("trip planner")).id
            await client.agent_memory(agent)
            transport.held = "/memory"
            earlier = asyncio.create_task(
                client.remember_for_agent(agent, "seat", "Window seats.", "preference"))
            await transport.arrived.wait()  # the first command is done; its answer is held
            transport.held = "/never"
            later = await client.remember_for_agent(agent, "car", "No rental car.", "decision",
                                                    expected=1)
            transport.release.set()
            first = await earlier
            third = await client.remember_for_agent(agent, "meal", "Vegetarian.", "preference")
        return [first.version, later.version, third.version], sorted(third.entries)

    versions, keys = asyncio.run(run())
    assert versions == [1, 2, 3]
    assert keys == ["car", "meal", "seat"]


def test_update_under_a_racing_writer_retries_and_lands_once(
    client: OpenBotMemory, clients: Callable[[str], OpenBotMemory], ana_token: str,
    graph: Graph,
) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    client.remember(sid, "count", "0")
    racer = clients(ana_token)
    calls: list[int] = []

    def increment(view: SessionView) -> Remember:
        count = int(view.memory.entries["count"].content)
        calls.append(count)
        if len(calls) == 1:  # another writer lands between this read and its write
            racer.remember(sid, "count", "10")
        return Remember(key="count", content=str(count + 1))

    before = client.get_session(sid).session.revision
    view = client.update(sid, increment)
    assert calls == [0, 10]  # read again after the conflict
    assert view.memory.entries["count"].content == "11"
    assert view.session.revision == before + 2  # the racer's write and this one, once
    changes = graph.value(
        "MATCH (:Session {id: $sid})-[:HAS_ENTRY]->(:Entry {key: 'count'})<-[:OF_ENTRY]-(c) "
        "RETURN count(c)", sid=sid)
    assert changes == 3

    # A writer that always wins: `retries` more reads, then the conflict is raised.
    tries: list[int] = []

    def always_late(view: SessionView) -> Forget:
        tries.append(view.session.revision)
        racer.update(sid, lambda _: Remember(key="count", content=str(len(tries) + 100)))
        return Forget(key="count")

    with pytest.raises(SessionConflict):
        client.update(sid, always_late, retries=2)
    assert len(tries) == 3
    assert client.get_session(sid).memory.entries["count"].status == "active"


def test_two_writers_updating_at_once_each_land_every_change(
    client: OpenBotMemory, clients: Callable[[str], OpenBotMemory], ana_token: str,
    graph: Graph,
) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    client.remember(sid, "count", "0")

    def add_one(view: SessionView) -> Remember:
        return Remember(key="count", content=str(int(view.memory.entries["count"].content) + 1))

    def writer(one: OpenBotMemory) -> None:
        for _ in range(8):
            one.update(sid, add_one, retries=50)

    threads = [threading.Thread(target=writer, args=(clients(ana_token),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    view = client.get_session(sid)
    assert view.memory.entries["count"].content == "16"
    assert view.session.revision == 17


def test_an_async_command_after_a_turn_lands_though_another_writer_moved_the_session(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph
) -> None:
    # S12: as the blocking client's (test_client.py): a command at the head the client last
    # saw is sent once more where the session moved; a stale pair given is a conflict
    sid = client.create_session(client.create_agent("a").id).session.id

    async def run() -> None:
        async with AsyncOpenBotMemory(server.url, ana_token) as aclient:
            await aclient.configure(sid, generate=False)  # no run moves the session
            turn = await aclient.record_turn(
                sid, [TurnItem(id="t-1", role="user", content="Hello.")])
            client.remember(sid, "car", "No rental car.")
            view = await aclient.remember(sid, "seat", "Window.", "preference")
            assert sorted(view.memory.entries) == ["car", "seat"]
            assert view.session.revision == turn.session.revision + 2
            with pytest.raises(SessionConflict) as stale:
                await aclient.forget(sid, "car", expected=turn.session.head,
                                     revision=turn.session.revision)
            assert stale.value.status == 409

    asyncio.run(run())
    assert client.get_session(sid).memory.entries["car"].status == "active"


def test_watch_hears_a_remember_made_through_another_server(
    server: RunningServer, start_server: Callable[..., RunningServer], ana_token: str,
    graph: Graph,
) -> None:
    other = start_server()

    async def run() -> list[SessionView]:
        async with AsyncOpenBotMemory(server.url, ana_token) as client, \
                AsyncOpenBotMemory(other.url, ana_token) as writer:
            sid = (await writer.create_session((await writer.create_agent("a")).id)).session.id
            heard: list[SessionView] = []
            async with contextlib.aclosing(client.watch(sid, view_timeout=20)) as views:
                async for view in views:
                    heard.append(view)
                    if len(heard) == 1:
                        await writer.remember(sid, "budget", "The trip budget is 1500 EUR.")
                    if len(heard) == 2:
                        await writer.forget(sid, "budget")
                    if len(heard) == 3:
                        break
            return heard

    heard = asyncio.run(run())
    assert [view.session.revision for view in heard] == [0, 1, 2]
    assert heard[0].memory.entries == {}
    assert heard[1].memory.entries["budget"].content == "The trip budget is 1500 EUR."
    assert heard[1].memory.entries["budget"].status == "active"
    assert heard[2].memory.entries["budget"].status == "retracted"
    assert heard[2].session.kind == "chat"


def test_the_blocking_watch_hears_a_remember(
    client: OpenBotMemory, clients: Callable[[str], OpenBotMemory], ana_token: str,
    graph: Graph,
) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    writer = clients(ana_token)
    views = client.watch(sid, view_timeout=20)
    assert next(views).session.revision == 0
    writer.remember(sid, "seat", "Ana prefers window seats.", "preference")
    heard = next(views)
    views.close()
    assert heard.session.revision == 1
    assert heard.memory.entries["seat"].kind == "preference"
    assert client.core.last_seen(sid) == (heard.session.head, 1)


def test_the_agent_log_pages_through_250_versions(
    client: OpenBotMemory, graph: Graph
) -> None:
    agent = client.create_agent("desk").id
    for n in range(250):
        client.remember_for_agent(agent, f"rule-{n}", f"Rule {n}.", "procedure")
    pages: list[int] = []
    client.http.event_hooks["response"].append(
        lambda response: pages.append(1) if response.url.path.endswith("/log") else None)
    log = list(client.agent_log(agent, page_size=100))
    assert [entry.version for entry in log] == list(range(1, 251))
    assert [entry.keys for entry in log[:2]] == [["rule-0"], ["rule-1"]]
    assert len(pages) == 3
    assert [e.version for e in client.agent_log(agent, after=240, page_size=4)] == list(
        range(241, 251))
