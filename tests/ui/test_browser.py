"""``memflow ui`` in a real headless Chromium against a real ``memflow ui`` process on a real
PostgreSQL: the pages load without console errors, a search puts the expected episode first
with its evidence chain, the episode tree expands, a key for another dataset sees 403, and
memorised HTML stays text."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from memflow.cli.demo import SAMPLES
from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, PointDraft
from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ..servers.conftest import free_port, memflow_cmd, row_counts, server_process
from ..support.browser import browser_context

KEY_SAMPLES = "samples-key-0123456789abcdef"
KEY_HOSTILE = "hostile-key-0123456789abcdef"
ADMIN = "admin-key-0123456789abcdef"
QUESTION = "When is the read cut-over planned?"
OLD_FACT = "Tom Becker reviews every schema change"
NEW_FACT = "Priya Raman owns the migration; Dana Whitfield reviews every schema change."
# Memorised HTML: every piece would run or load something if a page let it through unescaped.
XSS_NAME = "Deploy notes <script>window.__xss = 1</script>"
XSS_FACET = 'Key rotation <img src=x onerror="window.__xss = 2">'
XSS_POINT = 'Mallory pasted "</pre><script>window.__xss = 3</script>" into the rotation ticket.'
XSS_ENTITY = "<svg onload=window.__xss=4>"
HOSTILE = EpisodeDraft(
    name=XSS_NAME,
    summary=f"{XSS_FACET} every Friday.",
    facets=[
        FacetDraft(
            search_text=XSS_FACET,
            anchor_text="The deploy key rotation happens every Friday.",
            points=[PointDraft(search_text=XSS_POINT)],
        )
    ],
    entities=[EntityDraft(name=XSS_ENTITY, role="the <b>rotation</b> ticket")],
)


@dataclass
class Site:
    base: str
    old_point: str  # the FacetPoint closed by a correction
    episode: str  # the orders-migration episode
    reopened: str  # a FacetPoint corrected, then reopened


@pytest.fixture(scope="module")
def site(module_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    notes = tmp_path_factory.mktemp("samples")
    for p in SAMPLES.iterdir():
        if p.suffix in {".md", ".json"}:
            shutil.copy(p, notes / p.name)
    runbook = notes / "release-rollback.en.md"
    with Memory.open(module_db, embedder=HashEmbedder(384)) as mem:
        samples = mem.dataset("samples")
        samples.memorize(sorted(str(p) for p in notes.iterdir()))
        # A second version of one document: the runbook's watch time changed.
        runbook.write_text(runbook.read_text().replace("20 minutes", "45 minutes"))
        samples.memorize(str(runbook))
        found = samples.search(OLD_FACT, top_k=1, display="highly_related")
        point = next(u.node_id for u in found.context_units if u.node_id is not None)
        samples.correct(point, NEW_FACT)
        mem.dataset("hostile").add_episode(HOSTILE)
        episode = str(found.results[0].episode_id)
        # A statement corrected, then reopened (the correction was wrong).
        changes = mem.dataset("changes")
        changes.memorize("# Standup\n\nThe staging cluster runs in Frankfurt.\n")
        hit = changes.search("staging cluster", top_k=1, display="highly_related")
        reopened = next(u.node_id for u in hit.context_units if u.node_id is not None)
        changes.correct(reopened, "The staging cluster runs in Dublin.")
        changes.reopen(reopened, actor="ui-test")
    port = free_port()
    keys = {KEY_SAMPLES: ["samples"], KEY_HOSTILE: ["hostile"], ADMIN: ["*"]}
    cmd = memflow_cmd(module_db, "ui", "--port", str(port))
    with server_process(cmd, port, {"MEMFLOW_API_KEYS": json.dumps(keys)}):
        yield Site(f"http://127.0.0.1:{port}", str(point), episode, str(reopened))


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    with browser_context(chromium, viewport={"width": 1280, "height": 900}) as context:
        yield context


@dataclass
class Tab:
    """A browser page that records console errors and warnings, uncaught errors and dialogs."""

    page: Any
    base: str
    problems: list[str] = field(default_factory=list)

    def open(self, path: str, status: int = 200) -> Any:
        resp = self.page.goto(self.base + path)
        assert resp is not None and resp.status == status, (path, resp and resp.status)
        return resp

    def sign_in(self, key: str) -> None:
        self.open("/ui/login")
        self.page.fill("input[name=key]", key)
        self.page.click("form button[type=submit]")
        self.page.wait_for_load_state()

    def text(self) -> str:
        return str(self.page.inner_text("main"))


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    browser.clear_cookies()
    page = browser.new_page()
    t = Tab(page, site.base)
    page.on("console", lambda m: m.type in ("error", "warning") and t.problems.append(m.text))
    page.on("pageerror", lambda e: t.problems.append(f"uncaught: {e}"))

    def dialog(d: Any) -> None:
        t.problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    yield t
    page.close()


def test_every_page_loads_without_console_errors(tab: Tab, site: Site) -> None:
    tab.open("/ui/dataset?d=samples", 200)  # sign-in first, then back to the page asked for
    assert "/ui/login" in tab.page.url
    tab.page.fill("input[name=key]", ADMIN)
    tab.page.click("form button[type=submit]")
    tab.page.wait_for_load_state()
    assert tab.page.url.endswith("/ui/dataset?d=samples")
    assert "Documents" in tab.text() and "db-migration.en.md" in tab.text()
    versions = tab.page.locator("section.documents tr", has_text="release-rollback.en.md")
    assert versions.count() == 1  # the source's first row; its other version follows it
    rows = tab.page.locator("section.documents tbody tr")
    runbook = [rows.nth(i).inner_text() for i in range(rows.count())]
    at = next(i for i, text in enumerate(runbook) if "release-rollback.en.md" in text)
    assert "2\tcurrent" in runbook[at] and "1\treplaced" in runbook[at + 1], runbook[at : at + 2]
    tab.open("/ui/")
    names = {r.get_attribute("data-dataset") for r in tab.page.locator("tr[data-dataset]").all()}
    assert {"samples", "hostile"} <= names
    tab.open(f"/ui/episode?d=samples&id={site.episode}")
    tab.open(f"/ui/search?d=samples&q={quote(QUESTION)}")
    tab.open(f"/ui/history?d=samples&id={site.old_point}")
    assert "correction" in tab.text() and NEW_FACT in tab.text()
    tab.page.click("dl.validity a")  # the version that replaced it
    tab.page.wait_for_load_state()
    assert "statement history" in tab.page.inner_text("header")
    tab.open(f"/ui/search?d=samples&q={quote(QUESTION)}")
    tab.page.locator("ul.citations a.key").first.click()  # the message a result cites
    tab.page.wait_for_load_state()
    assert "cited message" in tab.page.inner_text("header")
    assert tab.page.inner_text("blockquote.chunk").strip()
    assert tab.problems == []


def test_search_shows_the_expected_episode_first_with_its_evidence_chain(tab: Tab) -> None:
    tab.sign_in(KEY_SAMPLES)
    tab.open("/ui/dataset?d=samples")
    tab.page.fill("form.search input[name=q]", QUESTION)
    tab.page.click("form.search button[type=submit]")
    tab.page.wait_for_load_state()
    first = tab.page.locator("li.result").first
    assert first.get_attribute("data-rank") == "1"
    assert "orders database to PostgreSQL" in first.locator("h2 a").inner_text()
    steps = first.locator(".chain .step")
    kinds = [steps.nth(i).get_attribute("class") for i in range(steps.count())]
    assert "kind-episode" in kinds[0] and any("edge" in k for k in kinds[1:]), kinds
    assert any("kind-facetpoint" in k or "kind-facet" in k for k in kinds), kinds
    # The costs drawn add up to the score.
    score = float(first.locator(".score").get_attribute("data-score"))
    total = float(first.locator("tr.sum").get_attribute("data-total"))
    assert abs(score - total) < 1e-6
    budget = tab.page.locator(".context .budget")
    assert 0 < int(budget.get_attribute("data-used")) <= int(budget.get_attribute("data-budget"))
    assert "The read cut-over is planned for May 20, 2024" in tab.page.inner_text(".context pre")
    # What the JSON API of the same app ranks first for the same search.
    body = {"query": QUESTION, "top_k": 10, "budget_tokens": 500}
    bearer = {"Authorization": f"Bearer {KEY_SAMPLES}"}
    api = httpx.post(f"{tab.base}/v1/datasets/samples/search", json=body, headers=bearer).json()
    assert first.get_attribute("data-episode") == api["results"][0]["episode_id"]
    assert tab.problems == []


def test_the_episode_tree_expands(tab: Tab, site: Site) -> None:
    tab.sign_in(KEY_SAMPLES)
    tab.open(f"/ui/episode?d=samples&id={site.episode}")
    old = tab.page.locator(f"li.node[data-id='{site.old_point}']")
    facet = tab.page.locator("li.node.kind-facet").filter(has=old)
    assert facet.count() == 1 and not old.is_visible()
    facet.locator(":scope > details > summary").click()
    assert old.is_visible()
    body = old.locator(":scope > details > .body")
    assert not body.is_visible()
    old.locator(":scope > details > summary").click()
    shown = body.inner_text()
    assert "edge text" in shown.lower() and OLD_FACT in shown  # the has_point edge's own text
    assert "valid until" in shown and "replaced by" in shown and "Dana Whitfield" in shown
    assert "db-migration.en.md" in shown  # its citation: document and message key
    tab.page.click("button[data-tree=close]")
    assert not old.is_visible()
    tab.page.click("button[data-tree=open]")
    points = tab.page.locator("li.node.kind-facetpoint")
    assert points.count() > 3 and all(points.nth(i).is_visible() for i in range(points.count()))
    assert tab.problems == []


def test_a_statement_history_shows_closures_reopenings_and_how_to_reopen(
    tab: Tab, site: Site
) -> None:
    tab.sign_in(ADMIN)
    tab.open(f"/ui/history?d=samples&id={site.old_point}")
    closed = tab.page.locator(f"li.version[data-node='{site.old_point}']")
    assert "closed" in (closed.get_attribute("class") or "").split()
    shown = closed.inner_text()
    assert "closed by correction" in shown.lower()
    assert f"memflow reopen --dataset samples {site.old_point}" in shown  # the page only reads
    assert f"/v1/datasets/samples/points/{site.old_point}/reopen" in shown
    assert closed.locator("ol.changes li").count() == 1
    tab.open(f"/ui/history?d=changes&id={site.reopened}")
    again = tab.page.locator(f"li.version[data-node='{site.reopened}']")
    assert "current" in (again.get_attribute("class") or "").split()
    assert "memflow reopen" not in again.inner_text()
    changes = again.locator("ol.changes li")
    actions = [changes.nth(i).get_attribute("data-action") for i in range(changes.count())]
    assert actions[-1] == "reopen" and len(actions) == 2, actions
    assert "ui-test" in changes.nth(1).inner_text()
    assert tab.problems == []


def test_a_key_for_another_dataset_sees_403(tab: Tab, site: Site) -> None:
    tab.sign_in(KEY_HOSTILE)
    assert tab.page.locator("tr[data-dataset]").count() == 1
    assert tab.page.get_attribute("tr[data-dataset]", "data-dataset") == "hostile"
    for path in (
        "/ui/dataset?d=samples",
        f"/ui/search?d=samples&q={quote(QUESTION)}",
        f"/ui/episode?d=samples&id={site.episode}",
        f"/ui/history?d=samples&id={site.old_point}",
    ):
        tab.open(path, 403)
        assert "may not use the dataset 'samples'" in tab.text()
        assert "orders" not in tab.text()
    # Ids of samples' rows asked for under the key's own dataset: every read is bound to the
    # dataset it names (row-level security), so they are not found there.
    for path in (
        f"/ui/episode?d=hostile&id={site.episode}",
        f"/ui/history?d=hostile&id={site.old_point}",
    ):
        tab.open(path, 404)
        assert "orders" not in tab.text() and OLD_FACT not in tab.text()
    # The same keys as the JSON API of memflow serve (one app).
    bearer = {"Authorization": f"Bearer {KEY_HOSTILE}"}
    assert httpx.get(f"{site.base}/v1/datasets/samples/stats", headers=bearer).status_code == 403
    assert httpx.get(f"{site.base}/ui/dataset?d=samples", headers=bearer).status_code == 403
    assert httpx.get(f"{site.base}/ui/dataset?d=hostile", headers=bearer).status_code == 200


def test_memorised_html_stays_text(tab: Tab) -> None:
    tab.sign_in(ADMIN)
    tab.open("/ui/dataset?d=hostile")
    tab.page.locator("ol.episode-list a").first.click()
    tab.page.wait_for_load_state()
    tab.page.click("button[data-tree=open]")
    shown = tab.text()
    assert all(x in shown for x in (XSS_NAME, XSS_FACET, XSS_POINT, XSS_ENTITY)), shown
    assert tab.page.title().startswith(XSS_NAME)
    tab.open(f"/ui/search?d=hostile&q={quote('Mallory pasted into the rotation ticket')}")
    assert XSS_POINT in tab.page.inner_text(".context pre")
    assert XSS_NAME in tab.page.inner_text("li.result h2")
    assert tab.page.evaluate("typeof window.__xss") == "undefined"
    assert tab.page.locator("script").count() == 1  # ours, /ui/static/ui.js
    assert tab.page.locator("img, svg, [onerror], [onload]").count() == 0
    assert tab.problems == []  # a blocked inline script would log a CSP violation


def test_headers_sign_in_rules_and_static_files(site: Site) -> None:
    with httpx.Client(base_url=site.base) as client:
        page = client.get("/ui/", headers={"Authorization": f"Bearer {ADMIN}"})
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "'unsafe-inline'" not in csp and page.headers["x-frame-options"] == "DENY"
        assert client.get("/ui/").status_code == 303  # no key: to the sign-in page
        bad = client.get("/ui/", headers={"Authorization": "Bearer not-a-key-0123456789"})
        assert bad.status_code == 401
        form = {"key": ADMIN, "next": "/ui/"}
        foreign = client.post("/ui/login", data=form, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
        wrong = client.post("/ui/login", data={"key": "nope", "next": "/ui/"})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        away = client.post("/ui/login", data={"key": ADMIN, "next": "//evil.example/"})
        assert away.status_code == 303 and away.headers["location"] == "/ui/"
        cookie = away.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
        assert ADMIN not in away.headers["set-cookie"]  # a session token, never the key
        assert client.get("/ui/").status_code == 200  # the session cookie signs in
        assert client.post("/ui/logout").status_code == 303
        assert client.get("/ui/").status_code == 303
        js = client.get("/ui/static/ui.js")
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
        assert client.get("/ui/static/..%2Fpages.py").status_code == 404


def test_the_pages_write_nothing(site: Site, module_db: str) -> None:
    """Every page read with every parameter it takes leaves every table as it was; the pages
    take no other method (the JSON API's writes stay behind their own routes and keys)."""
    before = row_counts(module_db)
    pages = (
        "/ui/",
        "/ui/dataset?d=samples",
        f"/ui/search?d=samples&q={quote(QUESTION)}&k=5&budget=300",
        f"/ui/episode?d=samples&id={site.episode}",
        f"/ui/history?d=samples&id={site.old_point}",
    )
    with httpx.Client(base_url=site.base, headers={"Authorization": f"Bearer {ADMIN}"}) as client:
        for path in pages:
            assert client.get(path).status_code == 200, path
            for method in ("POST", "PUT", "DELETE"):
                assert client.request(method, path).status_code == 405, (method, path)
    assert row_counts(module_db) == before
