package jsonrpc_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ckpt/ckpt/internal/jsonrpc"
)

type saveParams struct {
	Message string `json:"message"`
}

type saveResult struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
}

func ExampleMethod() {
	save := jsonrpc.Method("save", func(ctx context.Context, p saveParams) (saveResult, error) {
		if p.Message == "" {
			return saveResult{}, &jsonrpc.Error{Code: jsonrpc.CodeServerError, Message: "store is busy",
				Data: map[string]any{"exit_code": 3, "kind": "busy"}}
		}
		jsonrpc.Progress(ctx, map[string]int{"files": 10})
		return saveResult{ID: "c0ffee", Created: true}, nil
	})
	srv, err := jsonrpc.NewServer(jsonrpc.Options{Concurrency: 1}, save)
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"save","params":{"message":"m","_meta":{"progressToken":"p"}}}` + "\n")
	if err := srv.NewConn(in, os.Stdout).Serve(context.Background()); err != nil {
		fmt.Println(err)
	}
	in = strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"save","params":{}}` + "\n")
	if err := srv.NewConn(in, os.Stdout).Serve(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","method":"$/progress","params":{"token":"p","value":{"files":10}}}
	// {"jsonrpc":"2.0","id":1,"result":{"id":"c0ffee","created":true}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"store is busy","data":{"exit_code":3,"kind":"busy"}}}
}
