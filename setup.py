"""The build step pyproject.toml cannot say: the statements in the top-level `cypher/` go into
the package (as `app/store/cypher/`), so an installed wheel has every statement it runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCypher(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "app" / "store" / "cypher"
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted((Path(__file__).parent / "cypher").glob("*.cypher")):
            shutil.copy2(source, target / source.name)


setup(cmdclass={"build_py": BuildWithCypher})
