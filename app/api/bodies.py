"""Request bodies (pydantic at the edge) and how their errors become 400 ValidationError."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, TypeVar

import pydantic
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from starlette.requests import Request

from app.domain.enums import AGENT_KINDS, Kind, SessionKind, Status
from app.domain.model_names import LINE_BREAKING, MAX_MODEL_NAME
from app.domain.turns import TurnItem
from app.errors import ValidationError
from app.memory.changes import commands

Body = TypeVar("Body", bound=BaseModel)

MAX_WAIT_SECONDS = 30.0  # `?wait=` for a consolidation run


# What the OpenAPI document says of fields the service checks itself
# (app/memory/changes/commands.py, app/domain/model_names.py): documentation only, so the
# service's own messages stay. Rules no JSON Schema can say (S10 no credential, S1 no control
# or invisible character in a key, a known `about`) are in the 400's description.
def _text(max_length: int, pattern: str = r"\S") -> WithJsonSchema:
    return WithJsonSchema(
        {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": pattern}
    )


Key = Annotated[str, _text(commands.MAX_KEY_LENGTH)]
AgentKey = Annotated[str, _text(commands.MAX_KEY_LENGTH, r"^[^@]*[^\s@][^@]*$")]
# Content: some non-space, and no control character but tab and newline (commands.py).
_CONTROL = commands.CONTENT_CONTROLS
Content = Annotated[
    str, _text(commands.MAX_CONTENT_LENGTH, rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$")
]
# Text on one line with some non-space: an agent's name (commands.check_agent_name), a model's
# (model_names.is_model_name).
_LINE = rf"[^{LINE_BREAKING}]*[^\s{LINE_BREAKING}][^{LINE_BREAKING}]*"
AgentName = Annotated[
    str, Field(min_length=1, max_length=commands.MAX_NAME_LENGTH),
    _text(commands.MAX_NAME_LENGTH, f"^{_LINE}$"),
]
KindName = Annotated[str, WithJsonSchema({"enum": [kind.value for kind in Kind]})]
AgentKindName = Annotated[str, WithJsonSchema({"enum": [kind.value for kind in AGENT_KINDS]})]
StatusName = Annotated[str, WithJsonSchema({"enum": [status.value for status in Status]})]
ModelName = Annotated[
    str | None, WithJsonSchema({
        "type": ["string", "null"], "maxLength": len("openai:") + MAX_MODEL_NAME,
        "pattern": f"^(builtin|openai:{_LINE})$",
    })
]
SessionKindName = Annotated[
    str | None, WithJsonSchema({"enum": [*(kind.value for kind in SessionKind), None]})
]


def _whole(value: Any) -> Any:
    """JSON has one number type: `3.0` is the integer 3 (JSON Schema says so too), while the
    strict models below refuse a float; `3.5`, and anything else, is left for them to refuse."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# Neo4j integers are 64-bit: a larger one would fail in the driver, after validation.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
WHOLE = BeforeValidator(_whole)
Integer = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX), WHOLE]
Count = Annotated[int, Field(ge=0, le=INT64_MAX), WHOLE]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CreateAgent(Strict):
    name: AgentName
    shared: bool = False
    model: ModelName = None


class CreateSession(Strict):
    agent: str
    kind: SessionKindName = None
    parent: str | None = None
    person: str | None = None
    model: ModelName = None


class RememberBody(Strict):
    tag: Literal["Remember"] = Field(alias="_tag")
    key: Key
    content: Content
    kind: KindName

    def to_command(self) -> commands.Command:
        return commands.Remember(key=self.key, content=self.content, kind=self.kind)


class ForgetBody(Strict):
    tag: Literal["Forget"] = Field(alias="_tag")
    key: Key

    def to_command(self) -> commands.Command:
        return commands.Forget(key=self.key)


class ConfigureBody(Strict):
    tag: Literal["Configure"] = Field(alias="_tag")
    use: bool | None = None
    generate: bool | None = None

    def to_command(self) -> commands.Command:
        sent = self.model_fields_set
        return commands.Configure(
            use=self.use,
            generate=self.generate,
            set_use="use" in sent,
            set_generate="generate" in sent,
        )


class RefreshBody(Strict):
    tag: Literal["Refresh"] = Field(alias="_tag")

    def to_command(self) -> commands.Command:
        return commands.Refresh()


CommandBody = Annotated[
    RememberBody | ForgetBody | ConfigureBody | RefreshBody, Field(discriminator="tag")
]


class MemoryCommand(Strict):
    """S12: `{expected, revision, command}`; both are required even for Refresh (S16)."""

    expected: str
    revision: Integer
    command: CommandBody


class AgentRememberBody(Strict):
    tag: Literal["Remember"] = Field(alias="_tag")
    key: AgentKey
    content: Content
    kind: AgentKindName
    about: Key | None = None
    visibility: Literal["shared", "private"] = "shared"

    def to_command(self) -> commands.AgentCommand:
        return commands.AgentRemember(
            self.key, self.content, self.kind, self.about, self.visibility
        )


class AgentForgetBody(Strict):
    tag: Literal["Forget"] = Field(alias="_tag")
    key: AgentKey
    about: Key | None = None

    def to_command(self) -> commands.AgentCommand:
        return commands.AgentForget(self.key, self.about)


class AgentMemoryCommand(Strict):
    """A10: `{expected: <version>, command}`."""

    expected: Count
    command: Annotated[AgentRememberBody | AgentForgetBody, Field(discriminator="tag")]


class MemorySwitches(Strict):
    use: bool | None = None
    generate: bool | None = None


