package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

func TestCompatible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1.4.2", "1.4.0", true},
		{"v1.4.2", "1.4.9-rc1", true},
		{"1.4.0", "1.5.0", false},
		{"2.4.0", "1.4.0", false},
		{"dev", "dev", true},
		{"dev", "1.4.0", false},
	} {
		require.Equal(t, c.want, compatible(c.a, c.b), "%s vs %s", c.a, c.b)
	}
}

func dev(vendor, model string, free int, allocMiB int64, state string) apitypes.DeviceSlicesJSON {
	return apitypes.DeviceSlicesJSON{Online: true, Vendor: vendor, Model: model, MemoryMiB: 80000, AllocatedMiB: allocMiB,
		FreePercent: free, State: state}
}

func TestScore(t *testing.T) {
	t.Parallel()
	st := func(queue int, frag float64, devs ...apitypes.DeviceSlicesJSON) *memberState {
		return &memberState{summary: apitypes.ClusterSummaryJSON{QueueDepth: queue, Fragmentation: frag, NodesOnline: 1, NodesTotal: 1},
			devices: devs}
	}
	whole := demandOf(apitypes.TaskSpecJSON{DeviceCount: 1, Vendor: "nvidia"})
	for _, c := range []struct {
		name string
		d    demand
		cand candidate
		want apitypes.ClusterScoreJSON
	}{
		// 2 of 2 free, empty queue, no fragmentation: 100 × (0.6 + 0.3 + 0.1).
		{"all free", whole, candidate{name: "a", state: st(0, 0, dev("nvidia", "H100", 100, 0, "free"), dev("nvidia", "H100", 100, 0, "free"))},
			apitypes.ClusterScoreJSON{Cluster: "a", Score: 100, Fits: 2, Matching: 2}},
		// 1 of 2 free, 1 queued, half fragmented: 100 × (0.6×0.5 + 0.3×0.5 + 0.1×0.5) = 50.
		{"half", whole, candidate{name: "b", state: st(1, 0.5, dev("nvidia", "H100", 100, 0, "free"), dev("nvidia", "H100", 0, 80000, "allocated"))},
			apitypes.ClusterScoreJSON{Cluster: "b", Score: 50, Fits: 1, Matching: 2, QueueDepth: 1}},
		// None free now: waits, ranked by queue alone, below 1: 0.99 × 1/(1+3).
		{"busy", whole, candidate{name: "c", state: st(3, 0, dev("nvidia", "H100", 0, 80000, "allocated"))},
			apitypes.ClusterScoreJSON{Cluster: "c", Score: 0.25, Matching: 1, QueueDepth: 3, Reason: reasonBusy}},
		{"other vendor", whole, candidate{name: "d", state: st(0, 0, dev("ascend", "910B", 100, 0, "free"))},
			apitypes.ClusterScoreJSON{Cluster: "d", Score: -1, Reason: reasonNoDevices}},
		// Silver at 50 % fits a half-used device; Gold does not.
		{"silver share", demandOf(apitypes.TaskSpecJSON{DeviceCount: 1, ComputePercent: 50, MemoryMiB: 1000, QoS: "silver"}),
			candidate{name: "e", state: st(0, 0, dev("nvidia", "H100", 50, 40000, "fragmented"))},
			apitypes.ClusterScoreJSON{Cluster: "e", Score: 100, Fits: 1, Matching: 1}},
		{"gold whole", demandOf(apitypes.TaskSpecJSON{DeviceCount: 1, ComputePercent: 50, QoS: "gold"}),
			candidate{name: "f", state: st(0, 0, dev("nvidia", "H100", 50, 40000, "fragmented"))},
			apitypes.ClusterScoreJSON{Cluster: "f", Score: 0.99, Matching: 1, Reason: reasonBusy}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, score(c.d, c.cand))
		})
	}
	cpu := demandOf(apitypes.TaskSpecJSON{})
	offline := &memberState{summary: apitypes.ClusterSummaryJSON{NodesTotal: 2}}
	require.Equal(t, apitypes.ClusterScoreJSON{Cluster: "g", Score: 0.99, Matching: 2, Reason: reasonBusy}, score(cpu, candidate{name: "g", state: offline}),
		"CPU only, every node offline: it would wait")
	require.Equal(t, -1.0, score(cpu, candidate{name: "h", state: &memberState{}}).Score, "no nodes at all")
	down := score(whole, candidate{name: "x", err: errors.New("refused")})
	require.Equal(t, -1.0, down.Score)
	require.Contains(t, down.Reason, "unreachable: refused")
}

func TestStripClusterMatchers(t *testing.T) {
	t.Parallel()
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(`sum(rate(x{cluster=~"east|west",job="a"}[5m])) / y{cluster!="west"}`)
	require.NoError(t, err)
	ms := stripClusterMatchers(expr)
	require.Len(t, ms, 2)
	require.Equal(t, `sum(rate(x{job="a"}[5m])) / y`, expr.String())
	require.True(t, matchesAll(ms, "east"))
	require.False(t, matchesAll(ms, "west"))
	require.False(t, matchesAll(ms, "north"))

	out, err := withCluster(json.RawMessage(`{"metric":{"__name__":"up"},"value":[1,"1"]}`), "east")
	require.NoError(t, err)
	require.JSONEq(t, `{"metric":{"__name__":"up","cluster":"east"},"value":[1,"1"]}`, string(out))
}

// TestTLSPins: a member's certificate is trusted by its CA or its
// fingerprint when pinned, and refused with the TLS code otherwise.
func TestTLSPins(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":1,"username":"admin","role":"admin"}`))
	}))
	t.Cleanup(srv.Close)
	cert := srv.Certificate()
	sum := sha256.Sum256(cert.Raw)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	fp, err := normalizeFingerprint(hex.EncodeToString(sum[:]))
	require.NoError(t, err)
	call := func(p pin) error {
		c, tr, err := dial(srv.URL, "k", p, 3*time.Second)
		require.NoError(t, err)
		defer tr.CloseIdleConnections()
		_, err = c.Me(t.Context())
		if err != nil {
			return memberError(err, "m", srv.URL)
		}
		return nil
	}
	require.NoError(t, call(pin{caPEM: caPEM}))
	require.NoError(t, call(pin{fingerprint: fp}))
	var ce *controlplane.CodedError
	err = call(pin{})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, CodeTLSUntrusted, ce.Code, err.Error())
	wrong := sha256.Sum256([]byte("other"))
	err = call(pin{fingerprint: hex.EncodeToString(wrong[:])})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, CodeTLSUntrusted, ce.Code, err.Error())
	_, err = normalizeFingerprint("zz")
	require.ErrorAs(t, err, &ce)
	_, err = pin{caPEM: "not a pem"}.tlsConfig()
	require.ErrorAs(t, err, &ce)
	require.Equal(t, CodeCAInvalid, ce.Code)
}

// TestCheckURLRefusesCredentials: a member's URL is shown to every user
// of the hub (GET /clusters), so one carrying a user and password is
// refused; the API key is the member's only credential.
func TestCheckURLRefusesCredentials(t *testing.T) {
	for _, bad := range []string{"https://hub:s3cret@east.example:3333", "http://user@east.example", "ftp://east.example",
		"https://east.example/?key=1", "https://east.example/#x", "east.example"} {
		_, err := checkURL(bad)
		require.Error(t, err, bad)
	}
	got, err := checkURL(" https://east.example:3333/ ")
	require.NoError(t, err)
	require.Equal(t, "https://east.example:3333", got)
}
