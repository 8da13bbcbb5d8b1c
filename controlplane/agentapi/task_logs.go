package agentapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

type taskLogJSON struct {
	TaskID  int64  `json:"task_id"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"`
	Offset  int64  `json:"offset"` // where Data starts
	Next    int64  `json:"next"`   // offset to ask for next (follow mode)
	Data    string `json:"data"`
}

// taskLogs serves a task's shipped output: ?stream=stdout|stderr
// &attempt=N (default: the current one) &offset=B. Who may read them is
// httpapi.TaskLogsVisible.
func (s *Service) taskLogs(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("task id must be an integer"))
		return
	}
	t, err := httpapi.LoadVisibleTask(r.Context(), s.store, id, true)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	q := r.URL.Query()
	out := taskLogJSON{TaskID: id, Attempt: t.Attempt, Stream: q.Get("stream")}
	if out.Stream == "" {
		out.Stream = "stdout"
	}
	if out.Stream != "stdout" && out.Stream != "stderr" {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("stream must be stdout or stderr"))
		return
	}
	if v := q.Get("attempt"); v != "" {
		if out.Attempt, err = strconv.Atoi(v); err != nil || out.Attempt < 0 {
			httpapi.WriteError(w, r, s.log, controlplane.Invalidf("attempt must be a non-negative integer"))
			return
		}
	}
	if v := q.Get("offset"); v != "" {
		if out.Offset, err = strconv.ParseInt(v, 10, 64); err != nil || out.Offset < 0 {
			httpapi.WriteError(w, r, s.log, controlplane.Invalidf("offset must be a non-negative integer"))
			return
		}
	}
	chunks, err := s.store.ReadTaskLogs(r.Context(), id, out.Attempt, out.Stream, out.Offset, 256)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	var b strings.Builder
	next := out.Offset
	for _, c := range chunks {
		if c.Offset > next && b.Len() > 0 {
			break // a gap (chunk not shipped yet): stop at contiguous data
		}
		if c.Offset > next {
			next = c.Offset // older bytes were rotated away on the node
			out.Offset = c.Offset
		}
		skip := next - c.Offset
		if skip < int64(len(c.Data)) {
			b.Write(c.Data[skip:])
			next = c.Offset + int64(len(c.Data))
		}
	}
	out.Data, out.Next = b.String(), next
	writeJSON(w, http.StatusOK, out)
}
