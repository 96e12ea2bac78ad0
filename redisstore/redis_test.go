package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// backend is a Redis the tests run against.
type backend struct {
	name string
	// client returns a new client of the backend, closed at the end of t.
	client func(t testing.TB) redis.UniversalClient
}

// serverAddr is the address of the private redis-server of the test
// binary, or "" when none runs; see TestMain.
var serverAddr string

func TestMain(m *testing.M) {
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore: no redis-server:", err)
	}
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// startServer starts a redis-server on a free port of 127.0.0.1, without
// persistence, in a temporary directory, and waits for its PING.
func startServer() (stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "redisstore-test-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	// The server dies with the test binary even if the binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop = func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			stop()
			return nil, errors.New("redis-server exited")
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server does not answer: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a process we started, not synchronising goroutines
	}
	serverAddr = addr
	return stop, nil
}

// prefixes makes each test's keys distinct on a shared server.
var prefixes atomic.Int64

// testPrefix returns a key prefix of its own.
func testPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// backends returns the Redis backends available: always miniredis, and
// the private redis-server when one runs.
func backends() []backend {
	bs := []backend{{name: "miniredis", client: func(t testing.TB) redis.UniversalClient {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		return c
	}}}
	if serverAddr != "" {
		bs = append(bs, backend{name: "redis-server", client: func(t testing.TB) redis.UniversalClient {
			c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			return c
		}})
	}
	return bs
}
