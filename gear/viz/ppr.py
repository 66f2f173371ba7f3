"""The PPR picture (HippoRAG 2 style): the walk's top entities, its seeds and the passages it ranked, drawn with
gear.viz.graph's self-contained pyvis page. Every label and tooltip is escaped here, as in gear.viz.graph."""

from __future__ import annotations

import networkx as nx

from gear.events import PPRRanked, PPRSeeded
from gear.viz.graph import GOLD_COLOUR, esc_html, graph_html, short, spo_text

SEED_COLOUR = "#ff922b"
PPR_ENTITY_COLOUR = "#a5d8ff"
PASSAGE_COLOUR = "#e9ecef"
PPR_EDGE_COLOURS = {"relation": "#1971c2", "synonym": "#7b2cbf", "context": "#ced4da"}


def ppr_graph(ranked: PPRRanked, seeded: PPRSeeded | None = None, *, passages: bool = True) -> nx.MultiDiGraph:
    """The PPR picture of one retrieval: entities as dots sized by PPR score (seeds highlighted), relation edges
    labelled with the predicate (head → tail), synonym edges with the cosine (dashed), and, with `passages`, the
    ranked passages as boxes joined to the entities they contain (context edges).

    Node keys: "e<id>" for entities, "p<id>" for passages. Node attributes: label, title (escaped HTML), color,
    size, shape, seed, score, gold; edge attributes: kind, label, title, color, width, arrows, dashes.
    """
    g = nx.MultiDiGraph()
    seed_weights = {e.id: e.seed for e in seeded.entities} if seeded is not None else {}
    if not seed_weights:
        seed_weights = {e.id: e.seed for e in ranked.entities if e.seed > 0}
    top = max((e.score for e in ranked.entities), default=0.0)
    order = {e.id: n for n, e in enumerate(sorted(ranked.entities, key=lambda e: -e.score), 1)}
    for e in ranked.entities:
        seed = e.id in seed_weights
        size = 10.0 + 30.0 * ((e.score / top) ** 0.5 if top > 0 and e.score > 0 else 0.0)
        title = (f"<b>{esc_html(e.name)}</b><br>PPR score {e.score:.5f} (entity #{order[e.id]:d} of those shown)"
                 + (f"<br>seed, weight {seed_weights[e.id]:.4f}" if seed else ""))
        g.add_node(f"e{e.id:d}", label=e.name, title=title, size=size, shape="dot", seed=seed, score=e.score,
                   gold=False, color=SEED_COLOUR if seed else PPR_ENTITY_COLOUR)
    if passages:
        for n, p in enumerate(ranked.passages, 1):
            title = (f"<b>#{n:d} {esc_html(p.title)}</b>" + (" ★ gold" if p.gold else "")
                     + f"<br>PPR score {p.score:.5f}<br><span style='color:#555'>{esc_html(short(p.text, 240))}"
                     "</span>")
            g.add_node(f"p{p.id:d}", label=f"#{n:d} {p.title}", title=title, size=14.0, shape="box", seed=False,
                       score=p.score, gold=p.gold, color=PASSAGE_COLOUR)
    names = {e.id: e.name for e in ranked.entities}
    titles = {p.id: p.title for p in ranked.passages}
    for edge in ranked.edges:
        source = f"e{edge.source:d}"
        target = f"p{edge.target:d}" if edge.kind == "context" else f"e{edge.target:d}"
        if source not in g or target not in g:
            continue
        colour = PPR_EDGE_COLOURS.get(edge.kind, "#868e96")
        if edge.kind == "relation":
            title = (f"<b>{esc_html(spo_text((names[edge.source], edge.label, names[edge.target])))}</b><br>"
                     f"relation edge, weight {edge.weight:g}")
            g.add_edge(source, target, kind=edge.kind, label=edge.label, title=title, color=colour,
                       width=1.5 + edge.weight / 2, arrows="to", dashes=False)
        elif edge.kind == "synonym":
            title = (f"<b>{esc_html(names[edge.source])}</b> ≈ <b>{esc_html(names[edge.target])}</b><br>"
                     f"synonym edge: name cosine {esc_html(edge.label)}, weight {edge.weight:.3f}")
            g.add_edge(source, target, kind=edge.kind, label=f"≈ {edge.label}", title=title, color=colour,
                       width=2.0, arrows="", dashes=True)
        else:
            title = (f"<b>{esc_html(names[edge.source])}</b> occurs in passage #{edge.target:d}: "
                     f"<i>{esc_html(titles.get(edge.target, ''))}</i>")
            g.add_edge(source, target, kind=edge.kind, label="", title=title, color=colour, width=1.0, arrows="",
                       dashes=False)
    return g


def ppr_legend(gold_known: bool = False, passages: bool = True) -> list[tuple[str, str, str]]:
    items = [("node", SEED_COLOUR, "seed entity (from the matched facts)"),
             ("node", PPR_ENTITY_COLOUR, "entity among the top by PPR score"),
             ("edge", PPR_EDGE_COLOURS["relation"], "relation (predicate)"),
             ("edge", PPR_EDGE_COLOURS["synonym"], "synonym (name cosine)")]
    if passages:
        items += [("node", PASSAGE_COLOUR, "ranked passage (box)"),
                  ("edge", PPR_EDGE_COLOURS["context"], "entity occurs in passage")]
    items.append(("text", "#495057", "dot size = PPR score"))
    if gold_known:
        items.append(("gold", GOLD_COLOUR, "★ gold passage"))
    return items


def ppr_html(ranked: PPRRanked, seeded: PPRSeeded | None = None, *, height: int = 560, gold_known: bool = False,
             passages: bool = True) -> str:
    """ppr_graph drawn as a self-contained vis-network page, with its legend."""
    return graph_html(ppr_graph(ranked, seeded, passages=passages), height=height,
                      legend=ppr_legend(gold_known, passages))
