package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// SessionStoreClock is the fake clock [SessionStoreSuite] gives the
// stores it makes: the store must read the time from Now, for the
// expiry of records and of admission slots.
type SessionStoreClock struct {
	ns atomic.Int64
}

// Now returns the clock's time.
func (c *SessionStoreClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Advance moves the clock forward by d.
func (c *SessionStoreClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// SessionStoreSuite checks that the stores newStore makes behave as
// [transport.SessionStore] says: records round-trip with the members of
// a later schema kept; Create refuses a duplicate ID and admits exactly
// the bounds, in total and per peer, also when many goroutines create at
// once (a peer "" never counted per peer); Update is a compare and swap
// on the version and keeps the admission fields; Touch pushes expiry
// back and returns the version; records expire at their expiry, and an
// expired or deleted record frees its admission slot; Delete; IDs a
// store cannot hold (braces, absurd lengths) are unknown sessions. A
// store that is a [transport.SessionHolders] is checked as one too: a
// deletion reports a session held elsewhere exactly when a replica
// other than the deleting one created or read it with the Held methods
// (or the store cannot tell), also while reads and deletions race.
//
// newStore must return a new, empty store that reads the time from
// clock. ids returns n distinct session IDs of the form the store
// accepts (those an mcp.KeyRing mints, say).
func SessionStoreSuite(t *testing.T, newStore func(t *testing.T, clock *SessionStoreClock) transport.SessionStore, ids func(n int) []string) {
	for _, tc := range sessionStoreCases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &SessionStoreClock{}
			clock.ns.Store(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano())
			store := newStore(t, clock)
			if c, ok := store.(interface{ Close() error }); ok {
				t.Cleanup(func() { c.Close() })
			}
			tc.run(&sessHarness{t: t, ctx: context.Background(), store: store, clock: clock, ids: ids})
		})
	}
}

// manyReplicas returns n distinct replica IDs.
func manyReplicas(n int) []string {
	rs := make([]string, n)
	for i := range rs {
		rs[i] = fmt.Sprintf("r-%d", i)
	}
	return rs
}

type sessHarness struct {
	t     *testing.T
	ctx   context.Context
	store transport.SessionStore
	clock *SessionStoreClock
	ids   func(n int) []string
}

func (h *sessHarness) record(id, peer string) *transport.SessionRecord {
	return &transport.SessionRecord{
		ID: id, ProtocolVersion: "2025-06-18", Principal: "p-hash", Peer: peer,
		State: []byte(`{"logLevel":"info"}`), Schema: transport.SessionRecordSchema,
		Expires: h.clock.Now().Add(time.Minute),
	}
}

func (h *sessHarness) create(rec *transport.SessionRecord, lim transport.SessionLimits) error {
	h.t.Helper()
	return h.store.Create(h.ctx, rec, lim)
}

