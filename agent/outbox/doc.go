// Package outbox is the agent's durable queue of status updates.
//
// Every update gets the next sequence number and is appended as one JSON
// line to a segment file (<first-seq>.jsonl) and fsynced before Append
// returns, so a task's "started"/"succeeded" survives an agent or server
// crash. Run delivers updates in order in batches, backing off
// exponentially while the server is unreachable; the server answers with
// the highest sequence it has applied and ignores sequences it has seen, so
// resending after a lost reply is harmless. The acknowledged sequence is
// kept in a small file written atomically; segments whose entries are all
// acknowledged are deleted.
package outbox
