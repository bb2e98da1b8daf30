"""JSON answers (app.api.encoding): orjson, and the standard library where orjson refuses."""

from __future__ import annotations

import json

from app.api.encoding import JsonResponse, dumps


def test_answers_are_compact_utf8_json() -> None:
    body = {"key": "café ☕", "n": [1, 2.5, None, True], "nested": {"emoji": "\U0001f600"}}
    raw = dumps(body)
    assert raw == '{"key":"café ☕","n":[1,2.5,null,true],"nested":{"emoji":"\U0001f600"}}'.encode()
    assert json.loads(raw) == body


def test_what_orjson_refuses_is_still_encoded() -> None:
    # orjson raises on an integer beyond 64 bits and on a lone surrogate; an answer must not
    # fail for its encoding
    assert json.loads(dumps({"big": 2**70})) == {"big": 2**70}
    raw = dumps({"text": "a\ud800b", "other": "é"})
    assert raw == b'{"text":"a\\ud800b","other":"\\u00e9"}'  # valid UTF-8 and JSON
    assert json.loads(raw.decode()) == {"text": "a\ud800b", "other": "é"}


def test_the_response_renders_with_dumps() -> None:
    response = JsonResponse({"ok": "é"}, status_code=201)
    assert response.status_code == 201
    assert response.body == '{"ok":"é"}'.encode()
    assert response.headers["content-type"] == "application/json"
