"""Where the tests' files are, whatever folder a test sits in."""

from __future__ import annotations

from pathlib import Path

#: the tests/ folder
TESTS = Path(__file__).resolve().parent.parent
#: the checkout
ROOT = TESTS.parent
#: small test data made or shipped for the tests (with READMEs saying where it came from)
DATA = TESTS / "data"
#: golden files compared by the tests
GOLDEN = TESTS / "golden"
