"""The reference pages against the code: a route, a GraphQL root field, a command or flag of
`openbot-memory`, a setting or an error tag that the reference does not document fails here."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from graphql import GraphQLObjectType, build_schema
from pydantic import AliasChoices, SecretStr
from starlette.routing import Route

from app import errors
from app.api.openapi import document
from app.api.rest import routes
from app.cli import parser
from app.config import Settings
from tests.conftest import ROOT

REFERENCE = ROOT / "docs" / "reference"


def generator() -> ModuleType:
    """scripts/docs_reference.py, the MkDocs hook that renders the generated parts."""
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "scripts" / "docs_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(page: Path) -> dict[str, list[str]]:
    """Each table row of a page, by its first cell's first `name`: its cells."""
    found: dict[str, list[str]] = {}
    for line in page.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            found.setdefault(name, cells)
    return found


def test_every_route_is_in_the_rest_reference() -> None:
    page = (REFERENCE / "rest.md").read_text()
    assert "<!-- reference: rest -->" in page
    rendered = generator().fill(page)
    served = {
        (method, route.path)
        for route in routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert served
    for method, path in served:
        assert f"### `{method} {path}`" in rendered, (method, path)
    for schema in document(routes)["components"]["schemas"]:
        assert f"#### `{schema}`" in rendered, schema
    for other in ("/graphql", "/mcp", "/metrics"):  # served beside the REST routes
        assert f"`{other}`" in page, other


def test_every_graphql_root_field_is_in_the_graphql_reference() -> None:
    page = REFERENCE / "graphql.md"
    assert "<!-- reference: graphql-sdl -->" in page.read_text()
    assert generator().graphql_sdl().count((ROOT / "schema.graphql").read_text()) == 1
    schema = build_schema((ROOT / "schema.graphql").read_text())
    table = rows(page)
    documented = {re.match(r"\w+", name).group(0) for name in table}  # type: ignore[union-attr]
    roots = [schema.query_type, schema.mutation_type, schema.subscription_type]
    fields = {name for root in roots if isinstance(root, GraphQLObjectType) for name in root.fields}
    assert fields
    assert fields <= documented, sorted(fields - documented)


def commands(root: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every command of the CLI by its words (`serve`, `token create`, ...)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, node: argparse.ArgumentParser) -> None:
        subparsers = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subparsers:
            for name, child in action.choices.items():
                words = f"{prefix} {name}".strip()
                found[words] = child
                walk(words, child)

    walk("", root)
    return found


def test_every_command_and_flag_is_in_the_cli_reference() -> None:
    page = (REFERENCE / "cli.md").read_text()
    sections = {
        match.group(1): body
        for match, body in zip(
            re.finditer(r"^## (\w+)$", page, re.MULTILINE),
            re.split(r"^## \w+$", page, flags=re.MULTILINE)[1:],
            strict=True,
        )
    }
    found = commands(parser())
    assert {"serve", "neo4j", "token create", "token list", "token revoke", "schema", "export",
            "import"} <= set(found)
    for words, command in found.items():
        section = sections.get(words.split()[0])
        assert section is not None, f"`{words}` has no section in docs/reference/cli.md"
        assert f"openbot-memory {words}" in section, words
        for action in command._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            for option in action.option_strings:
                assert f"`{option}`" in section, (words, option)
            if not action.option_strings and action.choices:
                for choice in action.choices:
                    assert f"`{choice}`" in section, (words, choice)
            elif not action.option_strings:
                name = action.metavar or action.dest.upper()
                assert str(name) in section, (words, name)


def environment_name(field: str) -> str:
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return f"OPENBOT_MEMORY_{field.upper()}"


def shown_default(field: str, value: Any) -> str:
    """A default as the settings page writes it."""
    if value is None or isinstance(value, SecretStr):
        return "unset"
    if field == "jar_cache":
        return "`~/.cache/openbot-memory`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    return f"`{value}`"


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_every_setting_is_in_the_settings_reference_with_its_default(field: str) -> None:
    table = rows(REFERENCE / "settings.md")
    name = environment_name(field)
    assert name in table, f"{name} is not in docs/reference/settings.md"
    cells = table[name]
    assert len(cells) == 3, cells
    assert cells[1] == shown_default(field, Settings.model_fields[field].default), (name, cells)
    assert cells[2], name  # what it does


def test_every_error_tag_is_in_the_error_reference() -> None:
    table = rows(REFERENCE / "errors.md")
    tags = [cls for cls in vars(errors).values()
            if isinstance(cls, type) and issubclass(cls, errors.ServiceError)
            and cls is not errors.ServiceError]
    assert len(tags) >= 8
    for cls in tags:
        assert cls.tag in table, cls.tag
        assert table[cls.tag][1:3] == [str(cls.status), f"`{cls.code}`"], table[cls.tag]
