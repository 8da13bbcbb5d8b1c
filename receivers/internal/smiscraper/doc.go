// Package smiscraper turns one vendor's inventory.Snapshot into hw.gpu.*
// metrics: the scraper every vendor receiver runs.
//
// Three outcomes per scrape, as the receivers promise:
//   - the vendor CLI answered: one data point per known value (unknown values
//     are absent, never 0); per-device problems the parser recorded as
//     Snapshot.Warnings become a partial scrape error, so the other devices
//     still flow;
//   - the vendor is not there (tool missing, driver not loaded): no metrics
//     and no scrape error, but one clear error log, repeated at most every
//     LogEvery while the condition lasts, because a node without that vendor
//     is normal and must not spam the log every 10 s;
//   - anything else (the CLI failed, its output did not parse): a scrape error.
package smiscraper
