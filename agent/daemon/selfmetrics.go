package daemon

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/golang/snappy"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
)

// SelfJob is the job label of the agent's own series on the server, beside
// the server's job="heteroflow".
const SelfJob = "heteroflow-agent"

// selfMetrics are the agent's own series, kept in a VictoriaMetrics/metrics
// set (lean: no client_golang registry on the node) and pushed to the
// server's remote-write endpoint after each heartbeat, labelled
// job="heteroflow-agent" and node=<node id>, so they land in the same
// store as the node's device series and appear on the agents dashboard.
type selfMetrics struct {
	set *metrics.Set
}

func newSelfMetrics(a *Agent) *selfMetrics {
	s := metrics.NewSet()
	s.NewGauge("heteroflow_agent_tasks_running", func() float64 {
		a.mu.Lock()
		defer a.mu.Unlock()
		return float64(len(a.tasks))
	})
	s.NewGauge("heteroflow_agent_outbox_pending", func() float64 {
		if a.out == nil {
			return 0
		}
		return float64(a.out.Len())
	})
	return &selfMetrics{set: s}
}

// inc counts one event of name{label="value"} (a fixed, small label set).
func (m *selfMetrics) inc(name, label, value string) {
	if m == nil {
		return
	}
	m.set.GetOrCreateCounter(fmt.Sprintf(`%s{%s=%q}`, name, label, value)).Inc()
}

// writeRequest renders the set and the agent's Go runtime and process
// metrics as one remote-write request stamped now.
func (m *selfMetrics) writeRequest(node string, now time.Time) (*prompb.WriteRequest, error) {
	var buf bytes.Buffer
	m.set.WritePrometheus(&buf)
	metrics.WriteProcessMetrics(&buf)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		return nil, fmt.Errorf("agent metrics: %w", err)
	}
	host, _ := os.Hostname()
	ts := now.UnixMilli()
	wr := &prompb.WriteRequest{}
	add := func(name string, m *dto.Metric, v float64, extra ...string) {
		ls := []prompb.Label{{Name: model.MetricNameLabel, Value: name}, {Name: "job", Value: SelfJob},
			{Name: "instance", Value: host}, {Name: "node", Value: node}}
		for _, l := range m.GetLabel() {
			ls = append(ls, prompb.Label{Name: l.GetName(), Value: l.GetValue()})
		}
		for i := 0; i+1 < len(extra); i += 2 {
			ls = append(ls, prompb.Label{Name: extra[i], Value: extra[i+1]})
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
		wr.Timeseries = append(wr.Timeseries, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: v, Timestamp: ts}}})
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, mt := range families[name].GetMetric() {
			switch {
			case mt.Counter != nil:
				add(name, mt, mt.GetCounter().GetValue())
			case mt.Gauge != nil:
				add(name, mt, mt.GetGauge().GetValue())
			case mt.Untyped != nil:
				add(name, mt, mt.GetUntyped().GetValue())
			case mt.Summary != nil:
				for _, q := range mt.GetSummary().GetQuantile() {
					add(name, mt, q.GetValue(), model.QuantileLabel, fmt.Sprint(q.GetQuantile()))
				}
				add(name+"_sum", mt, mt.GetSummary().GetSampleSum())
				add(name+"_count", mt, float64(mt.GetSummary().GetSampleCount()))
			}
		}
	}
	return wr, nil
}

// pushSelfMetrics sends the agent's own series to the server (remote write
// 1.0 under the agent's key). A failed push is counted and logged at debug:
// the next heartbeat pushes fresh values anyway.
func (a *Agent) pushSelfMetrics(ctx context.Context) {
	if a.self == nil || a.cl == nil {
		return
	}
	err := a.self.push(ctx, a.cl, a.creds.NodeID, time.Now())
	result := "ok"
	if err != nil {
		result = "failed"
		if ctx.Err() == nil {
			a.cfg.Logger.Debug("pushing agent metrics failed", "err", err)
		}
	}
	a.self.inc("heteroflow_agent_metric_pushes_total", "result", result)
}

func (m *selfMetrics) push(ctx context.Context, cl *client, node string, now time.Time) error {
	wr, err := m.writeRequest(node, now)
	if err != nil {
		return err
	}
	raw, err := wr.Marshal()
	if err != nil {
		return err
	}
	hdr := http.Header{"Content-Encoding": {"snappy"}, "Content-Type": {"application/x-protobuf"},
		"X-Prometheus-Remote-Write-Version": {"0.1.0"}}
	res, msg, err := cl.send(ctx, http.MethodPost, "/api/v1/write", snappy.Encode(nil, raw), hdr)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return fmt.Errorf("remote write: %s: %s", res.Status, bytes.TrimSpace(msg[:min(len(msg), 512)]))
	}
	return nil
}
