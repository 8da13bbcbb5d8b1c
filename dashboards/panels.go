package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the $datasource variable every panel and query uses.
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// Grafana units.
const (
	unitRatio   = "percentunit" // 0..1 shown as %
	unitBytes   = "bytes"
	unitCelsius = "celsius"
	unitWatts   = "watt"
	unitSeconds = "s"
	unitOps     = "ops"
	unitReqs    = "reqps"
	unitNone    = "short"
)

// Panel sizes on Grafana's 24-column grid.
const (
	third   = 8
	half    = 12
	full    = 24
	quarter = 6
	tall    = 8
	short   = 4
)

// q is one PromQL target: a range query, legend from labels.
func q(expr, legend string) cog.Builder[variants.Dataquery] {
	return prometheus.NewDataqueryBuilder().Datasource(datasource).Expr(expr).LegendFormat(legend).Range()
}

// instant is one PromQL target read as a table row per series.
func instant(expr string) cog.Builder[variants.Dataquery] {
	return prometheus.NewDataqueryBuilder().Datasource(datasource).Expr(expr).Instant().Format(prometheus.PromQueryFormatTable)
}

// graph is a time series panel.
func graph(title, desc, unit string, w uint32, targets ...cog.Builder[variants.Dataquery]) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Title(title).Description(desc).Datasource(datasource).Unit(unit).
		Span(w).Height(tall).Targets(refIDs(targets)).FillOpacity(10).NoValue("no data")
}

// single is a stat panel showing the last value.
func single(title, desc, unit string, w uint32, targets ...cog.Builder[variants.Dataquery]) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(desc).Datasource(datasource).Unit(unit).
		Span(w).Height(short).Targets(refIDs(targets)).GraphMode(common.BigValueGraphModeArea).
		ColorMode(common.BigValueColorModeValue).NoValue("no data").
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

// bars is a bar gauge of the last value of each series.
func bars(title, desc, unit string, w uint32, targets ...cog.Builder[variants.Dataquery]) *bargauge.PanelBuilder {
	return bargauge.NewPanelBuilder().Title(title).Description(desc).Datasource(datasource).Unit(unit).
		Span(w).Height(tall).Targets(refIDs(targets)).Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeGradient).NoValue("no data").
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

// grid is a table of instant query results, one row per series.
func grid(title, desc string, w uint32, targets ...cog.Builder[variants.Dataquery]) *table.PanelBuilder {
	return table.NewPanelBuilder().Title(title).Description(desc).Datasource(datasource).
		Span(w).Height(tall).Targets(refIDs(targets)).NoValue("no data").
		// An explicit empty reducer list: Grafana's table reads it as an array.
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{})).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
}

// thresholds colours a value green, then amber and red at the given steps.
func thresholds(amber, red float64) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps([]dashboard.Threshold{
		{Color: "green"}, {Value: cog.ToPtr(amber), Color: "orange"}, {Value: cog.ToPtr(red), Color: "red"}})
}

// refIDs names targets A, B, C… (Grafana needs distinct refIds per panel).
func refIDs(targets []cog.Builder[variants.Dataquery]) []cog.Builder[variants.Dataquery] {
	for i, t := range targets {
		if b, ok := t.(*prometheus.DataqueryBuilder); ok {
			b.RefId(string(rune('A' + i)))
		}
	}
	return targets
}
