# syntax=docker/dockerfile:1
#
# Switchboard's container images, two targets:
#
#   node (the default): Debian with Node.js, so that the stdio servers most
#     configurations name (`npx -y @modelcontextprotocol/server-…`) can run.
#   slim: the binary on Debian alone, for a gateway whose servers are all
#     reached over the network (http, sse, websocket): no npx, no uvx.
#
#   docker build -t switchboard .
#   docker build --target slim -t switchboard:slim .
#
# Neither has Python or uv: servers started with uvx need a derived image.
# The binary is built with the release flags of scripts/build.sh
# (TestDockerfile checks that the two agree), static, and stamped with the
# commit when the build context has the repository's .git folder.

ARG GO_VERSION=1.26
ARG NODE_VERSION=22
ARG DEBIAN=trixie

# The build runs on the builder's own platform and cross-compiles (the
# binary needs no C toolchain), which is faster than emulating the target.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-${DEBIAN} AS build
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=true -ldflags="-s -w" -o /out/switchboard ./cmd/switchboard

# tini is PID 1: it reaps the orphans of stdio servers. Outside a container
# Switchboard runs each server in a PID namespace of its own, which takes
# its descendants with it; a container's seccomp profile usually refuses
# that, and an orphan is then handed to PID 1.
FROM debian:${DEBIAN}-slim AS slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 switchboard \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin switchboard
COPY --from=build /out/switchboard /usr/local/bin/switchboard
USER 10001:10001
WORKDIR /home/switchboard
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/switchboard"]
CMD ["--help"]

# The default target comes last.
FROM node:${NODE_VERSION}-${DEBIAN}-slim AS node
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 switchboard \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin switchboard
COPY --from=build /out/switchboard /usr/local/bin/switchboard
USER 10001:10001
WORKDIR /home/switchboard
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/switchboard"]
CMD ["--help"]
