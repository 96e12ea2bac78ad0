// Command stdio-client connects to any MCP server started as a
// subprocess, lists everything it offers and calls one tool.
//
//	go run ./examples/stdio-client -- go run ./examples/stdio-server
//	go run ./examples/stdio-client -tool add -args '{"a":1,"b":2}' -- ./server
//
// With -url it connects to a server over HTTP instead: Streamable HTTP,
// falling back to the legacy HTTP+SSE transport for servers that only
// speak protocol 2024-11-05.
//
//	go run ./examples/stdio-client -url http://127.0.0.1:8080/mcp
//
// With -login too, a server that requires authorization (OAuth 2.1) is
// logged in to: the client prints the authorization server's URL to open
// in a browser, receives the redirect on a loopback address (-callback)
// and keeps the tokens in a file readable by the user alone (-token-file,
// by default mcpkit/tokens.json in the user configuration directory), so
// that the next run needs no login.
//
//	go run ./examples/stdio-client -login -url https://mcp.example.com/mcp
//
// By default the client asks the server which protocol era it speaks
// (server/discover) and uses 2026-07-28 when it can, and the initialize
// handshake otherwise; -era handshake or -era modern pins one.
//
// Without -tool it calls echo with {"message":"hello"} when the server has
// such a tool, and otherwise the first tool whose input schema requires
// nothing, called with no arguments.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	tool := flag.String("tool", "", "the tool to call (default: see the package doc)")
	args := flag.String("args", "", "the tool's arguments, as a JSON object")
	timeout := flag.Duration("timeout", time.Minute, "overall time limit")
	url := flag.String("url", "", "connect to this HTTP endpoint instead of starting a command")
	eraName := flag.String("era", "auto", "protocol era: auto, handshake (initialize) or modern (2026-07-28)")
	login := flag.Bool("login", false, "with -url: log in (OAuth) when the server requires authorization")
	tokenFile := flag.String("token-file", "", "with -login: the file keeping tokens (default: mcpkit/tokens.json in the user config directory)")
	callback := flag.String("callback", "127.0.0.1:0", "with -login: the loopback address receiving the authorization redirect")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: stdio-client [-era ERA] [-tool NAME] [-args JSON] [--] command [arg...]\n       stdio-client [-era ERA] [-tool NAME] [-args JSON] -url URL\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	era, ok := map[string]mcp.Era{"auto": mcp.EraAuto, "handshake": mcp.EraHandshake, "modern": mcp.EraModern}[*eraName]
	if !ok || (flag.NArg() == 0) == (*url == "") || (*login && *url == "") {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var t transport.Transport
	if *url != "" {
		st := &transport.StreamableClientTransport{URL: *url}
		if *login {
			a, stop, err := newAuthorizer(*tokenFile, *callback, nil, os.Stderr)
			if err != nil {
				fmt.Fprintln(os.Stderr, "stdio-client:", err)
				os.Exit(1)
			}
			defer stop()
			st.Authorizer = a
		}
		t = st
	} else {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Stderr = os.Stderr
		t = &transport.CommandTransport{Command: cmd}
	}
	if err := run(ctx, t, era, *tool, *args); err != nil {
		fmt.Fprintln(os.Stderr, "stdio-client:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, t transport.Transport, era mcp.Era, toolName, args string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-stdio-client", Version: "1.0.0"}, &mcp.ClientOptions{Era: era})
	cs, err := client.Connect(ctx, t)
	if err != nil {
		return err
	}
	defer cs.Close()

	// The library refuses an initialize result without serverInfo or
	// capabilities (a *mcp.ResultError from Connect), and lists holding
	// null; the checks here keep the example safe on its own.
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo == nil || init.Capabilities == nil {
		return errors.New("the server's initialize result lacks serverInfo or capabilities")
	}
	fmt.Printf("server: %s %s (protocol %s)\n", init.ServerInfo.Name, init.ServerInfo.Version, init.ProtocolVersion)
	caps := init.Capabilities

	var tools []*mcp.Tool
	if caps.Tools != nil {
		fmt.Println("tools:")
		for t, err := range cs.Tools(ctx) {
			if err != nil {
				return err
			}
			if t == nil {
				continue
			}
			tools = append(tools, t)
			fmt.Printf("  %s\n", t.Name)
		}
	}
	if caps.Resources != nil {
		fmt.Println("resources:")
		for r, err := range cs.Resources(ctx) {
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			fmt.Printf("  %s (%s)\n", r.Name, r.URI)
		}
		fmt.Println("resource templates:")
		for r, err := range cs.ResourceTemplates(ctx) {
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			fmt.Printf("  %s (%s)\n", r.Name, r.URITemplate)
		}
	}
	if caps.Prompts != nil {
		fmt.Println("prompts:")
		for p, err := range cs.Prompts(ctx) {
			if err != nil {
				return err
			}
			if p == nil {
				continue
			}
			fmt.Printf("  %s\n", p.Name)
		}
	}

	toolName, args = pickTool(tools, toolName, args)
	if toolName == "" {
		fmt.Println("no tool to call")
		return nil
	}
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return fmt.Errorf("-args is not valid JSON: %s", args)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolName, Arguments: json.RawMessage(args)})
	if err != nil {
		return fmt.Errorf("calling %s: %w", toolName, err)
	}
	fmt.Printf("call %s %s:\n", toolName, args)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Printf("  text: %s\n", c.Text)
		default:
			b, _ := json.Marshal(c)
			fmt.Printf("  %T: %s\n", c, b)
		}
	}
	if res.IsError {
		return errors.New("the tool reported an error")
	}
	return nil
}

// pickTool chooses the tool to call when -tool was not given.
func pickTool(tools []*mcp.Tool, name, args string) (string, string) {
	if name != "" {
		return name, args
	}
	for _, t := range tools {
		if t != nil && t.Name == "echo" {
			return "echo", `{"message":"hello"}`
		}
	}
	for _, t := range tools {
		var s struct {
			Required []string `json:"required"`
		}
		if t != nil && json.Unmarshal(t.InputSchema, &s) == nil && len(s.Required) == 0 {
			return t.Name, "{}"
		}
	}
	return "", ""
}
