package redisstore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// clusterAddrs are the nodes of the private 3-node Redis Cluster of the
// test binary, or nil when none runs; see TestMain.
var clusterAddrs []string

// redisCPUs, when set, is the CPU list (taskset's syntax) the shared
// redis-server runs on. With the test binary pinned to other CPUs
// (taskset -c), the scale benchmarks then measure a replica whose Redis
// has CPUs of its own, as in production, rather than sharing them:
//
//	go test -c -o /tmp/rs.test . && taskset -c 0 /tmp/rs.test -test.short -test.run '^$' -test.bench BenchmarkScale -test.benchmem -redis-cpus 1
var redisCPUs = flag.String("redis-cpus", "", "run the shared redis-server on these CPUs (taskset's list)")

func TestMain(m *testing.M) {
	flag.Parse()
	var stops []func()
	stop, addr, err := startServer()
	if err == nil && *redisCPUs != "" {
		err = pinServer(addr, *redisCPUs)
		if err != nil {
			stop()
			fmt.Fprintln(os.Stderr, "redisstore: -redis-cpus:", err)
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore: no redis-server, the tests use miniredis only:", err)
	} else {
		serverAddr = addr
		stops = append(stops, stop)
		if !testing.Short() {
			stop, addrs, err := startCluster()
			if err != nil {
				fmt.Fprintln(os.Stderr, "redisstore: no Redis Cluster:", err)
			} else {
				clusterAddrs = addrs
				stops = append(stops, stop)
			}
		}
	}
	code := m.Run()
	for _, stop := range stops {
		stop()
	}
	os.Exit(code)
}

// startCluster starts three cluster-enabled redis-servers and joins them
// with redis-cli --cluster create, then waits until the cluster is ok.
func startCluster() (stop func(), addrs []string, err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for range 3 {
		s, addr, err := startServer("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, s)
		addrs = append(addrs, addr)
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("redis-cli --cluster create: %w: %s", err, out)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		ok := true
		for _, a := range addrs {
			n := redis.NewClient(&redis.Options{Addr: a})
			info, err := n.ClusterInfo(context.Background()).Result()
			n.Close()
			ok = ok && err == nil && strings.Contains(info, "cluster_state:ok")
		}
		if ok && c.Set(context.Background(), "probe{a}", 1, time.Second).Err() == nil {
			return stop, addrs, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, nil, errors.New("the cluster does not come up")
		}
		time.Sleep(50 * time.Millisecond) // polling processes we started, not synchronising goroutines
	}
}

// startServer starts a redis-server with extra arguments on a free port
// of 127.0.0.1, without persistence, in a temporary directory, and waits
// for its PING.
func startServer(extra ...string) (stop func(), addr string, err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "redisstore-test-")
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	cmd := exec.Command(bin, args...)
	// The server dies with the test binary even if the binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
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
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
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
			return nil, "", errors.New("redis-server exited")
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", fmt.Errorf("redis-server does not answer: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a process we started, not synchronising goroutines
	}
	return stop, addr, nil
}

// pinServer moves every thread of the redis-server at addr to cpus
// (taskset -a -p), finding its process from INFO server.
func pinServer(addr, cpus string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		return err
	}
	pid := ""
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid = v
		}
	}
	if pid == "" {
		return errors.New("INFO server names no process_id")
	}
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, pid).CombinedOutput(); err != nil {
		return fmt.Errorf("taskset: %w: %s", err, out)
	}
	return nil
}

// prefixes makes each test's keys distinct on a shared server.
var prefixes atomic.Int64

// testPrefix returns a key prefix of its own.
func testPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// backends returns the Redis backends available: always miniredis, the
// private redis-server when one runs, and the private Cluster when it
// runs (not with -short).
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
	if clusterAddrs != nil {
		bs = append(bs, backend{name: "cluster", client: func(t testing.TB) redis.UniversalClient {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterAddrs, ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			return c
		}})
	}
	return bs
}
