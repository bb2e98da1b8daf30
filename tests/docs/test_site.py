"""The documentation site builds strictly (no broken link or anchor, no page outside the
navigation), and a page opened loads nothing from the network: every script, stylesheet,
image, frame and font it loads is the site's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

# What a browser fetches by itself when a page opens (a link to follow is not one).
LOADS = re.compile(
    r"<(?:script|link|img|iframe|source|audio|video|embed|object)\b[^>]*?"
    r"\b(?:src|href|data|srcset)=[\"']?([^\"' >]+)",
    re.IGNORECASE,
)
CSS_LOADS = re.compile(r"(?:@import\s+(?:url\()?|url\()\s*[\"']?([^\"')\s]+)", re.IGNORECASE)
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)  # https://, http://, //host


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True,
        text=True, timeout=300, check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def test_every_page_is_built(site: Path) -> None:
    for page in (ROOT / "docs").rglob("*.md"):
        html = site / page.relative_to(ROOT / "docs").with_suffix(".html")
        assert html.is_file(), html


def test_a_page_loads_nothing_from_the_network(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    remote = [
        (str(page.relative_to(site)), url)
        for page in pages
        for url in LOADS.findall(page.read_text())
        if REMOTE.match(url)
    ]
    remote += [
        (str(sheet.relative_to(site)), url)
        for sheet in site.rglob("*.css")
        for url in CSS_LOADS.findall(sheet.read_text())
        if REMOTE.match(url)
    ]
    assert not remote, remote


def test_search_works_without_a_server(site: Path) -> None:
    # the offline plugin inlines the index for file://, and its worker shim is the site's own
    assert (site / "search" / "search_index.js").read_text().startswith("var __index = ")
    index = (site / "index.html").read_text()
    assert 'src="assets/iframe-worker/shim.js"' in index
    assert (site / "assets" / "iframe-worker" / "shim.js").is_file()


def test_the_rest_and_graphql_references_are_rendered(site: Path) -> None:
    rest = (site / "reference" / "rest.html").read_text()
    assert "<!-- reference:" not in rest
    assert "/v1/sessions/{id}/memory" in rest
    graphql = (site / "reference" / "graphql.html").read_text()
    assert "memoryChanged" in graphql
    assert "SearchHit" in graphql  # a type only the schema names
