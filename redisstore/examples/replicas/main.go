//go:build unix

// Command replicas runs several replicas of one MCP server sharing a
// Redis, behind a round-robin reverse proxy, on this machine:
//
//	cd redisstore && go run ./examples/replicas -n 3
//
// It starts a redis-server on a free port of 127.0.0.1, in a temporary
// directory and without persistence (or uses the one -redis names), writes
// a key file with one random key, builds the replica's command once with
// go build (redisstore/cmd/stdio-server, or -server everything-server),
// starts -n processes of it with -http 127.0.0.1:0 -redis ADDR -keys FILE
// (and the arguments after the flags, such as -v or
// -client-request-timeout 5s), and serves a round-robin reverse proxy in
// front of them on -addr. Its first line on standard output is
// "listening on http://HOST:PORT/mcp", the proxy's URL; then it prints
// how to connect the example client, from the repository root:
//
//	go run ./examples/stdio-client -url http://HOST:PORT/mcp
//	go run ./examples/stdio-client -era handshake -url http://HOST:PORT/mcp
//
// Each request goes to the next replica: a session initialized on one is
// served by the others, an SSE stream broken on one resumes on another.
// With -kill, every -kill-every (3s) one replica, in turn, is taken out of
// the rotation, killed with SIGKILL and started again.
//
// Ctrl-C or SIGTERM stops the proxy, then the replicas (SIGTERM, then
// SIGKILL after 5 s), then the redis-server, and removes the temporary
// directory (under go run, Ctrl-C in the terminal reaches it, but a
// SIGTERM sent to the go command does not: send it to the program). Each
// child runs in a process group of its own, which is
// killed as a whole; on Linux the children are also killed if this
// program dies without cleaning up (SIGKILL). It needs the go command
// and, without -redis, redis-server on PATH; it runs on Unix systems.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	n := flag.Int("n", 3, "the number of replicas")
	redisAddr := flag.String("redis", "", "use the Redis at this `ADDR` instead of starting a redis-server")
	server := flag.String("server", "stdio-server", "the replica's command in redisstore/cmd: stdio-server or everything-server")
	addr := flag.String("addr", "127.0.0.1:0", "the proxy's address")
	kill := flag.Bool("kill", false, "kill a replica (SIGKILL) every -kill-every and start it again")
	killEvery := flag.Duration("kill-every", 3*time.Second, "with -kill: the time between kills")
	flag.Parse()
	if *n < 1 || (*server != "stdio-server" && *server != "everything-server") {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, config{n: *n, redis: *redisAddr, server: *server, addr: *addr, kill: *kill, killEvery: *killEvery, extra: flag.Args()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

// config holds the flags.
type config struct {
	n         int
	redis     string
	server    string
	addr      string
	kill      bool
	killEvery time.Duration
	extra     []string // more arguments for each replica
}

// run does it all until ctx ends, and leaves no process behind.
func run(ctx context.Context, c config) (err error) {
	dir, err := os.MkdirTemp("", "mcpkit-replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	if c.redis == "" {
		r, addr, err := startRedis(ctx, dir)
		if err != nil {
			return err
		}
		defer r.stop()
		c.redis = addr
	}
	keys := filepath.Join(dir, "keys.txt")
	key := make([]byte, 32)
	rand.Read(key)
	if err := os.WriteFile(keys, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	bin := filepath.Join(dir, c.server)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mcpkit/mcpkit/redisstore/cmd/"+c.server)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build %s (run this in the redisstore module): %w", c.server, err)
	}

	p := &proxy{}
	replicas := make([]*child, c.n)
	defer func() {
		// The replicas first: they hold the clients' streams.
		var wg sync.WaitGroup
		for _, r := range replicas {
			if r != nil {
				wg.Go(r.stop)
			}
		}
		wg.Wait()
	}()
	args := append([]string{"-http", "127.0.0.1:0", "-redis", c.redis, "-keys", keys}, c.extra...)
	for i := range replicas {
		r, u, err := startReplica(ctx, bin, i, args)
		if err != nil {
			return err
		}
		replicas[i] = r
		p.add(u)
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		// Cut the clients' connections at once: the replicas go next.
		srv.Close()
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}()
	u := "http://" + ln.Addr().String() + "/mcp"
	fmt.Printf("listening on %s\n", u)
	fmt.Printf("%d replicas of %s share the Redis at %s; from the repository root, try:\n", c.n, c.server, c.redis)
	fmt.Printf("  go run ./examples/stdio-client -url %s\n", u)
	fmt.Printf("  go run ./examples/stdio-client -era handshake -url %s\n", u)
	fmt.Println("Ctrl-C stops everything.")

	var tick <-chan time.Time
	if c.kill {
		t := time.NewTicker(c.killEvery)
		defer t.Stop()
		tick = t.C
	}
	for next := 0; ; next = (next + 1) % c.n {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			served <- err // for the deferred wait
			return err
		case <-tick:
		}
		r := replicas[next]
		p.remove(r.url)
		fmt.Fprintf(os.Stderr, "replicas: killing replica %d (pid %d, %s)\n", next, r.cmd.Process.Pid, r.url)
		r.kill()
		replicas[next] = nil
		r, u, err := startReplica(ctx, bin, next, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		replicas[next] = r
		p.add(u)
		fmt.Fprintf(os.Stderr, "replicas: replica %d started again (pid %d, %s)\n", next, r.cmd.Process.Pid, u)
	}
}

// child is a process this program started, in a process group of its
// own.
type child struct {
	cmd    *exec.Cmd
	exited chan struct{}
	url    string // a replica's URL
}

// start starts cmd in a process group of its own, killed with this
// program where the system allows.
func start(cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// stop sends SIGTERM to the child's process group, and SIGKILL after 5 s,
// and waits for the child to exit.
func (c *child) stop() {
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.kill()
	}
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) // what it left of its group
}

