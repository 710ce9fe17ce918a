"""Run an alignment into the alignment graph and review its links (list, accept, reject).

Writes are single updates (:class:`kg_rag.store.Change`): a run replaces the proposals of
earlier runs of the same two sources and keeps every reviewed link; accepting a link adds its
statement (``ontolex:reference`` or ``skos:closeMatch``) to the alignment graph, rejecting it
takes the statement out again unless another accepted link states it too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.align import record
from kg_rag.align.model import AlignmentLink, AlignmentReport
from kg_rag.align.run import propose
from kg_rag.errors import InputError, NotFoundError
from kg_rag.namespaces import XSD
from kg_rag.store import Change, Store
from kg_rag.store.render import Values

log = logging.getLogger(__name__)

MIN_ID = 6


def _now() -> str:
    from loaders.catalog import now

    return now()


def _row_link(r: dict[str, object]) -> AlignmentLink:
    def val(k: str) -> str:
        return str(getattr(r[k], "value", "")) if k in r else ""

    def num(k: str) -> float | None:
        return float(val(k)) if k in r else None

    n, c = num("neighbours"), num("candidates")
    return AlignmentLink(
        id=val("id"), iri=val("link"), sense=val("sense"), concept=val("concept"),
        score=float(val("score")), status=val("status"), method=val("method"),
        dictionary=val("dictionary"), thesaurus=val("thesaurus"), run=val("run"),
        relation=val("relation"), sense_concept=val("senseConcept") or None, lemma=val("lemma"),
        label_evidence=num("labelEvidence"), gloss=num("gloss"),
        neighbours=int(n) if n is not None else None, match=val("match"),
        candidates=int(c) if c is not None else None, reviewed=val("reviewed"))


def list_links(store: Store, status: str | None = None) -> list[AlignmentLink]:
    """The alignment graph's links (all, or those with ``status``), best score first."""
    if status is not None and status not in record.STATUSES:
        raise InputError(f"unknown alignment status {status!r}; one of {', '.join(record.STATUSES)}")
    bind = {"status": Literal(status)} if status else None
    links = [_row_link(r) for r in store.select("select-alignments", bind=bind)]
    return sorted(links, key=lambda x: (-x.score, x.id))


def align(store: Store, dictionary: str, thesaurus: str) -> AlignmentReport:
    """Align the dictionary source with the thesaurus source (names as ``kg-rag sources``
    lists them, or graph IRIs) and write the run and its proposals."""
    from loaders.catalog import resolve_source

    d, t = resolve_source(store, dictionary), resolve_source(store, thesaurus)
    if d.graph == t.graph:
        raise InputError(f"{dictionary!r} and {thesaurus!r} are the same source ({d.graph}); "
                         "give a dictionary and a thesaurus")
    started = _now()
    existing = [x for x in list_links(store) if x.dictionary == d.graph and x.thesaurus == t.graph]
    accepted = [x for x in list_links(store, "accepted") if x.dictionary == d.graph]
    done = {x.sense for x in accepted if x.thesaurus == t.graph}
    linked = {x.sense: x.concept for x in accepted
              if x.thesaurus != t.graph and x.sense_concept is None}
    rejected = [(x.sense, x.concept) for x in existing if x.status == "rejected"]
    proposals, n, with_candidates = propose(store, d.graph, t.graph, done, rejected, linked)
    reviewed = {x.iri for x in existing if x.status != "proposed"}
    proposals = [p for p in proposals if record.link_iri(p.sense, p.concept).value not in reviewed]
    ended = _now()
    run = record.run_iri(d.graph, t.graph, started)
    stale = [NamedNode(x.iri) for x in existing if x.status == "proposed"]
    delete: list[Quad] = []
    if stale:
        delete = record.quads_of(store.select("select-alignment-statements",
                                              values=Values.column("link", stale)))
    insert = record.run_quads(run, d.graph, t.graph, started, ended, n, len(proposals))
    for p in proposals:
        insert += record.proposal_quads(p, run, d.graph, t.graph)
    store.apply(Change(delete=delete, insert=insert))
    log.info("alignment %s: %d senses, %d with candidates, %d proposals", run.value, n,
             with_candidates, len(proposals))
    return AlignmentReport(run=run.value, dictionary=d.graph, thesaurus=t.graph, senses=n,
                           with_candidates=with_candidates, proposals=tuple(proposals),
                           started=started, ended=ended)


def resolve(links: Sequence[AlignmentLink], ident: str) -> AlignmentLink:
    """The link an id names: its IRI, its identifier, or a unique prefix of at least
    :data:`MIN_ID` characters of the identifier."""
    want = ident.strip().strip("<>")
    for x in links:
        if want in (x.iri, x.id):
            return x
    if len(want) >= MIN_ID:
        found = [x for x in links if x.id.startswith(want)]
        if len(found) == 1:
            return found[0]
        if found:
            raise InputError(f"{len(found)} alignment links start with {want!r}; give more of the id")
    raise NotFoundError(f"no alignment link {ident!r}; `kg-rag alignments` lists them")


def set_status(store: Store, ids: Iterable[str], status: str) -> list[AlignmentLink]:
    """Accept or reject the links ``ids`` (ids, IRIs or unique id prefixes) in one update."""
    if status not in ("accepted", "rejected"):
        raise InputError("a link can be accepted or rejected")
    wanted = list(ids)
    if not wanted:
        raise InputError("no alignment link given; `kg-rag alignments` lists their ids")
    links = list_links(store)
    chosen = {x.iri: x for x in (resolve(links, i) for i in wanted)}
    return _apply(store, links, list(chosen.values()), status)


def accept_above(store: Store, score: float) -> list[AlignmentLink]:
    """Accept every proposed link scored at least ``score``."""
    if not 0.0 <= score <= 1.0:
        raise InputError("--above takes a score between 0 and 1")
    links = list_links(store)
    return _apply(store, links, [x for x in links if x.status == "proposed" and x.score >= score],
                  "accepted")


def _apply(store: Store, links: list[AlignmentLink], chosen: list[AlignmentLink],
           status: str) -> list[AlignmentLink]:
    when = _now()
    change = Change()
    changing = {x.iri for x in chosen if x.status != status}
    # statements the accepted links state after this change
    after = {record.link_statement(x.sense, x.concept, x.sense_concept)
             for x in links if (x.status == "accepted" and x.iri not in changing)
             or (x.iri in changing and status == "accepted")}
    before = {record.link_statement(x.sense, x.concept, x.sense_concept)
              for x in links if x.status == "accepted"}
    for x in chosen:
        if x.iri not in changing:
            continue
        reviewed = Literal(x.reviewed, datatype=XSD.dateTime) if x.reviewed else None
        delete, insert = record.status_quads(NamedNode(x.iri), x.status, status, when, reviewed)
        change.delete += delete
        change.insert += insert
    change.delete += sorted(before - after, key=str)
    change.insert += sorted(after - before, key=str)
    store.apply(change)
    done = {x.iri for x in chosen}
    return [x for x in list_links(store) if x.iri in done]
