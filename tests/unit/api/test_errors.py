"""The public API and the one exception hierarchy."""

from __future__ import annotations

import inspect

import pytest

import kg_rag
from kg_rag import errors

PUBLIC = [
    "Answer",
    "ConfigError",
    "Explanation",
    "IndexReport",
    "InputError",
    "KgRagError",
    "KnowledgeGraph",
    "LanguageGuess",
    "LoadError",
    "MentionReport",
    "NotFoundError",
    "QueryError",
    "RateLimitedError",
    "Result",
    "SelectionError",
    "Settings",
    "Store",
    "StoreError",
    "StoreLockedError",
    "WsdMode",
    "__version__",
    "load_settings",
    "open_store",
]
ERRORS = [obj for _, obj in inspect.getmembers(errors, inspect.isclass)
          if issubclass(obj, errors.KgRagError)]


def test_public_api_is_pinned() -> None:
    # changing the public API is a decision: update this list together with kg_rag/__init__.py
    assert sorted(kg_rag.__all__) == sorted(PUBLIC)
    assert len(set(kg_rag.__all__)) == len(kg_rag.__all__)
    for name in kg_rag.__all__:
        assert getattr(kg_rag, name) is not None


def test_star_import_gives_exactly_the_public_api() -> None:
    ns: dict[str, object] = {}
    exec("from kg_rag import *", ns)  # noqa: S102 - test of __all__
    assert sorted(k for k in ns if k != "__builtins__") == sorted(PUBLIC)


def test_errors_module_exports_every_error() -> None:
    assert sorted(errors.__all__) == sorted(e.__name__ for e in ERRORS)
    for e in ERRORS:
        assert getattr(kg_rag, e.__name__) is e


def test_hierarchy_as_documented() -> None:
    expected = {
        "ConfigError": "KgRagError", "InputError": "KgRagError", "LoadError": "InputError",
        "QueryError": "KgRagError", "StoreError": "KgRagError", "StoreLockedError": "StoreError",
        "SelectionError": "KgRagError", "RateLimitedError": "SelectionError",
        "NotFoundError": "KgRagError",
    }
    for e in ERRORS:
        if e is errors.KgRagError:
            assert e.__bases__ == (Exception,)
            continue
        assert e.__bases__[0].__name__ == expected[e.__name__]
        assert e.__name__ in (errors.__doc__ or ""), "the docstring draws the whole hierarchy"


MESSAGES = [
    "plain",
    "two\nlines",
    "  leading and trailing  \n\n",
    "tabs\tand\r\ncarriage returns",
    "unicode line separator\u2028and paragraph\u2029end",
    "",
]


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("message", MESSAGES)
def test_str_is_one_line(cls: type[errors.KgRagError], message: str) -> None:
    err = cls(message)
    text = str(err)
    assert text.splitlines() == ([text] if text else [])
    assert text == text.strip() and "  " not in text
    assert text.replace(" ", "") == "".join(message.split())


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_exit_codes_and_http_statuses(cls: type[errors.KgRagError]) -> None:
    assert isinstance(cls.exit_code, int) and cls.exit_code >= 1
    # 2 is argparse's usage error: only bad input shares it
    assert (cls.exit_code == 2) == issubclass(cls, errors.InputError)
    assert 400 <= cls.http_status < 600
    assert cls.title and cls.title == cls.title.strip()


def test_exit_codes_are_distinct_per_family() -> None:
    families = [errors.ConfigError, errors.InputError, errors.QueryError, errors.StoreError,
                errors.SelectionError, errors.NotFoundError]
    codes = [f.exit_code for f in families]
    assert len(set(codes)) == len(codes) and errors.KgRagError.exit_code not in codes
    assert errors.StoreLockedError.exit_code == errors.StoreError.exit_code


def test_rate_limited_keeps_retry_after() -> None:
    e = errors.RateLimitedError("slow down\nplease", retry_after=2.5)
    assert e.retry_after == 2.5 and str(e) == "slow down please"
    assert errors.RateLimitedError("x").retry_after is None
    assert isinstance(e, errors.SelectionError) and e.http_status == 429


def test_errors_pickle_round_trip() -> None:
    import pickle

    for cls in ERRORS:
        again = pickle.loads(pickle.dumps(cls("one\ntwo")))
        assert type(again) is cls and str(again) == "one two"


def test_dir_lists_the_lazy_names_and_they_resolve() -> None:
    assert set(PUBLIC) <= set(dir(kg_rag))
    from kg_rag.api import KnowledgeGraph
    from kg_rag.model import Answer

    assert kg_rag.KnowledgeGraph is KnowledgeGraph and kg_rag.Answer is Answer
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = kg_rag.nothing_here  # type: ignore[attr-defined]


def test_import_is_cheap_and_the_version_comes_from_the_metadata() -> None:
    import subprocess
    import sys
    from importlib.metadata import version

    code = ("import sys, kg_rag; heavy = [m for m in ('pyoxigraph', 'kg_rag.api', 'kg_rag.store') "
            "if m in sys.modules]; print(kg_rag.__version__, heavy); "
            "kg_rag.KnowledgeGraph, kg_rag.Answer, kg_rag.WsdMode")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [version("kg-rag"), "[]"]
