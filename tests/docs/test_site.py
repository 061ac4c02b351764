"""The docs site builds with warnings as errors, its internal links resolve, and headless
Chromium renders the index, an API page and a result page."""

from __future__ import annotations

import html.parser
import os
import pathlib
import shutil
import subprocess
import sys
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sphinx = pytest.importorskip("sphinx", reason="the docs extra (sphinx, myst-parser) is needed")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The built site: the one scripts/test.sh has just built (``AGENTIC_ENV_DOCS_SITE``), else
    a fresh build the same way (about a minute on two cores)."""
    built = os.environ.get("AGENTIC_ENV_DOCS_SITE")
    if built:
        return pathlib.Path(built).resolve()
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q",
                            "-b", "html", "-d", str(out / ".doctrees"), str(REPO / "docs"),
                            str(out)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-4000:]
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        for key in ("href", "src"):
            if (tag in ("a", "img", "link", "script")) and values.get(key):
                self.links.append(values[key] or "")


def _parse(page: pathlib.Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text())
    return parser


def test_every_internal_link_resolves(site: pathlib.Path) -> None:
    """Every relative link and image of every page names a file of the site, and a link's
    ``#fragment`` an id on that page (the offline counterpart of ``-b linkcheck``)."""
    pages = {page: _parse(page) for page in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path \
                else page
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif url.fragment and target.suffix == ".html":
                ids = (pages.get(target) or _parse(target)).ids
                if url.fragment not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken[:40])


def test_generated_pages_cover_the_commands_and_the_ledger(site: pathlib.Path) -> None:
    from agentic_env.cli import COMMANDS

    cli = (site / "_generated" / "reference" / "cli.html").read_text()
    assert all(f'id="agentic-env-{name}"' in cli for name in COMMANDS)
    results = site / "_generated" / "results"
    ledger = sorted(p.stem for p in (REPO / "predictions").glob("*.yaml"))
    assert sorted(p.stem for p in results.glob("*.html") if p.stem != "index") == ledger


def _chromium() -> str | None:
    return next((shutil.which(name) for name in ("chromium", "chromium-browser",
                                                 "google-chrome") if shutil.which(name)), None)


@pytest.mark.parametrize(("page", "expected"), [
    ("index.html", "closed-loop"),
    ("_generated/api/agentic_env.envs.html", "SimEnv"),
    ("_generated/results/agenticlab-table1.html", "Revisions"),
])
def test_chromium_renders_the_page(site: pathlib.Path, page: str, expected: str) -> None:
    """Headless Chromium loads the page and its DOM holds the page's body and navigation."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium (scripts/setup.sh installs Debian's chromium)")
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                          "--no-first-run", "--disable-dev-shm-usage",
                          f"--user-data-dir={site / '.chromium'}", "--dump-dom",
                          (site / page).as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert expected in dom and 'role="main"' in dom and "Navigation" in dom
    assert "404" not in dom.split("<title>")[1].split("</title>")[0]
