package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Headers of the signed generic webhook.
const (
	HeaderTimestamp = "X-HeteroFlow-Timestamp"
	// HeaderSignature is "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)).
	HeaderSignature = "X-HeteroFlow-Signature"
)

// Sign computes the webhook signature of body at ts (unix seconds).
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// CheckConfig validates a channel's configuration for its type.
func CheckConfig(c *controlplane.NotifyChannel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	need := func(keys ...string) error {
		for _, k := range keys {
			if strings.TrimSpace(c.Config[k]) == "" {
				return controlplane.InvalidCode("channel_config_missing", []string{"type", c.Type, "key", k}, "%s channel needs config.%s", c.Type, k)
			}
		}
		return nil
	}
	httpURL := func() error {
		if err := need("url"); err != nil {
			return err
		}
		u, err := url.Parse(c.Config["url"])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return controlplane.InvalidCode("channel_bad_url", []string{"url", c.Config["url"]}, "config.url %q must be an http(s) URL", c.Config["url"])
		}
		return nil
	}
	switch c.Type {
	case controlplane.ChannelEmail:
		if err := need("smtp_host", "from", "to"); err != nil {
			return err
		}
		if !strings.Contains(c.Config["smtp_host"], ":") {
			return controlplane.InvalidCode("channel_bad_smtp_host", nil, "config.smtp_host must be host:port")
		}
		return nil
	default:
		return httpURL()
	}
}

// send delivers m to c.
func send(ctx context.Context, client *http.Client, c *controlplane.NotifyChannel, m Message, now time.Time) error {
	switch c.Type {
	case controlplane.ChannelAlertmanager:
		return postJSON(ctx, client, strings.TrimRight(c.Config["url"], "/")+"/api/v2/alerts", amAlerts(m, now), c, nil, nil)
	case controlplane.ChannelWebhook:
		return sendWebhook(ctx, client, c, m, now)
	case controlplane.ChannelDingTalk:
		return sendDingTalk(ctx, client, c, m, now)
	case controlplane.ChannelWeCom:
		body := map[string]any{"msgtype": "markdown", "markdown": map[string]string{"content": truncate(m.markdown(), 4096)}}
		return postJSON(ctx, client, c.Config["url"], body, c, nil, robotOK("errcode"))
	case controlplane.ChannelFeishu:
		return sendFeishu(ctx, client, c, m, now)
	case controlplane.ChannelEmail:
		return sendEmail(c, m, now)
	}
	return fmt.Errorf("unknown channel type %q", c.Type)
}

// amAlert is one alert of Alertmanager's v2 POST /api/v2/alerts.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       *time.Time        `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

func amAlerts(m Message, now time.Time) []amAlert {
	a := m.Alert
	out := amAlert{Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.FiredAt.UTC(), GeneratorURL: m.link()}
	if m.Kind == controlplane.NotifyResolved {
		end := now.UTC()
		if a.ResolvedAt != nil {
			end = a.ResolvedAt.UTC()
		}
		out.EndsAt = &end
		if end.Before(out.StartsAt) { // clocks of two servers: never refused as end < start
			out.StartsAt = end
		}
	}
	return []amAlert{out}
}

func sendWebhook(ctx context.Context, client *http.Client, c *controlplane.NotifyChannel, m Message, now time.Time) error {
	body, err := json.Marshal(m.webhook())
	if err != nil {
		return err
	}
	hdr := http.Header{}
	if secret := c.Config["secret"]; secret != "" {
		ts := strconv.FormatInt(now.Unix(), 10)
		hdr.Set(HeaderTimestamp, ts)
		hdr.Set(HeaderSignature, Sign(secret, ts, body))
	}
	return post(ctx, client, c.Config["url"], body, c, hdr, nil)
}