// kill kills the child's process group and waits for the child.
func (c *child) kill() {
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
}

// startReplica starts replica i and returns it with its URL, read from
// the first line of its standard output.
func startReplica(ctx context.Context, bin string, i int, args []string) (*child, string, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	c, err := start(cmd)
	if err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if u, ok := strings.CutPrefix(l, "listening on "); ok {
			c.url = u
			fmt.Fprintf(os.Stderr, "replicas: replica %d: pid %d, %s\n", i, cmd.Process.Pid, u)
			return c, u, nil
		}
		c.stop()
		return nil, "", fmt.Errorf("replica %d did not start (first line %q)", i, l)
	case <-ctx.Done():
		c.stop()
		return nil, "", ctx.Err()
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, "", fmt.Errorf("replica %d did not start within 30s", i)
	}
}

// startRedis starts a redis-server on a free port of 127.0.0.1 in dir,
// without persistence, and waits until it answers PING.
func startRedis(ctx context.Context, dir string) (*child, string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", fmt.Errorf("%w (install Redis, or give -redis ADDR)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--maxmemory-policy", "noeviction", "--loglevel", "warning")
	c, err := start(cmd)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "replicas: redis-server: pid %d, %s\n", cmd.Process.Pid, addr)
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := rc.Ping(pctx).Err()
		cancel()
		if err == nil {
			return c, addr, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.stop()
			return nil, "", fmt.Errorf("redis-server does not answer: %w", err)
		}
		select {
		case <-c.exited:
			return nil, "", errors.New("redis-server exited")
		case <-time.After(20 * time.Millisecond): // polling the process we started
		}
	}
}

// maxBody bounds a request body the proxy holds to retry it.
const maxBody = 8 << 20

// proxy sends each request to the next replica in turn.
type proxy struct {
	mu       sync.Mutex
	backends []*url.URL
	next     int
}

func (p *proxy) add(u string) {
	pu, err := url.Parse(u)
	if err != nil {
		panic(err) // a URL we printed ourselves
	}
	p.mu.Lock()
	p.backends = append(p.backends, pu)
	p.mu.Unlock()
}

func (p *proxy) remove(u string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range p.backends {
		if b.String() == u {
			p.backends = append(p.backends[:i], p.backends[i+1:]...)
			return
		}
	}
}

// count returns the number of replicas in the rotation.
func (p *proxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.backends)
}

// pick returns the next replica, or nil when there is none.
func (p *proxy) pick() *url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.backends) == 0 {
		return nil
	}
	p.next = (p.next + 1) % len(p.backends)
	return p.backends[p.next]
}

// handler is the round-robin reverse proxy. Each request's body is read
// first (at most maxBody), so that a request that cannot reach its
// replica (it was killed) is sent to the next one.
func (p *proxy) handler() http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = "http"
			r.Out.Host = r.In.Host // the client's Host, which the replicas check (DNS rebinding)
		},
		Transport:     &retry{p: p, rt: http.DefaultTransport},
		FlushInterval: -1, // SSE: each event at once
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		rp.ServeHTTP(w, r)
	})
}

// retry sends a request to the next replica, and to the one after when
// it cannot connect (no byte of the request left), trying each replica
// at most once.
type retry struct {
	p  *proxy
	rt http.RoundTripper
}

func (t *retry) RoundTrip(r *http.Request) (*http.Response, error) {
	var err error = errors.New("no replica")
	for range 1 + t.p.count() {
		b := t.p.pick()
		if b == nil {
			break
		}
		out := r.Clone(r.Context())
		out.URL.Host = b.Host
		if r.GetBody != nil {
			out.Body, _ = r.GetBody()
		}
		var resp *http.Response
		resp, err = t.rt.RoundTrip(out)
		var op *net.OpError
		if err == nil || !errors.As(err, &op) || op.Op != "dial" {
			return resp, err
		}
	}
	return nil, err
}
