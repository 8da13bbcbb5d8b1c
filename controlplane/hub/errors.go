package hub

import "github.com/heteroflow/heteroflow/controlplane"

// Stable error codes of the hub (the console translates each).
const (
	CodeUnreachable     = "cluster_unreachable"
	CodeTLSUntrusted    = "cluster_tls_untrusted"
	CodeKeyRejected     = "cluster_key_rejected"
	CodeKeyRole         = "cluster_key_role"
	CodeVersionMismatch = "cluster_version_mismatch"
	CodeURLInvalid      = "cluster_url_invalid"
	CodeCAInvalid       = "cluster_ca_invalid"
	CodeExists          = "cluster_exists"
	CodeNotFound        = "cluster_not_found"
	CodeNoneFits        = "no_cluster_fits"
	CodeNoneAvailable   = "no_cluster_available"
	CodeMemberRefused   = "cluster_refused_task"
)

func invalid(code string, params []string, format string, args ...any) error {
	return controlplane.Coded(controlplane.ErrInvalid, code, params, format, args...)
}
