package bench

import (
	"context"
	"io"
	"testing"

	"github.com/mcpkit/mcpkit/bench/internal/floor"
)

// pipes returns the two directions of an in-process newline-delimited
// stream: the client writes c2sW and reads s2cR, the server reads c2sR and
// writes s2cW. Every SDK's "-pipe" target uses this, so they share the
// floor's framing and synchronous-pipe costs.
func pipes() (c2sR *io.PipeReader, c2sW *io.PipeWriter, s2cR *io.PipeReader, s2cW *io.PipeWriter) {
	c2sR, c2sW = io.Pipe()
	s2cR, s2cW = io.Pipe()
	return
}

// floorCaller adapts a floor client to a caller.
func floorCaller(c *floor.Client) caller {
	return func(ctx context.Context) error {
		text, err := c.CallEcho(ctx, message)
		if err != nil {
			return err
		}
		return checkText(text)
	}
}

// floorPipe is the hand-written JSON-RPC floor over io.Pipe.
func floorPipe(tb testing.TB) caller {
	return floorPipeWith(tb, floor.Serve, floor.NewClient)
}

// floorPipeLatest is floorPipe with the floor's client of revision
// 2026-07-28, whose every request carries the _meta envelope.
func floorPipeLatest(tb testing.TB) caller {
	return floorPipeWith(tb, floor.ServeModern, floor.NewModernClient)
}

// floorPipeWith is floorPipe with serve and the client newClient makes.
func floorPipeWith(tb testing.TB, serve func(io.Reader, io.Writer) error, newClient func(io.Reader, io.WriteCloser) *floor.Client) caller {
	c2sR, c2sW, s2cR, s2cW := pipes()
	served := make(chan error, 1)
	go func() {
		err := serve(c2sR, s2cW)
		s2cW.CloseWithError(err) // EOF for the client's reader
		served <- err
	}()
	c := newClient(s2cR, c2sW)
	tb.Cleanup(func() {
		c.Close()
		if err := <-served; err != nil {
			tb.Error(err)
		}
	})
	return floorCaller(c)
}

// floorStdio is the hand-written JSON-RPC floor talking to
// cmd/floor-echo-server over its stdin and stdout.
func floorStdio(tb testing.TB) caller {
	cmd := serverCommand(tb, "floor")
	stdin, stdout := startPiped(tb, cmd)
	c := floor.NewClient(stdout, stdin)
	tb.Cleanup(func() {
		c.Close() // closes stdin; the server exits on EOF, closing stdout
		if err := cmd.Wait(); err != nil {
			tb.Error(err)
		}
	})
	return floorCaller(c)
}
