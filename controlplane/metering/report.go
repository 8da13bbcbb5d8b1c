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
	// Efficiency is measured / allocated usage; absent when not measured.
	Efficiency *Efficiency `json:"efficiency,omitempty"`
	Cost       float64     `json:"cost"`
	cost       float64     // unrounded
	key        string      // grouping key
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
	f := controlplane.UsageFilter{From: from, To: to, Tenant: req.Tenant, Project: req.Project, OwnerID: req.OwnerID}
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
	if err := s.aggregate(ctx, rep, f, NewPriceBook(prices), priceCuts(prices, from, to), req.TopTasks); err != nil {
		return nil, err
	}
	return rep, nil
}

// priceCuts are the days inside (from, to) on which a price entry starts
// or ends: between two cuts every class has one price.
func priceCuts(prices []*controlplane.PriceEntry, from, to time.Time) []time.Time {
	seen := map[time.Time]bool{}
	var cuts []time.Time
	for _, p := range prices {
		for _, d := range []*time.Time{&p.From, p.To} {
			if d != nil && d.After(from) && d.Before(to) && !seen[*d] {
				seen[*d] = true
				cuts = append(cuts, *d)
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	return cuts
}

// pending returns the records of f the meter has not written yet (released
// intervals not metered, and the days of held slices not recorded), up to
// now: together with the stored records they are what the ledger held.
func (s *Service) pending(ctx context.Context, f controlplane.UsageFilter) ([]*controlplane.UsageRecord, error) {
	unmetered, err := s.store.ListUnmeteredIntervals(ctx, 0)
	if err != nil {
		return nil, err
	}
	open, err := s.store.ListOpenIntervals(ctx)
	if err != nil {
		return nil, err
	}
	var ivs []*controlplane.AllocationInterval
	for _, iv := range append(unmetered, open...) {
		if (f.Tenant != "" && iv.Tenant != f.Tenant) || (f.Project != "" && iv.Project != f.Project) ||
			(f.OwnerID != 0 && iv.OwnerID != f.OwnerID) || (f.TaskID != 0 && iv.TaskID != f.TaskID) {
			continue
		}
		ivs = append(ivs, iv)
	}
	if len(ivs) == 0 {
		return nil, nil
	}
	// Days of these intervals the meter already wrote (held slices' ended
	// days) are in the sums.
	ids := make([]int64, len(ivs))
	for i, iv := range ivs {
		ids[i] = iv.ID
	}
	stored, err := s.store.ListUsage(ctx, controlplane.UsageFilter{From: f.From, To: f.To, IntervalIDs: ids})
	if err != nil {
		return nil, err
	}
	have := make(map[recKey]bool, len(stored))
	for _, r := range stored {
		have[recKey{r.IntervalID, r.Day.Unix()}] = true
	}
	inv, err := s.inventory(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var recs []*controlplane.UsageRecord
	for _, iv := range ivs {
		for _, r := range Split(iv, inv.share(iv), now, false) {
			if r.Day.Before(f.From) || !r.Day.Before(f.To) || have[recKey{r.IntervalID, r.Day.Unix()}] {
				continue
			}
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// Usage returns the usage records of f: stored ones and, for what the meter
// has not written yet, the same records computed now.
func (s *Service) Usage(ctx context.Context, f controlplane.UsageFilter) ([]*controlplane.UsageRecord, error) {
	recs, err := s.store.ListUsage(ctx, f)
	if err != nil {
		return nil, err
	}
	more, err := s.pending(ctx, f)
	if err != nil {
		return nil, err
	}
	return append(recs, more...), nil
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
	l.Efficiency = l.Usage.Efficiency()
	l.Cost = round2(l.cost)
}

func byCost(a, b *ReportLine) bool { return a.cost > b.cost }

// aggregate builds the report's groups from the store's sums (by day and
// class, and by price segment, class and scope) and the records not metered
// yet, pricing each part on its day: prices are constant within a segment.
func (s *Service) aggregate(ctx context.Context, rep *UsageReport, f controlplane.UsageFilter, book *PriceBook,
	cuts []time.Time, top int,
) error {
	if top <= 0 {
		top = 20
	}
	pend, err := s.pending(ctx, f)
	if err != nil {
		return err
	}
	req := controlplane.UsageSumRequest{Filter: f, Cuts: cuts, Top: top, SkipTasks: true}
	sums, err := s.store.SumUsage(ctx, req)
	if err != nil {
		return err
	}
	segStart := func(seg int) time.Time {
		if seg == 0 {
			return controlplane.Day(f.From)
		}
		return cuts[seg-1]
	}
	// The heaviest tasks by the prices of each segment and class, plus
	// every task with usage not metered yet (it may move up).
	classes := map[controlplane.UsageRate]bool{}
	for _, u := range sums {
		if u.Set == controlplane.SumTenant {
			classes[controlplane.UsageRate{Segment: u.Segment, Vendor: u.Vendor, Model: u.Model, QoS: u.QoS}] = true
		}
	}
	for c := range classes {
		if p := book.Find(c.Vendor, c.Model, c.QoS, segStart(c.Segment)); p != nil {
			c.DeviceMilliMS, c.MemoryMiBMS, c.ComputeMilliMS = unitRates(c.QoS, p)
			req.Rates = append(req.Rates, c)
		}
	}
	pendTasks := map[int64]bool{}
	for _, r := range pend {
		if !pendTasks[r.TaskID] {
			pendTasks[r.TaskID] = true
			req.Tasks = append(req.Tasks, r.TaskID)
		}
	}
	req.SkipTasks, req.TasksOnly = false, true
	tasks, err := s.store.SumUsage(ctx, req)
	if err != nil {
		return err
	}
	sums = append(sums, tasks...)

	var daily, vendor, tenant, project, user, task grouping
	var unpriced UsageTotals
	addTo := func(l *ReportLine, u UsageTotals, c float64) {
		l.Usage.plus(u)
		l.cost += c
	}
	for _, su := range sums {
		var u UsageTotals
		u.sum(su)
		day := su.Day
		if su.Set != controlplane.SumDaily {
			day = segStart(su.Segment)
		}
		p := book.Find(su.Vendor, su.Model, su.QoS, day)
		c := Cost(u, su.QoS, p)
		switch su.Set {
		case controlplane.SumDaily:
			if p == nil {
				unpriced.plus(u)
			}
			addTo(&rep.Total, u, c)
			d := day.Format(controlplane.DateLayout)
			addTo(daily.get(d, func() ReportLine { return ReportLine{Day: d} }), u, c)
			addTo(vendor.get(strings.Join([]string{su.Vendor, su.Model, string(su.QoS)}, "\x00"),
				func() ReportLine { return ReportLine{Vendor: su.Vendor, Model: su.Model, QoS: string(su.QoS)} }), u, c)
		case controlplane.SumTenant:
			addTo(tenant.get(su.Tenant, func() ReportLine { return ReportLine{Tenant: su.Tenant} }), u, c)
		case controlplane.SumProject:
			addTo(project.get(su.Tenant+"\x00"+su.Project, func() ReportLine { return ReportLine{Tenant: su.Tenant, Project: su.Project} }), u, c)
		case controlplane.SumUser:
			addTo(user.get(su.Owner, func() ReportLine { return ReportLine{User: su.Owner, Tenant: su.Tenant} }), u, c)
		case controlplane.SumTask:
			addTo(task.get(fmt.Sprintf("%020d", su.TaskID), func() ReportLine {
				return ReportLine{TaskID: su.TaskID, Tenant: su.Tenant, Project: su.Project, User: su.Owner}
			}), u, c)
		}
	}
	for _, r := range pend {
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
	return nil
}

// unitRates is price p per unit-millisecond of device share (thousandths),
// device memory (MiB) and compute (thousandths), Bronze discount applied:
// the same arithmetic as Cost.
func unitRates(qos controlplane.QoS, p *controlplane.PriceEntry) (device, mem, compute float64) {
	k := 1.0
	if qos == controlplane.QoSBronze {
		k = 1 - p.BronzeDiscountPercent/100
	}
	return k * p.DeviceHour / 1000 / msPerHour, k * p.MemoryGiBHour / 1024 / msPerHour, k * p.ComputePercentHour / 10 / msPerHour
}
