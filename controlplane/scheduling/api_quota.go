package scheduling

import (
	"context"
	"net/http"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// quotaJSON is a quota with its current use.
type quotaJSON struct {
	ID             int64  `json:"id"`
	Tenant         string `json:"tenant"`
	Project        string `json:"project"`
	Vendor         string `json:"vendor"`
	Devices        int64  `json:"devices"`
	MemoryMiB      int64  `json:"memory_mib"`
	ComputePercent int64  `json:"compute_percent"`
	Policy         string `json:"policy"`
	Used           *usage `json:"used,omitempty"`
	CreatedAt      string `json:"created_at,omitempty"`
	UpdatedAt      string `json:"updated_at,omitempty"`
}

func (q quotaJSON) domain() *controlplane.Quota {
	return &controlplane.Quota{ID: q.ID, Tenant: q.Tenant, Project: q.Project, Vendor: q.Vendor, Devices: q.Devices,
		MemoryMiB: q.MemoryMiB, ComputePercent: q.ComputePercent, Policy: controlplane.QuotaPolicy(q.Policy)}
}

// usageFromLedger sums the stored ledger for q (works on every server).
func usageFromLedger(q *controlplane.Quota, rows []*controlplane.Allocation) usage {
	var u usage
	for _, a := range rows {
		if a.DevicePos < 0 || a.Tenant != q.Tenant || (q.Project != "" && a.Project != q.Project) ||
			(q.Vendor != "" && a.Vendor != q.Vendor) {
			continue
		}
		u.Devices++
		u.MemoryMiB += a.MemoryMiB
		u.ComputePercent += int64(a.ComputeMilli) / 10
	}
	return u
}

// quotaOut is q as JSON, with its use summed from rows when withUse (an
// empty ledger is zero use, not unknown, so rows may be nil then).
func quotaOut(q *controlplane.Quota, rows []*controlplane.Allocation, withUse bool) quotaJSON {
	out := quotaJSON{ID: q.ID, Tenant: q.Tenant, Project: q.Project, Vendor: q.Vendor, Devices: q.Devices, MemoryMiB: q.MemoryMiB,
		ComputePercent: q.ComputePercent, Policy: string(q.Policy), CreatedAt: q.CreatedAt.Format(timeFmt), UpdatedAt: q.UpdatedAt.Format(timeFmt)}
	if withUse {
		u := usageFromLedger(q, rows)
		out.Used = &u
	}
	return out
}

const timeFmt = "2006-01-02T15:04:05.000000Z07:00"

func (s *Service) listQuotas(w http.ResponseWriter, r *http.Request) {
	qs, err := s.store.ListQuotas(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows, err := s.store.ListAllocations(r.Context(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items := make([]quotaJSON, 0, len(qs))
	for _, q := range qs {
		items = append(items, quotaOut(q, rows, true))
	}
	writeJSON(w, http.StatusOK, quotaList{Items: items, Total: len(items)})
}

func (s *Service) createQuota(w http.ResponseWriter, r *http.Request) {
	var body quotaJSON
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	q := body.domain()
	q.ID = 0
	if err := s.store.CreateQuota(r.Context(), q); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reloadQuotas(r.Context())
	httpapi.SetAudit(r.Context(), "quota.create", "quota/"+strconv.FormatInt(q.ID, 10))
	writeJSON(w, http.StatusCreated, quotaOut(q, nil, false))
}

func (s *Service) getQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := s.store.GetQuota(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows, err := s.store.ListAllocations(r.Context(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, quotaOut(q, rows, true))
}

func (s *Service) putQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body quotaJSON
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	q := body.domain()
	q.ID = id
	httpapi.SetAudit(r.Context(), "quota.update", "quota/"+strconv.FormatInt(id, 10))
	if err := s.store.UpdateQuota(r.Context(), q); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reloadQuotas(r.Context())
	got, err := s.store.GetQuota(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, quotaOut(got, nil, false))
}

func (s *Service) deleteQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	httpapi.SetAudit(r.Context(), "quota.delete", "quota/"+strconv.FormatInt(id, 10))
	if err := s.store.DeleteQuota(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reloadQuotas(r.Context())
	w.WriteHeader(http.StatusNoContent)
}

// reloadQuotas makes a quota change take effect at once on this server
// (the loop re-reads quotas every NodeSync otherwise, which is how other
// servers' changes reach the leader).
func (s *Service) reloadQuotas(ctx context.Context) {
	qs, err := s.store.ListQuotas(ctx)
	if err != nil {
		s.log.Warn("scheduling: reload quotas", "err", err)
		return
	}
	s.mu.Lock()
	s.quotas = qs
	s.mu.Unlock()
}
