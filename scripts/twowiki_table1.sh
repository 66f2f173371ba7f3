#!/usr/bin/env bash
# The paper's Table 1 on 2WikiMultiHopQA (docs/results.md, "Table 1 on 2Wiki"): the 82 bundled dev questions
# (assets/2wikimultihopqa) over the index of the 1,294 passages of 164 dev questions, with the triples the embedded
# model extracted (the bundled OpenIE file), MiniLM. Every row is one `gear eval` under the paper's per-cut-off
# protocol; reports go to docs/evals/twowiki_*.json, each split by 2Wiki's question type (by_hop).
#   extract: the triples of the 1,294 passages by the project's own pipeline, then exported in HippoRAG's OpenIE format
#     into assets/2wikimultihopqa/. It takes ≈7 h on a 2-core machine, longer than one working session, so its journal
#     is kept in the repository (assets/2wikimultihopqa/extraction/extractions.jsonl, one finished passage a line): a
#     killed run, or the next session's, goes on from the passages already there. The export runs once all are done.
#   single (no LLM): BM25, dense, hybrid, each alone, + NaiveGE, + NaiveGE without diversity; PPR (HippoRAG 2-style)
#   LLM rows (embedded model, paper prompts, every answer recorded into assets/llm_cache so CI replays them):
#     gear: GeAR, at most 2 iterations (the paper's 2Wiki setting); ircot: HippoRAG w/ IRCoT (2 retrieval steps);
#     sync: hybrid + SyncGE; sync-nodiv: the same without diversity; sync-bases: BM25 + SyncGE, dense + SyncGE
# Usage: scripts/twowiki_table1.sh [extract|single|gear|ircot|sync|sync-nodiv|sync-bases|all] [EVERY] [LIMIT]
#   (default: all 1 82)
# Run it on a quiet machine: timings under parallel jobs mean nothing (recall and answers do not depend on it).
source "$(dirname "$0")/eval_common.sh"
WHAT="${1:-all}"
EVERY="${2:-1}"
LIMIT="${3:-82}"
ASSETS=assets/2wikimultihopqa
CORPUS=$ASSETS/2wikimultihopqa_dev164_corpus.json
OPENIE=$ASSETS/openie_2wikimultihopqa_qwen2.5-coder-1.5b_1294.json
INDEX=data/indexes/2wiki
QA=$ASSETS/2wikimultihopqa_dev82.json
OUT=docs/evals
K=2,5,10,15
SYNC_K=$K  # the + SyncGE rows too: one run per cut-off, R@2 included (HotpotQA's have the paper's three)
if [[ "$WHAT" == extract ]]; then
  GEAR_LLM=local $GEAR index "$CORPUS" --out data/twowiki/index --work-dir "$ASSETS/extraction"
  $GEAR export-openie data/twowiki/index "$OPENIE"
  exit 0
fi
demo_index 2wiki  # the index the app's "2wiki" demo builds (studio/core/demos.py): the corpus with the bundled triples
mkdir -p "$OUT"
record=(env GEAR_LLM=auto GEAR_LLM_CACHE_DIR=assets/llm_cache)
one_recorder
sub=(--every "$EVERY" --limit "$LIMIT")
tag="twowiki_every${EVERY}_n${LIMIT}"
if [[ "$WHAT" == single || "$WHAT" == all ]]; then
  for r in bm25 dense hybrid; do
    $EVAL "$INDEX" "$QA" -r "$r" --k "$K" --json "$OUT/twowiki_${r}.json"
    $EVAL "$INDEX" "$QA" -r "$r" -m naive --k "$K" --json "$OUT/twowiki_${r}_naive.json"
    $EVAL "$INDEX" "$QA" -r "$r" -m naive --no-diversity --k "$K" --json "$OUT/twowiki_${r}_naive_nodiv.json"
  done
  $EVAL "$INDEX" "$QA" -r dense -m ppr --k "$K" --json "$OUT/twowiki_ppr.json"
fi
if [[ "$WHAT" == gear || "$WHAT" == all ]]; then
  "${record[@]}" $EVAL "$INDEX" "$QA" -r hybrid -m gear --prompts paper --max-iterations 2 "${sub[@]}" \
    --k "$K" --json "$OUT/${tag}_gear_paper.json"
fi
if [[ "$WHAT" == ircot || "$WHAT" == all ]]; then
  "${record[@]}" GEAR_IRCOT_RETRIEVER=ppr GEAR_IRCOT_MAX_STEPS=2 $EVAL "$INDEX" "$QA" -r hybrid -m ircot \
    --prompts paper "${sub[@]}" --k "$K" --json "$OUT/${tag}_ircot_ppr.json"
fi
if [[ "$WHAT" == sync || "$WHAT" == all ]]; then sync_row hybrid sync; fi
if [[ "$WHAT" == sync-nodiv || "$WHAT" == all ]]; then sync_row hybrid sync_nodiv --no-diversity; fi
if [[ "$WHAT" == sync-bases || "$WHAT" == all ]]; then sync_row bm25 bm25_sync; sync_row dense dense_sync; fi
