"""MkDocs hook: the site renders the normative files where they live, never a copy.

Input: the files MkDocs found in ``docs/``, and the repository's ``models/``,
``benchmarks/results/`` and ``CHANGELOG.md``. Output: those files added to the site
as pages (and their pictures, schemas and data files as files), mounted at ``model/``,
``performance/results/`` and ``changelog.md``; each relative link in them that leaves
its folder is rewritten to where its target sits in the site (a link to the package's
source becomes a link to the API reference).

``models/`` stays the contract: nothing of it is copied into ``docs/`` by hand, so the
site cannot drift from it. A link to a file the site does not hold fails the strict
build, as any broken link does.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]

# site folder -> (repository folder, the files of it the site shows)
MOUNTS = {
    "model": ("models", ("*.md", "*.json", "examples/*.json", "structure/*.json")),
    "performance/results": ("benchmarks/results", ("*.md", "*.png")),
    "": (".", ("CHANGELOG.md",)),
}
# a repository path the site shows elsewhere: the package's source is the API reference
_ELSEWHERE = {
    "assembler": "reference/api.md",
    "models/examples": "reference/cli.md#the-shipped-examples",
}
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _mounted() -> dict[str, str]:
    """Site path -> repository path (both POSIX, relative) of every mounted file."""
    found: dict[str, str] = {}
    for site, (folder, patterns) in MOUNTS.items():
        base = ROOT / folder
        for pattern in patterns:
            for path in sorted(base.glob(pattern)):
                relative = path.relative_to(base).as_posix()
                site_path = posixpath.join(site, relative) if site else relative
                found[site_path.lower() if relative == "CHANGELOG.md" else site_path] = (
                    path.relative_to(ROOT).as_posix()
                )
    return found


def on_files(files: Files, config: Any) -> Files:
    for site_path, source in _mounted().items():
        files.append(File.generated(config, site_path, abs_src_path=str(ROOT / source)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = _mounted().get(page.file.src_uri)
    if source is None:
        return markdown
    here = posixpath.dirname(page.file.src_uri)
    origin = posixpath.dirname(source)
    to_site = {repo: site for site, repo in _mounted().items()}

    def rewrite(match: re.Match[str]) -> str:
        target = match.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(origin, path))
        site = to_site.get(resolved)
        if site is None:
            site = _ELSEWHERE.get(resolved) or _ELSEWHERE.get(resolved.split("/", 1)[0])
        if site is None:
            return match.group(0)  # left as it is: the strict build names it if broken
        site, _, fixed = site.partition("#")
        link = posixpath.relpath(site, here or ".")
        anchor = anchor or fixed
        return f"]({link}{'#' + anchor if anchor else ''})"

    return _LINK.sub(rewrite, markdown)
