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
		return mcpInitializeResult{
			ProtocolVersion: mcpProtocolVersion,
			Capabilities:    mcpCapabilities{Tools: mcpToolsCapability{ListChanged: false}},
			ServerInfo:      mcpServerInfo{Name: "ckpt", Version: version},
			Instructions:    "Save a checkpoint before and after changing files; diff and restore to rewind.",
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		tools := make([]mcpTool, 0, len(methods))
		for _, m := range methods {
			tools = append(tools, mcpTool{Name: "ckpt_" + m.name, Description: m.doc, InputSchema: json.RawMessage(m.schema)})
		}
		return mcpToolList{Tools: tools}, nil
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
func toolResult(res any, rerr *rpcError) mcpToolResult {
	if rerr != nil {
		return mcpToolResult{IsError: true, Content: []mcpContent{{Type: "text", Text: rerr.Message}}}
	}
	text, err := json.Marshal(res)
	if err != nil {
		return mcpToolResult{IsError: true, Content: []mcpContent{{Type: "text", Text: err.Error()}}}
	}
	return mcpToolResult{Content: []mcpContent{{Type: "text", Text: string(text)}}, StructuredContent: res}
}

// The MCP results. Their keys are the protocol's (camelCase), not ckpt's.
type (
	mcpInitializeResult struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    mcpCapabilities `json:"capabilities"`
		ServerInfo      mcpServerInfo   `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	mcpCapabilities struct {
		Tools mcpToolsCapability `json:"tools"`
	}
	mcpToolsCapability struct {
		ListChanged bool `json:"listChanged"`
	}
	mcpServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	mcpToolList struct {
		Tools []mcpTool `json:"tools"`
	}
	mcpTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	mcpToolResult struct {
		IsError           bool         `json:"isError,omitempty"`
		Content           []mcpContent `json:"content"`
		StructuredContent any          `json:"structuredContent,omitempty"`
	}
	mcpContent struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
)
