// Package rules holds the shipped Prometheus rule files (*.yml) and their
// promtool unit tests (*_test.yml). The files are embedded in the binary;
// the alert engine applies the user's parameters to them at load.
package rules

import "embed"

// Files are the shipped rule files, without their tests.
//
//go:embed devices.yml platform.yml dcgm.yml billing.yml
var Files embed.FS

// Names lists the shipped rule files in load order.
var Names = []string{"devices.yml", "platform.yml", "dcgm.yml", "billing.yml"}
