package oidcauth

import "testing"

// TestSafeReturnStaysOnSite: the return path after a sign-in is a path of
// this site whatever the link carried, including the forms browsers turn
// into another host (a tab or newline is dropped before the URL is
// parsed, a backslash read as a slash).
func TestSafeReturnStaysOnSite(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "/",
		"/tasks?state=running":   "/tasks?state=running",
		"/nodes/n-1#devices":     "/nodes/n-1#devices",
		"https://evil.example/":  "/",
		"evil.example":           "/",
		"//evil.example":         "/",
		"/\\evil.example":        "/",
		"/\t/evil.example":       "/",
		"/\n/evil.example":       "/",
		"/\r\n/evil.example":     "/",
		"/\t\\evil.example":      "/",
		"/tasks\x00":             "/",
		"/\x7f/evil.example":     "/",
		"/%2F%2Fevil.example/ok": "/%2F%2Fevil.example/ok",
	} {
		if got := SafeReturn(in); got != want {
			t.Errorf("SafeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}
