"""The GraphQL execution shortcut (app/api/graphql/execution.py) answers exactly what
Strawberry's own execution answers: the same data in the same order, the same errors at the
same paths, for leaves and object fields that complete in place and for those that must fall
back."""

from __future__ import annotations

import asyncio
import enum
import gc
from typing import Any, NewType, cast

import pytest
import strawberry
from strawberry.schema.config import StrawberryConfig

from app.api.graphql.execution import NOT_READ, Execution, in_place


@strawberry.enum
class Kind(enum.Enum):
    FACT = "fact"
    PREFERENCE = "preference"


def _even(value: int) -> int:
    if value % 2:
        raise ValueError(f"{value} is odd")
    return value


Even = NewType("Even", int)
EVEN = strawberry.scalar(name="Even", serialize=_even, parse_value=int)


@strawberry.type
class Turn:
    id: strawberry.ID
    at: int


# The sources whose `kept` resolver ran (it is marked in_place: read ahead, it need not run).
KEPT_RAN: list[str] = []


@strawberry.type
class Source:
    id: strawberry.ID
    content: str | None
    must: str
    turn: Turn | None
    ahead: strawberry.Private[bool] = False

    @strawberry.field
    @in_place(lambda source, context: source.turn if source.ahead else NOT_READ)
    def kept(self) -> Turn | None:
        KEPT_RAN.append(self.id)
        return self.turn

    @strawberry.field
    def shout(self, times: int = 1) -> str:
        return (self.content or "").upper() * times

    @strawberry.field
    async def later(self) -> str:
        await asyncio.sleep(0)
        return f"later {self.id}"


@strawberry.type
class Entry:
    key: str
    kind: Kind
    weight: Even
    sources: list[Source]
    # nullable lists and items, holding nulls; a non-null list whose items may be null
    turns: list[Turn | None] | None
    lead: Source | None
    note: str | None = None


class _Noted:
    """An entry as a resolver may hand one over: an object whose `note` is a property, which
    raises for one of them (Strawberry reads a plain field with getattr)."""

    def __init__(self, entry: Entry) -> None:
        self.__dict__.update(vars(entry))
        del self.__dict__["note"]

    @property
    def note(self) -> str | None:
        if self.__dict__["key"] == "k3":
            raise LookupError("no note for k3")
        return f"note {self.__dict__['key']}"

    @property
    def lead(self) -> Source | None:
        if self.__dict__["key"] == "k2":
            raise LookupError("no lead for k2")
        sources: list[Source] = self.__dict__["sources"]
        return sources[0]


def _entries(broken: bool) -> list[Entry]:
    return [
        Entry(
            key=f"k{n}",
            kind=Kind.FACT if n % 2 else Kind.PREFERENCE,
            weight=Even(3 if broken and n == 1 else 2 * n),
            sources=[
                Source(
                    id=strawberry.ID(f"i-{n}{m}"),
                    content=None if m else f"content {n}",
                    must=None if broken and n == 2 and m == 1 else "x",  # type: ignore[arg-type]
                    turn=Turn(id=strawberry.ID(f"t{n}"), at=n) if m == 0 else None,
                    ahead=n % 2 == 0,
                )
                for m in range(2)
            ],
            turns=None if n == 3 else [Turn(id=strawberry.ID(f"t{n}"), at=n), None],
            lead=None,
        )
        for n in range(4)
    ]


@strawberry.type
class Query:
    @strawberry.field
    def entries(self, broken: bool = False) -> list[Entry]:
        return _entries(broken)

    @strawberry.field
    def noted(self) -> list[Entry]:
        return [cast(Entry, _Noted(entry)) for entry in _entries(False)]

    @strawberry.field
    def holes(self) -> list[Entry] | None:
        """A plain non-null list of objects with a null in it (entry k1's sources)."""
        entries = _entries(False)
        entries[1].sources.insert(1, cast(Source, None))
        return entries

    @strawberry.field
    def bare(self) -> list[Entry] | None:
        """A plain non-null list of objects that is null (entry k0's sources)."""
        entries = _entries(False)
        entries[0].sources = cast(list[Source], None)
        return entries


CONFIG = StrawberryConfig(scalar_map={Even: EVEN})
PLAIN = strawberry.Schema(query=Query, config=CONFIG)
SHORTCUT = strawberry.Schema(query=Query, config=CONFIG, execution_context_class=Execution)

