"""The guide's Node toolchain: node and npm (Debian packages nodejs and npm), and book/node_modules
installed from book/package-lock.json by `npm ci`. `./workshop book` and `./workshop check` both
start here."""
from __future__ import annotations

import os
import shutil
import subprocess

from .environment import install_hint
from .lessons import ROOT, UsageError

BOOK = ROOT / "book"


def book_dependencies_stale() -> bool:
    """True when book/node_modules is missing or older than book/package-lock.json."""
    modules, lock = BOOK / "node_modules", BOOK / "package-lock.json"
    if not modules.is_dir():
        return True
    return lock.exists() and modules.stat().st_mtime < lock.stat().st_mtime


def ensure_book_dependencies(quiet: bool = False) -> bool:
    """Makes sure node and npm exist and book/node_modules matches the lock file, running
    `npm ci` in book/ when it does not. Returns whether it ran npm ci. With quiet=True npm's
    output is shown only when it fails. Raises UsageError naming what to install or what
    failed."""
    missing = [c for c in ("node", "npm") if shutil.which(c) is None]
    if missing:
        names = " and ".join(f"'{c}'" for c in missing)
        raise UsageError(f"{names} {'is' if len(missing) == 1 else 'are'} not installed (the "
                         f"guide is built with Node.js). Install them with:  "
                         f"{install_hint('node', 'npm')}")
    if not (BOOK / "package.json").exists():
        raise UsageError("book/package.json is missing")
    if not book_dependencies_stale():
        return False
    cmd = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    if not quiet:
        print("$ (cd book && " + " ".join(cmd) + ")", flush=True)
    r = subprocess.run(cmd, cwd=BOOK, capture_output=quiet, text=True)
    if r.returncode != 0:
        detail = f":\n{(r.stdout + r.stderr)[-3000:]}" if quiet else " (see above)"
        raise UsageError(f"npm ci failed in book/{detail}")
    # Date node_modules itself, so that it counts as newer than the lock file it was installed
    # from, whatever dates npm left on it.
    os.utime(BOOK / "node_modules")
    return True
