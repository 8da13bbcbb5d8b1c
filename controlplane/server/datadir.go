package server

import (
	"fmt"
	"log/slog"
	"os"
)

// secureDataDir creates the data directory with mode 0700, or narrows an
// existing one to 0700: it holds the database, the JWT signing key, the
// agent CA's key and the metrics, none of which other local accounts may
// read. Files are created 0600 (the server sets umask 077; the SQLite store
// and the key file also set their modes themselves).
func secureDataDir(dir string, log *slog.Logger) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("restrict data directory %s to 0700: %w", dir, err)
		}
		log.Warn("restricted data directory to its owner", "dir", dir, "was", st.Mode().Perm().String())
	}
	return nil
}
