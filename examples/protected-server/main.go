// Command protected-server is an example MCP server behind OAuth 2.1
// authorization: every request needs an access token from a trusted
// authorization server, issued for this server (its resource identifier,
// http://ADDR/mcp), and the tool admin needs the scope mcp:admin besides.
//
//	go run ./examples/protected-server -http 127.0.0.1:8080 -issuer https://auth.example.com
//
// It verifies tokens as JWTs signed by the issuer's keys (found through
// the issuer's metadata, then its JWKS), publishes its Protected Resource
// Metadata at http://ADDR/.well-known/oauth-protected-resource/mcp, and
// answers requests without a valid token with 401 and a challenge naming
// that metadata, and calls of admin without the scope with 403
// insufficient_scope, so that a client steps up.
//
// Without -issuer it starts a test authorization server (package
// auth/authtest) on a free loopback port, which consents at once for the
// user "user", and prints how to log in:
//
//	go run ./examples/protected-server -http 127.0.0.1:8080
//	go run ./examples/stdio-client -login -url http://127.0.0.1:8080/mcp -tool whoami
//
// Its tools: whoami answers the verified subject, client and scopes; echo
// sends its message back; admin answers only to tokens with mcp:admin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"github.com/mcpkit/mcpkit/mcp"
)

// AdminScope is the scope the admin tool needs.
const AdminScope = "mcp:admin"

// WhoamiOutput is the structured output of whoami.
type WhoamiOutput struct {
	Subject  string   `json:"subject"`
	ClientID string   `json:"clientId,omitempty"`
	Scopes   []string `json:"scopes"`
}

// EchoInput is the input of echo.
type EchoInput struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

// EchoOutput is the structured output of echo.
type EchoOutput struct {
	Message string `json:"message"`
}

// AdminOutput is the structured output of admin.
type AdminOutput struct {
	Granted string `json:"granted"`
}

// newServer returns the MCP server with the example tools.
func newServer() (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpkit-protected-example", Version: "1.0.0"}, nil)
	err := errors.Join(
		mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Answers who the access token says you are."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (WhoamiOutput, error) {
				info := auth.TokenInfoFromContext(ctx)
				if info == nil {
					return WhoamiOutput{}, errors.New("no verified token")
				}
				return WhoamiOutput{Subject: info.Subject, ClientID: info.ClientID, Scopes: append([]string{}, info.Scopes...)}, nil
			}),
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Sends the message back."},
			func(ctx context.Context, req *mcp.CallToolRequest, in EchoInput) (EchoOutput, error) {
				return EchoOutput(in), nil
			}),
		mcp.AddTool(s, &mcp.Tool{Name: "admin", Description: "Needs the scope " + AdminScope + "."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (AdminOutput, error) {
				// The middleware refused calls without the scope already;
				// the check here keeps the tool safe behind any front.
				if info := auth.TokenInfoFromContext(ctx); info == nil || !info.HasScopes(AdminScope) {
					return AdminOutput{}, errors.New("the token lacks " + AdminScope)
				}
				return AdminOutput{Granted: AdminScope}, nil
			}),
	)
	return s, err
}

// config is what main reads from its flags.
type config struct {
	addr   string // the address to listen on
	issuer string // the trusted issuer; "" starts an authtest server
}

// serve listens on cfg.addr and serves the protected MCP endpoint until
// ctx ends. It reports the endpoint's URL to ready once it accepts
// connections, and writes what an operator needs to know to out.
func serve(ctx context.Context, cfg config, out io.Writer, ready func(mcpURL string)) error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	resource := "http://" + ln.Addr().String() + "/mcp"
	issuer := cfg.issuer
	if issuer == "" {
		as := authtest.NewServer(&authtest.Options{Scopes: []string{AdminScope, "mcp:tools"}})
		defer as.Close()
		issuer = as.URL
		fmt.Fprintf(out, "protected-server: no -issuer: a test authorization server runs at %s (it consents at once for the user %q)\n", issuer, "user")
		fmt.Fprintf(out, "protected-server: log in with: go run ./examples/stdio-client -login -url %s -tool whoami\n", resource)
	}
	verifier, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: issuer, Audience: resource})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	guard, err := auth.RequireToken(&auth.ResourceOptions{
		Verifier:   verifier,
		Resource:   resource,
		ToolScopes: map[string][]string{"admin": {AdminScope}},
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	s, err := newServer()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	handler := mcp.NewStreamableHTTPHandler(s, nil)
	defer handler.Close()
	mux.Handle("/mcp", guard(handler))
	if err := auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"mcp:tools"},
		ResourceName:         "mcpkit protected example",
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "protected-server: serving %s (Streamable HTTP), trusting tokens of %s\n", resource, issuer)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx)
	}()
	if ready != nil {
		ready(resource)
	}
	err = srv.Serve(ln)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func main() {
	addr := flag.String("http", "127.0.0.1:8080", "serve HTTP on this address")
	issuer := flag.String("issuer", "", "the authorization server whose tokens are trusted (its issuer URL); empty starts a test one on loopback")
	flag.Parse()
	if *issuer != "" {
		if err := auth.CheckURL(*issuer); err != nil {
			fmt.Fprintln(os.Stderr, "protected-server: -issuer:", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, config{addr: *addr, issuer: *issuer}, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "protected-server:", err)
		os.Exit(1)
	}
}
