package notify_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
)

// TestDeliveryErrorsCarryNoURLSecrets: robots and many webhooks take
// their credential in the URL (DingTalk's access_token, a Slack-style
// path). A delivery error is kept on the notification and shown with the
// alert to everyone who sees it, while the channel's URL is masked, so
// the error names the receiver's host only.
func TestDeliveryErrorsCarryNoURLSecrets(t *testing.T) {
	w := &notify.Worker{Logger: slog.New(slog.DiscardHandler)}
	for _, c := range []*controlplane.NotifyChannel{
		{Name: "ding", Type: controlplane.ChannelDingTalk, Config: map[string]string{"url": "http://127.0.0.1:1/robot/send?access_token=tok-SECRET-1", "secret": "SEC-2"}},
		{Name: "hook", Type: controlplane.ChannelWebhook, Config: map[string]string{"url": "http://user:PASS-3@127.0.0.1:1/services/T0/B0/PATH-SECRET-4"}},
	} {
		err := w.SendTest(context.Background(), c)
		require.Error(t, err, c.Name)
		for _, secret := range []string{"SECRET", "SEC-2", "PASS-3", "sign="} {
			require.False(t, strings.Contains(err.Error(), secret), "%s: %v", c.Name, err)
		}
		require.Contains(t, err.Error(), "127.0.0.1:1", "the error still names the receiver")
	}
}
