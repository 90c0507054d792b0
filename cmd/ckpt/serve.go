package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
)

// mcpProtocolVersion is the MCP revision this server implements; a client
// asking for another gets this one and decides.
const mcpProtocolVersion = "2025-06-18"

func (a *app) serveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Answer JSON-RPC 2.0 requests, one per line on stdin, holding the store open",
		Long: "serve keeps the store open (and locked) for a host process and answers one JSON-RPC 2.0\n" +
			"request per line: methods save, list, diff, restore and tasks, with params named like the\n" +
			"CLI's flags (allow_empty, dry_run, ...) and results shaped like their --json output.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				return serveRPC(cmd.Context(), a.stdin, a.stdout, func(ctx context.Context, req *rpcRequest) (any, *rpcError) {
					m, ok := lookupMethod(req.Method)
					if !ok {
						return nil, &rpcError{Code: rpcMethodNotFound, Message: fmt.Sprintf("no method %q", req.Method)}
					}
					return a.invoke(ctx, m, e, req.Params)
				})
			})
		},
	}
}

// invoke calls a method and shapes its error.
func (a *app) invoke(ctx context.Context, m method, e *engine.Engine, params json.RawMessage) (any, *rpcError) {
	res, err := m.call(ctx, a, e, params)
	if err != nil {
		return nil, errorOf(err)
	}
	return res, nil
}

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Run a Model Context Protocol server on stdio exposing ckpt's checkpoints as tools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				return serveRPC(cmd.Context(), a.stdin, a.stdout, func(ctx context.Context, req *rpcRequest) (any, *rpcError) {
					return a.handleMCP(ctx, e, req)
				})
			})
		},
	}
}

// handleMCP answers the MCP lifecycle and tools requests.
func (a *app) handleMCP(ctx context.Context, e *engine.Engine, req *rpcRequest) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		return map[string]any{
			"protocolVersion": mcpProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]bool{"listChanged": false}},
			"serverInfo":      map[string]string{"name": "ckpt", "version": version},
			"instructions":    "Save a checkpoint before and after changing files; diff and restore to rewind.",
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		tools := make([]map[string]any, 0, len(methods))
		for _, m := range methods {
			tools = append(tools, map[string]any{"name": "ckpt_" + m.name, "description": m.doc, "inputSchema": json.RawMessage(m.schema)})
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		p, err := decodeParams[struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}](req.Params)
		if err != nil {
			return nil, errorOf(err)
		}
		name, ok := strings.CutPrefix(p.Name, "ckpt_")
		m, found := lookupMethod(name)
		found = found && ok
		if !found {
			return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("no tool %q", p.Name)}
		}
		return toolResult(a.invoke(ctx, m, e, p.Arguments)), nil
	}
	if req.ID == nil {
		return nil, nil // notifications such as notifications/initialized need no answer
	}
	return nil, &rpcError{Code: rpcMethodNotFound, Message: fmt.Sprintf("no method %q", req.Method)}
}

// toolResult wraps a method's result (or error) as an MCP tool result: the
// JSON as text content, plus structured content.
func toolResult(res any, rerr *rpcError) map[string]any {
	if rerr != nil {
		return map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": rerr.Message}}}
	}
	text, err := json.Marshal(res)
	if err != nil {
		return map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": err.Error()}}}
	}
	return map[string]any{"content": []map[string]string{{"type": "text", "text": string(text)}}, "structuredContent": res}
}
