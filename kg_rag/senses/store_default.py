"""A store's default sense selection mode, set only on a measurement: "never worse than the prior".

``kg-rag eval wsd --wsd MODE --set-default`` scores MODE on a development corpus and, when its
F1 is at least the first-sense baseline's on the same instances, records MODE as the store's
default — with the figures it was set on — in the store's settings graph
(``https://w3id.org/kg-rag/id/graph/settings``). A mode that lost to the first sense is refused
with a one-line :class:`~kg_rag.errors.ConfigError` naming both scores and nothing is written,
unless forced (``--force``; the record then says ``kgr:forced true``).

The record (replaced as a whole in one update)::

    <id/settings/wsd-default> a kgr:WsdDefault, prov:Entity ;
        kgr:defaultMode "knowledge+llm" ; kgr:forced false ; prov:generatedAtTime "…" ;
        prov:wasDerivedFrom <id/settings/wsd-default#evaluation> .
    <id/settings/wsd-default#evaluation> a kgr:WsdEvaluation, prov:Activity ;
        prov:wasAssociatedWith <id/agent/…> ;        # the selector, with kgr:model, kgr:endpointHost
        dct:source "semeval2007" ; kgr:scoredInstances 455 ;
        kgr:f1 0.6120 ; kgr:firstSenseF1 0.5520 .

:meth:`kg_rag.api.KnowledgeGraph.mode` uses the recorded mode when a call names none (an
explicit ``--wsd`` / ``wsd=`` always wins; without a record, ``KG_RAG_WSD``). A recorded LLM
mode whose model or endpoint differs from the configured one is used, with a warning once: the
figures were measured on another model.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.errors import ConfigError, InputError
from kg_rag.model import Agent
from kg_rag.namespaces import DCT, ID, KGR, PROV, RDF, XSD
from kg_rag.senses.mode import WsdMode
from kg_rag.store import Change, Store

log = logging.getLogger(__name__)

SETTINGS_GRAPH = NamedNode(ID + "graph/settings")
DEFAULT_IRI = NamedNode(ID + "settings/wsd-default")
EVALUATION_IRI = NamedNode(DEFAULT_IRI.value + "#evaluation")

_warned: set[tuple[str, str, str]] = set()


@dataclass(frozen=True, slots=True)
class StoreDefault:
    """The recorded default and the measurement it was set on (F1 as fractions)."""

    mode: WsdMode
    forced: bool
    f1: float
    first_sense_f1: float
    instances: int
    corpus: str
    selector: str                 # the agent's name and version
    model: str | None = None
    endpoint_host: str | None = None
    time: str = ""

    def describe(self) -> str:
        """One line: the mode and the figures it was set on."""
        who = f"{self.mode.value}" + (f" ({self.model} at {self.endpoint_host})" if self.model else "")
        return (f"{who}: F1 {100 * self.f1:.1f} vs first sense {100 * self.first_sense_f1:.1f} "
                f"on {self.corpus} ({self.instances} instances)" + (", forced" if self.forced else ""))


def check_not_worse(mode: WsdMode, agent: Agent, f1: float, first_sense_f1: float, corpus: str,
                    force: bool) -> None:
    """ConfigError (one line, both scores) when ``f1`` is below the first-sense baseline and
    the default is not forced."""
    if f1 >= first_sense_f1 or force:
        return
    who = agent.model and f" with model {agent.model} at {agent.endpoint_host}" or ""
    raise ConfigError(
        f"refused as this store's default: {mode.value}{who} scored F1 {100 * f1:.1f} on "
        f"{corpus}, below the first-sense baseline's {100 * first_sense_f1:.1f}; nothing was "
        f"changed (pass --force to set it anyway)")


def record_default(store: Store, mode: WsdMode, agent: Agent, f1: float, first_sense_f1: float,
                   instances: int, corpus: str, force: bool = False) -> StoreDefault:
    """Check (:func:`check_not_worse`), then replace the store's default record in one update."""
    from kg_rag.pipeline.record import agent_iri, agent_quads, now

    check_not_worse(mode, agent, f1, first_sense_f1, corpus, force)
    g, d, e, a = SETTINGS_GRAPH, DEFAULT_IRI, EVALUATION_IRI, agent_iri(agent)
    when = now()
    quads = [
        Quad(d, RDF.type, KGR.WsdDefault, g), Quad(d, RDF.type, PROV.Entity, g),
        Quad(d, KGR.defaultMode, Literal(mode.value), g),
        Quad(d, KGR.forced, Literal("true" if force and f1 < first_sense_f1 else "false",
                                    datatype=XSD.boolean), g),
        Quad(d, PROV.generatedAtTime, when, g), Quad(d, PROV.wasDerivedFrom, e, g),
        Quad(e, RDF.type, KGR.WsdEvaluation, g), Quad(e, RDF.type, PROV.Activity, g),
        Quad(e, PROV.endedAtTime, when, g), Quad(e, PROV.wasAssociatedWith, a, g),
        Quad(e, DCT.source, Literal(corpus), g),
        Quad(e, KGR.scoredInstances, Literal(str(int(instances)), datatype=XSD.integer), g),
        Quad(e, KGR.f1, Literal(f"{f1:.6f}", datatype=XSD.decimal), g),
        Quad(e, KGR.firstSenseF1, Literal(f"{first_sense_f1:.6f}", datatype=XSD.decimal), g),
        *agent_quads(agent, g),
    ]
    store.apply(Change(drop_graphs=[g], insert=quads))
    got = read_default(store)
    assert got is not None
    return got


def read_default(store: Store) -> StoreDefault | None:
    """The store's recorded default, or None."""
    rows = store.select("select-wsd-default")
    if not rows:
        return None
    r = rows[0]
    try:
        mode = WsdMode.parse(r["mode"].value)
    except InputError:
        raise ConfigError(f"the store's default sense selection mode {r['mode'].value!r} is "
                          "unknown to this kg-rag; set it again with eval wsd --set-default") from None
    return StoreDefault(
        mode=mode, forced=r["forced"].value == "true", f1=float(r["f1"].value),
        first_sense_f1=float(r["firstSense"].value), instances=int(r["n"].value),
        corpus=r["corpus"].value, selector=f"{r['name'].value} {r['version'].value}",
        model=r["model"].value if "model" in r else None,
        endpoint_host=r["host"].value if "host" in r else None,
        time=r["time"].value if "time" in r else "")


def resolve_default(store: Store, configured: WsdMode, model: str, host: str) -> WsdMode:
    """The mode a call without one uses: the store's recorded default, else ``configured``
    (``KG_RAG_WSD``). Warns once when a recorded LLM mode was measured on another model or
    endpoint than ``model`` at ``host``."""
    rec = read_default(store)
    if rec is None:
        return configured
    if rec.mode.uses_llm and (rec.model, rec.endpoint_host) != (model, host):
        key = (rec.mode.value, model, host)
        if key not in _warned:
            _warned.add(key)
            log.warning("this store's default %s was measured with model %s at %s, not %s at %s; "
                        "measure this one with eval wsd --wsd %s --set-default",
                        rec.mode.value, rec.model, rec.endpoint_host, model, host, rec.mode.value)
    return rec.mode


__all__ = ["SETTINGS_GRAPH", "StoreDefault", "check_not_worse", "read_default", "record_default",
           "resolve_default"]
