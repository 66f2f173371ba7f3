# Sourced by the scripts that run `gear eval` rows (eval_subset.sh, subset_traces.sh, hotpotqa_table1.sh,
# twowiki_table1.sh, musique_local_triples.sh): strict mode, the repository root as working directory, the project's
# own `gear`, the embedder offline, `demo_index NAME`, which builds a bundled demo index (data/indexes/NAME) when it
# is missing, and `sync_row BASE NAME [OPTION …]`, one + SyncGE row of a Table 1 script (its INDEX, QA, OUT, tag,
# record and sub).
# Every row they run is a Table 1 row, so `$EVAL` is `gear eval --protocol paper`: a single-step method once per
# cut-off, as in the paper and every report in docs/evals (gear.eval.protocol), so the published tables do not move.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HF_HUB_OFFLINE=1
GEAR=.venv/bin/gear
EVAL="$GEAR eval --protocol paper"
demo_index() {
  [[ -f "data/indexes/$1/manifest.json" ]] \
    || .venv/bin/python -c "import sys; from studio.demo import ensure_demo_index as e; e(sys.argv[1])" "$1"
}
sync_row() {  # SyncGE is single-step: one run per cut-off (k = 5, 10, 15), each answering over its top 5
  local base=$1 name=$2; shift 2
  "${record[@]}" $EVAL "$INDEX" "$QA" -r "$base" -m sync --prompts paper "$@" "${sub[@]}" --k 5,10,15 \
    --json "$OUT/${tag}_${name}.json"
}
