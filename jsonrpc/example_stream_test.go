package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// lineStream is a complete third-party transport: newline-delimited
// JSON-RPC over any byte stream (a TCP connection, a pipe, a serial
// line). Read decodes one line; Write encodes one message and writes it
// whole, under a lock, as Stream requires of concurrent writers.
type lineStream struct {
	r  *bufio.Reader
	wc io.WriteCloser

	mu sync.Mutex // serialises writes
}

func newLineStream(rwc io.ReadWriteCloser) *lineStream {
	return &lineStream{r: bufio.NewReader(rwc), wc: rwc}
}

func (s *lineStream) Read(ctx context.Context) (jsonrpc.Message, error) {
	line, err := s.r.ReadBytes('\n')
	if err != nil {
		return nil, err // io.EOF: the peer hung up cleanly
	}
	return jsonrpc.DecodeMessage(line) // a *jsonrpc.DecodeError keeps the stream going
}

func (s *lineStream) Write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(m) // never contains a raw newline
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.wc.Write(append(data, '\n'))
	return err
}

func (s *lineStream) Close() error { return s.wc.Close() }

// A transport is a [jsonrpc.Stream]: give one to [jsonrpc.NewConn] on each
// side, and the connections can call each other.
func Example_transport() {
	a, b := net.Pipe()

	server := jsonrpc.NewConn(newLineStream(b), &jsonrpc.ConnOptions{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method != "greet" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no such method"}
			}
			var p struct{ Name string }
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			return map[string]string{"greeting": "Hello, " + p.Name}, nil
		}),
	})
	server.Start()
	client := jsonrpc.NewConn(newLineStream(a), nil)
	client.Start()

	res, err := client.Call(context.Background(), "greet", json.RawMessage(`{"Name":"Gopher"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res))
	_, err = client.Call(context.Background(), "shout", nil)
	fmt.Println(err)

	client.Close()
	client.Wait()
	server.Wait()
	// Output:
	// {"greeting":"Hello, Gopher"}
	// jsonrpc error -32601: no such method
}
