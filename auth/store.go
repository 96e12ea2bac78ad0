package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// A StoredToken is what an [Authorizer] keeps about the token it uses at
// one MCP server.
type StoredToken struct {
	// Token is the access token, with its refresh token and expiry.
	Token *oauth2.Token `json:"token"`
	// Issuer is the issuer of the authorization server that issued it.
	// A token is used only while the server names that issuer.
	Issuer string `json:"issuer"`
	// Resource is the resource identifier the token was requested for.
	Resource string `json:"resource,omitempty"`
	// Scopes are the scopes the client asked for.
	Scopes []string `json:"scopes,omitempty"`
}

// A ClientInfo is a client's identity at one authorization server: what
// pre-registration or dynamic client registration gave it, or a Client
// ID Metadata Document URL.
type ClientInfo struct {
	// ClientID is the client identifier. Required.
	ClientID string `json:"client_id"`
	// ClientSecret is the client secret of a confidential client, or "".
	ClientSecret string `json:"client_secret,omitempty"`
	// TokenEndpointAuthMethod is how the client authenticates at the
	// token endpoint: "none", "client_secret_basic" or
	// "client_secret_post"; "" chooses from the server's metadata.
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// RedirectURIs are the registered redirect URIs; a registration that
	// lacks the Authorizer's redirect URL is made anew.
	RedirectURIs []string `json:"redirect_uris,omitempty"`
}

// A TokenStore keeps tokens and client registrations across requests and,
// for persistent stores, across runs. Tokens are keyed by the MCP
// server's origin (scheme, host and port) and carry the issuer that
// issued them; registrations are keyed by the authorization server's
// issuer, so that credentials from one server are never offered to
// another. Load methods return nil and no error when nothing is stored.
// Implementations must be safe for concurrent use.
type TokenStore interface {
	// LoadToken returns the token stored for server.
	LoadToken(ctx context.Context, server string) (*StoredToken, error)
	// SaveToken stores t for server, replacing any.
	SaveToken(ctx context.Context, server string, t *StoredToken) error
	// DeleteToken removes the token stored for server.
	DeleteToken(ctx context.Context, server string) error
	// LoadClient returns the registration stored for issuer.
	LoadClient(ctx context.Context, issuer string) (*ClientInfo, error)
	// SaveClient stores c for issuer, replacing any.
	SaveClient(ctx context.Context, issuer string, c *ClientInfo) error
	// DeleteClient removes the registration stored for issuer.
	DeleteClient(ctx context.Context, issuer string) error
}

// storeData is the content of a store.
type storeData struct {
	Tokens  map[string]*StoredToken `json:"tokens,omitempty"`
	Clients map[string]*ClientInfo  `json:"clients,omitempty"`
}

func (d *storeData) init() {
	if d.Tokens == nil {
		d.Tokens = map[string]*StoredToken{}
	}
	if d.Clients == nil {
		d.Clients = map[string]*ClientInfo{}
	}
}

// MemoryStore is a TokenStore in memory, the default of an [Authorizer].
// Its zero value is empty and ready to use.
type MemoryStore struct {
	mu   sync.Mutex
	data storeData
}

// LoadToken implements TokenStore.
func (s *MemoryStore) LoadToken(_ context.Context, server string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneStoredToken(s.data.Tokens[server]), nil
}

// SaveToken implements TokenStore.
func (s *MemoryStore) SaveToken(_ context.Context, server string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.init()
	s.data.Tokens[server] = cloneStoredToken(t)
	return nil
}

// DeleteToken implements TokenStore.
func (s *MemoryStore) DeleteToken(_ context.Context, server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data.Tokens, server)
	return nil
}

// LoadClient implements TokenStore.
func (s *MemoryStore) LoadClient(_ context.Context, issuer string) (*ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneClient(s.data.Clients[issuer]), nil
}

// SaveClient implements TokenStore.
func (s *MemoryStore) SaveClient(_ context.Context, issuer string, c *ClientInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.init()
	s.data.Clients[issuer] = cloneClient(c)
	return nil
}

