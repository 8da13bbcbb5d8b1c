package alertapi

import "net/url"

// urlKey is the channel configuration key of the receiver's address.
const urlKey = "url"

// maskURL keeps a receiver URL's scheme and host, which name the receiver,
// and replaces its user info, path and query, where robots and webhooks
// carry their credential, with the mask. A value that does not parse as
// an absolute URL is masked whole.
func maskURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return masked
	}
	if u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" {
		return u.Scheme + "://" + u.Host + u.Path
	}
	return u.Scheme + "://" + u.Host + "/" + masked
}
