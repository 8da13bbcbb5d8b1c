package forward_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/forward"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
)

// receiver answers the statuses in order (the last one repeats) and keeps
// the last request it decoded.
type receiver struct {
	statuses []int
	calls    atomic.Int32
	last     prompb.WriteRequest
	auth     string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := int(r.calls.Add(1)) - 1
	status := r.statuses[min(n, len(r.statuses)-1)]
	body, _ := io.ReadAll(req.Body)
	raw, err := snappy.Decode(nil, body)
	if err == nil {
		r.last = prompb.WriteRequest{}
		err = r.last.Unmarshal(raw)
	}
	if err != nil || req.Header.Get("Content-Encoding") != "snappy" {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	r.auth = req.Header.Get("Authorization")
	http.Error(w, http.StatusText(status), status)
}

func TestForwarder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		statuses []int
		calls    int32
		err      error
	}{
		{"accepted", []int{http.StatusNoContent}, 1, nil},
		{"retried then accepted", []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusOK}, 3, nil},
		{"down after all attempts", []int{http.StatusInternalServerError}, 3, ingest.ErrUnavailable},
		{"rejected is not retried", []int{http.StatusBadRequest}, 1, ingest.ErrRejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rcv := &receiver{statuses: tc.statuses}
			srv := httptest.NewServer(rcv)
			defer srv.Close()
			fw, err := forward.New(forward.Config{URL: srv.URL, BearerToken: "tok"}, nil)
			require.NoError(t, err)

			app := fw.AppenderV2(t.Context())
			ls := labels.FromStrings("__name__", "up", "node", "a")
			ref, err := app.Append(0, ls, 0, 1000, 1, nil, nil, storage.AOptions{})
			require.NoError(t, err)
			_, err = app.Append(ref, ls, 0, 2000, 2, nil, nil, storage.AOptions{})
			require.NoError(t, err)
			_, err = app.Append(0, labels.FromStrings("__name__", "up", "node", "b"), 0, 1000, 3, nil, nil, storage.AOptions{})
			require.NoError(t, err)
			err = app.Commit()
			require.Equal(t, tc.calls, rcv.calls.Load())
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "Bearer tok", rcv.auth)
			// One TimeSeries per label set, samples grouped in order.
			require.Len(t, rcv.last.Timeseries, 2)
			require.Equal(t, []prompb.Sample{{Timestamp: 1000, Value: 1}, {Timestamp: 2000, Value: 2}}, rcv.last.Timeseries[0].Samples)
		})
	}
}

func TestForwarderConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []forward.Config{
		{URL: ""},
		{URL: "not a url"},
		{URL: "ftp://x/api/v1/write"},
		{URL: "http://x/api/v1/write", Username: "u", BearerToken: "t"},
	} {
		_, err := forward.New(cfg, nil)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestEmptyCommitSendsNothing(t *testing.T) {
	t.Parallel()
	rcv := &receiver{statuses: []int{http.StatusNoContent}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	fw, err := forward.New(forward.Config{URL: srv.URL}, nil)
	require.NoError(t, err)
	require.NoError(t, fw.AppenderV2(t.Context()).Commit())
	require.Zero(t, rcv.calls.Load())
}

// TestAppendedLabelsMayBeReused: a caller that rebuilds its labels in place
// between Appends (labels.ScratchBuilder.Overwrite) must not change what
// the batch sends at Commit.
func TestAppendedLabelsMayBeReused(t *testing.T) {
	t.Parallel()
	rcv := &receiver{statuses: []int{http.StatusNoContent}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	fw, err := forward.New(forward.Config{URL: srv.URL}, nil)
	require.NoError(t, err)
	app := fw.AppenderV2(t.Context())
	var (
		b  labels.ScratchBuilder
		ls labels.Labels
	)
	for i, node := range []string{"aaaa", "bbbb", "cccc"} {
		b.Reset()
		b.Add("__name__", "m")
		b.Add("node", node)
		b.Overwrite(&ls) // same buffer each time: the previous series' bytes are overwritten
		_, err := app.Append(0, ls, 0, int64(i), float64(i), nil, nil, storage.AOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	var got []string
	for _, ts := range rcv.last.Timeseries {
		for _, l := range ts.Labels {
			if l.Name == "node" {
				got = append(got, l.Value)
			}
		}
	}
	require.Equal(t, []string{"aaaa", "bbbb", "cccc"}, got)
}
