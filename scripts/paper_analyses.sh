#!/usr/bin/env bash
# The paper's analyses beyond Table 1 on the recorded MuSiQue subset (docs/results.md, "The paper's analyses beyond
# Table 1"), each a `gear sweep` whose cells are `gear eval` runs: GeAR over max iterations n × beam length l (the
# paper's Table 7), hybrid + SyncGE with and without the diversity penalty (Table 3's MuSiQue row), and GeAR and
# HippoRAG w/ IRCoT at 4 against 20 iterations (Figure 6). The embedded model answers what the recordings do not hold
# (auto mode), and its answers are recorded into assets/llm_cache, so CI replays every cell
# (tests/integration/test_sweep_replay.py). A sweep resumes cell by cell: run the script again after a stop.
# Usage: scripts/paper_analyses.sh [STAGE …]   (default: every stage, in this order)
#   grid-l2    GeAR on the 20 questions, n = 1..4 at the paper's l = 2, with answers (n < 4 replays the recorded
#              n = 4 runs up to their QA step, whose top 5 may differ)
#   diversity  hybrid + SyncGE on the 20, diversity on and off, the paper's per-cut-off protocol (traces kept)
#   iter20     GeAR (max_iterations) and HippoRAG w/ IRCoT (ircot_max_steps) at 4 and 20 on the 20 questions,
#              traces kept: the 20-iteration figure (a run that stops before 4 iterations replays whole, and every
#              GeAR run that reaches 4 is at a fixed point by then — the same query and memory, so the same prompts,
#              answered by the memo — so 20 iterations ask the model at most each such question's QA step)
#   grid5-l1   GeAR on the first 5 of the 20 (dev50 questions 0, 2, …, 8), n = 1..4 × l = 1, 2, without the QA
#              step (recall only, as the paper's table): the first look at what another beam length asks afresh
#   grid5      the same, l = 1, 2, 3
#   grid-l1    GeAR on the 20 questions, n = 1..4 × l = 1, 2, with answers (the probes showed l = 1 replays nearly
#              whole: the gist read's top 10 of the fused list seldom changes)
#   grid       the same, l = 1, 2, 3
# Figures and tables from the reports: scripts/paper_figures.py.
source "$(dirname "$0")/eval_common.sh"
INDEX=data/indexes/musique
QA=assets/musique/musique_dev50.json
OUT=docs/evals/sweeps
demo_index musique
mkdir -p "$OUT"
one_recorder
SWEEP=(env GEAR_LLM=auto GEAR_LLM_CACHE_DIR=assets/llm_cache $GEAR sweep "$INDEX" "$QA" --prompts paper --every 2)
grid() {  # LIMIT NAME L-VALUES [VAR=value …]
  local limit=$1 name=$2 lengths=$3; shift 3
  env "$@" "${SWEEP[@]}" --limit "$limit" -r hybrid -m gear --set max_iterations=1,2,3,4 --set "beam_length=$lengths" \
    --json "$OUT/$name.json"
}
for stage in "${@:-grid-l2 diversity iter20 grid5-l1 grid5 grid-l1 grid}"; do
  for one in $stage; do
    echo "== $one $(date -u +%FT%TZ)"
    case $one in
      grid-l2) grid 20 dev50_every2_n20_gear_n_l 2 ;;
      grid-l1) grid 20 dev50_every2_n20_gear_n_l 1,2 ;;
      grid) grid 20 dev50_every2_n20_gear_n_l 1,2,3 ;;
      grid5-l1) grid 5 dev50_every2_n5_gear_n_l_noqa 1,2 GEAR_ANSWER=false ;;
      grid5) grid 5 dev50_every2_n5_gear_n_l_noqa 1,2,3 GEAR_ANSWER=false ;;
      diversity) "${SWEEP[@]}" --limit 20 -r hybrid -m sync --protocol paper --set diversity=true,false --traces \
          --json "$OUT/dev50_every2_n20_sync_diversity.json" ;;
      iter20)
        "${SWEEP[@]}" --limit 20 -r hybrid -m gear --set max_iterations=4,20 --traces \
          --json "$OUT/dev50_every2_n20_gear_iterations.json"
        GEAR_IRCOT_RETRIEVER=ppr "${SWEEP[@]}" --limit 20 -r hybrid -m ircot --set ircot_max_steps=4,20 --traces \
          --json "$OUT/dev50_every2_n20_ircot_ppr_iterations.json" ;;
      *) echo "unknown stage: $one" >&2; exit 2 ;;
    esac
  done
done
echo "== done $(date -u +%FT%TZ)"
