package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The two ends of an in-memory pair pass message values to each other.
// Most code hands the transports to mcp.Server.Connect and
// mcp.Client.Connect instead of reading and writing messages itself.
func ExampleNewInMemoryTransports() {
	ctx := context.Background()
	clientT, serverT := transport.NewInMemoryTransports()
	client, err := clientT.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	server, err := serverT.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	if err := client.Write(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "ping"}); err != nil {
		log.Fatal(err)
	}
	m, err := server.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	req := m.(*jsonrpc.Request)
	fmt.Println("server read:", req.Method, req.ID)
	if err := server.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
		log.Fatal(err)
	}
	m, err = client.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("client read: result", string(m.(*jsonrpc.Response).Result))

	// Closing one end is seen by the other as the end of the stream.
	client.Close()
	_, err = server.Read(ctx)
	fmt.Println("server read:", err == io.EOF)
	// Output:
	// server read: ping 1
	// client read: result {}
	// server read: true
}

// A client launches a server as a subprocess and talks to it over the
// subprocess's standard input and output.
func ExampleCommandTransport() {
	ctx := context.Background()
	cmd := exec.Command("npx", "-y", "@modelcontextprotocol/server-everything")
	cmd.Stderr = os.Stderr // by os/exec's rule a nil Stderr discards the server's log
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &transport.CommandTransport{Command: cmd})
	if err != nil {
		log.Fatal(err)
	}
	// Close ends the session, then asks the server to exit: it closes the
	// server's standard input, and signals it if it does not exit in time.
	defer cs.Close()
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
	}
}

// A server launched by its client serves one session over standard input
// and output.
func ExampleStdioTransport() {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-server", Version: "1.0.0"}, nil)
	// ... add tools, resources and prompts ...
	if err := s.Run(context.Background(), &transport.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// A client of a Streamable HTTP server. Here the server runs in the same
// process, on an httptest server; a real client gives the server's URL.
func ExampleStreamableClientTransport() {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "2.0.0"}, nil)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(s, nil))
	defer srv.Close()

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &transport.StreamableClientTransport{
		URL: srv.URL,
		// With a server of the handshake era: start a new session,
		// transparently, when the server has forgotten ours (after a
		// restart, say). The 2026-07-28 revision, which the default
		// client finds here, has no sessions to forget.
		ReinitializeOnSessionExpired: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	fmt.Println(info.Name, info.Version, cs.ProtocolVersion())
	// Output:
	// remote 2.0.0 2026-07-28
}

// Any reader and writer pair carries a session, one line of JSON per
// message: here two pipes join a server and a client in one process.
func ExampleIOTransport() {
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()

	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "piped", Version: "1.0.0"}, nil)
	ss, err := s.Connect(ctx, &transport.IOTransport{Reader: serverIn, Writer: serverOut})
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &transport.IOTransport{Reader: clientIn, Writer: clientOut})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("connected to", cs.InitializeResult().ServerInfo.Name)
	// Output:
	// connected to piped
}

// LoggingTransport shows the wire: each message read or written, as JSON.
func ExampleLoggingTransport() {
	ctx := context.Background()
	clientT, serverT := transport.NewInMemoryTransports()
	logged := &transport.LoggingTransport{Transport: clientT, Writer: os.Stdout}
	client, err := logged.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	server, err := serverT.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	if err := client.Write(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "ping"}); err != nil {
		log.Fatal(err)
	}
	if _, err := server.Read(ctx); err != nil {
		log.Fatal(err)
	}
	if err := server.Write(ctx, &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`{}`)}); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Read(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// send {"jsonrpc":"2.0","id":1,"method":"ping"}
	// recv {"jsonrpc":"2.0","id":1,"result":{}}
}
