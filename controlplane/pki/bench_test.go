package pki

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/credentials"
)

// BenchmarkSignCSR is the CA's cost per enrollment (parse, verify the CSR
// signature, sign with P-256).
func BenchmarkSignCSR(b *testing.B) {
	ca, err := LoadOrCreate(filepath.Join(b.TempDir(), "pki"))
	require.NoError(b, err)
	_, csr, err := credentials.NewKeyAndCSR("bench")
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ca.SignCSR(csr, "bench-000001"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewKeyAndCSR is the agent's one-time cost at enrollment.
func BenchmarkNewKeyAndCSR(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := credentials.NewKeyAndCSR("bench"); err != nil {
			b.Fatal(err)
		}
	}
}
