// Package credentials stores the node's permanent credential, received once
// at enrollment, in DATA_DIR/credentials.json with mode 0600. The bootstrap
// token is never stored: after enrollment the agent only needs this file.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// FileName is the credential file inside the agent's data folder.
const FileName = "credentials.json"

// ErrNotEnrolled means there is no credential file yet.
var ErrNotEnrolled = errors.New("not enrolled: no credentials file")

// Credentials identify the node to the server.
type Credentials struct {
	Server     string    `json:"server"`
	NodeID     string    `json:"node_id"`
	APIKey     string    `json:"api_key"`
	EnrolledAt time.Time `json:"enrolled_at"`
	// ServerFingerprint is the SHA-256 of the server certificate pinned at
	// the first enrollment (--server-fingerprint), kept so later starts
	// trust the same self-signed server without the flag.
	ServerFingerprint string `json:"server_fingerprint,omitempty"`
}

// Path returns the credential file path in dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Save writes c atomically with mode 0600 (temp file created 0600, fsync,
// rename), so the key is never readable by others, not even briefly.
func Save(dataDir string, c Credentials) error {
	if c.NodeID == "" || c.APIKey == "" {
		return errors.New("credentials: node id and api key are required")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return writeFile0600(Path(dataDir), b)
}

// Load reads the credential file. Like ssh with private keys, it refuses a
// file that group or others can read: the key may have leaked and the
// operator should know.
func Load(dataDir string) (Credentials, error) {
	var c Credentials
	p := Path(dataDir)
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return c, ErrNotEnrolled
	}
	if err != nil {
		return c, fmt.Errorf("credentials: %w", err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("credentials: %s has mode %o; it must be 0600 (chmod 600 %s)", p, st.Mode().Perm(), p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return c, fmt.Errorf("credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("credentials %s: %w", p, err)
	}
	if c.NodeID == "" || c.APIKey == "" {
		return c, fmt.Errorf("credentials %s: node_id or api_key missing", p)
	}
	return c, nil
}
