# Sourced by the scripts that run `gear eval` rows (eval_subset.sh, subset_traces.sh, hotpotqa_table1.sh,
# twowiki_table1.sh, musique_local_triples.sh): strict mode, the repository root as working directory, the project's
# own `gear`, the embedder offline, `demo_index NAME`, which builds a bundled demo index (data/indexes/NAME) when it
# is missing, `sync_row BASE NAME [OPTION …]`, one + SyncGE row of a Table 1 script (its INDEX, QA, OUT, tag,
# record and sub; its cut-offs SYNC_K, by default the paper's 5,10,15), and `one_recorder`, which every script that
# records answers calls first.
# Every row they run is a Table 1 row, so `$EVAL` is `gear eval --protocol paper`: a single-step method once per
# cut-off, as in the paper and every report in docs/evals (gear.eval.protocol), so the published tables do not move.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HF_HUB_OFFLINE=1
GEAR=".venv/bin/python -m gear.cli"  # this checkout's gear (the console script may belong to another checkout's install)
EVAL="$GEAR eval --protocol paper"
demo_index() {
  [[ -f "data/indexes/$1/manifest.json" ]] \
    || .venv/bin/python -c "import sys; from studio.core.demos import ensure_demo_index as e; e(sys.argv[1])" "$1"
}
sync_row() {  # SyncGE is single-step: one run per cut-off (SYNC_K: k = 5, 10, 15 unless the script adds R@2), each
  # answering over the top 5 of its list
  local base=$1 name=$2; shift 2
  "${record[@]}" $EVAL "$INDEX" "$QA" -r "$base" -m sync --prompts paper "$@" "${sub[@]}" --k "${SYNC_K:-5,10,15}" \
    --json "$OUT/${tag}_${name}.json"
}
one_recorder() {  # two runs recording at once (a second launch of the same row) ask the model the same prompt and
  # each writes its own answer under the same key, and the model's text at temperature 0 need not repeat: the later
  # write replaces the answer the first run's report was made from, whose replay then fails (seen on 2Wiki's SyncGE)
  mkdir -p data
  exec 9>data/.llm-recording.lock
  flock -n 9 || { echo "another run is recording into assets/llm_cache (data/.llm-recording.lock): wait for it to end" >&2; exit 1; }
}
