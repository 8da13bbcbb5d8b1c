package postgres

// InsertTasks exposes the batch write function of CreateTask's group commit
// to the external tests, which drive it through their own GroupCommit to
// control how batches form.
var InsertTasks = (*DB).insertTasks