DOCUMENTS = [
    "{ entries { key kind weight sources { id content must turn { id at } } } }",
    # aliases, a field asked twice, __typename among leaves, order as asked
    "{ entries { w: weight key __typename k: key sources { c: content id content } } }",
    # fragments and directives
    """query($yes: Boolean!) { entries { ...E sources { id @skip(if: $yes) content
       @include(if: $yes) } } } fragment E on Entry { kind key }""",
    # resolvers among leaves: with arguments, async
    "{ entries { key sources { shout(times: 2) id later content } } }",
    # a value its scalar refuses, and null where the type says non-null
    "{ entries(broken: true) { key weight sources { id must content } } }",
    # a plain field whose read raises: null and an error there, the other entries whole
    "{ noted { key note kind } }",
    # object fields in place: nullable lists holding nulls, a null list, a null object
    "{ entries { key turns { id at } lead { id } sources { turn { at id } } } }",
    # an object field whose read raises, beside others
    "{ noted { key lead { id turn { id } } sources { id } } }",
    # a null in a non-null list of objects
    "{ holes { key sources { id turn { id } } } }",
    "{ bare { key sources { id } } }",
    # a resolver marked in_place: read ahead for some sources, run for the others
    "{ entries { key sources { id kept { id at } } } }",
    # object fields with arguments or directives run the ordinary way
    """query($yes: Boolean!) { entries { sources @include(if: $yes) { id }
       lead @skip(if: $yes) { id } } }""",
]
# null where the type says non-null, beside an async resolver: graphql-core (Strawberry's own
# execution too) leaves the resolvers of the list's other items un-awaited when the error ends
# the list, which Python reports as "never awaited" when they are collected
WITH_ASYNC = "{ entries(broken: true) { key sources { must later } } }"


def _answer(schema: strawberry.Schema, document: str) -> dict[str, Any]:
    result = asyncio.run(schema.execute(document, variable_values={"yes": True}))
    return {
        "data": result.data,
        "errors": sorted((e.message, tuple(e.path or ())) for e in result.errors or ()),
    }


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_shortcut_answers_what_strawberry_answers(document: str) -> None:
    plain, shortcut = _answer(PLAIN, document), _answer(SHORTCUT, document)
    assert shortcut == plain
    assert list(map(str, shortcut["data"] or {})) == list(map(str, plain["data"] or {}))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_error_beside_an_async_resolver_is_answered_as_strawberry_answers_it() -> None:
    plain, shortcut = _answer(PLAIN, WITH_ASYNC), _answer(SHORTCUT, WITH_ASYNC)
    # the un-awaited resolvers sit in reference cycles: collected here, under this test's
    # filter, and not during whichever test the collector next runs in
    gc.collect()
    assert shortcut == plain
    assert plain["errors"] == [
        ("Cannot return null for non-nullable field Source.must.", ("entries", 2, "sources", 1,
                                                                     "must"))]


def test_the_answers_keep_the_documents_field_order() -> None:
    answer = _answer(SHORTCUT, DOCUMENTS[1])
    [first, *_] = answer["data"]["entries"]
    assert list(first) == ["w", "key", "__typename", "k", "sources"]
    assert list(first["sources"][0]) == ["c", "id", "content"]
    # an object field before a leaf, both in place
    [first, *_] = _answer(SHORTCUT, "{ entries { sources { turn { at id } id } key } }")[
        "data"]["entries"]
    assert list(first) == ["sources", "key"]
    assert list(first["sources"][0]) == ["turn", "id"]
    assert list(first["sources"][0]["turn"]) == ["at", "id"]


def test_a_read_that_raises_is_an_error_at_its_field() -> None:
    answer = _answer(SHORTCUT, "{ noted { key note } }")
    assert [entry["note"] for entry in answer["data"]["noted"]] == [
        "note k0", "note k1", "note k2", None]
    assert answer["errors"] == [("no note for k3", ("noted", 3, "note"))]


def test_errors_are_reported_where_strawberry_reports_them() -> None:
    answer = _answer(SHORTCUT, "{ entries(broken: true) { key weight sources { id must } } }")
    assert answer["data"] is None  # entries are non-null: an error in one nulls the list
    messages = [message for message, _ in answer["errors"]]
    assert any("3 is odd" in message for message in messages)


def test_a_resolver_marked_in_place_runs_only_where_its_answer_was_not_read_ahead() -> None:
    KEPT_RAN.clear()
    answer = _answer(SHORTCUT, "{ entries { key sources { id kept { id } } } }")
    assert answer["errors"] == []
    assert [[s["kept"] for s in e["sources"]] for e in answer["data"]["entries"]] == [
        [{"id": f"t{n}"}, None] for n in range(4)
    ]
    # entries 0 and 2 had their turns read ahead; 1 and 3 ran the resolver
    assert sorted(KEPT_RAN) == ["i-10", "i-11", "i-30", "i-31"]
    KEPT_RAN.clear()
    _answer(PLAIN, "{ entries { key sources { id kept { id } } } }")
    assert len(KEPT_RAN) == 8


def test_an_error_inside_an_object_in_place_is_at_its_path() -> None:
    answer = _answer(SHORTCUT, "{ noted { key lead { id } } }")
    assert [entry["lead"] for entry in answer["data"]["noted"]] == [
        {"id": "i-00"}, {"id": "i-10"}, None, {"id": "i-30"}]
    assert answer["errors"] == [("no lead for k2", ("noted", 2, "lead"))]
    holes = _answer(SHORTCUT, "{ holes { key sources { id } } }")
    assert holes["data"] == {"holes": None}
    assert holes["errors"] == [("Cannot return null for non-nullable field Entry.sources.",
                                ("holes", 1, "sources", 1))]
    bare = _answer(SHORTCUT, "{ bare { key sources { id } } }")
    assert bare["data"] == {"bare": None}
    assert bare["errors"] == [("Cannot return null for non-nullable field Entry.sources.",
                               ("bare", 0, "sources"))]
