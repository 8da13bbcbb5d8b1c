package notify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts/alerttest"
	"github.com/heteroflow/heteroflow/controlplane"
)

// TestAlertmanager: firing and resolved notifications reach a real
// Alertmanager through its v2 API, which forwards them to its receiver.
func TestAlertmanager(t *testing.T) {
	am := alerttest.Start(t)
	f := newFixture(t)
	ch := &controlplane.NotifyChannel{Name: "am", Type: controlplane.ChannelAlertmanager, Enabled: true, SendResolved: true,
		Config: map[string]string{"url": am.URL}}
	a := f.fire(ch)
	n, err := f.w.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got := am.Wait(t, 15*time.Second, func(a []alerttest.Alert) bool { return len(a) > 0 })
	require.Equal(t, "firing", got[0].Status)
	require.Equal(t, "GPUHighLoad", got[0].Labels["alertname"])
	require.Equal(t, "gpu-1", got[0].Labels["host_name"])
	require.Equal(t, "GPU 0 on gpu-1 saturated at 99%", got[0].Annotations["summary"])

	_, err = f.store.ResolveAlert(t.Context(), a.ID, "", "condition cleared", time.Now(), []int64{ch.ID})
	require.NoError(t, err)
	f.now = time.Now().Add(time.Minute)
	n, err = f.w.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n, "%+v", f.notifications(ch)[0])
	am.Wait(t, 15*time.Second, func(a []alerttest.Alert) bool { return len(a) > 0 && a[len(a)-1].Status == "resolved" })
}
