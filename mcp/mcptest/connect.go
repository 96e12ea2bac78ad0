package mcptest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Options configures [Connect]. The zero value connects a client with no
// handlers of its own, in 2026-07-28.
type Options struct {
	// ProtocolVersion is the revision the client speaks. Empty means the
	// newest, [mcp.Version20260728]: no handshake, every request on its
	// own, requests for input answered in input_required rounds. A
	// revision of the handshake era (one of [mcp.SupportedVersions])
	// connects with initialize, asking for that revision.
	ProtocolVersion string
	// ClientInfo is the client's name and version. Nil means
	// {Name: "mcptest", Version: "1.0.0"}.
	ClientInfo *mcp.Implementation
	// Client configures the client: its capabilities, handlers and
	// middleware. Connect uses a copy, whose Era and ProtocolVersion it
	// sets from ProtocolVersion. Nil means the zero value.
	Client *mcp.ClientOptions
	// Roots are the client's roots (see [mcp.Client.AddRoots]).
	Roots []*mcp.Root
	// Script, if set, answers the server's requests to the client
	// (sampling, elicitation, roots) in place of the handlers of Client;
	// see [Script].
	Script *Script
	// Transcript, if set, records every message of the session, from its
	// first (initialize or server/discover); see [Transcript].
	Transcript *Transcript
	// CloseServer closes the server as well at the end of the test,
	// before goroutines are checked: for a server that runs tasks, whose
	// goroutines outlive the session that started them until the server
	// closes. Leave it false for a server shared by several tests.
	CloseServer bool
}

// Eras returns one revision of each protocol era, for a test that runs
// the same checks in both: [mcp.LatestVersion] (the handshake era) and
// [mcp.Version20260728].
func Eras() []string {
	return []string{mcp.LatestVersion, mcp.Version20260728}
}

// Connect connects a new client to server in process, over the in-memory
// transport, and returns the client's session. It fails the test at once
// (t.Fatal) if the connection fails, so it must be called from the test's
// goroutine.
//
// At the end of the test (t.Cleanup) it closes the client's session and
// the server's, waits for both to end and their handlers to return, and
// fails the test if a goroutine either started is still running (see
// [CheckGoroutines]): a handler that ignores the end of its context, a
// goroutine a handler started and left behind. Both waits together last
// at most 10 seconds. Goroutines that the client starts on the test's
// own calls (the one a [mcp.ClientSession.Listen] subscription keeps)
// are the test's, and not checked; they end with the session. With
// opts.Script, it also fails the test if the server did not ask for
// every step of the script.
func Connect(t testing.TB, server *mcp.Server, opts *Options) *mcp.ClientSession {
	t.Helper()
	return connect(t, server, opts, leakWait)
}

// connect is Connect waiting up to wait for goroutines to end.
func connect(t testing.TB, server *mcp.Server, opts *Options, wait time.Duration) *mcp.ClientSession {
	t.Helper()
	if server == nil {
		t.Fatal("mcptest: Connect: nil server")
	}
	if opts == nil {
		opts = &Options{}
	}
	version := opts.ProtocolVersion
	copts := mcp.ClientOptions{}
	if opts.Client != nil {
		copts = *opts.Client
	}
	switch {
	case version == "" || version == mcp.Version20260728:
		copts.Era, copts.ProtocolVersion = mcp.EraModern, mcp.Version20260728
	case slices.Contains(mcp.SupportedVersions(), version):
		copts.Era, copts.ProtocolVersion = mcp.EraHandshake, version
	default:
		t.Fatalf("mcptest: Connect: unknown protocol revision %q", version)
	}
	if opts.Script != nil {
		copts = *opts.Script.ClientOptions(&copts)
	}
	info := opts.ClientInfo
	if info == nil {
		info = &mcp.Implementation{Name: "mcptest", Version: "1.0.0"}
	}
	client := mcp.NewClient(info, &copts)
	if len(opts.Roots) > 0 {
		client.AddRoots(opts.Roots...)
	}

	ct, st := transport.NewInMemoryTransports()
	if opts.Transcript != nil {
		ct = opts.Transcript.Wrap(ct)
	}
	var (
		ss  *mcp.ServerSession
		cs  *mcp.ClientSession
		err error
	)
	closeServer := opts.CloseServer
	hint := ""
	if !closeServer {
		hint = " (those of the server's own, such as a task's, end when it closes: see mcptest.Options.CloseServer)"
	}
	checkGoroutines(t, wait, hint, func(ctx context.Context) {
		ss, err = server.Connect(ctx, st)
		if err != nil {
			return
		}
		cs, err = client.Connect(ctx, ct)
		if err != nil {
			ss.Close()
			ss.Wait()
		}
	})
	if err != nil {
		t.Fatalf("mcptest: Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		// Waiting for the handlers is bounded: one that ignores its
		// context is reported by the goroutine check, with its stack,
		// rather than hanging the test.
		done := make(chan struct{})
		go func() {
			defer close(done)
			cs.Wait()
			ss.Wait()
			client.Close()
			if closeServer {
				server.Close()
			}
		}()
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
		}
	})
	return cs
}
