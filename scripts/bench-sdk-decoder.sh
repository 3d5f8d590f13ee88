#!/usr/bin/env bash
# What the go-sdk's JSON decoding costs the gateway and its baselines.
#
# The go-sdk's internal/json.Unmarshal decodes through a fresh
# segmentio/encoding Decoder, which allocates (and zeroes) a 32 KiB buffer
# for every value it decodes: message envelopes, params, _meta, results.
# This script runs BenchmarkSeparateProcesses twice per round, alternating:
# once with the go-sdk as go.mod pins it, and once with a copy of that
# go-sdk whose Unmarshal parses the bytes it is given in place (the
# decoder's own Parse, with the same flag the SDK sets), through a
# temporary -modfile with a replace directive. Nothing in the repository
# changes; the copy lives in a temporary folder.
#
#   scripts/bench-sdk-decoder.sh            # 2 rounds
#   ROUNDS=3 BENCHTIME=3000x scripts/bench-sdk-decoder.sh
#
# Figures and their reading: docs/performance.md ("The go-sdk's decoder").
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
benchtime=${BENCHTIME:-3000x}

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

sdk=$(go list -m -f '{{.Dir}}' github.com/modelcontextprotocol/go-sdk)
version=$(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)
cp -r "$sdk" "$work/go-sdk"
chmod -R u+w "$work/go-sdk"
file="$work/go-sdk/internal/json/json.go"
old='	return NewDecoder(bytes.NewReader(data)).Decode(v)'
if ! grep -qF "$old" "$file"; then
	echo "bench-sdk-decoder: go-sdk $version: internal/json.Unmarshal is not the one this script patches" >&2
	exit 1
fi
# The same decoding, without the per-call Decoder and its buffer.
python3 - "$file" "$old" <<'EOF'
import sys
path, old = sys.argv[1], sys.argv[2]
src = open(path).read()
new = ("\t_, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields)\n"
       "\treturn err")
src = src.replace(old, new) + "\nvar _ = bytes.NewReader\n"
open(path, "w").write(src)
EOF

cp go.mod "$work/patched.mod"
cp go.sum "$work/patched.sum"
go mod edit -modfile "$work/patched.mod" -replace "github.com/modelcontextprotocol/go-sdk=$work/go-sdk"

run() {
	local label=$1
	shift
	echo "== $label (go-sdk $version), load $(cut -d' ' -f1 /proc/loadavg)"
	env "$@" go test ./gateway -run '^$' -bench SeparateProcesses -benchtime "$benchtime" -count 1 |
		awk '/^Benchmark/ {
			n = split($1, p, "/"); line = p[n]
			for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
			split("direct-calls/s gateway-calls/s sdkproxy-calls/s gohttp-calls/s direct-p50-µs gateway-p50-µs sdkproxy-p50-µs gohttp-p50-µs gw-cpu-µs gw/direct sdkproxy/direct gw/sdkproxy gw-p50/gohttp-p50", k, " ")
			for (j = 1; j in k; j++) line = line "  " k[j] "=" v[k[j]]
			print line
		}'
}

for r in $(seq "$rounds"); do
	run "stock" GOFLAGS=
	run "decoder without its buffer" GOFLAGS="-modfile=$work/patched.mod"
done