class OrgSettingsPatch(Strict):
    memory: MemorySwitches | None = None
    agentMemory: bool | None = None
    helperModel: ModelName = None
    model: ModelName = None

    def changes(self) -> dict[str, Any]:
        """The graph properties to set: only fields sent; a null switch goes back to on."""
        out: dict[str, Any] = {}
        sent = self.model_fields_set
        if self.memory is not None:
            if "use" in self.memory.model_fields_set:
                out["memoryUse"] = self.memory.use is not False
            if "generate" in self.memory.model_fields_set:
                out["memoryGenerate"] = self.memory.generate is not False
        if "agentMemory" in sent:
            out["agentMemory"] = self.agentMemory is not False
        for name in ("helperModel", "model"):
            if name in sent:
                out[name] = getattr(self, name)
        return out


@contextmanager
def nested_command(command: type[BaseModel]) -> Iterator[None]:
    """For a body that nests its command (`{expected, command}`): the domain names a command's
    field as the command has it (`content`), and such a body's client reads it as
    `command.content`. A field outside the command (`expected`, a header) keeps its name."""
    try:
        yield
    except ValidationError as exc:
        fields = {info.alias or name for name, info in command.model_fields.items()}
        if exc.field not in fields:
            raise
        raise ValidationError(exc.message, f"command.{exc.field}") from exc


def _field_of(error: Any) -> str:
    """The field an error names: its path, without the command's tag that pydantic puts after
    `command` (`command.Remember.key` is `command.key`)."""
    loc = [str(part) for part in error.get("loc", ())]
    if len(loc) > 1 and loc[0] == "command":
        del loc[1]
    return ".".join(loc) or "body"


def validation_error(exc: pydantic.ValidationError) -> ValidationError:
    first = exc.errors()[0]
    field = _field_of(first)
    return ValidationError(f"{field}: {first['msg']}", field)


def not_text(field: str) -> ValidationError:
    """The refusal of a string that is not text (`broken_text`), naming where it is."""
    return ValidationError(f"{field}: not valid Unicode text (a lone surrogate)", field)


def broken_text(data: Any, path: tuple[str, ...] = ()) -> str | None:
    """The field of the first string JSON let through that is not text: an escaped half of a
    surrogate pair (`"\\ud800"`), which no store can encode."""
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            return ".".join(path) or "body"
        return None
    if isinstance(data, dict):
        pairs: list[tuple[str, Any]] = list(data.items())
    elif isinstance(data, list):
        pairs = [(str(n), value) for n, value in enumerate(data)]
    else:
        return None
    for key, value in pairs:
        found = broken_text(key, path) or broken_text(value, (*path, key))
        if found is not None:
            return found
    return None


DEEP = f"the body nests deeper than {commands.MAX_DEPTH} levels"


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each sent once: with a key sent twice, which value a
    guarded write checked would be the parser's choice."""
    found = dict(pairs)
    if len(found) < len(pairs):
        keys = [key for key, _ in pairs]
        raise _RepeatedKey(next(key for i, key in enumerate(keys) if key in keys[:i]))
    return found


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def load_json(raw: bytes | str) -> Any:
    """JSON text as Python values; 400 on `body` when it is not JSON (NaN and Infinity are
    not, nor is an integer past Python's digit limit), nests too deep, or sends a key of one
    object twice."""
    try:
        data = json.loads(raw, object_pairs_hook=_object, parse_constant=_not_json)
    except _RepeatedKey as exc:
        raise ValidationError(f"the key {exc.key!r} is sent twice in one object", "body") from exc
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError among them
        raise ValidationError("the body is not valid JSON", "body") from exc
    except RecursionError as exc:  # far deeper than MAX_DEPTH: the parser gave up
        raise ValidationError(DEEP, "body") from exc
    if commands.too_deep(data):
        raise ValidationError(DEEP, "body")
    return data


async def parse(request: Request, model: type[Body], empty_ok: bool = False) -> Body:
    """The request's JSON body as `model`; 400 ValidationError naming the field otherwise.
    With `empty_ok`, an empty body is `{}` (every field at its default)."""
    raw = await request.body()
    if empty_ok and not raw.strip():
        raw = b"{}"
    data = load_json(raw or b"null")
    if not isinstance(data, dict):
        raise ValidationError("the body must be a JSON object", "body")
    broken = broken_text(data)
    if broken is not None:
        raise not_text(broken)
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise validation_error(exc) from exc


class TurnItemBody(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9._:-]{1,64}$")] | None = None
    type: Literal["message", "tool_call", "tool_result", "app_action", "approval"]
    role: Literal["user", "assistant", "tool", "system"]
    content: Annotated[str, Field(max_length=100_000)]
    app: Annotated[str, Field(min_length=1, max_length=200)] | None = None

    def to_item(self) -> TurnItem:
        return TurnItem(self.type, self.role, self.content, self.id, self.app)


def turn_items(items: list[TurnItemBody]) -> list[TurnItem]:
    """A turn's items as the service takes them, from REST and MCP alike."""
    return [item.to_item() for item in items]


class RecordTurn(Strict):
    items: Annotated[list[TurnItemBody], Field(min_length=1, max_length=500)]
    model: ModelName = None
    status: Literal["completed", "awaiting_approval"] = "completed"


class CompleteTurn(Strict):
    items: Annotated[list[TurnItemBody], Field(max_length=500)] = []


class Fork(Strict):
    at: str | None = None


class Promote(Strict):
    name: AgentName | None = None


class Revert(Strict):
    """Going back is checked like a memory command: the head and revision the client saw."""

    expected: str
    revision: Integer
    to: str
