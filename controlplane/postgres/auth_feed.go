package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
)

// authChannel is the NOTIFY channel of credential changes. Channels are
// per database, not per schema: stores in other schemas of one database
// see each other's changes, which only costs them a cache refill.
const authChannel = "heteroflow_auth"

// authFeed is the store's controlplane.AuthChangeFeed: one connection per
// store LISTENs (opened on the first subscription) and fans changes out.
type authFeed struct {
	mu     sync.Mutex
	subs   map[int]func(controlplane.AuthChange)
	next   int
	cancel context.CancelFunc // stops the listener; nil until started
	done   chan struct{}
	live   atomic.Bool
}

var _ controlplane.AuthChangeFeed = (*DB)(nil)

// PublishAuthChange: see controlplane.AuthChangeFeed.
func (db *DB) PublishAuthChange(ctx context.Context, c controlplane.AuthChange) error {
	_, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, authChannel, encodeAuthChange(c))
	return mapErr(err)
}

// SubscribeAuthChanges: see controlplane.AuthChangeFeed.
func (db *DB) SubscribeAuthChanges(fn func(controlplane.AuthChange)) (cancel func()) {
	f := &db.auth
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[int]func(controlplane.AuthChange){}
	}
	id := f.next
	f.next++
	f.subs[id] = fn
	if f.cancel == nil {
		ctx, stop := context.WithCancel(context.Background())
		f.cancel, f.done = stop, make(chan struct{})
		go db.listenAuth(ctx)
	}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, id)
	}
}

// AuthChangesLive: see controlplane.AuthChangeFeed.
func (db *DB) AuthChangesLive() bool { return db.auth.live.Load() }

func (db *DB) stopAuthFeed() {
	f := &db.auth
	f.mu.Lock()
	stop, done := f.cancel, f.done
	f.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (f *authFeed) deliver(c controlplane.AuthChange) {
	f.mu.Lock()
	subs := make([]func(controlplane.AuthChange), 0, len(f.subs))
	for _, fn := range f.subs {
		subs = append(subs, fn)
	}
	f.mu.Unlock()
	for _, fn := range subs {
		fn(c)
	}
}

// listenAuth holds a connection that LISTENs for credential changes until
// ctx ends, reconnecting after a second when it fails. Each (re)connection
// delivers an All change: what was sent while nobody listened is lost.
func (db *DB) listenAuth(ctx context.Context) {
	f := &db.auth
	defer close(f.done)
	for ctx.Err() == nil {
		err := db.listenAuthOnce(ctx)
		f.live.Store(false)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("credential change feed interrupted; API keys are re-read every second until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (db *DB) listenAuthOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+authChannel); err != nil {
		return err
	}
	db.auth.live.Store(true)
	db.auth.deliver(controlplane.AuthChange{All: true})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		c, err := decodeAuthChange(n.Payload)
		if err != nil {
			db.log.Warn("credential change feed: bad payload", "payload", n.Payload, "err", err)
			c = controlplane.AuthChange{All: true}
		}
		db.auth.deliver(c)
	}
}

// encodeAuthChange: "key:<id>", "owner:<id>" or "all".
func encodeAuthChange(c controlplane.AuthChange) string {
	switch {
	case c.All:
		return "all"
	case c.KeyID != 0:
		return "key:" + strconv.FormatInt(c.KeyID, 10)
	default:
		return "owner:" + strconv.FormatInt(c.OwnerID, 10)
	}
}

func decodeAuthChange(s string) (controlplane.AuthChange, error) {
	if s == "all" {
		return controlplane.AuthChange{All: true}, nil
	}
	kind, id, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil {
		return controlplane.AuthChange{}, fmt.Errorf("credential change %q", s)
	}
	switch kind {
	case "key":
		return controlplane.AuthChange{KeyID: n}, nil
	case "owner":
		return controlplane.AuthChange{OwnerID: n}, nil
	}
	return controlplane.AuthChange{}, fmt.Errorf("credential change %q", s)
}
