package jsonrpc_test

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// A transport that reads each message into a buffer of its own, such as
// a whole HTTP body, hands the buffer over: the message keeps slices of
// it instead of copies of its params or result.
func ExampleDecodeOwnedMessage() {
	body := strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`)
	data, err := io.ReadAll(body) // a fresh buffer, not reused afterwards
	if err != nil {
		log.Fatal(err)
	}
	m, err := jsonrpc.DecodeOwnedMessage(data)
	if err != nil {
		log.Fatal(err)
	}
	req := m.(*jsonrpc.Request)
	fmt.Println(req.ID, req.Method, string(req.Params))
	// Output: 7 tools/call {"name":"echo"}
}
