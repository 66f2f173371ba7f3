"""What two evaluation runs differ in, said in words: the settings each run's method
read, the protocol, and the index — for two indexes of the same passages, which part of it (other triples, the same
triples embedded again, another backend or embedder). A setting one method alone reads (gear.methods) is not a
difference between the runs unless that run read it. A pure function of two reports, shown by the app's Evaluate page
and by `gear compare` alike (through gear.eval.pairing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gear import methods
from gear.config import renamed
from gear.eval.protocol import protocol_of

SETTINGS_SAID = ("retriever", "method", "prompts", "diversity", "score_mode", "max_iterations", "agent_k",
                 "ircot_retriever", "ircot_max_steps", "ppr_filter", "embedder", "backend", "llm_model", "gist_read",
                 "passage_link_k", "beam_width", "beam_length", "qa_top_k")
# the settings some method reads and another does not (gear.methods): IRCoT's report still carries max_iterations and
# GeAR's ircot_max_steps, and a value the run's method did not read is not a difference between the runs
METHOD_SETTINGS = frozenset(key for method in methods.METHODS for key in method.settings)


def differences(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str] = ("A", "B")) -> list[str]:
    """The settings and the index the two runs differ in, in words; for two indexes of the same passages (other
    triples, another backend), which part of the index differs."""
    out = []
    sa, sb = renamed(a.get("settings") or {}), renamed(b.get("settings") or {})  # older reports say "expand"
    changed = [said for key in SETTINGS_SAID if (said := _setting_said(key, sa, sb, names))]
    if changed:
        out.append("settings: " + "; ".join(changed))
    if protocol_of(a) != protocol_of(b):
        out.append(f"protocol: {protocol_of(a)} → {protocol_of(b)}")
    ia, ib = recorded_index(a), recorded_index(b)
    if not ia.get("passages") or not ib.get("passages"):
        if ia.get("name") and ib.get("name") and ia["name"] != ib["name"]:
            out.append(f"index: {ia['name']} → {ib['name']} (the reports record no more of their indexes)")
            return out
        missing = [n for n, i in zip(names, (ia, ib), strict=True) if not i.get("passages")]
        which = f"{missing[0]} does not record its index" if len(missing) == 1 else \
            f"{' and '.join(missing)} do not record their indexes"
        out.append(f"index: {which} (saved before reports did): whether the two ran on the same index cannot be "
                   "told from the reports")
        return out
    same_passages = ia.get("passages_sha256") and ia.get("passages_sha256") == ib.get("passages_sha256")
    parts = []
    if ia.get("name") != ib.get("name"):
        parts.append(f"{ia.get('name')} → {ib.get('name')}")
    if same_passages:
        parts.append(f"the same {ia.get('passages')} passages")
    elif ia.get("passages_sha256") or ib.get("passages_sha256"):
        parts.append(f"other passages ({ia.get('passages')} → {ib.get('passages')})")
    parts += _triples_differ(ia, ib)
    if ia.get("backend") != ib.get("backend"):
        parts.append(f"backend {ia.get('backend')} → {ib.get('backend')}")
    if ia.get("embedder") != ib.get("embedder"):
        parts.append(f"embedder {ia.get('embedder')} → {ib.get('embedder')}")
    if parts == [f"the same {ia.get('passages')} passages"] or not parts:
        out.append(f"index: the same ({ia.get('name')}: {ia.get('passages')} passages, {ia.get('triples')} triples)")
    else:
        out.append("index: " + ", ".join(parts))
    return out


def _reads(settings: Mapping[str, Any], key: str) -> bool:
    """Whether the run's method reads the setting (a method the registry does not know is taken to read all)."""
    method = methods.find(settings.get("method") or "")
    return key not in METHOD_SETTINGS or method is None or key in method.settings


def _setting_said(key: str, sa: Mapping[str, Any], sb: Mapping[str, Any], names: tuple[str, str]) -> str | None:
    """One setting the runs differ in, in words; a setting one method alone reads is said with the value of the run
    that read it, and not at all when neither did."""
    if sa.get(key) == sb.get(key):
        return None
    read_a, read_b = (_reads(settings, key) for settings in (sa, sb))
    if read_a and read_b:
        return f"{key} {sa.get(key)!r} → {sb.get(key)!r}"
    for name, settings, read in ((names[0], sa, read_a), (names[1], sb, read_b)):
        if read:
            return f"{key} {settings.get(key)!r} ({name}'s method alone reads it)"
    return None


def _triples_differ(ia: Mapping[str, Any], ib: Mapping[str, Any]) -> list[str]:
    """How two indexes' triples differ, in words. An index built again from the same triples file embeds them again,
    and the vectors need not be bit for bit the same: that is not "other triples". Reports since triple_texts_sha256
    tell the two apart; for older ones the same count from the same file is said as what it is, a rebuild that the
    checksums cannot tell further."""
    if ia.get("triples_sha256") == ib.get("triples_sha256") and ia.get("triples") == ib.get("triples"):
        return []
    source_a, source_b = (i.get("source", {}).get("openie") for i in (ia, ib))
    texts_a, texts_b = ia.get("triple_texts_sha256"), ib.get("triple_texts_sha256")
    if texts_a and texts_b and texts_a == texts_b:
        return [f"the same {ia.get('triples')} triples, embedded again (their vectors differ)"]
    if not (texts_a and texts_b) and source_a and source_a == source_b and ia.get("triples") == ib.get("triples"):
        return [f"{ia.get('triples')} triples from the same file, in an index built again (the triples' checksum, "
                "which covers their vectors, differs; these reports cannot tell whether their text does)"]
    where = f", from {source_a} → {source_b}" if source_a != source_b else ""
    return [f"other triples ({ia.get('triples')} → {ib.get('triples')}{where})"]


def recorded_index(report: Mapping[str, Any]) -> dict[str, Any]:
    """What a report says of its index: gear.eval.report's index_info, with the app's index name ("index")."""
    info = dict(report.get("index_info") or {})
    if isinstance(report.get("index"), str):
        info.setdefault("name", report["index"])
    return info
