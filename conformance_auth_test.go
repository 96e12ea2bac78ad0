package mcpkit_test

// The official MCP conformance suite's authorization server scenarios
// (its "authorization" command) against an auth/authtest server: the
// metadata document, and the authorization code grant, where the suite
// prints an authorization URL for a user to open in a browser and waits
// for the redirect at its callback server. Here the test is the browser:
// it reads the suite's output, requests the URL, and follows the
// redirect authtest's immediate consent answers with.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth/authtest"
)

// conformanceClientID is the client the suite is told to use; the test
// pre-registers it with its callback URL.
const conformanceClientID = "conformance-client"

// TestOfficialSuiteAuthorizationServer runs the suite's authorization
// server scenarios against a conforming authtest server, where every
// check must succeed, and against misbehaving ones, where the check the
// misbehavior breaks must fail (so the run is shown able to fail).
func TestOfficialSuiteAuthorizationServer(t *testing.T) {
	t.Parallel()
	suite := installedSuite(t)
	tests := []struct {
		name      string
		misbehave authtest.Misbehavior
		// failing are the IDs of the checks that must fail. The code grant
		// scenario needs the metadata scenario's success: it fails (without
		// an authorization request) when that does.
		failing []string
		// visit says whether the suite makes an authorization request.
		visit bool
		args  []string // more arguments for the suite
	}{
		{name: "conforming", visit: true},
		{name: "conforming, with a resource indicator", visit: true, args: []string{"--resource", "https://mcp.example.com/mcp"}},
		{name: "wrong issuer in metadata", misbehave: authtest.Misbehavior{WrongIssuer: true},
			failing: []string{"authorization-server-metadata", "authorization-code-grant"}},
		{name: "no S256 in metadata", misbehave: authtest.Misbehavior{NoS256: true},
			failing: []string{"authorization-server-metadata", "authorization-code-grant"}},
		{name: "wrong iss in the authorization response", misbehave: authtest.Misbehavior{WrongResponseIssuer: true},
			failing: []string{"authorization-code-grant"}, visit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := freeLoopbackPort(t)
			as := authtest.NewServer(&authtest.Options{
				Clients: []authtest.Client{{
					ID:           conformanceClientID,
					RedirectURIs: []string{fmt.Sprintf("http://127.0.0.1:%d/callback", port)},
				}},
				Misbehavior: tt.misbehave,
			})
			defer as.Close()
			out := suiteOutDir(t, "authorization-"+strings.NewReplacer(" ", "-", ",", "").Replace(tt.name))
			args := append([]string{"authorization", "--url", as.URL, "--client-id", conformanceClientID,
				"-p", fmt.Sprint(port), "-o", out}, tt.args...)
			code, console, visited := runAuthorizationSuite(t, suite, out, as.URL, args...)
			checks := readAuthorizationChecks(t, out)
			if len(checks) == 0 {
				t.Fatalf("the suite left no checks (exit %d); output:\n%s", code, tail(console, 40))
			}
			if (visited > 0) != tt.visit {
				t.Errorf("the test visited %d authorization URLs the suite printed, want %v; output:\n%s", visited, tt.visit, tail(console, 40))
			}
			counts := map[string]int{}
			for _, c := range checks {
				counts[c.Status]++
				switch {
				case slices.Contains(tt.failing, c.ID):
					if c.Status != "FAILURE" {
						t.Errorf("check %s is %s, want FAILURE", c.ID, c.Status)
					}
				case c.Status != "SUCCESS":
					t.Errorf("check %s (%s) is %s: %s", c.ID, c.scenario, c.Status, c.ErrorMessage)
				}
			}
			for _, id := range tt.failing {
				if !containsCheck(checks, id) {
					t.Errorf("check %s did not run", id)
				}
			}
			if wantFail := len(tt.failing) > 0; (code != 0) != wantFail {
				t.Errorf("the suite exited with %d; output ends:\n%s", code, tail(console, 30))
			}
			t.Logf("authorization server checks: %d total, %d SUCCESS, %d FAILURE, %d WARNING, %d other",
				len(checks), counts["SUCCESS"], counts["FAILURE"], counts["WARNING"],
				len(checks)-counts["SUCCESS"]-counts["FAILURE"]-counts["WARNING"])
		})
	}
}

// authorizationCheck is a suiteCheck with the scenario it came from.
type authorizationCheck struct {
	suiteCheck
	scenario string
}

func containsCheck(checks []authorizationCheck, id string) bool {
	for _, c := range checks {
		if c.ID == id {
			return true
		}
	}
	return false
}

// freeLoopbackPort returns a loopback TCP port that was free a moment
// ago, for the suite's callback server.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runAuthorizationSuite runs the suite with args, reading its output as
// it comes: each authorization URL of issuer it prints is requested, the
// redirect followed to the suite's callback server, as a browser would.
// It returns the suite's exit code, its output, and how many URLs were
// visited.
func runAuthorizationSuite(t *testing.T, s *officialSuite, dir, issuer string, args ...string) (int, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), officialSuiteDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, append([]string{"--require", s.preload, s.cli}, args...)...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	var out lockedBuffer
	visited := 0
	browser := &http.Client{Timeout: 20 * time.Second}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		// The suite prints the URL, then starts its callback server, which
		// says so when it listens; the URL is visited once both are seen.
		var pending string
		listening := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(&out, line)
			switch {
			case strings.HasPrefix(line, issuer+"/authorize?"):
				pending = line
			case strings.HasPrefix(line, "Callback server started"):
				listening = true
			}
			if pending == "" || !listening {
				continue
			}
			visit := pending
			pending, listening = "", false
			visited++
			resp, err := browser.Get(visit)
			if err != nil {
				fmt.Fprintf(&out, "[test] visiting the authorization URL: %v\n", err)
				continue
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			fmt.Fprintf(&out, "[test] the authorization URL led to HTTP %d at %s\n", resp.StatusCode, resp.Request.URL.Redacted())
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	pw.Close()
	<-scanned
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within %v; output:\n%s", officialSuiteDeadline, tail(out.String(), 60))
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running the conformance suite: %v\n%s", err, out.String())
		}
		code = ee.ExitCode()
	}
	return code, out.String(), visited
}

// readAuthorizationChecks reads the checks.json of every scenario under
// out.
func readAuthorizationChecks(t *testing.T, out string) []authorizationCheck {
	t.Helper()
	var res []authorizationCheck
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(out, filepath.Dir(path))
		if err != nil {
			return err
		}
		scenario := strings.TrimPrefix(resultDirSuffix.ReplaceAllString(filepath.ToSlash(rel), ""), "authorization-server-")
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []suiteCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, c := range checks {
			res = append(res, authorizationCheck{suiteCheck: c, scenario: scenario})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the suite's results: %v", err)
	}
	return res
}
