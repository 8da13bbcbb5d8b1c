package ingest

import (
	"net/http"
	"strings"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// preValidateRemoteWrite checks every series of a remote-write body before
// Prometheus' receiver sees it. The receiver skips series with invalid or
// duplicate label names itself (remote-write 1.0 with a 204, 2.0 storing
// the rest): here such a push is refused whole with 400. Bodies that do not
// decode are left to the receiver, which answers them.
func (v *validator) preValidateRemoteWrite(body []byte, r *http.Request) error {
	if r.Header.Get("Content-Encoding") != "" && r.Header.Get("Content-Encoding") != "snappy" {
		return nil
	}
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil
	}
	b := labels.NewScratchBuilder(0)
	if strings.Contains(r.Header.Get("Content-Type"), "io.prometheus.write.v2.Request") {
		var req writev2.Request
		if req.Unmarshal(raw) != nil {
			return nil
		}
		for _, ts := range req.Timeseries {
			ls, err := ts.ToLabels(&b, req.Symbols)
			if err != nil {
				return nil // the receiver refuses bad symbol references
			}
			if err := v.check(ls); err != nil {
				return err
			}
		}
		return nil
	}
	var req prompb.WriteRequest
	if req.Unmarshal(raw) != nil {
		return nil
	}
	for _, ts := range req.Timeseries {
		if err := v.check(ts.ToLabels(&b, nil)); err != nil {
			return err
		}
	}
	return nil
}
