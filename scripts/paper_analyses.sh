#!/usr/bin/env bash
# The paper's analyses beyond Table 1 on the recorded MuSiQue subset (docs/results.md, "The paper's analyses beyond
# Table 1"), each a `gear sweep` whose cells are `gear eval` runs: GeAR over max iterations n × beam length l (the
# paper's Table 7), hybrid + SyncGE with and without the diversity penalty (Table 3's MuSiQue row), and GeAR and
# HippoRAG w/ IRCoT at 4 against 20 iterations (Figure 6) on a smaller subset. The embedded model answers what the
# recordings do not hold (auto mode), and its answers are recorded into assets/llm_cache, so CI replays every cell
# (tests/integration/test_sweep_replay.py). A sweep resumes cell by cell: run the script again after a stop.
# Usage: scripts/paper_analyses.sh [STAGE …]   (default: every stage, in this order)
#   grid-l2    GeAR, n = 1..4 at the paper's l = 2 (n < 4 replays the recorded n = 4 runs up to their answer)
#   diversity  hybrid + SyncGE, diversity on and off, the paper's per-cut-off protocol (its traces kept)
#   grid-l1    the grid with l = 1 added
#   iter20     GeAR (max_iterations) and IRCoT over PPR (ircot_max_steps) at 4 and 20, the first 10 questions of
#              the subset (dev50 questions 0, 2, …, 18), traces kept: the 20-iteration figure
#   grid       the whole grid, l = 1, 2, 3
# Figures and tables from the reports: scripts/paper_figures.py.
source "$(dirname "$0")/eval_common.sh"
INDEX=data/indexes/musique
QA=assets/musique/musique_dev50.json
OUT=docs/evals/sweeps
demo_index musique
mkdir -p "$OUT"
one_recorder
SWEEP=(env GEAR_LLM=auto GEAR_LLM_CACHE_DIR=assets/llm_cache $GEAR sweep "$INDEX" "$QA" --prompts paper --every 2)
grid() {
  "${SWEEP[@]}" --limit 20 -r hybrid -m gear --set max_iterations=1,2,3,4 --set "beam_length=$1" \
    --json "$OUT/dev50_every2_n20_gear_n_l.json"
}
for stage in "${@:-grid-l2 diversity grid-l1 iter20 grid}"; do
  for one in $stage; do
    echo "== $one $(date -u +%FT%TZ)"
    case $one in
      grid-l2) grid 2 ;;
      grid-l1) grid 1,2 ;;
      grid) grid 1,2,3 ;;
      diversity) "${SWEEP[@]}" --limit 20 -r hybrid -m sync --protocol paper --set diversity=true,false --traces \
          --json "$OUT/dev50_every2_n20_sync_diversity.json" ;;
      iter20)
        "${SWEEP[@]}" --limit 10 -r hybrid -m gear --set max_iterations=4,20 --traces \
          --json "$OUT/dev50_every2_n10_gear_iterations.json"
        GEAR_IRCOT_RETRIEVER=ppr "${SWEEP[@]}" --limit 10 -r hybrid -m ircot --set ircot_max_steps=4,20 --traces \
          --json "$OUT/dev50_every2_n10_ircot_ppr_iterations.json" ;;
      *) echo "unknown stage: $one" >&2; exit 2 ;;
    esac
  done
done
echo "== done $(date -u +%FT%TZ)"
