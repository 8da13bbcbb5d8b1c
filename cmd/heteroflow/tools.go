//go:build tools

// Package main's tools.go pins the modules the whole tree builds on so that
// `go mod tidy` keeps one verified set (see ../shared/spec/DEPENDENCIES.md).
package main

import (
	_ "github.com/VictoriaMetrics/metrics"
	_ "github.com/danielgtaylor/huma/v2"
	_ "github.com/danielgtaylor/huma/v2/adapters/humachi"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/golang-jwt/jwt/v5"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	_ "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter"
	_ "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/hostmetricsreceiver"
	_ "github.com/pressly/goose/v3"
	_ "github.com/prometheus/client_golang/api/prometheus/v1"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/prometheus/model/rulefmt"
	_ "github.com/prometheus/prometheus/promql"
	_ "github.com/prometheus/prometheus/storage/remote"
	_ "github.com/prometheus/prometheus/tsdb"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "go.opentelemetry.io/collector/confmap/provider/envprovider"
	_ "go.opentelemetry.io/collector/confmap/provider/fileprovider"
	_ "go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	_ "go.opentelemetry.io/collector/exporter/debugexporter"
	_ "go.opentelemetry.io/collector/exporter/otlphttpexporter"
	_ "go.opentelemetry.io/collector/otelcol"
	_ "go.opentelemetry.io/collector/processor/batchprocessor"
	_ "go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	_ "go.opentelemetry.io/collector/scraper/scraperhelper"
	_ "go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/crypto/argon2"
	_ "golang.org/x/crypto/bcrypt"
	_ "modernc.org/sqlite"
)
