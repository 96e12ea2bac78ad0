package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func testStores(t *testing.T) map[string]TokenStore {
	return map[string]TokenStore{
		"memory": &MemoryStore{},
		"file":   &FileStore{Path: filepath.Join(t.TempDir(), "sub", "tokens.json")},
	}
}

func TestStores(t *testing.T) {
	for name, s := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if tok, err := s.LoadToken(ctx, "https://a"); tok != nil || err != nil {
				t.Fatalf("empty store: %v %v", tok, err)
			}
			exp := time.Now().Add(time.Hour).Round(time.Second)
			want := &StoredToken{Token: &oauth2.Token{AccessToken: "at", TokenType: "Bearer", RefreshToken: "rt", Expiry: exp}, Issuer: "https://as", Resource: "https://a/mcp", Scopes: []string{"x"}}
			if err := s.SaveToken(ctx, "https://a", want); err != nil {
				t.Fatal(err)
			}
			got, err := s.LoadToken(ctx, "https://a")
			if err != nil || got == nil || got.Token.AccessToken != "at" || got.Token.RefreshToken != "rt" || !got.Token.Expiry.Equal(exp) || got.Issuer != "https://as" || got.Scopes[0] != "x" {
				t.Fatalf("LoadToken = %+v, %v", got, err)
			}
			got.Token.AccessToken = "changed"
			if again, _ := s.LoadToken(ctx, "https://a"); again.Token.AccessToken != "at" {
				t.Errorf("a loaded token aliases the stored one")
			}
			c := &ClientInfo{ClientID: "id", ClientSecret: "secret", RedirectURIs: []string{"http://127.0.0.1/cb"}}
			if err := s.SaveClient(ctx, "https://as", c); err != nil {
				t.Fatal(err)
			}
			if gc, err := s.LoadClient(ctx, "https://as"); err != nil || gc.ClientID != "id" || gc.ClientSecret != "secret" {
				t.Errorf("LoadClient = %+v, %v", gc, err)
			}
			if gc, _ := s.LoadClient(ctx, "https://other"); gc != nil {
				t.Errorf("a registration for another issuer: %+v", gc)
			}
			if err := s.DeleteToken(ctx, "https://a"); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteClient(ctx, "https://as"); err != nil {
				t.Fatal(err)
			}
			if tok, _ := s.LoadToken(ctx, "https://a"); tok != nil {
				t.Errorf("token survived DeleteToken")
			}
			if gc, _ := s.LoadClient(ctx, "https://as"); gc != nil {
				t.Errorf("registration survived DeleteClient")
			}
		})
	}
}

func TestFileStorePermissionsAndAtomicity(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	s := &FileStore{Path: filepath.Join(dir, "tokens.json")}
	ctx := t.Context()
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("https://s%d", i)
			if err := s.SaveToken(ctx, key, &StoredToken{Token: &oauth2.Token{AccessToken: key}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
		}
		di, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm() != 0o700 {
			t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the file alone (no temporary files left)", len(entries))
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	var d storeData
	if err := json.Unmarshal(b, &d); err != nil || len(d.Tokens) != n {
		t.Fatalf("file holds %d tokens (%v), want %d", len(d.Tokens), err, n)
	}
	// Another store on the same file sees every write.
	other := &FileStore{Path: s.Path}
	if tok, err := other.LoadToken(ctx, "https://s7"); err != nil || tok == nil || tok.Token.AccessToken != "https://s7" {
		t.Errorf("second store: %v %v", tok, err)
	}
}

func TestFileStoreRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	if _, err := (&FileStore{Path: bad}).LoadToken(t.Context(), "x"); err == nil {
		t.Error("malformed file accepted")
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, make([]byte, maxStoreFileSize+1), 0o600)
	if _, err := (&FileStore{Path: big}).LoadClient(t.Context(), "x"); !errors.Is(err, ErrStoreTooLarge) {
		t.Errorf("oversized file: %v, want ErrStoreTooLarge", err)
	}
	if err := (&FileStore{}).SaveToken(t.Context(), "x", &StoredToken{}); err == nil {
		t.Error("a FileStore without Path saved")
	}
}
