package notify

import (
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// sendEmail sends m through the channel's SMTP server (net/smtp: STARTTLS
// when the server offers it; PLAIN authentication when a username is set).
// Config: smtp_host (host:port), from, to (comma-separated), username,
// password.
func sendEmail(c *controlplane.NotifyChannel, m Message, now time.Time) error {
	host := c.Config["smtp_host"]
	var to []string
	for _, t := range strings.Split(c.Config["to"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			to = append(to, t)
		}
	}
	var auth smtp.Auth
	if u := c.Config["username"]; u != "" {
		h, _, err := net.SplitHostPort(host)
		if err != nil {
			return err
		}
		auth = smtp.PlainAuth("", u, c.Config["password"], h)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", c.Config["from"])
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(to, ", "))
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", m.title()))
	fmt.Fprintf(&b, "Date: %s\r\n", now.UTC().Format(time.RFC1123Z))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(m.text(), "\n", "\r\n"))
	return smtp.SendMail(host, auth, c.Config["from"], to, []byte(b.String()))
}
