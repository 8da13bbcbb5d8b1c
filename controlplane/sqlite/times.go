package sqlite

import (
	"database/sql"
	"time"
)

// Times are stored as INTEGER unix microseconds (UTC).

func ts(t time.Time) int64 { return t.UnixMicro() }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromTS(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullTS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromTS(v.Int64)
	return &t
}

// nullID stores 0 as NULL for optional references.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
