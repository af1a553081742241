# kptbot Makefile. Every target works on a fresh machine with only Go installed.
export GOTOOLCHAIN := local
export GONOSUMDB := github.com/kptdev
# nomsgpack: gin's MessagePack codec, which the webhook server never
# speaks, is left out (1.5 ms and 2 MB off every kptbot process's start;
# docs/performance.md). Release, image and Action builds set it too.
export GOFLAGS := -buildvcs=false -tags=nomsgpack
# No cgo: kpt's optional wasmtime runtime is then left out (kptbot never
# runs wasm functions), and the binary is static.
export CGO_ENABLED := 0

BIN := bin/kptbot

# Build metadata for `kptbot version`: the latest release tag (v*; package
# tags such as catalog/nginx/v3 never match), the commit and the UTC build
# time. Outside a git checkout they fall back to dev/unknown.
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: build test test-race bench demo demo-engine lint fuzz clean

build:
	go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kptbot

test:
	go test ./...

# The tests under the race detector (needs cgo; slower).
test-race:
	CGO_ENABLED=1 go test -race ./...

# Benchmarks: whole processes side by side with the kpt CLI (`kptbot
# version` against a Go hello-world; `fn render` of a 7-resource package
# with set-namespace, apply-replacements and starlark against kpt with
# exec: binaries of the same catalog modules: medians of time and peak
# RSS, and the ratio); render 1k/10k resources through a 5-function built-in pipeline
# (streamed and whole-list) and through apply-replacements, resource-merge
# updates of a 1k-resource package, both against the kpt CLI when `kpt` is
# on PATH (skipped cleanly otherwise); the CLI's peak RSS for render, get
# and update against two baselines; the built-in pipeline;
# the diff printer; a 200-repository reconcile; webhook intake; unpacking
# and fetching a 1,000-resource package archive / OCI artifact; one upstream
# tag fanned out to 1,000 downstream repositories on the fake forge.
bench:
	go test -run '^$$' -bench . -benchmem -benchtime 3x -timeout 30m ./engine/...
	go test -run '^$$' -bench . -benchtime 1x -timeout 30m ./reconcile
	go test -run '^$$' -bench . -benchtime 2s ./forge/...
	go test -run '^$$' -bench . -benchtime 20x ./fetch/...
	go test -run '^$$' -bench FanOut1000 -benchtime 1x -timeout 30m ./fanout
	KPTBOT_FLEET=10000 go test -run '^$$' -bench Fleet -benchtime 1x -timeout 60m ./fanout
	go test -run 'TestWritesPerPullRequest|TestGitLabWritesPerMergeRequest' -count 1 -v ./server | grep -E 'writes per (pull|merge) request|resyncs after|^(ok|FAIL)' | sed -E 's/: \[.*//'
	KPTBOT_WRITES_FOLLOWERS=25 go test -run 'TestWritesPerPullRequest' -count 1 -v ./server | grep -E 'writes per pull request|resyncs after|^(ok|FAIL)' | sed -E 's/: \[.*//'
	go test -run '^$$' -bench 'WebhookIntakeUnderResync|CommandDuringFanOut' -benchtime 1x -timeout 30m ./server
	KPTBOT_MEASURE=1 go test -run 'TestActionNothingToDoCost' -count 1 -v ./cmd/kptbot | grep -E 'nothing to do:|^(ok|FAIL)'

# The main job end to end with no account: Porch's lifecycle and package
# variants on local git repositories, then the bot itself (the same
# bot.Handle as the server) on an in-memory forge: a draft proposed,
# approved, published and fanned out to three sites.
demo: build
	./scripts/porch-demo.sh $(BIN)
	$(BIN) demo

# The engine walkthrough: get, edit, update keeping the edit, diff, render.
demo-engine: build
	./scripts/engine-walkthrough.sh $(BIN)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

fuzz:
	go test -run '^$$' -fuzz FuzzParseRef -fuzztime 30s ./fetch
	go test -run '^$$' -fuzz FuzzParse -fuzztime 30s -fuzzminimizetime 0 ./fetch/locator
	go test -run '^$$' -fuzz FuzzUnified -fuzztime 30s -fuzzminimizetime 0 ./engine/textdiff
	go test -run '^$$' -fuzz FuzzParse -fuzztime 30s -fuzzminimizetime 0 ./config
	go test -run '^$$' -fuzz FuzzNormalize -fuzztime 30s -fuzzminimizetime 0 ./forge/github
	go test -run '^$$' -fuzz FuzzParseWebhook -fuzztime 30s -fuzzminimizetime 0 ./forge/gitlab
	go test -run '^$$' -fuzz FuzzParseCommands -fuzztime 30s -fuzzminimizetime 0 ./bot

clean:
	rm -rf bin
