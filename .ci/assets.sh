# shellcheck shell=sh
# Sourced from a checkout's top level by .ci/run (and by scripts/check-fresh-clone.sh). CI keeps the
# assets too large for the repository, the offline test models and the public eval set, in a folder
# beside the clone; the two documented variables that name them (README, Development) point there
# unless they are already set. This is the one place that knows CI's layout.
ci_assets=../shared
if [ -z "${MCPPROXY_TEST_MODELS:-}" ] && [ -d "$ci_assets/models" ]; then
  MCPPROXY_TEST_MODELS=$(cd "$ci_assets/models" && pwd)
  export MCPPROXY_TEST_MODELS
fi
if [ -z "${MCPPROXY_EVAL_SET:-}" ] && [ -f "$ci_assets/eval/etom-msc-bench.json" ]; then
  MCPPROXY_EVAL_SET=$(cd "$ci_assets/eval" && pwd)/etom-msc-bench.json
  export MCPPROXY_EVAL_SET
fi
