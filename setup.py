"""Package list for the agentic_env namespace; all other metadata is in pyproject.toml.

pyproject.toml maps five folders onto one import namespace ([tool.setuptools.package-dir]).
`packages.find` cannot remap folders, so this lists each root plus every subpackage found
under its folder, which picks up new subpackages automatically. Under assets/ and scenes/
every folder counts (data folders need no __init__.py); elsewhere a folder needs an __init__.py.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup

HERE = Path(__file__).resolve().parent
CONFIG = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]
ROOTS: dict[str, str] = CONFIG["package-dir"]
DATA_ROOTS = {"agentic_env.assets", "agentic_env.scenes"}
EXCLUDE = ["__pycache__", "*.__pycache__"]


def _packages() -> list[str]:
    packages = []
    for name, folder in ROOTS.items():
        find = find_namespace_packages if name in DATA_ROOTS else find_packages
        packages.append(name)
        packages += [f"{name}.{sub}" for sub in find(str(HERE / folder), exclude=EXCLUDE)]
    return packages


setup(packages=_packages())
