from __future__ import annotations

from tests.conftest import Api


def test_create_session_answers_the_session_view(api: Api) -> None:
    view = api.session()
    assert view["session"]["revision"] == 0
    assert view["memory"] == {
        "entries": {},
        "processed": [],
        "settings": {"use": True, "generate": True},
        "overrides": {},
    }
