package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// OpenTelemetry's standard variables turn tracing on: spans are exported
// over OTLP/HTTP only when an endpoint is set. Without one the global
// tracer provider stays a no-op and nothing is recorded.
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"        // e.g. http://otel-collector:4318
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" // e.g. http://tempo:4318/v1/traces
	envTracesExporter     = "OTEL_TRACES_EXPORTER"               // "none" keeps tracing off
)

// StartOTLP installs an OTLP/HTTP trace exporter for service (the server
// or an agent: the heteroflow binary runs both) when one is configured;
// the returned function flushes and stops it.
func StartOTLP(ctx context.Context, service, version string) (func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if os.Getenv(envTracesExporter) == "none" || (os.Getenv(envOTLPEndpoint) == "" && os.Getenv(envOTLPTracesEndpoint) == "") {
		return none, nil
	}
	// The exporter reads the endpoint, headers and TLS from the same
	// OTEL_EXPORTER_OTLP_* variables.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return none, fmt.Errorf("OTLP trace exporter / OTLP 链路导出器: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(version)))
	if err != nil {
		return none, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Install(tp)
	return tp.Shutdown, nil
}
