#!/usr/bin/env bash
# bench-startup.sh — the size and start-up of `go build ./cmd/switchboard`
# at a base commit and at this tree, side by side in one run
# (docs/performance.md, "Size and start-up").
#
#   scripts/bench-startup.sh [BASE] [RUNS]
#     BASE: a commit (default 9ba063b, main on 2026-11-30), built from
#           `git archive` in a temporary directory
#     RUNS: runs of each timed command per binary (default 40)
#   SB_BASE_BIN=FILE uses FILE as the base's binary instead of building it.
#
# Rows: the file's size, `switchboard --help`, `switchboard tools` over 20
# lazy servers (the Go fixture) whose tool lists are cached (warm: one
# `tools` run first, which starts them and saves their lists), the idle
# RSS of `switchboard serve` with one server, the fixture (VmRSS read 2 s
# after it starts serving, median of 5 starts; and its private and file
# parts, each the median), and the time and bytes the
# package initialisers take (GODEBUG=inittrace=1, summed). The timed
# commands run alternately, base then new, so that the noise of a shared
# machine falls on both; the table gives the median and the quartiles of
# their wall time and of their CPU time (user + system, to the ms), which
# a loaded machine moves less.
# Both binaries are built with the go command's defaults, as the issue
# measures "the default build"; the release (scripts/build.sh) adds
# -trimpath -ldflags="-s -w".
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-9ba063b}
runs=${2:-40}
work=$(mktemp -d)
rt=$(mktemp -d /tmp/sbrt.XXXXXX) # a socket's path is bounded: keep it short
trap 'rm -rf "$work" "$rt"' EXIT

if [ -n "${SB_BASE_BIN:-}" ]; then # a base binary built before, to save a build
	cp "$SB_BASE_BIN" "$work/base"
else
	mkdir "$work/base-src"
	git archive "$base" | tar -x -C "$work/base-src"
	(cd "$work/base-src" && go build -o "$work/base" ./cmd/switchboard)
fi
go build -o "$work/new" ./cmd/switchboard
go build -o "$work/testserver" ./internal/testkit/testserver

# After the builds (which need the real HOME's Go caches): no user
# configuration, state or secret is read, no serve is found.
export XDG_RUNTIME_DIR=$rt HOME=$work XDG_CONFIG_HOME=$work/xdg XDG_STATE_HOME=$work/state
export SWITCHBOARD_SECRETS_BACKEND=env
unset GOGC GOMEMLIMIT GODEBUG

printf '[[mcp_servers]]\nid = "fx"\ncommand = "%s"\n' "$work/testserver" >"$work/one.toml"
for i in $(seq -w 1 20); do
	printf '[[mcp_servers]]\nid = "fx%s"\ncommand = "%s"\nlazy = true\n\n' "$i" "$work/testserver"
done >"$work/lazy20.toml"
for b in base new; do
	mkdir -p "$work/state-$b"
	# Warm each binary's own cache (the base keeps files, the new one a
	# database): the first run starts the 20 servers and saves their lists.
	XDG_STATE_HOME=$work/state-$b "$work/$b" --config "$work/lazy20.toml" tools >/dev/null
done

# childcpu prints the CPU time (user + system, ms) of this shell's ended
# children, as the builtin times wrote it to $work/times (times must run in
# this shell: a subshell's children are its own).
childcpu() {
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60000 + p[2] * 1000 } printf "%d\n", t }' "$work/times"
}
# us runs a command and appends its wall time (µs) to the array named by
# $1 and its CPU time (µs, user + system; to the millisecond) to the one
# named by $2: on a loaded machine the CPU time moves less than the wall.
us() {
	local -n wall=$1 cpu=$2
	shift 2
	local t0=$EPOCHREALTIME t1 c0 c1
	times >"$work/times"
	c0=$(childcpu)
	"$@" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	times >"$work/times"
	c1=$(childcpu)
	wall+=" $(((${t1/./} - ${t0/./})))"
	cpu+=" $(((c1 - c0) * 1000))"
}
# stats prints the median and quartiles of its arguments (us) in ms.
stats() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f ms (%.1f–%.1f)", a[int((NR+1)/2)]/1000, a[int((NR+3)/4)]/1000, a[int((3*NR+3)/4)]/1000}'
}

