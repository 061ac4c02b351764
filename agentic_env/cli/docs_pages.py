"""The docs site's generated pages: the CLI reference and the result pages.

The CLI reference is read from the commands themselves: every subcommand of
:data:`agentic_env.cli.COMMANDS` is started with its ``argparse`` parser stopped at
``parse_args``, and the parser's own help (its sub-commands' too) becomes the page, so the
reference cannot drift from the options. The result pages come from
:mod:`agentic_env.reports.docs_pages`. The docs' ``conf.py`` calls :func:`generate` on every
build; by hand::

    python -m agentic_env.cli.docs_pages docs/_generated
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pathlib
import sys
from collections.abc import Iterator

from agentic_env.cli import COMMANDS
from agentic_env.reports import docs_pages

#: Width of the help text on the page.
HELP_COLUMNS = 100
#: The CLI reference's file, relative to the generated folder.
CLI_PAGE = "cli.md"
#: The packages whose modules the API reference documents, with the source folder of each
#: (``agents/`` and ``real/`` are mapped into the namespace).
API_ROOTS = ("agentic_env", "agentic_env.agents", "agentic_env.real")
#: Packages under the roots that hold data, not an API.
API_SKIPPED = ("agentic_env.assets", "agentic_env.scenes")
#: The public API the reference documents: these modules and every module below them (the
#: rest, e.g. the simulator's internals and the commands, is documented in its source).
API_PUBLIC = ("agentic_env", "agentic_env.errors", "agentic_env.registry", "agentic_env.text",
              "agentic_env.entry_points", "agentic_env.envs.sim_env", "agentic_env.contract",
              "agentic_env.tasks.base", "agentic_env.tasks.score", "agentic_env.experts",
              "agentic_env.agents.base", "agentic_env.agents.runtime", "agentic_env.agents.skills",
              "agentic_env.agents.models", "agentic_env.agents.tools",
              "agentic_env.agents.examples", "agentic_env.oracle",
              "agentic_env.harness.episode", "agentic_env.harness.runner",
              "agentic_env.harness.sweep", "agentic_env.harness.robot_io",
              "agentic_env.harness.evaluations", "agentic_env.reports.ledger",
              "agentic_env.reports.targets", "agentic_env.reports.report",
              "agentic_env.reports.docs_pages", "agentic_env.real", "agentic_env.real.real_env",
              "agentic_env.real.safety")


class _CaughtError(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


@contextlib.contextmanager
def _stopped_at_parsing() -> Iterator[None]:
    saved = argparse.ArgumentParser.parse_known_args

    def catch(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _CaughtError(self)

    argparse.ArgumentParser.parse_known_args = catch  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_known_args = saved  # type: ignore[method-assign]


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser subcommand ``name`` builds, taken from it before it parses anything.

    Raises:
        RuntimeError: the command returned without parsing arguments.
    """
    module_name, function = COMMANDS[name][0].split(":")
    main = getattr(importlib.import_module(module_name), function)
    with _stopped_at_parsing():
        try:
            main([])
        except _CaughtError as caught:
            return caught.parser
    raise RuntimeError(f"agentic-env {name} returned without parsing its arguments")


def _help(parser: argparse.ArgumentParser) -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        return parser.format_help()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:  # argparse keeps sub-commands only here
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _literal(text: str) -> list[str]:
    return ["```text", text.rstrip(), "```", ""]


def cli_page() -> str:
    """The CLI reference page (Markdown): a table of every command, then each one's help."""
    lines = ["# Command line", "",
             "Every tool is a subcommand of `agentic-env` (`agentic-env --help` lists them; "
             "`agentic-env COMMAND --help` shows one). This page is generated from the "
             "commands' own parsers on every docs build.", "",
             "| command | what it does |", "|---|---|"]
    lines += [f"| [`{name}`](#agentic-env-{name}) | {docs_pages.escape(help_text)} |"
              for name, (_, help_text) in COMMANDS.items()]
    lines.append("")
    for name, (_, help_text) in COMMANDS.items():
        parser = command_parser(name)
        lines += [f"(agentic-env-{name})=", f"## agentic-env {name}", "",
                  docs_pages.escape(help_text) + ".", "", *_literal(_help(parser))]
        for sub_name, sub in _subparsers(parser).items():
            lines += [f"### agentic-env {name} {sub_name}", "", *_literal(_help(sub))]
    return "\n".join(lines).rstrip() + "\n"


