#!/usr/bin/env bash
# bench-idle-sessions.sh — memory per idle session, with SESSIONS of them
# held at once, and the latency of one more client's tools/calls meanwhile:
# `switchboard serve` against the plainest go-sdk gateway (sdkproxy), in one
# run (docs/performance.md, "Memory per idle session with 10,000 sessions").
#
#   scripts/bench-idle-sessions.sh [SESSIONS] [CALLS]
#     (default 10000 sessions, 2000 sequential calls per latency reading)
#
#   SERVERS   the servers, in order (default: all four)
#     sdkproxy400   sdkproxy at GOGC=400, the gateway binary's default GC
#     sdkproxy100   sdkproxy at Go's default GOGC=100
#     switchboard   `switchboard serve` at its defaults (no GOGC, no
#                   GOMEMLIMIT in its environment: it sets its own)
#     switchboardNNN  the same with GOGC=NNN (such as switchboard100)
#   KINDS     the kinds of sessions (default: both)
#     get       2025-11-25 sessions, each holding its standalone GET stream
#     listen    2026-07-28 clients, each holding a subscriptions/listen
#               stream (the go-sdk client opens one when it has a
#               ToolListChangedHandler; sdkproxy then serves statelessly, as
#               the go-sdk requires for 2026-07-28)
#   SWITCHBOARD_BIN   a switchboard binary to measure instead of one built
#               from this tree (an A/B of two commits)
#   FORCED_GC_WAIT=1  after the clients settle, wait (up to 130 s) for the
#               runtime's periodic forced collection, so that the Go heap
#               column is the live heap with every session held; otherwise
#               it is the live heap the last collection found, while the
#               clients were still connecting.
#
# sdkproxy is the gateway package's TestSDKProxyHelper: a go-sdk server
# whose echo tool forwards to a go-sdk client over stdio to the fixture
# server. Switchboard serves the same fixture (tool mcp_fx_echo), its
# max_sessions and max_client_sessions raised to SESSIONS+16 (each listen
# stream counts as a session). The clients are go-sdk clients in a process
# of their own (TestIdleClientsHelper), each with its own HTTP transport and
# no idle keep-alive connection: one connection per session.
#
# Per row: the server's RSS before the clients and once they are connected
# and it settled, per session; its peak RSS (VmHWM, after the calls under
# load too); the Go heap (live, from GODEBUG=gctrace=1) and goroutine
# stacks at the last collection; the server's CPU while the clients
# connected; and the p50 (p99) of CALLS sequential tools/calls of one more
# client (TestCallLatencyHelper, after a warm-up) with no other client
# ("idle") and with the SESSIONS connected ("loaded"), with the server's
# CPU per call in each; the load average (1 min) at the end of the row.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
calls=${2:-2000}
servers=${SERVERS:-sdkproxy400 sdkproxy100 switchboard switchboard100}
kinds=${KINDS:-get listen}
work=$(mktemp -d)
rt=$(mktemp -d /tmp/sbrt.XXXXXX) # a socket's path is bounded: keep it short
srv_pid=
cleanup() {
	exec 7>&- 2>/dev/null || true
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$work" "$rt"
}
trap cleanup EXIT
if [ -n "${SWITCHBOARD_BIN:-}" ]; then
	cp "$SWITCHBOARD_BIN" "$work/switchboard"
else
	go build -o "$work/switchboard" ./cmd/switchboard
fi
go build -o "$work/testserver" ./internal/testkit/testserver
go test -c -o "$work/gateway.test" ./gateway
export XDG_RUNTIME_DIR=$rt HOME=$work XDG_CONFIG_HOME=$work/xdg XDG_STATE_HOME=$work/state
export SWITCHBOARD_SECRETS_BACKEND=env
unset GOGC GOMEMLIMIT GODEBUG

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

# wait_for FILE REGEX: up to a minute for a line of FILE to match.
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" && return 0
		sleep 0.1 # polling a file, bounded: a script has no event to wait on
	done
	cat "$1" >&2
	return 1
}

# start_server NAME KIND: starts it (srv_pid, its stderr in $work/srv.err)
# and sets url and tool.
start_server() {
	: >"$work/srv.err"
	case $1 in
	switchboard*)
		local gogc=()
		[ "$1" != switchboard ] && gogc=(GOGC="${1#switchboard}")
		env "${gogc[@]}" GODEBUG=gctrace=1 "$work/switchboard" --config "$work/switchboard.toml" serve --listen 127.0.0.1:0 2>"$work/srv.err" &
		srv_pid=$!
		wait_for "$work/srv.err" '^switchboard: ready'
		url=$(sed -n 's|^switchboard: serving MCP at \(http://[^ ]*/mcp\).*|\1|p' "$work/srv.err")
		tool=mcp_fx_echo
		;;
	sdkproxy400 | sdkproxy100)
		local stateless=
		[ "$2" = listen ] && stateless=1
		rm -f "$work/sdkin"
		mkfifo "$work/sdkin"
		: >"$work/srv.out"
		GOGC=${1#sdkproxy} GODEBUG=gctrace=1 GATEWAY_BENCH_SDKPROXY="$work/testserver" GATEWAY_BENCH_SDKPROXY_STATELESS=$stateless \
			"$work/gateway.test" -test.run '^TestSDKProxyHelper$' -test.bench '^$' <"$work/sdkin" >"$work/srv.out" 2>"$work/srv.err" &
		srv_pid=$!
		exec 7>"$work/sdkin" # it serves until this closes
		wait_for "$work/srv.out" '^serving '
		url=$(sed -n 's|^serving ||p' "$work/srv.out")
		tool=echo
		;;
	*)
		echo "unknown server $1" >&2
		exit 2
		;;
	esac
}

