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

// hubWithMember is a hub on a fresh store with one member, "m": a fake
// member server that answers the summary reads a placement makes (one
// node, nothing allocated) and hands every other request to tasks.
func hubWithMember(t *testing.T, tasks http.HandlerFunc) (*Hub, *sqlite.DB) {
	t.Helper()
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
		default:
			tasks(w, r)
		}
	}))
	t.Cleanup(member.Close)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h, err := New(Options{Store: st, Sealer: nopSealer{}, Config: Config{Timeout: 3 * time.Second}})
	require.NoError(t, err)
	require.NoError(t, st.CreateCluster(t.Context(), &controlplane.MemberCluster{Name: "m", URL: member.URL, APIKeySealed: "k"}))
	return h, st
}

// TestForwardRetriesWithTheSameKey: a member whose first answer to a
// submission is lost (502 after it created the task) is asked again with
// the same Idempotency-Key, answers with the task it created, and the hub
// records that one task.
func TestForwardRetriesWithTheSameKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	created := map[string]int64{}
	h, st := hubWithMember(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
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
	})

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

// TestSubmitOnceWithTheCallersKey: a submission with the caller's key
// that is retried while the first is still forwarding is refused as in
// progress (nothing second is forwarded); once the first has its member
// task, the retry is answered with it; another request under the key is
// refused; other callers' keys are their own.
func TestSubmitOnceWithTheCallersKey(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 8), make(chan struct{})
	var mu sync.Mutex
	forwards := 0
	h, _ := hubWithMember(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/tasks":
			mu.Lock()
			forwards++
			id := int64(100 + forwards)
			mu.Unlock()
			arrived <- struct{}{}
			<-release
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(apitypes.TaskJSON{ID: id, State: controlplane.TaskSubmitted})
		case "/api/v1/tasks/101":
			_ = json.NewEncoder(w).Encode(apitypes.TaskJSON{ID: 101, State: controlplane.TaskQueued})
		default:
			http.NotFound(w, r)
		}
	})
	in := apitypes.HubTaskSubmitJSON{Task: apitypes.TaskSpecJSON{Name: "x", Command: []string{"true"}}}
	alice, key := Caller{ID: 1, Name: "alice"}, &controlplane.SubmitKey{Key: "k-1", Hash: "h1"}

	type result struct {
		out      *apitypes.HubTaskJSON
		replayed bool
		err      error
	}
	first := make(chan result, 1)
	go func() {
		out, replayed, err := h.SubmitOnce(t.Context(), in, alice, key)
		first <- result{out, replayed, err}
	}()
	select {
	case <-arrived:
	case r := <-first:
		t.Fatalf("the first submission ended before reaching the member: %+v", r)
	}
	_, _, err := h.SubmitOnce(t.Context(), in, alice, key)
	var ce *controlplane.CodedError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "idempotency_key_in_progress", ce.Code)
	close(release)
	r := <-first
	require.NoError(t, r.err)
	require.False(t, r.replayed)
	require.EqualValues(t, 101, r.out.MemberTaskID)

	out, replayed, err := h.SubmitOnce(t.Context(), in, alice, key)
	require.NoError(t, err)
	require.True(t, replayed)
	require.Equal(t, r.out.ID, out.ID)
	require.EqualValues(t, 101, out.MemberTaskID)
	_, _, err = h.SubmitOnce(t.Context(), in, alice, &controlplane.SubmitKey{Key: "k-1", Hash: "h2"})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "idempotency_key_reused", ce.Code)
	mu.Lock()
	require.Equal(t, 1, forwards, "one forward for all of alice's requests")
	mu.Unlock()

	out, replayed, err = h.SubmitOnce(t.Context(), in, Caller{ID: 2, Name: "bob"}, key)
	require.NoError(t, err, "keys are per caller")
	require.False(t, replayed)
	require.NotEqual(t, r.out.ID, out.ID)
}
