// Package smireceiver is what the eleven vendor receivers have in common: the
// config (collection interval, timeout, tool path override, environment),
// the factory and the exec runner. Each receivers/<x>receiver package is a
// thin shell around it carrying its own type, stability and metadata.yaml,
// as the collector-contrib layout expects.
//
// The scraper (scraper.go) turns one vendor's inventory.Snapshot into hw.gpu.*
// metrics, with three outcomes per scrape, as the receivers promise:
//   - the vendor CLI answered: one data point per known value (unknown values
//     are absent, never 0); per-device problems the parser recorded as
//     Snapshot.Warnings become a partial scrape error, so the other devices
//     still flow;
//   - the vendor is not there (tool missing, driver not loaded): no metrics
//     and no scrape error, but one clear error log, repeated at most every
//     LogEvery while the condition lasts, because a node without that vendor
//     is normal and must not spam the log every 10 s;
//   - anything else (the CLI failed, its output did not parse): a scrape error.
package smireceiver
