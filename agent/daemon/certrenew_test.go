//go:build unix

package daemon_test

import (
	"crypto/x509"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// TestAgentRenewsCertificateAndRevokedNodeIsRefused runs the real agent
// against a server signing 6-second certificates, with agent certificates
// required: the agent renews its own several times without enrolling
// again and keeps heartbeating past the first certificate's expiry. Then
// the node is revoked: its certificate is refused on the next request and
// a long-poll waiting with it is answered 401 at once.
func TestAgentRenewsCertificateAndRevokedNodeIsRefused(t *testing.T) {
	e := startMTLS(t, func(c *server.TLSConfig) { c.AgentCertValidity = server.Duration(6 * time.Second) })
	agentDir := filepath.Join(e.dir, "agent")
	e.runAgent(agentDir)
	call, send, admin := e.call, e.send, e.admin

	type nodeList struct {
		Items []struct {
			ID            string     `json:"id"`
			LastHeartbeat *time.Time `json:"last_heartbeat"`
		} `json:"items"`
	}
	var nodes nodeList
	require.Eventually(t, func() bool {
		call("GET", "/api/v1/nodes", admin, "", &nodes)
		return len(nodes.Items) == 1 && nodes.Items[0].LastHeartbeat != nil
	}, 20*time.Second, 100*time.Millisecond)
	nodeID := nodes.Items[0].ID
	var (
		creds credentials.Credentials
		err   error
	)
	require.Eventually(t, func() bool {
		creds, err = credentials.Load(agentDir)
		return err == nil // written just after the server enrolled the node
	}, 10*time.Second, 50*time.Millisecond)
	leafOf := func() *x509.Certificate {
		c, _, err := credentials.LoadCert(agentDir)
		require.NoError(t, err)
		l, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return l
	}
	first := leafOf()
	require.WithinDuration(t, time.Now().Add(6*time.Second), first.NotAfter, 3*time.Second, "the configured short life")

	// Past the first certificate's end, two renewals later, the node still
	// heartbeats, with the same identity and API key: no re-enrolment.
	serials := map[string]bool{first.SerialNumber.String(): true}
	deadline := first.NotAfter.Add(8 * time.Second)
	for time.Now().Before(deadline) {
		serials[leafOf().SerialNumber.String()] = true
		time.Sleep(200 * time.Millisecond)
	}
	require.GreaterOrEqual(t, len(serials), 3, "renewed at two thirds of each life")
	cur := leafOf()
	require.Equal(t, nodeID, cur.Subject.CommonName)
	require.True(t, cur.NotAfter.After(first.NotAfter))
	call("GET", "/api/v1/nodes", admin, "", &nodes)
	require.Len(t, nodes.Items, 1, "no second node: the agent never enrolled again")
	require.True(t, nodes.Items[0].LastHeartbeat.After(first.NotAfter), "heartbeats continue after the first certificate expired")
	again, err := credentials.Load(agentDir)
	require.NoError(t, err)
	require.Equal(t, creds, again, "the node's credential is unchanged")

	// Revocation: a long-poll waiting with the node's certificate ends at
	// once, and the next request with it is refused.
	nodeCert, _, err := credentials.LoadCert(agentDir)
	require.NoError(t, err)
	asNode := e.client(&nodeCert)
	code, raw := send(asNode, "POST", "/api/v1/agents/heartbeat", "", `{}`)
	require.NotEqual(t, http.StatusUnauthorized, code, "the node's certificate works before revocation: %s", raw)
	polled := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", e.base+"/api/v1/agents/assignments?wait=30s", nil)
		res, err := asNode.Do(req)
		if err != nil {
			polled <- 0
			return
		}
		res.Body.Close()
		polled <- res.StatusCode
	}()
	time.Sleep(300 * time.Millisecond) // the poll is waiting
	revokedAt := time.Now()
	call("POST", "/api/v1/nodes/"+nodeID+"/revoke", admin, "", nil)
	select {
	case c := <-polled:
		require.Equal(t, http.StatusUnauthorized, c, "the open long-poll is answered 401")
		require.Less(t, time.Since(revokedAt), 3*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the long-poll of a revoked node is still open")
	}
	code, raw = send(asNode, "POST", "/api/v1/agents/heartbeat", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, code, "refused on the first request after revocation: %s", raw)
	require.Contains(t, string(raw), "revoked")
	code, _ = send(asNode, "POST", "/api/v1/agents/certificate", "", `{"csr":"x"}`)
	require.Equal(t, http.StatusUnauthorized, code, "a revoked node cannot renew either")
	var node struct {
		Cordoned bool `json:"cordoned"`
	}
	call("GET", "/api/v1/nodes/"+nodeID, admin, "", &node)
	require.True(t, node.Cordoned, "a revoked node takes no new tasks")
}