def public(module: str) -> bool:
    """Whether the API reference documents ``module`` (see :data:`API_PUBLIC`): a package
    root named alone counts only for itself, any other entry for its submodules too."""
    return module in API_PUBLIC or any(
        module.startswith(entry + ".") for entry in API_PUBLIC if entry not in API_ROOTS)


def api_modules() -> list[str]:
    """Every public module of the namespace (:func:`public`; no ``_private`` or ``__main__``
    module), sorted."""
    names = set()
    for package in API_ROOTS:
        folder = pathlib.Path(importlib.import_module(package).__file__ or "").parent
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(part.startswith("_") for part in parts) or not all(
                    (folder.joinpath(*parts[:i]) / "__init__.py").is_file()
                    for i in range(len(parts))):
                continue
            name = ".".join((package, *parts))
            if public(name) and not any(name == s or name.startswith(s + ".")
                                        for s in API_SKIPPED):
                names.add(name)
    return sorted(names)


def _page_of(module: str) -> str:
    """The API page a module is on: its package below a root (``agentic_env.sim``,
    ``agentic_env.agents.runtime``), or the root itself for the root's own modules."""
    for package in sorted(API_ROOTS, key=len, reverse=True):
        if module == package or module.startswith(package + "."):
            rest = module[len(package) + 1:].split(".") if module != package else []
            nested = [p for p in API_ROOTS if p != package and p.startswith(package + ".")]
            if rest and not any(module.startswith(n) for n in nested):
                folder = pathlib.Path(importlib.import_module(package).__file__ or "").parent
                if (folder / rest[0] / "__init__.py").is_file():
                    return f"{package}.{rest[0]}"
            return package
    raise ValueError(module)


def api_pages() -> dict[str, str]:
    """File name -> Markdown of the API reference: an index, and one page per package with
    an ``automodule`` of each of its modules."""
    pages: dict[str, list[str]] = {}
    for module in api_modules():
        pages.setdefault(_page_of(module), []).append(module)
    out = {}
    for page, modules in pages.items():
        lines = [f"# `{page}`", ""]
        for module in modules:
            lines += [f"## `{module}`", "", "```{eval-rst}", f".. automodule:: {module}",
                      "```", ""]
        out[f"{page}.md"] = "\n".join(lines)
    index = ["# API", "", "The public modules, from their docstrings, one page per package. "
             "Everything imports under one namespace, `agentic_env` (`agents/` is "
             "`agentic_env.agents`, `real/` is `agentic_env.real`). Generated on every "
             "docs build.", "", "```{toctree}", ":maxdepth: 1", "", *sorted(pages), "```", ""]
    out["index.md"] = "\n".join(index)
    return out


def generate(root: pathlib.Path, out: pathlib.Path) -> list[pathlib.Path]:
    """Write the CLI reference, the API reference and the result pages of the repository at
    ``root`` under ``out``; return the files that changed."""
    written = docs_pages.write_pages({CLI_PAGE: cli_page()}, out / "reference")
    written += docs_pages.write_pages(api_pages(), out / "api")
    written += docs_pages.write_pages(docs_pages.result_pages(root),
                                      out / docs_pages.RESULTS_DIR)
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m agentic_env.cli.docs_pages OUT``: write the generated pages under OUT."""
    parser = argparse.ArgumentParser(prog="python -m agentic_env.cli.docs_pages",
                                     description=main.__doc__)
    parser.add_argument("out", type=pathlib.Path, help="folder of the generated pages")
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path.cwd(),
                        help="repository root (holds predictions/ and sweeps/; default: .)")
    args = parser.parse_args(argv)
    for path in generate(args.root, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
