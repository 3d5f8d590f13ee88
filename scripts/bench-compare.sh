#!/usr/bin/env bash
# bench-compare.sh — issue 31's side-by-side table: Switchboard's /mcp (both
# protocol generations), /ws and a named endpoint against the plainest
# go-sdk gateway (sdkproxy), supergateway and punkpeye's mcp-proxy, all
# over the same Go stdio server, in one run of gateway.BenchmarkCompare
# (docs/performance.md, "Side by side").
#
#   scripts/bench-compare.sh                  # one run: 20 rounds of 150 calls per path and mode (≈ 2–4 min)
#   ROUNDS=60 scripts/bench-compare.sh        # more rounds (of 150 calls each): tighter medians
#   COUNT=3 scripts/bench-compare.sh          # three runs, a table each
#   OUT=table.md scripts/bench-compare.sh     # also write the report to a file
#
# The benchmark builds the switchboard binary and the fixture itself
# (interop.Build) and installs supergateway and mcp-proxy, pinned, into the
# test cache ($SWITCHBOARD_TEST_CACHE, default .cache/interop) on first
# use; without npm or Node ≥ 22 their rows are left out, with a note. It
# prints the load average before and after (the machine's load weighs on
# every figure; the paths take turns in ROUNDS slices, in an order
# shuffled each round, so that it weighs on all of them alike), the Go and
# go-sdk versions, the commit, and a markdown table per run: rows path ×
# {seq, c16}, columns calls/s, p50, p99, CPU per call of the server
# process and of its upstream, the throughput relative to sdkproxy (of the
# same protocol generation) and to supergateway, and the targets of issue
# 31, met or not. The benchmark's own output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-20}
count=${COUNT:-1}
benchtime=$((rounds * 150))x
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load0=$(uptime)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit="$commit (with uncommitted changes)"
fi
GATEWAY_BENCH_COMPARE_TABLE=$work/table.md GATEWAY_BENCH_COMPARE_ROUNDS=$rounds \
	go test ./gateway -run '^$' -bench '^BenchmarkCompare$' -benchtime "$benchtime" -count "$count" -timeout 60m >&2
load1=$(uptime)

{
	echo "## bench-compare $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit"
	echo
	echo "- $(go version | cut -d' ' -f3-), go-sdk $(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk), $(nproc) CPUs"
	echo "- load before: ${load0#*load average: }"
	echo "- load after: ${load1#*load average: }"
	echo
	cat "$work/table.md"
} | tee "${OUT:-/dev/null}"
