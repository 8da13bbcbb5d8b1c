// Command gendashboards writes the HeteroFlow Grafana dashboards as JSON
// files (run by `go generate ./dashboards`).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/heteroflow/heteroflow/dashboards"
)

func main() {
	out := flag.String("out", "json", "directory to write the dashboards into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendashboards:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, b := range dashboards.All() {
		data, err := b.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, b.File), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
