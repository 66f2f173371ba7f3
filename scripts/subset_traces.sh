#!/usr/bin/env bash
# Replays the recorded 20-question dev50 subset (every 2nd question, 20; scripts/eval_subset.sh recorded it) for each
# method from the bundled answers, keeping every question's trace: the input of bench/diagnose.py and
# bench/diagnosis_agreement.py (docs/diagnosis.md). No model is asked (GEAR_LLM=replay); a miss is an error.
# Usage: scripts/subset_traces.sh [OUT]     (default: runs/subset_traces; then OUT/<method>/*.json, OUT/<method>.report.json)
source "$(dirname "$0")/eval_common.sh"
OUT="${1:-runs/subset_traces}"
INDEX=data/indexes/musique
QA=assets/musique/musique_dev50.json
demo_index musique
# run NAME [VAR=value ...] -- gear eval options
run() {
  local name=$1; shift
  local vars=()
  while [[ $1 != "--" ]]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$OUT/$name"
  env GEAR_LLM=replay GEAR_LLM_CACHE_DIR=assets/llm_cache "${vars[@]}" $EVAL "$INDEX" "$QA" "$@" \
    --every 2 --limit 20 --traces "$OUT/$name" --json "$OUT/$name.report.json" >/dev/null
  echo "$name: $OUT/$name"
}
run naive -- -r hybrid -m naive
run ppr -- -r dense -m ppr
run gear_paper -- -r hybrid -m gear --prompts paper
run ircot_ppr GEAR_IRCOT_RETRIEVER=ppr -- -r hybrid -m ircot
run gear_small -- -r hybrid -m gear --prompts small
run ircot_base GEAR_IRCOT_RETRIEVER=base -- -r hybrid -m ircot
