// Package web embeds the built console (web/dist, produced by `make build`
// with Vite) so that the heteroflow binary serves it without extra files.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built console's files rooted at dist/. When the console has
// not been built, it holds only .keep and Built reports false.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // programmer error: the embed pattern above guarantees dist/
	}
	return sub
}

// Built reports whether the embedded console contains an index.html.
func Built() bool {
	_, err := fs.Stat(Dist(), "index.html")
	return err == nil
}
