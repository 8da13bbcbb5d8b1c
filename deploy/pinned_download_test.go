package deploy

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeAgent stands in for the downloaded binary: it answers `version` and
// exits on anything else, so the script gets past the download and stops
// at the health check (step 5) without a control plane.
const fakeAgent = "#!/bin/sh\n[ \"$1\" = version ] && { echo heteroflow-pinned-test; exit 0; }\nexit 1\n"

// With a self-signed https console, the deploy script downloads the agent
// only when the server's key matches --server-pubkey-pin (or
// HETEROFLOW_SERVER_PUBKEY_PIN): no pin and a wrong pin both fail step 3.
func TestDeployScriptPinnedDownloadSelfSigned(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	var downloads atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/downloads/heteroflow-linux-") {
			http.NotFound(w, r)
			return
		}
		downloads.Add(1)
		_, _ = w.Write([]byte(fakeAgent))
	}))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().RawSubjectPublicKeyInfo)
	pin := "sha256//" + base64.StdEncoding.EncodeToString(sum[:])
	other := sha256.Sum256([]byte("another key"))
	wrongPin := "sha256//" + base64.StdEncoding.EncodeToString(other[:])

	for _, tc := range []struct {
		name      string
		args, env []string
		exit      int
		out       string
		downloads int32
	}{
		{name: "right pin downloads", args: []string{"--server-pubkey-pin", pin}, exit: 15, out: "heteroflow-pinned-test", downloads: 1},
		{name: "pin from the environment", env: []string{"HETEROFLOW_SERVER_PUBKEY_PIN=" + pin}, exit: 15, out: "heteroflow-pinned-test", downloads: 1},
		{name: "wrong pin fails the download", args: []string{"--server-pubkey-pin", wrongPin}, exit: 13, out: "step 3 failed"},
		{name: "no pin: the self-signed server is not trusted", exit: 13, out: "step 3 failed"},
		{name: "malformed pin", args: []string{"--server-pubkey-pin", "deadbeef"}, exit: 2, out: "sha256//BASE64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := downloads.Load()
			args := append([]string{"deploy-agent-all-in-one.sh", "--server", srv.URL, "--console", srv.URL,
				"--token", "hfb_test", "--prefix", t.TempDir(), "--no-systemd", "--timeout", "3"}, tc.args...)
			cmd := exec.Command("bash", args...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, tc.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "exit status expected: %v\n%s", err, out)
			require.Equal(t, tc.exit, ee.ExitCode(), "%s", out)
			require.Contains(t, string(out), tc.out)
			if tc.downloads > 0 {
				require.Equal(t, before+tc.downloads, downloads.Load(), "the agent was fetched over the pinned connection")
			} else {
				require.Equal(t, before, downloads.Load(), "nothing was served to an unverified connection")
			}
		})
	}
}
