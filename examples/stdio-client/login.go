package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
)

// newAuthorizer returns the Authorizer for -login: the authorization code
// flow through a loopback redirect URI on callback (a loopback address
// such as 127.0.0.1:0), showing the user the authorization URL with open
// (nil writes it to out), and tokens and registrations kept in tokenFile
// ("" means mcpkit/tokens.json in the user configuration directory,
// created with mode 0600). The returned function stops the listener.
func newAuthorizer(tokenFile, callback string, open func(context.Context, string) error, out io.Writer) (*auth.Authorizer, func() error, error) {
	if tokenFile == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, nil, fmt.Errorf("no place for the token file (set -token-file): %w", err)
		}
		tokenFile = filepath.Join(dir, "mcpkit", "tokens.json")
	}
	agent, err := auth.ListenLoopback(callback, "/callback")
	if err != nil {
		return nil, nil, err
	}
	agent.Open, agent.Output = open, out
	a := &auth.Authorizer{
		Agent:        agent,
		RedirectURL:  agent.RedirectURL(),
		Store:        &auth.FileStore{Path: tokenFile},
		Registration: auth.ClientMetadata{ClientName: "mcpkit stdio-client"},
	}
	return a, agent.Close, nil
}

// machineAuthorizer returns an Authorizer using the client credentials
// grant with the credentials given as ID:SECRET.
func machineAuthorizer(idSecret string) (*auth.Authorizer, error) {
	id, secret, ok := strings.Cut(idSecret, ":")
	if !ok || id == "" {
		return nil, errors.New("-client-credentials must be ID:SECRET")
	}
	return &auth.Authorizer{Grant: &auth.ClientCredentials{ClientAuth: auth.ClientAuth{ClientID: id, ClientSecret: secret}}}, nil
}