stop_server() {
	case $1 in
	sdkproxy*) exec 7>&- ;;
	*) kill "$srv_pid" ;;
	esac
	wait "$srv_pid" || true
	srv_pid=
}

# latency VERSION: "p50 p99 cpu" of CALLS sequential calls, in µs (cpu:
# the server's per call).
latency() {
	local c0 c1 out
	c0=$(cpu_ticks "$srv_pid")
	out=$(GATEWAY_CALL_URL=$url GATEWAY_CALL_TOOL=$tool GATEWAY_CALL_N=$calls GATEWAY_CALL_VERSION=$1 \
		"$work/gateway.test" -test.run '^TestCallLatencyHelper$' -test.bench '^$' | sed -n 's/^p50 \([0-9]*\) p99 \([0-9]*\)$/\1 \2/p')
	c1=$(cpu_ticks "$srv_pid")
	[ -n "$out" ] || { echo "the latency helper failed" >&2; exit 1; }
	local warm=$((calls / 10 + 1 < 100 ? calls / 10 + 1 : 100))
	echo "$out $(((c1 - c0) * 1000000 / hz / (calls + warm)))"
}

# gc_last: "live-MB stacks-MB" of the last collection gctrace reported.
gc_last() {
	grep -E '^gc [0-9]+ @' "$work/srv.err" | tail -1 |
		sed -n 's/.*->\([0-9]*\) MB, [0-9]* MB goal, \([0-9]*\) MB stacks.*/\1 \2/p'
}

printf '| server | sessions | RSS before | RSS with %d sessions | **RSS per session** | peak RSS | Go heap live, stacks (last GC) | CPU while they connected | p50 (p99) idle | p50 (p99) loaded | **p50 loaded/idle** | CPU per call idle, loaded | load avg |\n' "$n"
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for kind in $kinds; do
	case $kind in
	get) version=2025-11-25 get=true listen=false ;;
	listen) version=2026-07-28 get=false listen=true ;;
	*)
		echo "unknown kind $kind" >&2
		exit 2
		;;
	esac
	for server in $servers; do
		start_server "$server" "$kind"
		read -r idle_p50 idle_p99 idle_cpu < <(latency "$version")
		before=$(kib "$srv_pid" VmRSS)
		cpu0=$(cpu_ticks "$srv_pid")
		coproc CLIENTS {
			GATEWAY_IDLE_CLIENTS_URL=$url GATEWAY_IDLE_CLIENTS_N=$n GATEWAY_IDLE_CLIENTS_VERSION=$version \
				GATEWAY_IDLE_CLIENTS_GET=$get GATEWAY_IDLE_CLIENTS_LISTEN=$listen GATEWAY_IDLE_CLIENTS_CLOSEIDLE=true \
				"$work/gateway.test" -test.run '^TestIdleClientsHelper$' -test.bench '^$'
		}
		clients_pid=$CLIENTS_PID
		line=
		while read -r line <&"${CLIENTS[0]}"; do
			[ "$line" = ready ] && break
			echo "clients: $line" >&2
		done
		[ "$line" = ready ] || { echo "the clients did not connect" >&2; exit 1; }
		cpu1=$(cpu_ticks "$srv_pid")
		# Settle: RSS read every second until it moves by less than 1 %
		# (at most 30 s).
		after=$(kib "$srv_pid" VmRSS)
		for _ in $(seq 30); do
			sleep 1 # polling a value, bounded
			now=$(kib "$srv_pid" VmRSS)
			if [ $(((now > after ? now - after : after - now) * 100 < after)) = 1 ]; then
				after=$now
				break
			fi
			after=$now
		done
		if [ "${FORCED_GC_WAIT:-}" = 1 ]; then
			for _ in $(seq 130); do
				grep -qE '^gc [0-9]+ @.*\(forced\)' "$work/srv.err" && break
				sleep 1 # polling a file, bounded
			done
		fi
		read -r live stacks < <(gc_last)
		read -r load_p50 load_p99 load_cpu < <(latency "$version")
		peak=$(kib "$srv_pid" VmHWM)
		load=$(cut -d' ' -f1 /proc/loadavg)
		printf '| %s | %s %s | %d MiB | %d MiB | **%.1f KiB** | %d MiB | %s MB, %s MB | %.1f s | %d (%d) µs | %d (%d) µs | **%.2f** | %d, %d µs | %s |\n' \
			"$server" "$version" "$kind" $((before / 1024)) $((after / 1024)) "$(echo "($after - $before) / $n" | bc -l)" $((peak / 1024)) \
			"${live:-?}" "${stacks:-?}" "$(echo "($cpu1 - $cpu0) / $hz" | bc -l)" \
			"$idle_p50" "$idle_p99" "$load_p50" "$load_p99" "$(echo "$load_p50 / $idle_p50" | bc -l)" "$idle_cpu" "$load_cpu" "$load"
		eval "exec ${CLIENTS[1]}>&-"
		wait "$clients_pid" || true
		stop_server "$server"
	done
done
