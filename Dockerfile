# syntax=docker/dockerfile:1
#
# kptbot's container image: one static binary on distroless (no shell, no
# package manager, CA certificates and tzdata included), running as an
# unprivileged user. The default command is the webhook server.
#
#   docker build -t kptbot \
#     --build-arg VERSION="$(git describe --tags --match 'v[0-9]*' --always)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" \
#     --build-arg DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
#   docker run --rm kptbot version
#
# The `ci` target is the same binary on distroless's debug variant, which
# adds a busybox shell: a GitLab CI job's runner needs a shell to run
# `script:` lines (examples/gitlab/kptbot.gitlab-ci.yml uses it).
#
#   docker build --target ci -t kptbot:ci .

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# No cgo: the binary is static, and kpt's optional wasm runtime is left out.
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GONOSUMDB=github.com/kptdev
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
RUN go build -trimpath -tags nomsgpack \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/kptbot ./cmd/kptbot

FROM gcr.io/distroless/static-debian12:debug-nonroot AS ci
COPY --from=build /out/kptbot /usr/local/bin/kptbot
# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kptbot"]

FROM gcr.io/distroless/static-debian12:nonroot AS server
COPY --from=build /out/kptbot /usr/local/bin/kptbot
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/kptbot"]
CMD ["serve", "--config", "/etc/kptbot/config.yaml"]
