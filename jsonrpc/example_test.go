package jsonrpc_test

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// A transport decodes each message it reads; params and results stay raw
// JSON for the receiver's own types.
func ExampleDecodeMessage() {
	body := strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`)
	data, err := io.ReadAll(body)
	if err != nil {
		log.Fatal(err)
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		log.Fatal(err)
	}
	req := m.(*jsonrpc.Request)
	fmt.Println(req.ID, req.Method, string(req.Params))
	// Output: 7 tools/call {"name":"echo"}
}
