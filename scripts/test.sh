#!/usr/bin/env bash
# test.sh - the project's whole check, as CI runs it (.ci/run calls this).
#
# Usage: scripts/test.sh [go test flags...]
#   e.g. scripts/test.sh -run TestEverything ./internal/testkit/interop/
# Extra arguments go to `go test`; when they name no package, ./... is tested.
#
# Needs Go and npm (any Node works for npm itself). The pinned MCP test peers
# (Node 22 from npm, the reference servers, the conformance suites) are
# installed into .cache/interop, or $SWITCHBOARD_TEST_CACHE, on first use.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n=== %s\n' "$*" >&2; }
t_start=$SECONDS
# A whole run (no arguments) also runs the fuzz smoke and the release build.
whole=false
[ "$#" -eq 0 ] && whole=true

step "install pinned MCP test peers"
go run ./internal/testkit/interop/cmd/install

step "gofmt"
unformatted="$(gofmt -l . | grep -v '^\.cache/' || true)"
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting (run gofmt -w):" >&2
  printf '  %s\n' $unformatted >&2
  exit 1
fi

step "Dockerfile lint"
# No Docker engine runs here to build the image: the linter of VS Code's
# Docker extension checks each instruction, TestDockerfile the invariants.
npx --yes dockerfile-utils@0.16.3 lint Dockerfile

step "go mod tidy"
if ! tidy="$(go mod tidy -diff 2>&1)"; then
  echo "go.mod/go.sum are not tidy: run go mod tidy" >&2
  printf '%s\n' "$tidy" >&2
  exit 1
fi

step "go vet"
# With go build, this is also the check that Switchboard builds with the
# oldest Go go.mod promises (its go line), without that Go: the compiler
# holds every file to the go line's language version, and vet's stdversion
# check flags standard-library symbols newer than it. go mod tidy -diff
# (above) raises the line when a dependency needs more; TestGoModInstallable
# fails when it is a patch release none needs.
go vet ./...

step "go test"
pkgs=(./...)
progress=()
for arg in "$@"; do
  case "$arg" in
    ./*|github.com/*) pkgs=() ;;
    -v|-v=true|-test.v|-test.v=true) progress=(-v) ;;
  esac
done
# go test -race is quiet for minutes at a time (it builds before it runs,
# and the slow packages take minutes each): its -json stream goes through
# internal/testkit/testprogress, which prints go test's own line for each package
# as it ends, the whole output of every failed test, build errors, a line
# after each quiet minute naming what is running, and the counts. pipefail
# keeps go test's exit status.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testprogress" ./internal/testkit/testprogress
go test -json -race -count=1 -timeout 30m "$@" ${pkgs[@]+"${pkgs[@]}"} |
  "$tmp/testprogress" ${progress[@]+"${progress[@]}"}

# A short run of every fuzz target (the seed corpus already ran above as
# ordinary tests), bounded by a count of executions, not by time: with a
# duration, Go 1.26's fuzzing coordinator can report its own deadline as a
# failure ("context deadline exceeded", no crasher; go.dev/issue/75804,
# fixed in Go 1.27). Set SWITCHBOARD_FUZZTIME=0 to skip, or higher (a count
# like 1000000x, or a duration) to dig.
fuzztime="${SWITCHBOARD_FUZZTIME:-20000x}"
if $whole && [ "$fuzztime" != "0" ]; then
  step "fuzz smoke ($fuzztime per target)"
  for target in \
    "FuzzDecode ./config" \
    "FuzzCheckURL ./netguard" \
    "FuzzDialerCheck ./netguard" \
    "FuzzParse ./secret" \
    "FuzzRedactValue ./secret" \
    "FuzzValidate ./schema" \
    "FuzzSSEProgressTap ./host" \
    "FuzzStderrLines ./host" \
    "FuzzCleanText ./host" \
    "FuzzHostAllowed ./gateway" \
    "FuzzWebSocketFrames ./transport" \
    "FuzzStdioFraming ./transport"; do
    set -- $target
    # No minimising of new inputs in a smoke run: an interrupted
    # minimisation is reported as a failure though nothing failed.
    go test -run '^$' -fuzz "^$1\$" -fuzztime "$fuzztime" -fuzzminimizetime 0 "$2"
  done
fi

# The release build of this platform's binary, twice from two clones of
# HEAD, compared byte for byte (scripts/build.sh). Its first run compiles
# everything again (-trimpath builds are cached apart): minutes. Set
# SWITCHBOARD_BUILDCHECK=0 to skip.
if $whole && [ "${SWITCHBOARD_BUILDCHECK:-1}" != "0" ]; then
  step "release build ($(go env GOOS)/$(go env GOARCH)), reproducible"
  scripts/build.sh -o "$tmp/dist" "$(go env GOOS)/$(go env GOARCH)"
fi

step "all checks passed in $((SECONDS - t_start))s"
