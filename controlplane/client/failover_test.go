package client

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// deadURL is a server address nothing listens on (connection refused).
func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// keyRecorder is a server that answers submissions with task 7 and
// records the Idempotency-Key of each.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) handler(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.keys = append(k.keys, r.Header.Get(IdempotencyHeader))
	k.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"id":7,"name":"t"}`))
}

func TestSubmitFailsOverToTheNextServer(t *testing.T) {
	rec := &keyRecorder{}
	live := httptest.NewServer(http.HandlerFunc(rec.handler))
	defer live.Close()
	c, err := New(deadURL(t)+", "+live.URL, nil)
	require.NoError(t, err)
	task, err := c.WithAPIKey("hf_x").SubmitTask(t.Context(), apitypes.TaskSpecJSON{Name: "t", Command: []string{"true"}})
	require.NoError(t, err)
	require.EqualValues(t, 7, task.ID)
	require.Len(t, rec.keys, 1)
	require.Len(t, rec.keys[0], 32, "a generated key is sent")

	// The client stays on the server that answered.
	_, err = c.SubmitTask(t.Context(), apitypes.TaskSpecJSON{Name: "t", Command: []string{"true"}})
	require.NoError(t, err)
	require.Len(t, rec.keys, 2)
	require.NotEqual(t, rec.keys[0], rec.keys[1], "a new key per submission")
}

// A server that takes the request and dies before answering: the retry
// goes to the next server with the same key, so the server side can
// answer the task the first attempt may have created.
func TestSubmitRetriesWithTheSameKeyAfterALostAnswer(t *testing.T) {
	var (
		mu       sync.Mutex
		lostKeys []string
	)
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lostKeys = append(lostKeys, r.Header.Get(IdempotencyHeader))
		mu.Unlock()
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		_ = conn.Close() // no answer
	}))
	defer dying.Close()
	rec := &keyRecorder{}
	live := httptest.NewServer(http.HandlerFunc(rec.handler))
	defer live.Close()

	c, err := New(dying.URL+","+live.URL, nil)
	require.NoError(t, err)
	_, err = c.WithAPIKey("hf_x").SubmitTaskOnce(t.Context(), apitypes.TaskSpecJSON{Name: "t", Command: []string{"true"}}, "my-key")
	require.NoError(t, err)
	require.Equal(t, []string{"my-key"}, lostKeys)
	require.Equal(t, []string{"my-key"}, rec.keys)
}

// A POST without a key that may have reached a server is not repeated:
// the caller cannot know whether it took effect.
func TestPlainPostIsNotRepeatedAfterALostAnswer(t *testing.T) {
	calls := 0
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		_ = conn.Close()
	}))
	defer dying.Close()
	rec := &keyRecorder{}
	live := httptest.NewServer(http.HandlerFunc(rec.handler))
	defer live.Close()
	c, err := New(dying.URL+","+live.URL, nil)
	require.NoError(t, err)
	err = c.WithAPIKey("hf_x").Do(t.Context(), http.MethodPost, "/api/v1/tasks/1/cancel", nil, nil)
	require.Error(t, err)
	require.Equal(t, 1, calls)
	require.Empty(t, rec.keys)
}

func TestServerListIsValidated(t *testing.T) {
	_, err := New("http://a:1,ftp://b", nil)
	require.ErrorContains(t, err, "ftp://b")
}
