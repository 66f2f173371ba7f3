#!/usr/bin/env bash
# What local triples cost (item 4; docs/results.md, "What local triples cost on MuSiQue"): Table 1's
# single-step rows on the 50 MuSiQue dev50 questions over the 949 candidate paragraphs they come with
# (assets/musique/musique_dev50_candidates949.json), once with the triples the embedded model extracted
# (assets/musique/openie_musique_qwen2.5-coder-1.5b_949.json) and once with HippoRAG's GPT-3.5 OpenIE triples of the
# same passages. Same passages, embedder (MiniLM) and settings: only the triples differ. No LLM at query time.
#   extract: the embedded model's triples, as any user's corpus gets them (resumable: the journal is
#            data/musique_local/index.extract/), then written as the bundled OpenIE file (hours on 2 cores)
#   rows:    both indexes (built if missing), then BM25 / dense / hybrid alone, + NaiveGE (the paper's exact scoring)
#            with and without diversity, + NaiveGE in fast mode, and HippoRAG 2-style PPR, on each (the rows of the
#            MuSiQue single-step table); reports docs/evals/musique949_*.json
# Usage: scripts/musique_local_triples.sh [rows|extract]   (default: rows)
source "$(dirname "$0")/eval_common.sh"
WHAT="${1:-rows}"
MUSIQUE=assets/musique
CORPUS=$MUSIQUE/musique_dev50_candidates949.json
QA=$MUSIQUE/musique_dev50.json
LOCAL_OPENIE=$MUSIQUE/openie_musique_qwen2.5-coder-1.5b_949.json
OUT=docs/evals
K=2,5,10,15
if [[ "$WHAT" == extract ]]; then
  GEAR_LLM=local $GEAR index "$CORPUS" --out data/musique_local/index
  $GEAR export-openie data/musique_local/index "$LOCAL_OPENIE"
  exit 0
fi
declare -A OPENIE=([local]="$LOCAL_OPENIE" [gpt]="$MUSIQUE/openie_musique_gpt-3.5-turbo-1106_1890.json")
mkdir -p "$OUT"
for triples in local gpt; do
  index=data/indexes/musique949_$triples
  [[ -f "$index/manifest.json" ]] || $GEAR index "$CORPUS" --openie "${OPENIE[$triples]}" --out "$index"
  for r in bm25 dense hybrid; do
    $EVAL "$index" "$QA" -r "$r" --k "$K" --json "$OUT/musique949_${triples}_${r}.json"
    $EVAL "$index" "$QA" -r "$r" -m naive --k "$K" --json "$OUT/musique949_${triples}_${r}_naive.json"
    $EVAL "$index" "$QA" -r "$r" -m naive --no-diversity --k "$K" \
      --json "$OUT/musique949_${triples}_${r}_naive_nodiv.json"
    $EVAL "$index" "$QA" -r "$r" -m naive --score-mode fast --k "$K" \
      --json "$OUT/musique949_${triples}_${r}_naive_fast.json"
  done
  $EVAL "$index" "$QA" -r dense -m ppr --k "$K" --json "$OUT/musique949_${triples}_ppr.json"
done
