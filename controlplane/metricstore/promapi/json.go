package promapi

import (
	"encoding/json"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/jsonutil"
)

// resultJSON encodes a query result exactly as Prometheus' HTTP API does
// (web/api/v1's jsoniter codec over util/jsonutil): sample values switch to
// exponent notation below 1e-6 and from 1e21 on ("1e+300", not 301
// digits), timestamps are seconds with millisecond decimals. The engine's
// own MarshalJSON methods always write plain decimals, so clients comparing
// with Prometheus would see different text for the same number.
type resultJSON struct{ v parser.Value }

func (r resultJSON) MarshalJSON() ([]byte, error) {
	switch v := r.v.(type) {
	case promql.Vector:
		stream := jsoniter.ConfigCompatibleWithStandardLibrary.BorrowStream(nil)
		defer jsoniter.ConfigCompatibleWithStandardLibrary.ReturnStream(stream)
		stream.WriteArrayStart()
		for i, s := range v {
			if i > 0 {
				stream.WriteMore()
			}
			writeSample(stream, s)
		}
		stream.WriteArrayEnd()
		return finish(stream)
	case promql.Matrix:
		stream := jsoniter.ConfigCompatibleWithStandardLibrary.BorrowStream(nil)
		defer jsoniter.ConfigCompatibleWithStandardLibrary.ReturnStream(stream)
		stream.WriteArrayStart()
		for i, s := range v {
			if i > 0 {
				stream.WriteMore()
			}
			writeSeries(stream, s)
		}
		stream.WriteArrayEnd()
		return finish(stream)
	default:
		// Scalars and strings: Prometheus uses their own MarshalJSON too.
		return json.Marshal(r.v)
	}
}

func finish(stream *jsoniter.Stream) ([]byte, error) {
	if stream.Error != nil {
		return nil, stream.Error
	}
	// The stream's buffer goes back to its pool: copy it out.
	return append([]byte(nil), stream.Buffer()...), nil
}

func writeLabels(stream *jsoniter.Stream, ls labels.Labels) {
	stream.WriteObjectStart()
	i := 0
	ls.Range(func(l labels.Label) {
		if i > 0 {
			stream.WriteMore()
		}
		i++
		stream.WriteString(l.Name)
		stream.WriteRaw(`:`)
		stream.WriteString(l.Value)
	})
	stream.WriteObjectEnd()
}

func writeSample(stream *jsoniter.Stream, s promql.Sample) {
	stream.WriteObjectStart()
	stream.WriteObjectField(`metric`)
	writeLabels(stream, s.Metric)
	stream.WriteMore()
	if s.H == nil {
		stream.WriteObjectField(`value`)
	} else {
		stream.WriteObjectField(`histogram`)
	}
	stream.WriteArrayStart()
	jsonutil.MarshalTimestamp(s.T, stream)
	stream.WriteMore()
	if s.H == nil {
		jsonutil.MarshalFloat(s.F, stream)
	} else {
		jsonutil.MarshalHistogram(s.H, stream)
	}
	stream.WriteArrayEnd()
	stream.WriteObjectEnd()
}

func writeSeries(stream *jsoniter.Stream, s promql.Series) {
	stream.WriteObjectStart()
	stream.WriteObjectField(`metric`)
	writeLabels(stream, s.Metric)
	for i, p := range s.Floats {
		stream.WriteMore()
		if i == 0 {
			stream.WriteObjectField(`values`)
			stream.WriteArrayStart()
		}
		stream.WriteArrayStart()
		jsonutil.MarshalTimestamp(p.T, stream)
		stream.WriteMore()
		jsonutil.MarshalFloat(p.F, stream)
		stream.WriteArrayEnd()
	}
	if len(s.Floats) > 0 {
		stream.WriteArrayEnd()
	}
	for i, p := range s.Histograms {
		stream.WriteMore()
		if i == 0 {
			stream.WriteObjectField(`histograms`)
			stream.WriteArrayStart()
		}
		stream.WriteArrayStart()
		jsonutil.MarshalTimestamp(p.T, stream)
		stream.WriteMore()
		jsonutil.MarshalHistogram(p.H, stream)
		stream.WriteArrayEnd()
	}
	if len(s.Histograms) > 0 {
		stream.WriteArrayEnd()
	}
	stream.WriteObjectEnd()
}
