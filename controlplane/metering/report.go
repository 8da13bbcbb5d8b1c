package metering

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Period granularities.
const (
	PeriodDay   = "day"
	PeriodWeek  = "week"
	PeriodMonth = "month"
)

// ReportRequest selects a report: a scope (Tenant/Project/OwnerID, empty =
// all) and a period starting on Start (a day; weeks start on Monday,
// months on the 1st).
type ReportRequest struct {
	Tenant  string
	Project string
	OwnerID int64
	User    string // the owner's name, for the header
	Period  string
	Start   time.Time
	// TopTasks bounds the top-task list (default 20).
	TopTasks int
}

// ReportLine is usage and cost of one group of a report.
type ReportLine struct {
	Tenant  string      `json:"tenant,omitempty"`
	Project string      `json:"project,omitempty"`
	User    string      `json:"user,omitempty"`
	Vendor  string      `json:"vendor,omitempty"`
	Model   string      `json:"model,omitempty"`
	QoS     string      `json:"qos,omitempty"`
	TaskID  int64       `json:"task_id,omitempty"`
	Day     string      `json:"day,omitempty"`
	Usage   UsageTotals `json:"usage"`
	Hours   UsageHours  `json:"hours"`
	Cost    float64     `json:"cost"`
	cost    float64     // unrounded
	key     string      // grouping key
}

// UsageReport is a usage and cost report.
type UsageReport struct {
	Tenant      string     `json:"tenant,omitempty"`
	Project     string     `json:"project,omitempty"`
	User        string     `json:"user,omitempty"`
	Period      string     `json:"period"`
	From        string     `json:"from"`
	To          string     `json:"to"` // exclusive
	Currency    string     `json:"currency"`
	Provisional bool       `json:"provisional"` // the period has not ended
	GeneratedAt time.Time  `json:"generated_at"`
	Total       ReportLine `json:"total"`
	// UnpricedHours is device-hours no price book entry covers.
	UnpricedHours float64      `json:"unpriced_device_hours"`
	Daily         []ReportLine `json:"daily"`
	ByVendor      []ReportLine `json:"by_vendor"`
	ByTenant      []ReportLine `json:"by_tenant"`
	ByProject     []ReportLine `json:"by_project"`
	ByUser        []ReportLine `json:"by_user"`
	TopTasks      []ReportLine `json:"top_tasks"`
}

// PeriodRange returns [from, to) of a period starting at start.
func PeriodRange(period string, start time.Time) (time.Time, time.Time, error) {
	d := controlplane.Day(start)
	switch period {
	case PeriodDay:
		return d, d.AddDate(0, 0, 1), nil
	case PeriodWeek:
		off := (int(d.Weekday()) + 6) % 7 // days since Monday
		from := d.AddDate(0, 0, -off)
		return from, from.AddDate(0, 0, 7), nil
	case PeriodMonth:
		from := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(0, 1, 0), nil
	}
	return time.Time{}, time.Time{}, controlplane.Invalidf("period must be day, week or month, not %q", period)
}

// Report builds the report of req: the stored records plus the parts not
// metered yet (released intervals the meter has not reached, and slices
// still held, up to now), each priced on its day.
func (s *Service) Report(ctx context.Context, req ReportRequest) (*UsageReport, error) {
	from, to, err := PeriodRange(req.Period, req.Start)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if from.After(now) {
		return nil, controlplane.Invalidf("the period %s starts in the future", from.Format(controlplane.DateLayout))
	}
	if req.Tenant != "" {
		ok, err := s.store.TenantKnown(ctx, req.Tenant)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("tenant %q: %w", req.Tenant, controlplane.ErrNotFound)
		}
	}
	recs, err := s.Usage(ctx, controlplane.UsageFilter{From: from, To: to, Tenant: req.Tenant, Project: req.Project, OwnerID: req.OwnerID})
	if err != nil {
		return nil, err
	}
	prices, err := s.store.ListPrices(ctx)
	if err != nil {
		return nil, err
	}
	rep := &UsageReport{Tenant: req.Tenant, Project: req.Project, User: req.User, Period: req.Period,
		From: from.Format(controlplane.DateLayout), To: to.Format(controlplane.DateLayout), Currency: "CNY",
		Provisional: to.After(now), GeneratedAt: now.UTC()}
	if len(prices) > 0 {
		rep.Currency = prices[0].Currency
	}
	s.aggregate(rep, recs, NewPriceBook(prices), req.TopTasks)
	return rep, nil
}

