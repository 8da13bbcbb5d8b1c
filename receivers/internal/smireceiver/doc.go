// Package smireceiver is what the eleven vendor receivers have in common: the
// config (collection interval, timeout, tool path override, environment),
// the factory and the exec runner. Each receivers/<x>receiver package is a
// thin shell around it carrying its own type, stability and metadata.yaml,
// as the collector-contrib layout expects.
package smireceiver
