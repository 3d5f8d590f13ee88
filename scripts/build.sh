#!/usr/bin/env bash
# build.sh - release binaries of switchboard: small, stamped, reproducible.
#
# Usage: scripts/build.sh [-o DIR] [--fresh-cache] [GOOS/GOARCH ...]
#   scripts/build.sh                      # the six targets below, into dist/
#   scripts/build.sh linux/amd64          # one target
#   scripts/build.sh --fresh-cache linux/arm64
#
# Targets: linux, darwin and windows on amd64 and arm64 (the default), or
# those named. Each binary is dist/switchboard-GOOS-GOARCH (.exe on
# Windows); SHA256SUMS lists them.
#
# What is built is the commit checked out (HEAD), never uncommitted
# changes: the script clones it twice, at two different paths, builds each
# target in both clones and compares the two binaries byte for byte, so
# that a binary depends on the commit and the Go version alone (and says
# so if it does not). The second build reuses the go command's build
# cache, so it checks what paths, VCS stamps and the linker put in a
# binary; --fresh-cache gives it an empty cache, which checks the compiler
# too at the price of a full compile (minutes per target).
#
# RELEASE_FLAGS below are the release flags; the Dockerfile's go build uses
# the same (TestDockerfile checks):
#   -trimpath        no path of the building machine in the binary
#   -buildvcs=true   the commit and its time, and the module version (the
#                    commit's tag, else a pseudo-version) in the build
#                    information that `switchboard version` reads; nothing
#                    is stamped with -X
#   -ldflags=-s -w   no symbol table, no DWARF: about a third smaller
#                    (docs/size.md)
# with CGO_ENABLED=0: a static binary, no C toolchain, the same bytes on
# any machine.
set -euo pipefail

RELEASE_FLAGS=(-trimpath -buildvcs=true "-ldflags=-s -w")
DEFAULT_TARGETS=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/dist"
fresh=false
targets=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    -o) [ "$#" -ge 2 ] || usage; out="$2"; shift 2 ;;
    --fresh-cache) fresh=true; shift ;;
    -h|--help) usage ;;
    -*) echo "build.sh: unknown flag $1" >&2; usage ;;
    */*) targets+=("$1"); shift ;;
    *) echo "build.sh: $1 is not GOOS/GOARCH (e.g. linux/amd64)" >&2; exit 2 ;;
  esac
done
[ "${#targets[@]}" -gt 0 ] || targets=("${DEFAULT_TARGETS[@]}")
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The environment must not change the bytes: GOFLAGS (also from `go env -w`,
# which a non-empty GOFLAGS overrides), cgo, and the CPU feature levels.
export GOFLAGS=-mod=readonly CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0
if [ -n "$(go env GOEXPERIMENT)" ]; then
  echo "build.sh: GOEXPERIMENT=$(go env GOEXPERIMENT) is set; release builds use none" >&2
  exit 1
fi

commit="$(git -C "$root" rev-parse HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "build.sh: the working tree has uncommitted changes; building $commit without them" >&2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# --shared borrows the repository's objects, so that any commit checked
# out, even one no branch points at, is there; the clone has a .git folder
# of its own (the go command stamps nothing in a git worktree, whose .git
# is a file).
for side in a b; do
  git clone --quiet --shared --no-checkout "$root" "$tmp/$side/switchboard"
  git -C "$tmp/$side/switchboard" -c advice.detachedHead=false checkout --quiet "$commit"
done

t_start=$SECONDS
failed=0
names=()
for target in "${targets[@]}"; do
  goos="${target%/*}" goarch="${target#*/}"
  name="switchboard-$goos-$goarch"
  [ "$goos" = windows ] && name="$name.exe"
  t0=$SECONDS
  for side in a b; do
    cache="$(go env GOCACHE)"
    if [ "$side" = b ] && $fresh; then cache="$tmp/gocache"; fi
    (cd "$tmp/$side/switchboard" &&
      GOOS="$goos" GOARCH="$goarch" GOCACHE="$cache" \
        go build "${RELEASE_FLAGS[@]}" -o "$tmp/$side/$name" ./cmd/switchboard)
  done
  # What the binary says of itself: the commit, unmodified, static, trimmed.
  info="$(go version -m "$tmp/a/$name")"
  # (-ldflags is not recorded with -trimpath; the symbols tell, below.)
  for want in "vcs.revision=$commit" "vcs.modified=false" "CGO_ENABLED=0" "-trimpath=true"; do
    if ! grep -qF -- "$want" <<<"$info"; then
      echo "$name: its build information lacks $want:" >&2
      echo "$info" >&2
      failed=1
      continue 2
    fi
  done
  # A stripped Mach-O binary still lists its dynamic imports, never Go's.
  if go tool nm "$tmp/a/$name" 2>/dev/null | grep -q ' runtime\.main$'; then
    echo "$name: has Go's symbol table; -ldflags=-s -w did not apply" >&2
    failed=1
    continue
  fi
  if cmp -s "$tmp/a/$name" "$tmp/b/$name"; then
    cp "$tmp/a/$name" "$out/$name"
    names+=("$name")
    printf '%-30s %6.1f MB  reproducible  %ds\n' "$name" \
      "$(awk -v b="$(wc -c <"$out/$name")" 'BEGIN { print b / 1e6 }')" $((SECONDS - t0)) >&2
  else
    echo "$name: NOT REPRODUCIBLE: two builds of $commit differ:" >&2
    cmp "$tmp/a/$name" "$tmp/b/$name" >&2 || true
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

(cd "$out" && sha256sum "${names[@]}" >SHA256SUMS)
version="$(go version -m "$out/$name" | awk '$1 == "mod" { print $3 }')"
echo "switchboard $version ($commit), $(go env GOVERSION): ${#targets[@]} binaries in $out in $((SECONDS - t_start))s" >&2
