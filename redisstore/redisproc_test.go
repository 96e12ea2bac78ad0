package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisProc is a private redis-server that a fault test stops, kills and
// restarts: always on the same port of 127.0.0.1, without persistence (a
// restart comes back empty), in a temporary directory. It dies with the
// test binary (Pdeathsig), and the test's cleanup stops it.
type redisProc struct {
	t      testing.TB
	bin    string
	port   int
	dir    string
	extra  []string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd exits
	paused bool
}

// startRedis starts a private redis-server with extra arguments, or skips
// t when there is none on PATH (fails with CI=true).
func startRedis(t testing.TB, extra ...string) *redisProc {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redisstore: no redis-server on PATH")
		}
		t.Skip("redisstore: no redis-server on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	p := &redisProc{t: t, bin: bin, port: port, dir: t.TempDir(), extra: extra}
	t.Cleanup(p.stop)
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// addr is the server's address.
func (p *redisProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// client returns a client of the server as the stores want one
// (ContextTimeoutEnabled), closed at the end of the test.
func (p *redisProc) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr(), ContextTimeoutEnabled: true})
	p.t.Cleanup(func() { c.Close() })
	return c
}

// start runs the server and waits for its PING.
func (p *redisProc) start() error {
	args := append([]string{"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", p.dir}, p.extra...)
	cmd := exec.Command(p.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited, p.paused = cmd, exited, false
	c := redis.NewClient(&redis.Options{Addr: p.addr()})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("redis-server exited")
		default:
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("redis-server does not answer: %w", err)
		}
		time.Sleep(10 * time.Millisecond) // polling a process we started, not synchronising goroutines
	}
}

// pause stops the server (SIGSTOP): connections stay open, nothing is
// answered.
func (p *redisProc) pause() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.t.Fatal(err)
	}
	p.paused = true
}

// resume continues a paused server (SIGCONT).
func (p *redisProc) resume() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		p.t.Fatal(err)
	}
	p.paused = false
}

// kill kills the server (SIGKILL) and waits for it to exit.
func (p *redisProc) kill() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.exited
	p.cmd, p.paused = nil, false
}

// restart starts a killed server again, empty, on the same port.
func (p *redisProc) restart() {
	p.t.Helper()
	if p.cmd != nil {
		p.t.Fatal("restart of a running redis-server")
	}
	if err := p.start(); err != nil {
		p.t.Fatal(err)
	}
}

// stop ends the server: SIGTERM (SIGCONT first if paused), then SIGKILL
// after 5 s.
func (p *redisProc) stop() {
	if p.cmd == nil {
		return
	}
	if p.paused {
		p.cmd.Process.Signal(syscall.SIGCONT)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		p.cmd = nil
	case <-time.After(5 * time.Second):
		p.kill()
	}
}

// TestRedisProc checks the helpers: a paused server answers nothing
// within a deadline and everything after resume; a killed one refuses
// connections, and comes back empty on the same port after restart; and
// stop leaves no process.
func TestRedisProc(t *testing.T) {
	p := startRedis(t)
	c := p.client()
	ctx := t.Context()
	if err := c.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	p.pause()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := c.Get(short, "k").Err()
	cancel()
	if err == nil {
		t.Fatal("a paused server answered")
	}
	p.resume()
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("after resume: %q, %v", v, err)
	}
	p.kill()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatal("a killed server answered")
	}
	p.restart()
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after restart: %v, want empty", err)
	}
	pid := p.cmd.Process.Pid
	p.stop()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("redis-server %d still there after stop: %v", pid, err)
	}
}
