"""The session view's statement answers plain values only (lists, maps and scalars), so its
rows are taken as the driver gives them (`Tx.plain_rows`): checked here on a view with every
part a row can hold (entries with their sources' items, the turns they came in, a person,
a fork's source)."""

from __future__ import annotations

import neo4j

from app.domain.items import ITEM_FIELDS
from app.store import database
from app.store.catalog import statement
from tests.conftest import Api, Graph, user


def test_the_session_views_rows_hold_no_node_path_or_temporal_value(
    api: Api, graph: Graph, graph_driver: neo4j.Driver
) -> None:
    sid = api.session()["session"]["id"]
    api.turn(sid, user("The budget is 1500 EUR."))
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    with graph_driver.session(database=graph.database) as session:
        records = list(session.run(
            statement("session_views"), org="acme", person="ana", ids=[sid, fork], items=True,
            turns=True, itemFields=list(ITEM_FIELDS),
        ))
    assert len(records) == 2
    for record in records:
        row = dict(zip(record.keys(), record, strict=True))
        database._check_plain(row)  # raises on a value `Record.data()` would convert
        assert row == record.data()
        assert row["entries"]  # the entry, with its source's item
