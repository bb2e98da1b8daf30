"""The generated parts of the reference pages, filled in when the site is built (a MkDocs hook,
named in mkdocs.yml).

A page holds a marker line, `<!-- reference: NAME -->`, where the part goes:
- `rest`: every route of the OpenAPI document the service serves (`app.api.openapi`), with its
  parameters, body fields and answers;
- `graphql-sdl`: `schema.graphql` whole (the exported schema, which a test keeps current).

Run as a script, it prints one part: `.venv/bin/python scripts/docs_reference.py rest`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- reference: ([\w-]+) -->$", re.MULTILINE)


def openapi_document() -> dict[str, Any]:
    """The document `GET /openapi.json` answers, built from the same routes."""
    sys.path.insert(0, str(ROOT))
    from app.api.openapi import document
    from app.api.rest import routes

    return document(routes)


def _type(schema: dict[str, Any]) -> str:
    """A short name of a JSON Schema's type, for a table cell."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return " \\| ".join(json.dumps(value) for value in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " \\| ".join(_type(option) for option in schema[union])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " \\| ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return str(kind)


def _limits(schema: dict[str, Any]) -> str:
    words = []
    for name, label in (("minimum", "≥"), ("maximum", "≤"), ("minLength", "length ≥"),
                        ("maxLength", "length ≤")):
        if name in schema and abs(schema[name]) < 2**53:  # not the 64-bit integers' bounds
            words.append(f"{label} {schema[name]}")
    if "default" in schema:
        words.append(f"default `{json.dumps(schema['default'])}`")
    return ", ".join(words)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _link(name: str, schemas: dict[str, Any]) -> str:
    return f"[`{name}`](#{name.lower()})" if name in schemas else f"`{name}`"


def _schema(name: str, schemas: dict[str, Any]) -> list[str]:
    """One component schema: its fields, or the schemas it is one of."""
    schema = schemas[name]
    lines = [f"#### `{name}`", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    variants = schema.get("oneOf") or schema.get("anyOf")
    if variants and "properties" not in schema:
        names = ", ".join(_link(_type(v), schemas) for v in variants)
        return [*lines, f"One of: {names}.", ""]
    required = set(schema.get("required", ()))
    lines += ["| field | type | required | notes |", "| --- | --- | --- | --- |"]
    for field, spec in schema.get("properties", {}).items():
        notes = ", ".join(p for p in (spec.get("description", ""), _limits(spec)) if p)
        lines.append(f"| `{field}` | {_linked(_type(spec), schemas)} | "
                     f"{'yes' if field in required else 'no'} | {_cell(notes)} |")
    return [*lines, ""]


def _linked(text: str, schemas: dict[str, Any]) -> str:
    """A type's text with each schema it names linked to that schema."""
    return re.sub(r"\b[A-Z]\w*\b", lambda m: _link(m.group(0), schemas)
                  if m.group(0) in schemas else m.group(0), text)


def _answer(answer: dict[str, Any], schemas: dict[str, Any]) -> str:
    """A response's description, and the schema it answers when it names one."""
    schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
    described = _cell(answer["description"])
    if "$ref" in schema and _type(schema) != "Error":
        return f"{described}: {_link(_type(schema), schemas)}"
    return described


def rest_reference(document: dict[str, Any] | None = None) -> str:
    """Every route of the OpenAPI document as Markdown, in the order the service declares them,
    then every schema the routes name."""
    document = document if document is not None else openapi_document()
    schemas: dict[str, Any] = document["components"]["schemas"]
    out: list[str] = []
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            out += [f"### `{method.upper()} {path}`", "", op["summary"], ""]
            if "security" not in op:
                out += ["No token needed.", ""]
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | type | required | what |",
                        "| --- | --- | --- | --- | --- |"]
                for p in params:
                    detail = ", ".join(x for x in (p.get("description", ""),
                                                   _limits(p["schema"])) if x)
                    out.append(f"| `{p['name']}` | {p['in']} | {_type(p['schema'])} | "
                               f"{'yes' if p.get('required') else 'no'} | {_cell(detail)} |")
                out.append("")
            body = op.get("requestBody")
            if body is not None:
                ref = _type(body["content"]["application/json"]["schema"])
                out += [f"Body: {_link(ref, schemas)}.", ""]
            out += ["| status | when |", "| --- | --- |"]
            for status, answer in op["responses"].items():
                out.append(f"| {status} | {_answer(answer, schemas)} |")
            out.append("")
    out += ["## Schemas", ""]
    for name in sorted(schemas):
        out += _schema(name, schemas)
    return "\n".join(out)


def graphql_sdl() -> str:
    return "```graphql\n" + (ROOT / "schema.graphql").read_text() + "```\n"


PARTS = {"rest": rest_reference, "graphql-sdl": graphql_sdl}


def fill(markdown: str) -> str:
    """The page with each marker replaced by its generated part."""
    return MARKER.sub(lambda found: PARTS[found.group(1)](), markdown)


def on_page_markdown(markdown: str, **_: object) -> str:
    """MkDocs hook: fill in the page's generated parts."""
    return fill(markdown) if MARKER.search(markdown) else markdown


if __name__ == "__main__":
    sys.stdout.write(PARTS[sys.argv[1]]() + "\n")
