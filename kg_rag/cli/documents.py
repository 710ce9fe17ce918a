"""``index``, ``delete``, ``documents``."""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import (
    WSD_HELP,
    makes_store,
    plural,
    print_json,
    progress_enabled,
    store_from_args,
    wsd_arg,
)
from kg_rag.documents import SourceDocument, read_documents
from kg_rag.documents.readers import read_path
from kg_rag.errors import InputError
from kg_rag.settings import settings
from kg_rag.text.langid import check_language
from kg_rag.text.normalise import for_terminal

#: a document of more characters gets a progress bar of its own while it is indexed
LONG_DOCUMENT = 100_000


class WithinDocument:
    """A second progress bar for a long document: its characters annotated, then how many of its
    mentions are being decided (``detail`` of :meth:`KnowledgeGraph.index`) — section by section
    for one written in sections (:data:`kg_rag.pipeline.index.SECTION_CHARS`)."""

    def __init__(self, enabled: bool, long: int = LONG_DOCUMENT) -> None:
        self.enabled, self.long = enabled, long
        self.bar: tqdm[Any] | None = None

    def __call__(self, doc_id: str, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage == "annotate":
            if total < self.long:
                return
            desc = f"{for_terminal(doc_id)[:30]}: annotating"
            if self.bar is None:
                self.bar = tqdm(total=total, unit="char", unit_scale=True, leave=False,
                                position=1, file=sys.stderr, desc=desc)
            elif self.bar.desc != desc:   # the next section of a long document
                self.bar.set_description_str(desc)
            self.bar.update(done - self.bar.n)
        elif self.bar is not None and stage == "decide":
            if done < total or total == 0:
                self.bar.set_description_str(f"{for_terminal(doc_id)[:30]}: deciding "
                                             f"{plural(total, 'ambiguous mention')}")
            else:
                self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: what ``index -`` reads from standard input → the suffix whose reader reads it
STDIN_FORMATS = {"text": ".txt", "markdown": ".md", "html": ".html", "jsonl": ".jsonl"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("index", help="index documents (txt, md, html, jsonl; pdf, docx with the documents extra; "
                                        "folders walked; - for stdin)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or folders; '-' reads one document (or JSON Lines) from standard input")
    p.add_argument("--lang", help="language of documents that do not say (default: detected per paragraph)")
    p.add_argument("--wsd", type=wsd_arg, help=WSD_HELP + " (documents are always decided)")
    p.add_argument("--id", dest="stdin_id", default="stdin", metavar="ID",
                   help="the id of the document read from standard input (default: stdin)")
    p.add_argument("--stdin-format", choices=("auto", *STDIN_FORMATS), default="auto",
                   help="what standard input holds (default: JSON Lines if it starts with '{', "
                        "HTML if with '<', else text)")
    p.add_argument("--strict", action="store_true",
                   help="a file in a folder that is no document (binary, empty, .odt, ...) is an "
                        "error and nothing is indexed (default: it is skipped and named)")
    p.add_argument("--prune", action="store_true",
                   help="delete the documents indexed earlier from these folders or files that "
                        "are no longer there (default: they stay, and a warning names them)")
    p.add_argument("--executor", metavar="dask://HOST:PORT",
                   help="index on this Dask cluster, every worker writing into --endpoint "
                        "(needs the 'cluster' extra)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="read, annotate and decide with N processes, this one writing "
                        "(default 1; about the number of cores)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("delete", help="remove an indexed document")
    p.add_argument("doc_id", metavar="ID")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("postings", help="the ranking's posting index: where it is, whether it is "
                                         "current; --rebuild brings it to the store's documents")
    p.add_argument("--rebuild", action="store_true",
                   help="rebuild it from the store's postings unless it is current (minutes on a large store)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_postings)

    p = sub.add_parser("documents", help="list indexed documents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_documents)


def cmd_index(args: argparse.Namespace) -> int:
    _check_options(args)
    if "-" in args.paths and args.prune:
        raise InputError("--prune is for folders and files (standard input has no earlier "
                         "documents to compare with)")
    if "-" not in args.paths and (args.stdin_id != "stdin" or args.stdin_format != "auto"):
        raise InputError("--id and --stdin-format are for the document on standard input; "
                         "give '-' as a path")
    # the input is read before the store is opened: input refused makes no new store folder (a
    # new store has nothing indexed earlier to compare with, so what is read here is indexed)
    limit = settings().max_document_bytes
    skipped: list[str] | None = None if args.strict else []
    docs = _documents(args, limit, skipped) if "-" in args.paths or makes_store(args) else None
    with KnowledgeGraph(store_from_args(args, create=True)) as kg:
        bar = tqdm(unit="doc", disable=not progress_enabled(), file=sys.stderr)
        within = WithinDocument(progress_enabled())

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        try:
            if docs is not None:
                total(len(docs))
                rep = replace(kg.index_documents(docs, wsd=args.wsd, progress=bar.update,
                                                 detail=within, workers=args.workers),
                              skipped=list(skipped or []))
            else:
                rep = kg.index(args.paths, lang=args.lang, wsd=args.wsd, progress=bar.update,
                               total=total, strict=args.strict, prune=args.prune, detail=within,
                               executor=args.executor, workers=args.workers)
        finally:
            within.close()
            bar.close()
        uses_llm = kg.mode(args.wsd).uses_llm
    if args.json:
        print_json(asdict(rep))
    else:
        langs = ", ".join(f"{k} {v}" for k, v in sorted(rep.languages.items()))
        print(f"indexed {plural(rep.documents, 'document')} ({plural(rep.passages, 'passage')}; {langs}) "
              f"in {rep.seconds:.1f} s: {plural(rep.mentions, 'mention')}, {rep.ambiguous} ambiguous, "
              f"{rep.decided} decided, {plural(rep.reused, 'decision')} reused"
              + (f"; {plural(rep.llm_calls, 'LLM call')} ({1000 * rep.llm_calls / max(rep.mentions, 1):.1f} "
                 f"per 1,000 mentions)" if uses_llm or rep.llm_calls else ""))
        if rep.pruned:
            print(f"deleted {plural(len(rep.gone), 'document')} indexed earlier from these folders "
                  f"or files that {'is' if len(rep.gone) == 1 else 'are'} no longer there: "
                  + for_terminal(", ".join(rep.gone)))
        if rep.skipped:
            print(f"skipped {plural(len(rep.skipped), 'file')} that {'is' if len(rep.skipped) == 1 else 'are'} "
                  f"no document (--strict makes this an error):", file=sys.stderr)
            for reason in rep.skipped:
                print(f"  {for_terminal(reason)}", file=sys.stderr)
    return 0


def _check_options(args: argparse.Namespace) -> None:
    """``--workers``, ``--executor`` and ``--lang`` checked before the store is opened: an option
    refused makes no new store folder."""
    if args.executor is not None and "-" in args.paths:
        raise InputError("--executor is for folders and files (standard input is indexed by "
                         "this process)")
    # a store this command would make is embedded: known before it is opened
    KnowledgeGraph.check_index_options(args.workers, args.executor, remote=not makes_store(args))
    if args.lang:
        check_language(args.lang)


def _documents(args: argparse.Namespace, limit: int,
               skipped: list[str] | None = None) -> list[SourceDocument]:
    """The documents of the paths and of standard input (``-``), read before anything is written."""
    if args.paths.count("-") > 1:
        raise InputError("standard input can be read once: give '-' only once")
    docs = read_documents([p for p in args.paths if p != "-"], limit, skipped)
    if "-" in args.paths:
        docs += stdin_documents(sys.stdin.buffer.read(), args.stdin_id, args.stdin_format, limit)
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise InputError(f"document id {d.id!r} appears twice (give the one on standard input "
                             f"another with --id)")
        seen.add(d.id)
    return [replace(d, lang=d.lang or args.lang) for d in docs] if args.lang else docs


def stdin_documents(data: bytes, doc_id: str, fmt: str, limit: int) -> list[SourceDocument]:
    """The document(s) in ``data`` read from standard input: with the checks of a file (text,
    size, JSON Lines records), named ``doc_id`` (JSON Lines records carry their own ids)."""
    if not doc_id.strip():
        raise InputError("--id is empty; give the document on standard input an id")
    if fmt == "auto":
        head = data.lstrip()[:1]
        fmt = "jsonl" if head == b"{" else "html" if head == b"<" else "text"
    with tempfile.TemporaryDirectory(prefix="kgr-stdin-") as tmp:
        path = Path(tmp) / ("stdin" + STDIN_FORMATS[fmt])
        path.write_bytes(data)
        try:
            docs = read_path(path, limit)
        except InputError as e:
            raise InputError(str(e).replace(str(path), "standard input")) from None
    if fmt == "jsonl":
        return [replace(d, source="<stdin>" + d.source[len(str(path)):]) for d in docs]
    return [replace(d, id=doc_id.strip(), source="<stdin>",
                    title=d.title if d.title != path.stem else doc_id.strip()) for d in docs]


def cmd_delete(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        kg.delete(args.doc_id)
    if args.json:
        print_json({"deleted": args.doc_id})
    else:
        print(f"deleted {args.doc_id}")
    return 0


def cmd_documents(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        docs = kg.documents()
    if args.json:
        print_json(docs)
    else:
        for d in docs:
            print(for_terminal(f"{d['id']}\t{d['lang']}\t{d['title']}"))
    return 0


def cmd_postings(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        state = kg.postings(rebuild=args.rebuild)
    if args.json:
        print_json(state)
    elif state["current"]:
        print(f"posting index current: {state['documents']} documents, {state['postings']} "
              f"postings, {state['spans']} annotation spans in {state['segments']} segment(s) "
              f"({state['folder']})")
    else:
        print(f"posting index not current (ask reads the store's postings, slower): {state['why']}")
    return 0
