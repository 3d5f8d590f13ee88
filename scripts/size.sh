#!/usr/bin/env bash
# size.sh - what the switchboard binary is made of: its sections, and its
# code and read-only data by module (the table in docs/size.md).
#
# Usage: scripts/size.sh
#
# Builds cmd/switchboard for this platform twice, as scripts/build.sh does
# (the release binary) and with its symbol table kept (-ldflags=-w, which
# changes nothing else), and sums the sizes `go tool nm` gives the symbols
# of code (T) and read-only data (R) by the module their package belongs
# to (`go version -m`), the longest module path that prefixes the symbol.
# Symbols that belong to no module are Go's runtime and standard library.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export GOFLAGS=-mod=readonly CGO_ENABLED=0

go build -trimpath -ldflags=-w -o "$tmp/symbols" ./cmd/switchboard
go build -trimpath "-ldflags=-s -w" -o "$tmp/release" ./cmd/switchboard
go build -o "$tmp/default" ./cmd/switchboard

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
echo "go build (the go command's defaults): $(mb "$(wc -c <"$tmp/default")")"
echo "release (scripts/build.sh):           $(mb "$(wc -c <"$tmp/release")"), $(mb "$(gzip -9 <"$tmp/release" | wc -c)") gzipped"
echo
echo "sections of the release binary:"
if command -v readelf >/dev/null; then
  readelf -S -W "$tmp/release" | sed -n 's/^ *\[ *[0-9]*\] //p' |
    while read -r name type _ _ size _; do
      case "$name" in .*) printf '  %-20s %-9s %s\n' "$name" "$type" "$(mb $((16#$size)))" ;; esac
    done
fi

{ go version -m "$tmp/symbols" | awk '$1 == "dep" { print $2 }'; echo github.com/switchboardmcp/switchboard; } >"$tmp/modules"
echo
echo "code and read-only data by module (symbols of the -w build):"
go tool nm -size "$tmp/symbols" | awk -v modules="$tmp/modules" '
  BEGIN { while ((getline m <modules) > 0) mod[++n] = m }
  $3 ~ /^[TtRr]$/ {
    name = $4
    sub(/^(type:\.eq\.|type:\.namedata\.|type:\*?|go:itab\.\*?)/, "", name)
    best = ""
    for (i = 1; i <= n; i++)
      if ((index(name, mod[i] ".") == 1 || index(name, mod[i] "/") == 1) && length(mod[i]) > length(best))
        best = mod[i]
    if (best == "") best = "Go runtime and standard library"
    size[best] += $2; total += $2
  }
  END {
    for (m in size) printf "%10.2f MB %5.1f%%  %s\n", size[m] / 1e6, 100 * size[m] / total, m | "sort -rn"
    close("sort -rn")
    printf "%10.2f MB        in all\n", total / 1e6
  }'
