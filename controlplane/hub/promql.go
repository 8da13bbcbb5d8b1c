package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Cross-cluster PromQL: the hub answers /prometheus/api/v1/query and
// query_range by asking every member (the ones a `cluster` matcher, or a
// cluster=<name> parameter beside the query, selects), adding cluster="<member>" to every series it returns and
// merging the answers. A member that fails leaves a warning, as
// Thanos's partial responses do; all failing is an error.

// ClusterLabel is the label the hub adds to every series.
const ClusterLabel = "cluster"

// promResponse is the Prometheus API's envelope.
type promResponse struct {
	Status    string    `json:"status"`
	Data      *promData `json:"data,omitempty"`
	ErrorType string    `json:"errorType,omitempty"`
	Error     string    `json:"error,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	Infos     []string  `json:"infos,omitempty"`
}

type promData struct {
	ResultType string            `json:"resultType"`
	Result     []json.RawMessage `json:"result"`
}

// promSeries is one vector sample or matrix series; the values are kept
// as they came.
type promSeries map[string]json.RawMessage

// PromQLHandler answers query and query_range (paths /api/v1/query and
// /api/v1/query_range, as mounted under /prometheus).
func (h *Hub) PromQLHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		endpoint := strings.TrimPrefix(r.URL.Path, "/api/v1/")
		if err := r.ParseForm(); err != nil {
			writeProm(w, http.StatusBadRequest, promResponse{Status: "error", ErrorType: "bad_data", Error: err.Error()})
			return
		}
		status, resp := h.fanOut(r.Context(), endpoint, r.Form)
		writeProm(w, status, resp)
	})
}

func writeProm(w http.ResponseWriter, status int, r promResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(r)
}

func badData(format string, a ...any) (int, promResponse) {
	return http.StatusBadRequest, promResponse{Status: "error", ErrorType: "bad_data", Error: fmt.Sprintf(format, a...)}
}

// fanOut runs the query on the selected members and merges the answers.
func (h *Hub) fanOut(ctx context.Context, endpoint string, form map[string][]string) (int, promResponse) {
	q := ""
	if v := form["query"]; len(v) > 0 {
		q = v[0]
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil {
		return badData("invalid parameter \"query\": %v", err)
	}
	selectors := stripClusterMatchers(expr)
	list, err := h.store.ListClusters(ctx)
	if err != nil {
		return http.StatusInternalServerError, promResponse{Status: "error", ErrorType: "internal", Error: err.Error()}
	}
	// The console's cluster switch sends cluster=<name> beside the query.
	only := ""
	if v := form[ClusterLabel]; len(v) > 0 {
		only = v[0]
	}
	var members []*controlplane.MemberCluster
	for _, c := range list {
		if (only == "" || c.Name == only) && matchesAll(selectors, c.Name) {
			members = append(members, c)
		}
	}
	if len(members) == 0 {
		// No member selected: an empty answer of the query's type.
		return http.StatusOK, promResponse{Status: "success", Data: &promData{ResultType: emptyType(expr, endpoint), Result: []json.RawMessage{}}}
	}
	rewritten := expr.String()
	out := make([]struct {
		status int
		body   []byte
		err    error
	}, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := h.client(m)
			if err != nil {
				out[i].err = err
				return
			}
			f := make(map[string][]string, len(form))
			for k, v := range form {
				if k != ClusterLabel {
					f[k] = v
				}
			}
			f["query"] = []string{rewritten}
			cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
			defer cancel()
			out[i].status, out[i].body, out[i].err = c.PromQL(cctx, endpoint, f)
		}()
	}
	wg.Wait()

	merged := promResponse{Status: "success", Data: &promData{Result: []json.RawMessage{}}}
	answered := 0
	var firstErr *promResponse
	firstStatus := 0
	for i, m := range members {
		o := out[i]
		var r promResponse
		if o.err == nil && json.Unmarshal(o.body, &r) != nil {
			o.err = fmt.Errorf("HTTP %d: not a Prometheus API answer", o.status)
		}
		if o.err != nil {
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("cluster %s: %v", m.Name, o.err))
			continue
		}
		if r.Status != "success" || r.Data == nil {
			if firstErr == nil {
				firstErr, firstStatus = &r, o.status
				firstErr.Error = "cluster " + m.Name + ": " + r.Error
			}
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("cluster %s: %s: %s", m.Name, r.ErrorType, r.Error))
			continue
		}
		answered++
		for _, w := range r.Warnings {
			merged.Warnings = append(merged.Warnings, "cluster "+m.Name+": "+w)
		}
		merged.Infos = append(merged.Infos, r.Infos...)
		if merged.Data.ResultType != "" && merged.Data.ResultType != r.Data.ResultType {
			return badData("the clusters answered different result types (%s, %s)", merged.Data.ResultType, r.Data.ResultType)
		}
		merged.Data.ResultType = r.Data.ResultType
		if r.Data.ResultType == "scalar" || r.Data.ResultType == "string" {
			if len(members) > 1 {
				return badData("a %s result cannot carry the %s label: select one member with {%s=\"…\"}",
					r.Data.ResultType, ClusterLabel, ClusterLabel)
			}
			return http.StatusOK, r
		}
		for _, raw := range r.Data.Result {
			labelled, err := withCluster(raw, m.Name)
			if err != nil {
				merged.Warnings = append(merged.Warnings, fmt.Sprintf("cluster %s: %v", m.Name, err))
				continue
			}
			merged.Data.Result = append(merged.Data.Result, labelled)
		}
	}
	if answered == 0 {
		if firstErr != nil {
			return firstStatus, *firstErr
		}
		return http.StatusServiceUnavailable, promResponse{Status: "error", ErrorType: "unavailable",
			Error: "no member cluster answered: " + strings.Join(merged.Warnings, "; "), Warnings: merged.Warnings}
	}
	return http.StatusOK, merged
}

// withCluster adds cluster=name to a series' labels.
func withCluster(raw json.RawMessage, name string) (json.RawMessage, error) {
	var s promSeries
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("series: %w", err)
	}
	metric := map[string]string{}
	if m, ok := s["metric"]; ok {
		if err := json.Unmarshal(m, &metric); err != nil {
			return nil, fmt.Errorf("series labels: %w", err)
		}
	}
	metric[ClusterLabel] = name
	b, _ := json.Marshal(metric)
	s["metric"] = b
	return json.Marshal(s)
}

// stripClusterMatchers removes every matcher on the cluster label from the
// query's selectors (members' series do not carry it) and returns them.
func stripClusterMatchers(expr parser.Expr) []*labels.Matcher {
	var found []*labels.Matcher
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		kept := vs.LabelMatchers[:0]
		for _, m := range vs.LabelMatchers {
			if m.Name == ClusterLabel {
				found = append(found, m)
				continue
			}
			kept = append(kept, m)
		}
		vs.LabelMatchers = kept
		return nil
	})
	return found
}

// matchesAll reports whether a member's name satisfies every cluster
// matcher of the query (no matcher: every member).
func matchesAll(ms []*labels.Matcher, name string) bool {
	for _, m := range ms {
		if !m.Matches(name) {
			return false
		}
	}
	return true
}

// emptyType is the result type of an answer with no member.
func emptyType(expr parser.Expr, endpoint string) string {
	if endpoint == "query_range" {
		return "matrix"
	}
	return string(expr.Type())
}
