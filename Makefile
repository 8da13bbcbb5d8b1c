# HeteroFlow — the README's two commands are `make run` and `make test`.
# Both install what they need (Go modules, npm packages, Debian packages).
SHELL := /bin/bash
GO ?= go
BIN := bin/heteroflow
VERSION ?= $(shell git describe --tags --always 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Debian packages used by tests (real Prometheus, Alertmanager, VictoriaMetrics, Chromium).
# fonts-wqy-zenhei: a CJK font, so Chinese text in the browser tests (and their screenshots) renders.
DEB_PKGS := chromium prometheus prometheus-alertmanager victoria-metrics fonts-wqy-zenhei slapd ldap-utils
FUZZTIME ?= 20000x

.PHONY: all build web go deps deb-deps web-deps run test test-go test-race test-integrity test-promql-parity test-fuzz test-deploy test-web bench clean

all: build

## deps: everything a fresh machine needs
deps: deb-deps web-deps
	$(GO) mod download

deb-deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

web-deps:
	@if [ -f web/package.json ]; then cd web && ( [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund ); fi

## build: the console (Vite) embedded into the Go binary, plus the Windows agent
build: web go windows

web: web-deps
	@if [ -f web/package.json ]; then cd web && npm run build; fi

go:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/heteroflow

## windows: the same binary cross-compiled for Windows agents (deploy/README.md: run as a service)
WINDOWS_BIN := bin/heteroflow-windows-amd64.exe
.PHONY: windows
windows:
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(WINDOWS_BIN) ./cmd/heteroflow

## run: server on embedded defaults + simulated heterogeneous nodes
run: build
	./deploy/dev-run.sh

## test: the whole suite (Go incl. PostgreSQL conformance, brief fuzzing, browser tests)
test: deps build test-go test-race test-integrity test-fuzz test-deploy test-web

test-go:
	$(GO) test -count=1 -timeout 20m ./...

## test-race: the packages with concurrency under the race detector: both
## stores (the conformance suite's concurrent writers, group commit; PostgreSQL
## when HETEROFLOW_TEST_PG_DSN is set), the scheduler, the agent, metrics
## ingest. Measured on the shared 2-core dev machine under load (docs/BENCHMARKS.md).
RACE_PKGS = ./controlplane/sqlite/ ./controlplane/postgres/ ./controlplane/internal/storeutil/ \
	./controlplane/scheduling/... ./scheduler/framework/ ./scheduler/model/ ./scheduler/plugins/ \
	./scheduler/sim/ ./agent/... ./controlplane/metricstore/ingest/
test-race:
	$(GO) test -race -count=1 -timeout 20m $(RACE_PKGS)

## test-integrity: metrics integrity under the race detector (concurrent
## PromQL answers; real Prometheus vs our store, embedded and remote mode)
test-integrity:
	$(GO) test -race -count=1 -timeout 10m -run 'TestConcurrentQueries|TestLabelAnswers|TestDifferential' ./controlplane/metricstore/ ./controlplane/metricstore/promapi/

## test-promql-parity: our /prometheus API vs a Prometheus built from the
## module version in go.mod (the first run builds it: minutes; cached after)
test-promql-parity:
	HETEROFLOW_PROMQL_PARITY=1 $(GO) test -count=1 -timeout 60m -v -run TestPromQLParity ./controlplane/metricstore/

test-fuzz:
	./deploy/fuzz-all.sh $(FUZZTIME)

## test-deploy: the all-in-one deploy script end to end into a temporary root
test-deploy:
	HETEROFLOW_BIN=$(CURDIR)/$(BIN) ./deploy/test-deploy-agent.sh

test-web:
	@if [ -f web/package.json ]; then cd web && HETEROFLOW_BIN=$(CURDIR)/$(BIN) npm test; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin web/dist/assets web/dist/index.html
