"""The playground in a real browser (headless Chromium, Debian's package, driven by Selenium):
GraphiQL answers without a token, loads only from the service itself, takes a token, and shows
a session's memory. The screenshot is kept in `.test-output/graphiql.png`."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service as DriverService
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.conftest import ROOT, Api, RunningServer

OUTPUT = ROOT / ".test-output"
INSTALL = "apt-get install -y chromium chromium-driver (scripts/check does it when run as root)"


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium, f"the browser test needs Chromium: {INSTALL}"
    assert driver, f"the browser test needs Chromium's driver: {INSTALL}"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
        # no network beyond loopback: every other host name resolves to nothing
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    session = webdriver.Chrome(service=DriverService(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def test_graphiql_page_answers_html_without_a_token(server: RunningServer) -> None:
    page = httpx.get(f"{server.url}/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "/graphql/assets/graphiql.min.js" in page.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text), "an outside asset"
    asset = httpx.get(f"{server.url}/graphql/assets/graphiql.min.js")
    assert asset.status_code == 200
    assert len(asset.content) > 1_000_000
    # the API itself still needs a token
    signed_out = httpx.get(f"{server.url}/graphql", params={"query": "{ agents { id } }"})
    assert signed_out.status_code == 401


def _type_into_editor(browser: WebDriver, css: str, text: str) -> None:
    editor = browser.find_element(By.CSS_SELECTOR, f"{css} .CodeMirror")
    editor.click()
    chord = ActionChains(browser).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL)
    chord.send_keys(Keys.DELETE).perform()
    ActionChains(browser).send_keys(text).perform()


def test_a_session_memory_query_in_graphiql_shows_the_entries(
    server: RunningServer, api: Api, browser: WebDriver
) -> None:
    session = api.session()["session"]["id"]
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    browser.get(f"{server.url}/graphql")
    wait = WebDriverWait(browser, 30)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror"))
    unsigned = browser.find_element(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror")
    token = browser.find_element(By.ID, "token")
    token.send_keys(api.token)
    token.send_keys(Keys.TAB)  # the change event: GraphiQL renders anew, signed
    # type into the new editor, not into the one being replaced
    wait.until(expected_conditions.staleness_of(unsigned))
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror"))
    query = (f'{{ session(id: "{session}") {{ memory {{ entries {{ nodes {{ key content }} }} }}'
             " } }")
    _type_into_editor(browser, ".graphiql-query-editor", query)
    browser.find_element(By.CSS_SELECTOR, ".graphiql-execute-button").click()

    def answered(b: WebDriver) -> str | None:
        text = str(b.find_element(By.CSS_SELECTOR, ".graphiql-response").text)
        return text if "1500 EUR" in text else None

    OUTPUT.mkdir(exist_ok=True)
    try:
        shown = str(wait.until(answered))
    except TimeoutException:
        browser.save_screenshot(str(OUTPUT / "graphiql-failed.png"))
        pane = browser.find_element(By.CSS_SELECTOR, ".graphiql-response").text
        editor = browser.find_element(By.CSS_SELECTOR, ".graphiql-query-editor").text
        raise AssertionError(f"no answer shown; editor: {editor!r}; pane: {pane!r}") from None
    shot = Path(OUTPUT / "graphiql.png")
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    assert '"key": "budget"' in shown
    # everything the page loaded came from the service itself
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert loaded, "the page loaded nothing"
    assert all(name.startswith(server.url) for name in loaded), json.dumps(loaded)


def test_a_subscription_in_graphiql_shows_each_change(
    server: RunningServer, api: Api, browser: WebDriver
) -> None:
    # GraphiQL runs subscriptions over graphql-transport-ws (its bundled graphql-ws
    # client), signed in with the token field, and shows each new view as it comes.
    session = api.session()["session"]["id"]
    browser.get(f"{server.url}/graphql")
    wait = WebDriverWait(browser, 30)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror"))
    unsigned = browser.find_element(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror")
    token = browser.find_element(By.ID, "token")
    token.send_keys(api.token)
    token.send_keys(Keys.TAB)
    wait.until(expected_conditions.staleness_of(unsigned))
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror"))
    query = (f'subscription {{ memoryChanged(sessionId: "{session}") {{ revision '
             "memory { entries { nodes { key content } } } } }")
    _type_into_editor(browser, ".graphiql-query-editor", query)
    browser.find_element(By.CSS_SELECTOR, ".graphiql-execute-button").click()

    def showing(text: str) -> Callable[[WebDriver], str | None]:
        def shown(b: WebDriver) -> str | None:
            pane = str(b.find_element(By.CSS_SELECTOR, ".graphiql-response").text)
            return pane if text in pane else None
        return shown

    OUTPUT.mkdir(exist_ok=True)
    try:
        wait.until(showing('"revision": 0'))
        api.remember(session, "budget", "The trip budget is 1500 EUR.")
        shown = str(wait.until(showing("1500 EUR")))
    except TimeoutException:
        browser.save_screenshot(str(OUTPUT / "graphiql-subscription-failed.png"))
        pane = browser.find_element(By.CSS_SELECTOR, ".graphiql-response").text
        raise AssertionError(f"no live view shown; pane: {pane!r}") from None
    browser.save_screenshot(str(OUTPUT / "graphiql-subscription.png"))
    assert '"revision": 1' in shown


def test_graphiql_opened_without_a_token_shows_a_hint_and_reads_the_schema_once_given_one(
    server: RunningServer, api: Api, browser: WebDriver
) -> None:
    browser.get(f"{server.url}/graphql")
    wait = WebDriverWait(browser, 30)

    def pane(b: WebDriver) -> str:
        return str(b.find_element(By.CSS_SELECTOR, ".graphiql-response").text)

    OUTPUT.mkdir(exist_ok=True)
    try:
        # a new user is greeted with what to do, not with an error
        shown = str(wait.until(lambda b: pane(b) if "Paste a token" in pane(b) else None))
    except TimeoutException:
        browser.save_screenshot(str(OUTPUT / "graphiql-hint-failed.png"))
        raise AssertionError(f"no hint shown; pane: {pane(browser)!r}") from None
    assert "Unauthorized" not in shown
    assert "openbot-memory token create" in shown
    unsigned = browser.find_element(By.CSS_SELECTOR, ".graphiql-query-editor .CodeMirror")
    token = browser.find_element(By.ID, "token")
    token.send_keys(api.token)
    token.send_keys(Keys.TAB)
    wait.until(expected_conditions.staleness_of(unsigned))
    docs = '.graphiql-sidebar button[aria-label*="Documentation Explorer"]'
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, docs))
    browser.find_element(By.CSS_SELECTOR, docs).click()
    try:
        # the schema is read, signed: the documentation explorer lists its root types
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".graphiql-doc-explorer-root-type"))
    except TimeoutException:
        browser.save_screenshot(str(OUTPUT / "graphiql-schema-failed.png"))
        explorer = browser.find_element(By.CSS_SELECTOR, ".graphiql-doc-explorer").text
        raise AssertionError(f"no schema; explorer: {explorer!r}") from None
    roots = browser.find_elements(By.CSS_SELECTOR, ".graphiql-doc-explorer-root-type")
    assert [root.text for root in roots] == ["query", "mutation", "subscription"]
    explorer = browser.find_element(By.CSS_SELECTOR, ".graphiql-doc-explorer").text
    assert "Query" in explorer, explorer
    assert "Subscription" in explorer, explorer
    assert "Unauthorized" not in pane(browser)
