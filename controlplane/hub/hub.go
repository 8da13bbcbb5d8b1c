package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

// Store is what the hub keeps: its members and forwarded tasks, and the
// lease that makes one server of an HA hub the poller.
type Store interface {
	controlplane.ClusterStore
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Config tunes the hub.
type Config struct {
	// PollInterval between the leader's polls of every member.
	PollInterval time.Duration
	// Timeout of one call to a member.
	Timeout time.Duration
	// LeaseTTL of the poller's lease.
	LeaseTTL time.Duration
}

// Defaults: members are polled every 10 s (a dead member shows within
// that plus one timeout); a call waits 10 s at most.
func Defaults() Config {
	return Config{PollInterval: 10 * time.Second, Timeout: 10 * time.Second, LeaseTTL: 6 * time.Second}
}

// Options are the hub's dependencies.
type Options struct {
	Store   Store
	Sealer  Sealer
	Config  Config
	Version string // the hub's own version, for the compatibility check
	Holder  string // names this server in the poller lease
	Logger  *slog.Logger
	// Audit records what the poller decided (tasks marked unknown); nil: none.
	Audit func(*controlplane.AuditEntry)
	Now   func() time.Time
}

// Hub is the multi-cluster service.
type Hub struct {
	store   Store
	sealer  Sealer
	cfg     Config
	version string
	holder  string
	log     *slog.Logger
	audit   func(*controlplane.AuditEntry)
	now     func() time.Time

	mu      sync.Mutex
	members map[int64]*member // dialed clients by cluster id
	leader  bool
}

// member is a dialed member cluster.
type member struct {
	rec *controlplane.MemberCluster
	c   *client.Client
	tr  *http.Transport
}

// New checks the options and builds the hub; Run starts its poller.
func New(o Options) (*Hub, error) {
	if o.Store == nil || o.Sealer == nil {
		return nil, errors.New("hub: Store and Sealer are required")
	}
	d := Defaults()
	if o.Config.PollInterval <= 0 {
		o.Config.PollInterval = d.PollInterval
	}
	if o.Config.Timeout <= 0 {
		o.Config.Timeout = d.Timeout
	}
	if o.Config.LeaseTTL <= 0 {
		o.Config.LeaseTTL = d.LeaseTTL
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Audit == nil {
		o.Audit = func(*controlplane.AuditEntry) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Holder == "" {
		o.Holder = fmt.Sprintf("hub-%d", time.Now().UnixNano())
	}
	return &Hub{store: o.Store, sealer: o.Sealer, cfg: o.Config, version: o.Version, holder: o.Holder, log: o.Logger,
		audit: o.Audit, now: o.Now, members: map[int64]*member{}}, nil
}

// Register checks a member at once (it answers, the key is valid and an
// admin or operator key, the version is compatible) and stores it with
// its key sealed; on any failure nothing is stored.
func (h *Hub) Register(ctx context.Context, in apitypes.ClusterRegisterJSON, actor string) (*apitypes.ClusterJSON, error) {
	rec := &controlplane.MemberCluster{Name: in.Name, CAPEM: in.CAPEM, CreatedBy: actor}
	if err := (&controlplane.MemberCluster{Name: in.Name, URL: "x", APIKeySealed: "x"}).Validate(); err != nil {
		return nil, err
	}
	base, err := checkURL(in.URL)
	if err != nil {
		return nil, err
	}
	rec.URL = base
	if rec.Fingerprint, err = normalizeFingerprint(in.Fingerprint); err != nil {
		return nil, err
	}
	if in.APIKey == "" {
		return nil, controlplane.Invalidf("api_key is required")
	}
	if _, err := h.byName(ctx, in.Name); err == nil {
		return nil, controlplane.Coded(controlplane.ErrConflict, CodeExists, []string{"name", in.Name}, "cluster %s is already registered", in.Name)
	}
	c, tr, err := dial(base, in.APIKey, pin{caPEM: rec.CAPEM, fingerprint: rec.Fingerprint}, h.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	defer tr.CloseIdleConnections()
	if rec.Version, err = checkMember(ctx, c, in.Name, base, h.version); err != nil {
		return nil, err
	}
	rec.APIKeySealed = h.sealer.Seal(keyName(in.Name), []byte(in.APIKey))
	// The first view now, so the page shows the member at once.
	rec.Status = controlplane.ClusterReachable
	if sum, err := readSummary(ctx, c); err == nil {
		rec.Summary, _ = json.Marshal(sum)
		at := h.now().UTC()
		rec.PolledAt = &at
	}
	if err := h.store.CreateCluster(ctx, rec); err != nil {
		if errors.Is(err, controlplane.ErrConflict) {
			return nil, controlplane.Coded(controlplane.ErrConflict, CodeExists, []string{"name", in.Name}, "cluster %s is already registered", in.Name)
		}
		return nil, err
	}
	return clusterJSON(rec), nil
}

// Clusters lists the members with their last polled view.
func (h *Hub) Clusters(ctx context.Context) ([]apitypes.ClusterJSON, error) {
	list, err := h.store.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.ClusterJSON, 0, len(list))
	for _, c := range list {
		out = append(out, *clusterJSON(c))
	}
	return out, nil
}

// Cluster is one member.
func (h *Hub) Cluster(ctx context.Context, id int64) (*apitypes.ClusterJSON, error) {
	c, err := h.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return clusterJSON(c), nil
}

// Remove unregisters a member; its unfinished forwarded tasks become
// unknown (the hub no longer follows them).
func (h *Hub) Remove(ctx context.Context, id int64) (string, error) {
	c, err := h.get(ctx, id)
	if err != nil {
		return "", err
	}
	if err := h.store.DeleteCluster(ctx, id); err != nil {
		return "", err
	}
	if _, err := h.store.MarkClusterTasksUnknown(ctx, c.Name, "cluster "+c.Name+" was unregistered from the hub"); err != nil {
		return "", err
	}
	h.mu.Lock()
	if m := h.members[id]; m != nil {
		m.tr.CloseIdleConnections()
		delete(h.members, id)
	}
	h.mu.Unlock()
	return c.Name, nil
}

func (h *Hub) get(ctx context.Context, id int64) (*controlplane.MemberCluster, error) {
	c, err := h.store.GetCluster(ctx, id)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, controlplane.Coded(controlplane.ErrNotFound, CodeNotFound, []string{"id", fmt.Sprint(id)}, "cluster %d is not registered", id)
	}
	return c, err
}

func (h *Hub) byName(ctx context.Context, name string) (*controlplane.MemberCluster, error) {
	list, err := h.store.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, controlplane.Coded(controlplane.ErrNotFound, CodeNotFound, []string{"name", name}, "cluster %s is not registered", name)
}

// client returns the member's dialed client (its key opened).
func (h *Hub) client(rec *controlplane.MemberCluster) (*client.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.members[rec.ID]; m != nil && m.rec.URL == rec.URL && m.rec.APIKeySealed == rec.APIKeySealed {
		return m.c, nil
	}
	key, err := h.sealer.Open(keyName(rec.Name), rec.APIKeySealed)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: its API key does not open: %w", rec.Name, err)
	}
	c, tr, err := dial(rec.URL, string(key), pin{caPEM: rec.CAPEM, fingerprint: rec.Fingerprint}, h.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	h.members[rec.ID] = &member{rec: rec, c: c, tr: tr}
	return c, nil
}

func clusterJSON(c *controlplane.MemberCluster) *apitypes.ClusterJSON {
	out := &apitypes.ClusterJSON{ID: c.ID, Name: c.Name, URL: c.URL, TLSPinned: "none", Fingerprint: c.Fingerprint,
		Version: c.Version, Status: string(c.Status), LastError: c.LastError, PolledAt: c.PolledAt,
		CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt}
	switch {
	case c.Fingerprint != "":
		out.TLSPinned = "fingerprint"
	case c.CAPEM != "":
		out.TLSPinned = "ca"
	}
	if len(c.Summary) > 0 {
		var s apitypes.ClusterSummaryJSON
		if json.Unmarshal(c.Summary, &s) == nil {
			out.Summary = &s
		}
	}
	return out
}
