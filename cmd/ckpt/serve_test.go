package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// rpcLines runs `ckpt <cmd>` with one request per line and decodes the responses.
func (e *env) rpcLines(cmd string, requests ...string) []map[string]any {
	e.t.Helper()
	r := e.run(strings.Join(requests, "\n")+"\n", cmd)
	if r.code != 0 {
		e.t.Fatalf("ckpt %s: exit %d %s", cmd, r.code, r.stderr)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			e.t.Fatalf("response %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func errCode(resp map[string]any) float64 {
	if e, ok := resp["error"].(map[string]any); ok {
		return e["code"].(float64)
	}
	return 0
}

func TestServeAnswersEachRequestInOrder(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	resps := e.rpcLines("serve",
		`{"jsonrpc":"2.0","id":1,"method":"save","params":{"message":"first","state":"conversation v1"}}`,
		`{"jsonrpc":"2.0","method":"tasks"}`,
		`{"jsonrpc":"2.0","id":"two","method":"list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"diff","params":{"mode":"full"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"restore","params":{"ref":"@1","only":"state"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"restore","params":{"ref":"@7"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"save","params":{"bogus":true}}`,
		`{"jsonrpc":"2.0","id":7,"method":"rm -rf"}`,
		`not json`,
	)
	if len(resps) != 8 {
		t.Fatalf("%d responses, want 8 (the notification gets none): %v", len(resps), resps)
	}
	save := resps[0]["result"].(map[string]any)
	if save["created"] != true || save["seq"].(float64) != 1 || resps[0]["id"].(float64) != 1 {
		t.Fatalf("save = %v", resps[0])
	}
	list := resps[1]["result"].(map[string]any)
	if resps[1]["id"] != "two" || len(list["checkpoints"].([]any)) != 1 {
		t.Fatalf("list = %v", resps[1])
	}
	if files := resps[2]["result"].(map[string]any)["files"].([]any); len(files) != 0 {
		t.Fatalf("full diff of an unchanged workspace = %v", files)
	}
	if resps[3]["result"].(map[string]any)["state_content"] != "conversation v1" {
		t.Fatalf("restore --only state = %v", resps[3])
	}
	data := resps[4]["error"].(map[string]any)["data"].(map[string]any)
	if errCode(resps[4]) != rpcAppError || data["exit_code"].(float64) != exitUsage {
		t.Fatalf("unknown ref = %v", resps[4])
	}
	for i, want := range map[int]float64{5: rpcInvalidParams, 6: rpcMethodNotFound, 7: rpcParseError} {
		if errCode(resps[i]) != want {
			t.Errorf("response %d = %v, want error %v", i, resps[i], want)
		}
	}
}

func TestMCPListsAndCallsTools(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\n")
	resps := e.rpcLines("mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ckpt_save","arguments":{"message":"before edit"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ckpt_restore","arguments":{"ref":"@5"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"save","arguments":{}}}`,
	)
	if len(resps) != 5 {
		t.Fatalf("%d responses: %v", len(resps), resps)
	}
	if resps[0]["result"].(map[string]any)["protocolVersion"] != mcpProtocolVersion {
		t.Fatalf("initialize = %v", resps[0])
	}
	tools := resps[1]["result"].(map[string]any)["tools"].([]any)
	if len(tools) != len(methods) {
		t.Fatalf("%d tools, want %d", len(tools), len(methods))
	}
	for _, tool := range tools {
		m := tool.(map[string]any)
		schema, ok := m["inputSchema"].(map[string]any)
		if !ok || schema["type"] != "object" || !strings.HasPrefix(m["name"].(string), "ckpt_") {
			t.Errorf("tool %v", m)
		}
	}
	call := resps[2]["result"].(map[string]any)
	if call["isError"] == true || call["structuredContent"].(map[string]any)["created"] != true {
		t.Fatalf("ckpt_save = %v", call)
	}
	if failed := resps[3]["result"].(map[string]any); failed["isError"] != true {
		t.Fatalf("ckpt_restore of an unknown ref = %v", failed)
	}
	if errCode(resps[4]) != rpcInvalidParams {
		t.Fatalf("unknown tool = %v", resps[4])
	}
}
