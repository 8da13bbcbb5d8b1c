package hub

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

type nopSealer struct{}

func (nopSealer) Seal(_ string, plain []byte) string    { return string(plain) }
func (nopSealer) Open(_, sealed string) ([]byte, error) { return []byte(sealed), nil }

// TestForwardRetriesWithTheSameKey: a member whose first answer to a
// submission is lost (502 after it created the task) is asked again with
// the same Idempotency-Key, answers with the task it created, and the hub
// records that one task.
func TestForwardRetriesWithTheSameKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	created := map[string]int64{}
	member := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/health":
			_, _ = w.Write([]byte(`{"status":"ok","version":"1.0.0"}`))
		case "/api/v1/scheduler/summary":
			_, _ = w.Write([]byte(`{"nodes":{"total":1,"online":1},"tasks":{}}`))
		case "/api/v1/slices", "/api/v1/alerts":
			_, _ = w.Write([]byte(`{"items":[],"total":0}`))
		case "/api/v1/billing/report":
			_, _ = w.Write([]byte(`{"period":"month","currency":"CNY","total":{"hours":{},"cost":0}}`))
		case "/api/v1/tasks":
			mu.Lock()
			key := r.Header.Get("Idempotency-Key")
			keys = append(keys, key)
			id, seen := created[key]
			if !seen {
				id = int64(len(created) + 7)
				created[key] = id
			}
			first := len(keys) == 1
			mu.Unlock()
			if first {
				w.WriteHeader(http.StatusBadGateway) // created, but the answer is lost
				return
			}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(apitypes.TaskJSON{ID: id, State: controlplane.TaskSubmitted})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(member.Close)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h, err := New(Options{Store: st, Sealer: nopSealer{}, Config: Config{Timeout: 3 * time.Second}})
	require.NoError(t, err)
	require.NoError(t, st.CreateCluster(t.Context(), &controlplane.MemberCluster{Name: "m", URL: member.URL, APIKeySealed: "k"}))

	out, err := h.Submit(t.Context(), apitypes.HubTaskSubmitJSON{Task: apitypes.TaskSpecJSON{Name: "x", Command: []string{"true"}}},
		Caller{ID: 1, Name: "alice"})
	require.NoError(t, err)
	require.Len(t, keys, 2, "one retry")
	require.NotEmpty(t, keys[0])
	require.Equal(t, keys[0], keys[1], "the retry carries the same key")
	require.Len(t, created, 1, "one task on the member")
	require.EqualValues(t, 7, out.MemberTaskID)
	list, total, err := st.ListForwardedTasks(t.Context(), controlplane.ForwardedFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.EqualValues(t, 7, list[0].MemberTaskID)
}