for b in base new; do
	declare help_$b= helpcpu_$b= tools_$b= toolscpu_$b=
done
for _ in $(seq "$runs"); do
	for b in base new; do
		us help_$b helpcpu_$b "$work/$b" --help
		XDG_STATE_HOME=$work/state-$b us tools_$b toolscpu_$b "$work/$b" --config "$work/lazy20.toml" tools
	done
done

# rss starts serve with one server (the base refuses to serve none) and
# prints its VmRSS (KiB) 2 s after it says where it serves (the base has
# no "ready" line; the fixture starts in milliseconds).
rss() {
	"$1" --config "$work/one.toml" serve --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
	local pid=$!
	for _ in $(seq 300); do # up to 30 s
		grep -q '^switchboard: serving MCP at' "$work/serve.log" && break
		sleep 0.1 # polling a file, bounded: a script has no event to wait on
	done
	if ! grep -q '^switchboard: serving MCP at' "$work/serve.log"; then
		kill "$pid"
		cat "$work/serve.log" >&2
		return 1
	fi
	sleep 2 # idle: what it holds once started
	# VmRSS, and its private part (RssAnon: heap, stacks, data) and the
	# binary's pages mapped (RssFile, shared with the page cache).
	awk '$1 == "VmRSS:" {v = $2} $1 == "RssAnon:" {a = $2} $1 == "RssFile:" {f = $2} END {print v, a, f}' "/proc/$pid/status"
	kill "$pid"
	wait "$pid" || true
}
declare -A mem anon file
for _ in 1 2 3 4 5; do
	for b in base new; do
		read -r v a f < <(rss "$work/$b" </dev/null)
		mem[$b]+=" $v" anon[$b]+=" $a" file[$b]+=" $f"
	done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# inittrace sums what every package initialiser took over 11 runs of
# --help and prints the median total.
inittrace() {
	local ms=() kb=()
	for _ in $(seq 11); do
		read -r m k < <(GODEBUG=inittrace=1 "$1" --help 2>&1 >/dev/null | awk '/^init / {ms += $5; b += $8} END {printf "%.1f %d\n", ms, b / 1024}')
		ms+=("$m") kb+=("$k")
	done
	echo "$(median "${ms[@]}") ms, $(median "${kb[@]}") KiB"
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
printf '| %s | base (%s) | new |\n| --- | --- | --- |\n' "measure" "$base"
printf '| `go build ./cmd/switchboard` | %s | %s |\n' "$(mb "$(wc -c <"$work/base")")" "$(mb "$(wc -c <"$work/new")")"
# shellcheck disable=SC2086 # the runs are words on purpose
printf '| `switchboard --help`, median (quartiles) of %d | %s | %s |\n' "$runs" "$(stats $help_base)" "$(stats $help_new)"
# shellcheck disable=SC2086
printf '| its CPU time (user + system) | %s | %s |\n' "$(stats $helpcpu_base)" "$(stats $helpcpu_new)"
# shellcheck disable=SC2086
printf '| `switchboard tools`, 20 lazy servers, warm cache | %s | %s |\n' "$(stats $tools_base)" "$(stats $tools_new)"
# shellcheck disable=SC2086
printf '| its CPU time (user + system) | %s | %s |\n' "$(stats $toolscpu_base)" "$(stats $toolscpu_new)"
# shellcheck disable=SC2086
printf '| idle RSS of `serve` (one server), median of 5 | %d KiB | %d KiB |\n' "$(median ${mem[base]})" "$(median ${mem[new]})"
# shellcheck disable=SC2086
printf '| of which private (RssAnon) / the binary mapped (RssFile) | %d / %d KiB | %d / %d KiB |\n' "$(median ${anon[base]})" "$(median ${file[base]})" "$(median ${anon[new]})" "$(median ${file[new]})"
printf '| package initialisers (`GODEBUG=inittrace=1 --help`, summed) | %s | %s |\n' "$(inittrace "$work/base")" "$(inittrace "$work/new")"