// DingTalkSign is DingTalk's robot signature: base64(HMAC-SHA256(secret,
// timestamp + "\n" + secret)), timestamp in milliseconds.
func DingTalkSign(secret string, tsMillis int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(tsMillis, 10) + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func sendDingTalk(ctx context.Context, client *http.Client, c *controlplane.NotifyChannel, m Message, now time.Time) error {
	target := c.Config["url"]
	if secret := c.Config["secret"]; secret != "" {
		u, err := url.Parse(target)
		if err != nil {
			return err
		}
		q := u.Query()
		ts := now.UnixMilli()
		q.Set("timestamp", strconv.FormatInt(ts, 10))
		q.Set("sign", DingTalkSign(secret, ts))
		u.RawQuery = q.Encode()
		target = u.String()
	}
	body := map[string]any{"msgtype": "markdown", "markdown": map[string]string{"title": m.title(), "text": truncate(m.markdown(), 4096)}}
	return postJSON(ctx, client, target, body, c, nil, robotOK("errcode"))
}

// FeishuSign is Feishu/Lark's robot signature: base64(HMAC-SHA256 keyed
// with timestamp + "\n" + secret over an empty message), timestamp in seconds.
func FeishuSign(secret string, tsSeconds int64) string {
	mac := hmac.New(sha256.New, []byte(strconv.FormatInt(tsSeconds, 10)+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func sendFeishu(ctx context.Context, client *http.Client, c *controlplane.NotifyChannel, m Message, now time.Time) error {
	color := "orange"
	switch {
	case m.Kind == controlplane.NotifyResolved:
		color = "green"
	case m.Alert.Level == controlplane.AlertError:
		color = "red"
	case m.Alert.Level == controlplane.AlertInfo:
		color = "blue"
	}
	body := map[string]any{
		"msg_type": "interactive",
		"card": map[string]any{
			"config": map[string]any{"wide_screen_mode": true},
			"header": map[string]any{"template": color, "title": map[string]string{"tag": "plain_text", "content": m.title()}},
			"elements": []any{map[string]any{"tag": "div",
				"text": map[string]string{"tag": "lark_md", "content": truncate(m.markdown(), 4096)}}},
		},
	}
	if secret := c.Config["secret"]; secret != "" {
		ts := now.Unix()
		body["timestamp"] = strconv.FormatInt(ts, 10)
		body["sign"] = FeishuSign(secret, ts)
	}
	return postJSON(ctx, client, c.Config["url"], body, c, nil, feishuOK)
}

// robotOK checks a 200 answer's error code field (DingTalk and WeCom
// answer 200 with {"errcode": n, "errmsg": …}).
func robotOK(field string) func([]byte) error {
	return func(b []byte) error {
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("robot answered %q", truncate(string(b), 200))
		}
		if code, ok := r[field].(float64); ok && code != 0 {
			return fmt.Errorf("robot refused: %s %v: %v", field, code, r["errmsg"])
		}
		return nil
	}
}

// feishuOK checks Feishu's {"code": 0} (older robots: {"StatusCode": 0}).
func feishuOK(b []byte) error {
	var r struct {
		Code       *int   `json:"code"`
		Msg        string `json:"msg"`
		StatusCode *int   `json:"StatusCode"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("robot answered %q", truncate(string(b), 200))
	}
	if r.Code != nil && *r.Code != 0 {
		return fmt.Errorf("robot refused: code %d: %s", *r.Code, r.Msg)
	}
	if r.StatusCode != nil && *r.StatusCode != 0 {
		return fmt.Errorf("robot refused: StatusCode %d", *r.StatusCode)
	}
	return nil
}

func postJSON(ctx context.Context, client *http.Client, target string, v any, c *controlplane.NotifyChannel, hdr http.Header, check func([]byte) error) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return post(ctx, client, target, body, c, hdr, check)
}

func post(ctx context.Context, client *http.Client, target string, body []byte, c *controlplane.NotifyChannel, hdr http.Header, check func([]byte) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("the channel's url is not a valid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "HeteroFlow-Alerts/1")
	for k, v := range hdr {
		req.Header[k] = v
	}
	if u := c.Config["username"]; u != "" {
		req.SetBasicAuth(u, c.Config["password"])
	}
	if tok := c.Config["bearer_token"]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := client.Do(req)
	if err != nil {
		return withoutURL(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, truncate(strings.TrimSpace(string(b)), 300))
	}
	if check != nil {
		return check(b)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// withoutURL drops the request URL from a transport error: robots and
// many webhooks carry their credential in it (an access_token, a secret
// path, a signature), and the error is kept on the notification, which
// everyone who sees the alert reads, while the channel shows the URL
// masked. The receiver's scheme and host stay to name it.
func withoutURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	where := "the receiver"
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		where = u.Scheme + "://" + u.Host
	}
	return fmt.Errorf("%s %s: %w", ue.Op, where, ue.Err)
}
