#!/usr/bin/env bash
# bench-cli-daemon.sh — the time of one `switchboard call`, starting its own
# servers (--no-daemon) and using a running `switchboard serve` of the same
# configuration (its local socket), as a table (docs/performance.md, "The
# CLI with and without a running serve").
#
#   scripts/bench-cli-daemon.sh [RUNS]     (default 20 runs per row)
#
# Servers: the Go fixture (internal/testkit/testserver), and the reference
# server-everything under Node when the test peers are installed
# (SWITCHBOARD_TEST_CACHE, default .cache/interop; ./scripts/test.sh
# installs them). Each call is a whole process: start, load the
# configuration, answer, exit. `validate` starts no server either way: the
# floor of a command, a process that loads the configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
cache=${SWITCHBOARD_TEST_CACHE:-$PWD/.cache/interop}
work=$(mktemp -d)
rt=$(mktemp -d /tmp/sbrt.XXXXXX) # a socket's path is bounded: keep it short
serve_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
	rm -rf "$work" "$rt"
}
trap cleanup EXIT
go build -o "$work/switchboard" ./cmd/switchboard
go build -o "$work/testserver" ./internal/testkit/testserver
sb=$work/switchboard
# After the builds (which need the real HOME's Go caches): no user
# configuration, state or secret is read.
export XDG_RUNTIME_DIR=$rt HOME=$work XDG_CONFIG_HOME=$work/xdg XDG_STATE_HOME=$work/state
export SWITCHBOARD_SECRETS_BACKEND=env

node=$(ls -d "$cache"/node/node-*/node_modules/node-*/bin/node 2>/dev/null | head -1 || true)
everything=$(ls -d "$cache"/reference-*/node_modules/@modelcontextprotocol/server-everything/dist/index.js 2>/dev/null | head -1 || true)

cat >"$work/fixture.toml" <<EOF
[[mcp_servers]]
id = "fx"
command = "$work/testserver"
EOF
configs=("fixture.toml|mcp_fx_echo|text=hi")
if [ -n "$node" ] && [ -n "$everything" ]; then
	cat >"$work/everything.toml" <<EOF
[[mcp_servers]]
id = "everything"
command = "$node"
args = ["$everything", "stdio"]
EOF
	configs+=("everything.toml|mcp_everything_echo|message=hi")
else
	echo "server-everything not installed under $cache: the fixture only" >&2
fi

# ms runs a command and prints how long it took, in milliseconds.
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# stats prints the median, min and max of its arguments.
stats() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%d ms | %d–%d ms", a[int((NR+1)/2)], a[1], a[NR]}'
}

printf '| server | command | without serve: median | min–max | with serve: median | min–max |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
for c in "${configs[@]}"; do
	IFS='|' read -r cfg tool arg <<<"$c"
	"$sb" --config "$work/$cfg" serve --listen 127.0.0.1:0 2>"$work/serve.log" &
	serve_pid=$!
	for _ in $(seq 600); do # up to a minute for its servers to start
		grep -q '^switchboard: ready' "$work/serve.log" && break
		sleep 0.1 # polling a file, bounded: a script has no event to wait on
	done
	grep -q '^switchboard: ready' "$work/serve.log" || { cat "$work/serve.log" >&2; exit 1; }
	for what in "call $tool --arg $arg" "tools" "validate"; do
		without=() with=()
		for _ in $(seq "$runs"); do
			# shellcheck disable=SC2086 # $what is words on purpose
			without+=("$(ms "$sb" --config "$work/$cfg" --no-daemon $what)")
			# shellcheck disable=SC2086
			with+=("$(ms "$sb" --config "$work/$cfg" $what)")
		done
		printf '| %s | `%s` | %s | %s |\n' "${cfg%.toml}" "${what%% *}" "$(stats "${without[@]}")" "$(stats "${with[@]}")"
	done
	kill "$serve_pid"
	wait "$serve_pid" || true
	serve_pid=
done
