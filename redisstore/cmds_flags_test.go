package redisstore

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCmdsRefuseBadFlags runs both commands with a key file they must
// refuse and with a Redis that does not answer: each exits with status 1
// and says why (naming the key file's line, never the key), before it
// serves anything.
func TestCmdsRefuseBadFlags(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.txt")
	if err := os.WriteFile(short, []byte("# too short\n"+strings.Repeat("ab", 31)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A port that refuses connections: one just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	for _, cmd := range []string{"everything-server", "stdio-server"} {
		bin := goBuild(t, "./cmd/"+cmd)
		for _, tt := range []struct {
			name string
			args []string
			want string
		}{
			{"short key", []string{"-keys", short}, "line 2"},
			{"no key file", []string{"-keys", filepath.Join(dir, "absent.txt")}, "absent.txt"},
			{"no redis", []string{"-keys", good, "-redis", closed}, "redis " + closed},
		} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, append(tt.args, "-http", "127.0.0.1:0")...).CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 {
					t.Fatalf("%v: %v; want exit status 1\n%s", tt.args, err, out)
				}
				if !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "listening on") {
					t.Errorf("%v: output lacks %q, or it served:\n%s", tt.args, tt.want, out)
				}
				if strings.Contains(string(out), strings.Repeat("ab", 31)) {
					t.Errorf("%v: the output shows the key:\n%s", tt.args, out)
				}
			})
		}
	}
}