// Usage returns the usage records of f: stored ones and, for what the meter
// has not written yet, the same records computed now. Together they are
// what the ledger held in f's days, up to now.
func (s *Service) Usage(ctx context.Context, f controlplane.UsageFilter) ([]*controlplane.UsageRecord, error) {
	recs, err := s.store.ListUsage(ctx, f)
	if err != nil {
		return nil, err
	}
	have := make(map[recKey]bool, len(recs))
	for _, r := range recs {
		have[recKey{r.IntervalID, r.Day.Unix()}] = true
	}
	pending, err := s.store.ListUnmeteredIntervals(ctx, 0)
	if err != nil {
		return nil, err
	}
	open, err := s.store.ListOpenIntervals(ctx)
	if err != nil {
		return nil, err
	}
	ivs := append(pending, open...)
	if len(ivs) == 0 {
		return recs, nil
	}
	shares, err := s.shareFunc(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for _, iv := range ivs {
		if (f.Tenant != "" && iv.Tenant != f.Tenant) || (f.Project != "" && iv.Project != f.Project) ||
			(f.OwnerID != 0 && iv.OwnerID != f.OwnerID) || (f.TaskID != 0 && iv.TaskID != f.TaskID) {
			continue
		}
		for _, r := range Split(iv, shares(iv), now, false) {
			if r.Day.Before(f.From) || !r.Day.Before(f.To) || have[recKey{r.IntervalID, r.Day.Unix()}] {
				continue
			}
			have[recKey{r.IntervalID, r.Day.Unix()}] = true
			recs = append(recs, r)
		}
	}
	return recs, nil
}

type grouping struct {
	lines map[string]*ReportLine
}

func (g *grouping) get(key string, mk func() ReportLine) *ReportLine {
	if g.lines == nil {
		g.lines = map[string]*ReportLine{}
	}
	l, ok := g.lines[key]
	if !ok {
		nl := mk()
		nl.key = key
		l = &nl
		g.lines[key] = l
	}
	return l
}

func (g *grouping) sorted(less func(a, b *ReportLine) bool) []ReportLine {
	out := make([]*ReportLine, 0, len(g.lines))
	for _, l := range g.lines {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if less != nil && less(out[i], out[j]) != less(out[j], out[i]) {
			return less(out[i], out[j])
		}
		return out[i].key < out[j].key
	})
	res := make([]ReportLine, len(out))
	for i, l := range out {
		l.finish()
		res[i] = *l
	}
	return res
}

func (l *ReportLine) add(r *controlplane.UsageRecord, cost float64) {
	l.Usage.add(r)
	l.cost += cost
}

func (l *ReportLine) finish() {
	l.Hours = l.Usage.Hours()
	l.Cost = round2(l.cost)
}

func byCost(a, b *ReportLine) bool { return a.cost > b.cost }

// aggregate sums records into the report's groups, pricing each record on
// its day.
func (s *Service) aggregate(rep *UsageReport, recs []*controlplane.UsageRecord, book *PriceBook, top int) {
	if top <= 0 {
		top = 20
	}
	var daily, vendor, tenant, project, user, task grouping
	var unpriced UsageTotals
	for _, r := range recs {
		var u UsageTotals
		u.add(r)
		p := book.Find(r.Vendor, r.Model, r.QoS, r.Day)
		if p == nil {
			unpriced.plus(u)
		}
		c := Cost(u, r.QoS, p)
		rep.Total.add(r, c)
		d := r.Day.Format(controlplane.DateLayout)
		daily.get(d, func() ReportLine { return ReportLine{Day: d} }).add(r, c)
		vendor.get(strings.Join([]string{r.Vendor, r.Model, string(r.QoS)}, "\x00"),
			func() ReportLine { return ReportLine{Vendor: r.Vendor, Model: r.Model, QoS: string(r.QoS)} }).add(r, c)
		tenant.get(r.Tenant, func() ReportLine { return ReportLine{Tenant: r.Tenant} }).add(r, c)
		project.get(r.Tenant+"\x00"+r.Project, func() ReportLine { return ReportLine{Tenant: r.Tenant, Project: r.Project} }).add(r, c)
		user.get(r.Owner, func() ReportLine { return ReportLine{User: r.Owner, Tenant: r.Tenant} }).add(r, c)
		task.get(fmt.Sprintf("%020d", r.TaskID), func() ReportLine {
			return ReportLine{TaskID: r.TaskID, Tenant: r.Tenant, Project: r.Project, User: r.Owner}
		}).add(r, c)
	}
	rep.Total.finish()
	rep.UnpricedHours = unpriced.Hours().DeviceHours
	rep.Daily = daily.sorted(nil)
	rep.ByVendor = vendor.sorted(byCost)
	rep.ByTenant = tenant.sorted(byCost)
	rep.ByProject = project.sorted(byCost)
	rep.ByUser = user.sorted(byCost)
	rep.TopTasks = task.sorted(func(a, b *ReportLine) bool {
		if a.cost != b.cost {
			return a.cost > b.cost
		}
		return a.Usage.DeviceMilliMS > b.Usage.DeviceMilliMS
	})
	if len(rep.TopTasks) > top {
		rep.TopTasks = rep.TopTasks[:top]
	}
}
