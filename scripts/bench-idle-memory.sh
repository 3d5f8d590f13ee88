#!/usr/bin/env bash
# bench-idle-memory.sh — the memory (RSS) of a `switchboard serve` holding
# many idle 2025-11-25 sessions, at Go's GOGC=100, at GOGC=400 without a
# soft memory limit, at the binary's default GC target (gctune.go) with the
# limit it derives on this machine, and with a limit such as it derives in
# a container, one after the other in one run (docs/performance.md,
# "Memory per idle session with 10,000 sessions"). Against the plainest
# go-sdk gateway, and with 2026-07-28 listen streams: bench-idle-sessions.sh.
#
#   scripts/bench-idle-memory.sh [SESSIONS] [CONTAINER_LIMIT]
#     (default 10000 sessions; a GOMEMLIMIT of 1GiB, what the binary sets
#      in a container given 1.11 GiB: 90 % of memory.max)
#
# The clients are go-sdk clients in a process of their own (the gateway
# package's TestIdleClientsHelper, as BenchmarkIdleSessions runs them),
# each with its own HTTP transport, holding its standalone GET stream and
# no idle keep-alive connection (which serve closes after 2 minutes):
# one connection per session, 10,000 of them within the default limit of
# 20,000 open files per process. Per row: serve's RSS before and once
# the clients are connected and it settled, its peak (VmHWM), per session,
# and the CPU time serve spent while they connected.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
container_limit=${2:-1GiB}
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
go test -c -o "$work/gateway.test" ./gateway
sb=$work/switchboard
export XDG_RUNTIME_DIR=$rt HOME=$work XDG_CONFIG_HOME=$work/xdg XDG_STATE_HOME=$work/state
export SWITCHBOARD_SECRETS_BACKEND=env
unset GOGC GOMEMLIMIT

cat >"$work/switchboard.toml" <<TOML
[gateway]
max_sessions = $((n + 16))
max_client_sessions = $((n + 16))

[[mcp_servers]]
id = "fx"
command = "$work/testserver"
TOML

kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

printf '| serve | RSS before | RSS with %d sessions | peak RSS | **per session** | serve CPU while they connected |\n' "$n"
printf '| --- | --- | --- | --- | --- | --- |\n'
rows=(
	"GOGC=100 (Go's default)|GOGC=100"
	"GOGC=400 (the binary's default before issue 31), no memory limit|GOGC=400 GOMEMLIMIT=off"
	"the binary's default GC target (400 → 200 as the live heap grows), the limit derived here (half of RAM)|"
	"the binary's default GC target, GOMEMLIMIT=$container_limit (a container's limit × 0.9)|GOMEMLIMIT=$container_limit"
)
for row in "${rows[@]}"; do
	IFS='|' read -r name env <<<"$row"
	# shellcheck disable=SC2086 # $env is one assignment or none
	env $env "$sb" --config "$work/switchboard.toml" serve --listen 127.0.0.1:0 2>"$work/serve.log" &
	serve_pid=$!
	for _ in $(seq 600); do # up to a minute for its server to start
		grep -q '^switchboard: ready' "$work/serve.log" && break
		sleep 0.1 # polling a file, bounded: a script has no event to wait on
	done
	grep -q '^switchboard: ready' "$work/serve.log" || { cat "$work/serve.log" >&2; exit 1; }
	url=$(sed -n 's|^switchboard: serving MCP at \(http://[^ ]*/mcp\).*|\1|p' "$work/serve.log")
	before=$(kib "$serve_pid" VmRSS)
	cpu0=$(cpu_ticks "$serve_pid")
	coproc CLIENTS {
		GATEWAY_IDLE_CLIENTS_URL=$url GATEWAY_IDLE_CLIENTS_N=$n GATEWAY_IDLE_CLIENTS_VERSION=2025-11-25 \
			GATEWAY_IDLE_CLIENTS_GET=true GATEWAY_IDLE_CLIENTS_CLOSEIDLE=true \
			"$work/gateway.test" -test.run '^TestIdleClientsHelper$' -test.bench '^$'
	}
	clients_pid=$CLIENTS_PID
	while read -r line <&"${CLIENTS[0]}"; do
		[ "$line" = ready ] && break
	done
	[ "$line" = ready ] || { echo "the clients did not connect" >&2; exit 1; }
	cpu1=$(cpu_ticks "$serve_pid")
	# Settle: RSS read every second until it moves by less than 1 % (at
	# most 30 s): the last GET streams and the first collections after
	# the burst.
	after=$(kib "$serve_pid" VmRSS)
	for _ in $(seq 30); do
		sleep 1 # polling a value, bounded
		now=$(kib "$serve_pid" VmRSS)
		if [ $(((now > after ? now - after : after - now) * 100 < after)) = 1 ]; then
			after=$now
			break
		fi
		after=$now
	done
	peak=$(kib "$serve_pid" VmHWM)
	printf '| %s | %d MiB | %d MiB | %d MiB | **%.1f KiB** | %.1f s |\n' "$name" $((before / 1024)) $((after / 1024)) $((peak / 1024)) \
		"$(echo "($after - $before) / $n" | bc -l)" "$(echo "($cpu1 - $cpu0) / $hz" | bc -l)"
	eval "exec ${CLIENTS[1]}>&-"
	wait "$clients_pid" || true
	kill "$serve_pid"
	wait "$serve_pid" || true
	serve_pid=
done