// DeleteClient implements TokenStore.
func (s *MemoryStore) DeleteClient(_ context.Context, issuer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data.Clients, issuer)
	return nil
}

func cloneStoredToken(t *StoredToken) *StoredToken {
	if t == nil {
		return nil
	}
	c := *t
	if t.Token != nil {
		tok := *t.Token
		c.Token = &tok
	}
	c.Scopes = append([]string(nil), t.Scopes...)
	return &c
}

func cloneClient(c *ClientInfo) *ClientInfo {
	if c == nil {
		return nil
	}
	cc := *c
	cc.RedirectURIs = append([]string(nil), c.RedirectURIs...)
	return &cc
}

// maxStoreFileSize bounds the file a FileStore reads: 1 MiB.
const maxStoreFileSize = 1 << 20

// FileStore is a TokenStore in a JSON file, for hosts that keep a login
// across runs. The file is created with mode 0600 (owner only) in a
// directory created with mode 0700, and replaced atomically (a
// temporary file in the same directory, then a rename), so that a crash
// never leaves it half written. Every call reads the file afresh, so
// two processes sharing it see each other's last complete write. The
// file holds access and refresh tokens and client secrets: keep it
// private. Files over 1 MiB are refused.
type FileStore struct {
	// Path is the file's path. Required.
	Path string

	mu sync.Mutex
}

// ErrStoreTooLarge reports a FileStore file larger than 1 MiB.
var ErrStoreTooLarge = errors.New("auth: token store file too large")

func (s *FileStore) read() (*storeData, error) {
	if s.Path == "" {
		return nil, errors.New("auth: FileStore needs a Path")
	}
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		d := &storeData{}
		d.init()
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: token store: %w", err)
	}
	defer f.Close()
	b, err := readBody(f)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("%w: %s", ErrStoreTooLarge, s.Path)
		}
		return nil, fmt.Errorf("auth: token store: %w", err)
	}
	d := &storeData{}
	if len(b) > 0 {
		if err := json.Unmarshal(b, d); err != nil {
			return nil, fmt.Errorf("auth: token store %s is not valid JSON: %w", s.Path, err)
		}
	}
	d.init()
	return d, nil
}

func (s *FileStore) write(d *storeData) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if len(b) > maxStoreFileSize {
		return ErrStoreTooLarge
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.Path)+".tmp*")
	if err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	// CreateTemp makes the file 0600 already; say so for other umasks
	// and platforms.
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	if err := os.Rename(name, s.Path); err != nil {
		return fmt.Errorf("auth: token store: %w", err)
	}
	ok = true
	return nil
}

// update reads the file, applies f and writes the result.
func (s *FileStore) update(f func(d *storeData)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	f(d)
	return s.write(d)
}

// LoadToken implements TokenStore.
func (s *FileStore) LoadToken(_ context.Context, server string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	return d.Tokens[server], nil
}

// SaveToken implements TokenStore.
func (s *FileStore) SaveToken(_ context.Context, server string, t *StoredToken) error {
	return s.update(func(d *storeData) { d.Tokens[server] = t })
}

// DeleteToken implements TokenStore.
func (s *FileStore) DeleteToken(_ context.Context, server string) error {
	return s.update(func(d *storeData) { delete(d.Tokens, server) })
}

// LoadClient implements TokenStore.
func (s *FileStore) LoadClient(_ context.Context, issuer string) (*ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	return d.Clients[issuer], nil
}

// SaveClient implements TokenStore.
func (s *FileStore) SaveClient(_ context.Context, issuer string, c *ClientInfo) error {
	return s.update(func(d *storeData) { d.Clients[issuer] = c })
}

// DeleteClient implements TokenStore.
func (s *FileStore) DeleteClient(_ context.Context, issuer string) error {
	return s.update(func(d *storeData) { delete(d.Clients, issuer) })
}
