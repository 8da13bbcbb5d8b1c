package notify_test

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// smtpServer is a minimal SMTP receiver (RFC 5321 happy path) recording
// the envelope and the message.
type smtpServer struct {
	addr string
	mu   sync.Mutex
	rcpt []string
	data string
}

func startSMTP(t *testing.T) *smtpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	s := &smtpServer{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	say("220 test ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250-test\r\n250 8BITMIME")
		case strings.HasPrefix(cmd, "MAIL FROM"):
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO"):
			s.mu.Lock()
			s.rcpt = append(s.rcpt, strings.TrimSpace(line[len("RCPT TO:"):]))
			s.mu.Unlock()
			say("250 ok")
		case cmd == "DATA":
			say("354 go ahead")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil || l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			s.mu.Lock()
			s.data = b.String()
			s.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

// TestEmail: an alert is mailed through SMTP to every recipient with a
// bilingual subject and body.
func TestEmail(t *testing.T) {
	srv := startSMTP(t)
	f := newFixture(t)
	ch := &controlplane.NotifyChannel{Name: "mail", Type: controlplane.ChannelEmail, Enabled: true,
		Config: map[string]string{"smtp_host": srv.addr, "from": "heteroflow@example.com", "to": "ops@example.com, oncall@example.com"}}
	f.fire(ch)
	n, err := f.w.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n, "%+v", f.notifications(ch))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Equal(t, []string{"<ops@example.com>", "<oncall@example.com>"}, srv.rcpt)
	require.Contains(t, srv.data, "Subject: =?utf-8?q?[ERROR]_GPUHighLoad_")
	require.Contains(t, srv.data, "节点 gpu-1 的 GPU 0 负载饱和 99%")
	require.Contains(t, srv.data, "GPU 0 on gpu-1 saturated at 99%")
}