func (h *sessHarness) wantErr(what string, err, want error) {
	h.t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		h.t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

var sessionStoreCases = []struct {
	name string
	run  func(h *sessHarness)
}{
	{"RoundTrip", func(h *sessHarness) {
		id := h.ids(1)[0]
		var rec transport.SessionRecord
		// A record of a later schema, with a member this version does not
		// know: the store must keep it.
		if err := rec.UnmarshalJSON([]byte(`{"schema":9,"id":"` + id + `","protocolVersion":"2025-06-18","principal":"ph","peer":"pk","state":{"a":1},"future":{"x":[1,2]}}`)); err != nil {
			h.t.Fatal(err)
		}
		rec.Expires = h.clock.Now().Add(time.Minute)
		h.wantErr("Create", h.create(&rec, transport.SessionLimits{}), nil)
		if rec.Version != 1 {
			h.t.Fatalf("Version after Create = %d, want 1", rec.Version)
		}
		got, err := h.store.Get(h.ctx, id)
		h.wantErr("Get", err, nil)
		if got.ID != id || got.ProtocolVersion != "2025-06-18" || got.Principal != "ph" || got.Peer != "pk" ||
			string(got.State) != `{"a":1}` || got.Schema != 9 || got.Version != 1 ||
			got.Expires.UnixMilli() != rec.Expires.UnixMilli() {
			h.t.Fatalf("Get = %+v, want %+v", got, &rec)
		}
		b, err := got.MarshalJSON()
		h.wantErr("MarshalJSON", err, nil)
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			h.t.Fatal(err)
		}
		if fmt.Sprint(back["future"]) != "map[x:[1 2]]" {
			h.t.Fatalf("unknown member lost: %s", b)
		}
	}},
	{"NotFound", func(h *sessHarness) {
		id := h.ids(1)[0]
		for _, bad := range []string{id, "", "{x}", "a}b{", "-", "+", "(1", string(make([]byte, 5000))} {
			_, err := h.store.Get(h.ctx, bad)
			h.wantErr(fmt.Sprintf("Get(%.20q)", bad), err, transport.ErrSessionNotFound)
			_, err = h.store.Touch(h.ctx, bad, h.clock.Now().Add(time.Minute))
			h.wantErr("Touch", err, transport.ErrSessionNotFound)
			h.wantErr("Delete", h.store.Delete(h.ctx, bad), transport.ErrSessionNotFound)
			h.wantErr("Update", h.store.Update(h.ctx, &transport.SessionRecord{ID: bad, Version: 1}), transport.ErrSessionNotFound)
		}
	}},
	{"Duplicate", func(h *sessHarness) {
		id := h.ids(1)[0]
		h.wantErr("Create", h.create(h.record(id, "a"), transport.SessionLimits{}), nil)
		h.wantErr("Create again", h.create(h.record(id, "b"), transport.SessionLimits{}), transport.ErrSessionExists)
	}},
	{"UpdateCAS", func(h *sessHarness) {
		id := h.ids(1)[0]
		rec := h.record(id, "peer")
		h.wantErr("Create", h.create(rec, transport.SessionLimits{}), nil)
		stale := rec.Clone()
		rec.State = []byte(`{"logLevel":"debug"}`)
		rec.Peer = "other" // must not change
		h.wantErr("Update", h.store.Update(h.ctx, rec), nil)
		if rec.Version != 2 {
			h.t.Fatalf("Version after Update = %d, want 2", rec.Version)
		}
		stale.State = []byte(`{"logLevel":"error"}`)
		h.wantErr("stale Update", h.store.Update(h.ctx, stale), transport.ErrVersionConflict)
		got, err := h.store.Get(h.ctx, id)
		h.wantErr("Get", err, nil)
		if string(got.State) != `{"logLevel":"debug"}` || got.Version != 2 || got.Peer != "peer" {
			h.t.Fatalf("Get = %+v", got)
		}
		v, err := h.store.Touch(h.ctx, id, h.clock.Now().Add(time.Hour))
		h.wantErr("Touch", err, nil)
		if v != 2 {
			h.t.Fatalf("Touch version = %d, want 2", v)
		}
	}},
	{"Expiry", func(h *sessHarness) {
		ids := h.ids(2)
		lim := transport.SessionLimits{MaxSessions: 1}
		rec := h.record(ids[0], "")
		h.wantErr("Create", h.create(rec, lim), nil)
		h.wantErr("Create past the bound", h.create(h.record(ids[1], ""), lim), transport.ErrTooManySessions)
		h.clock.Advance(50 * time.Second)
		_, err := h.store.Touch(h.ctx, ids[0], h.clock.Now().Add(time.Minute))
		h.wantErr("Touch", err, nil)
		h.clock.Advance(50 * time.Second) // past the first expiry, before the touched one
		_, err = h.store.Get(h.ctx, ids[0])
		h.wantErr("Get after Touch", err, nil)
		h.wantErr("Create still past the bound", h.create(h.record(ids[1], ""), lim), transport.ErrTooManySessions)
		h.clock.Advance(11 * time.Second)
		_, err = h.store.Get(h.ctx, ids[0])
		h.wantErr("Get after expiry", err, transport.ErrSessionNotFound)
		h.wantErr("Create once expired", h.create(h.record(ids[1], ""), lim), nil)
	}},
	{"Delete", func(h *sessHarness) {
		ids := h.ids(2)
		lim := transport.SessionLimits{MaxSessions: 1, MaxSessionsPerPeer: 1}
		h.wantErr("Create", h.create(h.record(ids[0], "p"), lim), nil)
		h.wantErr("Delete", h.store.Delete(h.ctx, ids[0]), nil)
		_, err := h.store.Get(h.ctx, ids[0])
		h.wantErr("Get", err, transport.ErrSessionNotFound)
		h.wantErr("Delete again", h.store.Delete(h.ctx, ids[0]), transport.ErrSessionNotFound)
		h.wantErr("Create in the freed slot", h.create(h.record(ids[1], "p"), lim), nil)
	}},
	{"PerPeer", func(h *sessHarness) {
		ids := h.ids(7)
		lim := transport.SessionLimits{MaxSessions: 6, MaxSessionsPerPeer: 2}
		h.wantErr("a1", h.create(h.record(ids[0], "a"), lim), nil)
		h.wantErr("a2", h.create(h.record(ids[1], "a"), lim), nil)
		h.wantErr("a3", h.create(h.record(ids[2], "a"), lim), transport.ErrTooManyPeerSessions)
		h.wantErr("b1", h.create(h.record(ids[2], "b"), lim), nil)
		// The uncounted peer "" is bound by the total only.
		h.wantErr("''1", h.create(h.record(ids[3], ""), lim), nil)
		h.wantErr("''2", h.create(h.record(ids[4], ""), lim), nil)
		h.wantErr("''3", h.create(h.record(ids[5], ""), lim), nil)
		h.wantErr("total", h.create(h.record(ids[6], ""), lim), transport.ErrTooManySessions)
	}},
	{"Holders", func(h *sessHarness) {
		hs, ok := h.store.(transport.SessionHolders)
		if !ok {
			h.t.Skip("the store is not a transport.SessionHolders")
		}
		ids := h.ids(7)
		lim := transport.SessionLimits{}
		for i, tc := range []struct {
			name    string
			created string   // the creating replica, "" for plain Create
			readers []string // replicas reading with GetHeld, in order
			deleter string
			want    bool
		}{
			{"creator deletes", "r-a", nil, "r-a", false},
			{"creator read again", "r-a", []string{"r-a", "r-a"}, "r-a", false},
			{"read elsewhere", "r-a", []string{"r-b"}, "r-a", true},
			{"reader deletes", "r-a", []string{"r-b"}, "r-b", true},
			{"another deletes", "r-a", nil, "r-c", true},
			{"created without a holder", "", []string{"r-a"}, "r-a", true},
			{"more holders than kept", "r-a", manyReplicas(100), "r-a", true},
		} {
			id := ids[i]
			rec := h.record(id, "p")
			if tc.created == "" {
				h.wantErr(tc.name+": Create", h.store.Create(h.ctx, rec, lim), nil)
			} else {
				h.wantErr(tc.name+": CreateHeld", hs.CreateHeld(h.ctx, rec, lim, tc.created), nil)
			}
			for _, r := range tc.readers {
				got, err := hs.GetHeld(h.ctx, id, r)
				h.wantErr(tc.name+": GetHeld", err, nil)
				if got.ID != id || got.Peer != "p" || got.Version != rec.Version || string(got.State) != string(rec.State) {
					h.t.Fatalf("%s: GetHeld = %+v, want %+v", tc.name, got, rec)
				}
			}
			// Neither a change of the record nor a touch forgets a holder.
			h.wantErr(tc.name+": Update", h.store.Update(h.ctx, rec), nil)
			_, err := h.store.Touch(h.ctx, id, h.clock.Now().Add(time.Minute))
			h.wantErr(tc.name+": Touch", err, nil)
			elsewhere, err := hs.DeleteHeld(h.ctx, id, tc.deleter)
			h.wantErr(tc.name+": DeleteHeld", err, nil)
			if elsewhere != tc.want {
				h.t.Errorf("%s: DeleteHeld reports held elsewhere %v, want %v", tc.name, elsewhere, tc.want)
			}
			_, err = hs.GetHeld(h.ctx, id, "r-a")
			h.wantErr(tc.name+": GetHeld once deleted", err, transport.ErrSessionNotFound)
			_, err = hs.DeleteHeld(h.ctx, id, "r-a")
			h.wantErr(tc.name+": DeleteHeld again", err, transport.ErrSessionNotFound)
		}
		for _, bad := range []string{"", "{x}", "(1", string(make([]byte, 5000))} {
			_, err := hs.GetHeld(h.ctx, bad, "r-a")
			h.wantErr(fmt.Sprintf("GetHeld(%.20q)", bad), err, transport.ErrSessionNotFound)
			_, err = hs.DeleteHeld(h.ctx, bad, "r-a")
			h.wantErr(fmt.Sprintf("DeleteHeld(%.20q)", bad), err, transport.ErrSessionNotFound)
		}
	}},
	{"HoldersRace", func(h *sessHarness) {
		// A read that gives a replica its copy and a deletion elsewhere,
		// at once: either the read finds no record, or the deletion
		// counts the reader; never a copy the deletion does not count.
		hs, ok := h.store.(transport.SessionHolders)
		if !ok {
			h.t.Skip("the store is not a transport.SessionHolders")
		}
		const n = 40
		ids := h.ids(n)
		var wg sync.WaitGroup
		for _, id := range ids {
			h.wantErr("CreateHeld", hs.CreateHeld(h.ctx, h.record(id, ""), transport.SessionLimits{}, "r-a"), nil)
			var read, elsewhere bool
			var rerr, derr error
			wg.Go(func() {
				_, rerr = hs.GetHeld(h.ctx, id, "r-b")
				read = rerr == nil
			})
			wg.Go(func() { elsewhere, derr = hs.DeleteHeld(h.ctx, id, "r-a") })
			wg.Wait()
			if rerr != nil && !errors.Is(rerr, transport.ErrSessionNotFound) || derr != nil {
				h.t.Fatalf("GetHeld: %v; DeleteHeld: %v", rerr, derr)
			}
			if read && !elsewhere {
				h.t.Fatalf("session %s: read by r-b, and deleted by r-a as held nowhere else", id)
			}
		}
	}},
	{"ConcurrentAdmission", func(h *sessHarness) {
		const n, max = 40, 10
		ids := h.ids(n)
		var (
			wg       sync.WaitGroup
			admitted atomic.Int32
			errs     = make(chan error, n)
		)
		for i := range n {
			wg.Go(func() {
				err := h.store.Create(h.ctx, h.record(ids[i], ""), transport.SessionLimits{MaxSessions: max})
				switch {
				case err == nil:
					admitted.Add(1)
				case !errors.Is(err, transport.ErrTooManySessions):
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			h.t.Error(err)
		}
		if got := admitted.Load(); got != max {
			h.t.Fatalf("admitted %d sessions, want exactly %d", got, max)
		}
	}},
}
